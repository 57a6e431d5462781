"""Load test: N concurrent browser sessions against one ``streamlit run`` server.

Each session (its own Chromium context, so its own Streamlit session) loads
the bundled loan sample, trains logistic regression on Data & groups, then
runs a Fragility audit with a small case cap and its own seed (sessions
alternate seeds 0 and 1, so a session that saw another's state would show the
other seed's numbers). Checks:

* no session fails;
* each session's displayed summary numbers (the "Model ready" message and the
  "Certified N cases · mean k* · mean FDS" message, run ids removed) equal
  those of a single-session run with the same seed;
* every session shows its own saved run ids (no two sessions share one) and
  the registry holds exactly 2·N runs afterwards, all ``done``.

Reports p50/p95 of click-to-result times and the server's peak memory
(``VmHWM`` from ``/proc/<pid>/status`` of the streamlit process, plus its
children's). Usage::

    python benchmarks/load_test.py --sessions 10 --cases 20
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser import CHROMIUM_FLAGS, chromium_path, serve_app  # noqa: E402

__all__ = ["SessionResult", "run_load", "server_peak_kib"]

_RUN_ID = re.compile(r"\s*·?\s*saved as run \S+")


@dataclass
class SessionResult:
    index: int
    seed: int
    ok: bool = False
    error: str = ""
    model_text: str = ""
    fragility_text: str = ""
    run_ids: list[str] = field(default_factory=list)
    train_s: float = float("nan")
    fragility_s: float = float("nan")

    def numbers(self) -> tuple[str, str]:
        """The displayed summaries with run ids removed."""
        return _RUN_ID.sub("", self.model_text).strip(), _RUN_ID.sub("", self.fragility_text).strip()


def _pids_of_server(port: int) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(cmd) and str(port).encode() in cmd:
            pids.append(int(proc.name))
    return pids


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out + [g for c in out for g in _children(c)]


def server_peak_kib(port: int) -> int:
    """Sum of VmHWM (peak resident set, KiB) of the server process and its children."""
    total = 0
    for pid in _pids_of_server(port):
        for p in [pid, *_children(pid)]:
            try:
                for line in Path(f"/proc/{p}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
            except OSError:
                pass
    return total


async def _session(browser, url: str, index: int, seed: int, cases: int, timeout_ms: int) -> SessionResult:
    res = SessionResult(index=index, seed=seed)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(timeout_ms)  # under load a button can stay busy for long
    page = await context.new_page()
    try:
        await page.goto(url, wait_until="domcontentloaded")
        await page.get_by_role("link", name="Data & groups").first.click(timeout=timeout_ms)
        await page.get_by_text("loan_synthetic.csv", exact=False).first.wait_for(timeout=timeout_ms)
        t0 = time.perf_counter()
        await page.get_by_role("button", name="Train model").click()
        model = page.get_by_text("Model ready:", exact=False).first
        await model.wait_for(timeout=timeout_ms)
        res.train_s = time.perf_counter() - t0
        res.model_text = (await model.inner_text()).strip()
        await page.get_by_role("link", name="Fragility").first.click()
        cap = page.get_by_role("spinbutton", name="Case-sample cap")
        await cap.wait_for(timeout=timeout_ms)
        await cap.fill(str(cases))
        await cap.press("Enter")
        seed_box = page.get_by_role("spinbutton", name="Seed")
        await seed_box.fill(str(seed))
        await seed_box.press("Enter")
        await page.wait_for_timeout(500)  # let the reruns of the two inputs settle
        t1 = time.perf_counter()
        await page.get_by_role("button", name="Run fragility audit").click()
        cert = page.get_by_text(re.compile(r"Certified \d+ cases")).first
        await cert.wait_for(timeout=timeout_ms)
        res.fragility_s = time.perf_counter() - t1
        res.fragility_text = (await cert.inner_text()).strip()
        res.run_ids = re.findall(r"saved as run (\S+)", res.model_text + " " + res.fragility_text)
        res.ok = len(res.run_ids) == 2
        if not res.ok:
            res.error = f"expected two saved run ids, saw {res.run_ids}"
    except Exception as exc:  # noqa: BLE001 - recorded as a failed session
        res.error = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        await context.close()
    return res


async def _drive(url: str, seeds: list[int], cases: int, timeout_ms: int) -> list[SessionResult]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            return list(await asyncio.gather(*[_session(browser, url, i, s, cases, timeout_ms)
                                               for i, s in enumerate(seeds)]))
        finally:
            await browser.close()


def run_load(n_sessions: int, *, cases: int = 20, timeout_s: float = 600.0, workdir: Path | None = None) -> dict:
    """Single-session baselines (seeds 0 and 1), then ``n_sessions`` at once; returns the report."""
    from audit_core.registry import RunRegistry

    workdir = Path(workdir or tempfile.mkdtemp(prefix="load_test_"))
    seeds = [i % 2 for i in range(n_sessions)]
    reg_path = workdir / "registry.sqlite3"
    with serve_app(reg_path) as url:
        port = int(url.rsplit(":", 1)[1])
        baseline = {s: asyncio.run(_drive(url, [s], cases, int(timeout_s * 1000)))[0] for s in sorted(set(seeds))}
        t0 = time.perf_counter()
        results = asyncio.run(_drive(url, seeds, cases, int(timeout_s * 1000)))
        wall = time.perf_counter() - t0
        peak_kib = server_peak_kib(port)
    runs = RunRegistry(reg_path).list_runs()
    all_ids = [r for res in results for r in res.run_ids]
    mismatch = [res.index for res in results if res.ok and res.numbers() != baseline[res.seed].numbers()]
    clicks = [t for res in results for t in (res.train_s, res.fragility_s) if res.ok]
    frag = [res.fragility_s for res in results if res.ok]
    train = [res.train_s for res in results if res.ok]

    def pct(xs: list[float], q: float) -> float:
        return float(statistics.quantiles(xs, n=100, method="inclusive")[q - 1]) if len(xs) > 1 else float(xs[0])

    report = {
        "sessions": n_sessions,
        "cases": cases,
        "failed_sessions": [asdict(r) for r in results if not r.ok],
        "baseline_failed": [s for s, b in baseline.items() if not b.ok],
        "mismatched_sessions": mismatch,
        "distinct_run_ids": len(set(all_ids)) == len(all_ids) == 2 * n_sessions,
        "registry_runs": int(len(runs)),
        "registry_all_done": bool(len(runs) and set(runs["status"]) == {"done"}),
        "train_p50_s": pct(train, 50) if train else None,
        "train_p95_s": pct(train, 95) if train else None,
        "fragility_p50_s": pct(frag, 50) if frag else None,
        "fragility_p95_s": pct(frag, 95) if frag else None,
        "click_to_result_p50_s": pct(clicks, 50) if clicks else None,
        "click_to_result_p95_s": pct(clicks, 95) if clicks else None,
        "wall_s": wall,
        "server_peak_mib": peak_kib / 1024,
        "baseline_numbers": {s: b.numbers() for s, b in baseline.items()},
    }
    report["passed"] = (not report["failed_sessions"] and not report["baseline_failed"] and not mismatch
                        and report["distinct_run_ids"] and report["registry_all_done"]
                        and report["registry_runs"] == 2 * (n_sessions + len(baseline)))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--cases", type=int, default=20, help="fragility case-sample cap per session")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per step")
    args = ap.parse_args(argv)
    report = run_load(args.sessions, cases=args.cases, timeout_s=args.timeout)
    print(json.dumps(report, indent=2, default=str))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
