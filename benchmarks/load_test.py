"""Load test: N concurrent browser sessions against one ``streamlit run`` server.

Each session (its own Chromium context, so its own Streamlit session) loads
the bundled loan sample, trains logistic regression on Data & groups, runs a
Fragility audit with a small case cap and its own seed, then (unless
``--no-transport``) a small Transport audit with its own seed (two refits,
20 bootstrap resamples, 2 random sets, 400 stress rows). Sessions alternate
seeds 0 and 1, so a session that saw another's state would show the other
seed's numbers. Checks:

* no session fails;
* each session's displayed summary numbers (the "Model ready" message and the
  "Certified N cases · mean k* · mean FDS" message, run ids removed) equal
  those of a single-session run with the same seed, and its saved Transport
  result tables (read back from the registry) have the SHA-256 of the
  single-session run's tables;
* every session shows its own saved run ids (no two sessions share one) and
  the registry holds exactly 2·N (3·N with Transport) runs afterwards, all
  ``done``.

A failed session leaves ``session_<i>.png`` (a screenshot), the page text and
its websocket history (opened/closed times, frames) in the report, so a stall
can be told apart: a lost websocket, a page that never rendered, a busy server.

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
    transport_run: str = ""
    transport_hash: str = ""
    train_s: float = float("nan")
    fragility_s: float = float("nan")
    transport_s: float = float("nan")
    step: str = ""
    websockets: list[dict] = field(default_factory=list)
    page_text: str = ""
    server_stacks: str = ""

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


def _server_stacks(port: int, workdir: Path | None, index: int) -> str:
    """Python stacks of every server thread at the moment a session failed (``py-spy dump``).

    Tells a stalled script (its thread's stack) from a lost page (no script
    thread running). Written to ``server_stacks_<i>.txt`` and returned; empty
    when ``py-spy`` is not installed (it is a diagnostic, not a dependency).
    """
    import shutil
    import subprocess

    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        return ""
    out = []
    for pid in _pids_of_server(port):
        try:
            done = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
            out.append(done.stdout + done.stderr)
        except (OSError, subprocess.SubprocessError) as exc:
            out.append(f"py-spy failed on {pid}: {exc}")
    text = "\n".join(out)
    if workdir is not None:
        (workdir / f"server_stacks_{index}.txt").write_text(text)
    return text[-6000:]


async def _fill(page, label: str, value) -> None:
    box = page.get_by_role("spinbutton", name=label, exact=True)
    await box.fill(str(value))
    await box.press("Enter")
    await _settle(page)


async def _settle(page, timeout_ms: int = 600_000) -> None:
    """Wait until the rerun a widget change started has finished.

    A fixed pause is not enough under load: a click on "Run" that lands
    before the rerun of the last input finished runs with the old value.
    """
    await page.wait_for_timeout(300)  # the rerun request reaches the server
    await page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=timeout_ms)


async def _session(browser, url: str, index: int, seed: int, cases: int, timeout_ms: int, transport: bool,
                   shots: Path | None) -> SessionResult:
    res = SessionResult(index=index, seed=seed)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(timeout_ms)  # under load a button can stay busy for long
    page = await context.new_page()
    t_start = time.perf_counter()

    def on_ws(ws):
        rec = {"url": ws.url.rsplit("/", 1)[-1], "opened_s": round(time.perf_counter() - t_start, 1),
               "closed_s": None, "frames_in": 0}
        res.websockets.append(rec)
        ws.on("framereceived", lambda _f: rec.__setitem__("frames_in", rec["frames_in"] + 1))
        ws.on("close", lambda _w: rec.__setitem__("closed_s", round(time.perf_counter() - t_start, 1)))

    page.on("websocket", on_ws)
    try:
        res.step = "open"
        await page.goto(url, wait_until="domcontentloaded")
        res.step = "data & groups"
        await page.get_by_role("link", name="Data & groups").first.click(timeout=timeout_ms)
        await page.get_by_text("loan_synthetic.csv", exact=False).first.wait_for(timeout=timeout_ms)
        res.step = "train"
        # The page's first run must have finished: a click on Train while it was still drawing the page was
        # lost once in seven runs beside two CPU hogs (no training started; see docs/reliability.md, "Load").
        await page.get_by_role("button", name="Train model").wait_for(timeout=timeout_ms)
        await _settle(page)
        t0 = time.perf_counter()
        await page.get_by_role("button", name="Train model").click()
        model = page.get_by_text("Model ready:", exact=False).first
        await model.wait_for(timeout=timeout_ms)
        res.train_s = time.perf_counter() - t0
        res.model_text = (await model.inner_text()).strip()
        res.step = "fragility"
        await page.get_by_role("link", name="Fragility").first.click()
        cap = page.get_by_role("spinbutton", name="Case-sample cap")
        await cap.wait_for(timeout=timeout_ms)
        await _fill(page, "Case-sample cap", cases)
        await _fill(page, "Seed", seed)
        await _settle(page)
        t1 = time.perf_counter()
        await page.get_by_role("button", name="Run fragility audit").click()
        cert = page.get_by_text(re.compile(r"Certified \d+ cases")).first
        await cert.wait_for(timeout=timeout_ms)
        res.fragility_s = time.perf_counter() - t1
        res.fragility_text = (await cert.inner_text()).strip()
        res.run_ids = re.findall(r"saved as run (\S+)", res.model_text + " " + res.fragility_text)
        if transport:
            res.step = "transport"
            await page.get_by_role("link", name="Transport", exact=True).first.click()
            await page.get_by_role("button", name="Lock tolerances").click()
            await page.get_by_text("Tolerances and headline slice locked", exact=False).first.wait_for(timeout=timeout_ms)
            for label, value in (("Refits R", 2), ("Seed", seed), ("Bootstrap resamples", 20),
                                 ("Random sets J per refit", 2), ("Row cap per test set (stress)", 400)):
                await _fill(page, label, value)
            await _settle(page)
            t2 = time.perf_counter()
            await page.get_by_role("button", name="Run transport audit").click()
            saved = page.get_by_text(re.compile(r"Saved to the registry as run \S+")).first
            await saved.wait_for(timeout=timeout_ms)
            res.transport_s = time.perf_counter() - t2
            res.transport_run = re.search(r"run (\S+?)\.?$", (await saved.inner_text()).strip()).group(1)
            res.run_ids.append(res.transport_run)
        res.step = "done"
        res.ok = len(res.run_ids) == (3 if transport else 2)
        if not res.ok:
            res.error = f"expected {3 if transport else 2} saved run ids, saw {res.run_ids}"
    except Exception as exc:  # noqa: BLE001 - recorded as a failed session
        res.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        res.server_stacks = _server_stacks(int(url.rsplit(":", 1)[1]), shots, index)
        try:
            if shots is not None:
                await page.screenshot(path=str(shots / f"session_{index}.png"), full_page=True)
            res.page_text = (await page.inner_text("body", timeout=10_000))[:6000]
        except Exception as exc2:  # noqa: BLE001
            res.page_text = f"(no page text: {type(exc2).__name__})"
    finally:
        await context.close()
    return res


async def _drive(url: str, seeds: list[int], cases: int, timeout_ms: int, transport: bool = True,
                 shots: Path | None = None) -> list[SessionResult]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            return list(await asyncio.gather(*[_session(browser, url, i, s, cases, timeout_ms, transport, shots)
                                               for i, s in enumerate(seeds)]))
        finally:
            await browser.close()


def _transport_hash(registry, run_id: str) -> str:
    """SHA-256 over the saved Transport tables of one run (sorted by name)."""
    import hashlib

    import pandas as pd

    h = hashlib.sha256()
    record = registry.load(run_id)
    for name in sorted(record.tables):
        frame = record.tables[name]
        h.update(name.encode() + repr(list(frame.columns)).encode())
        h.update(pd.util.hash_pandas_object(frame.reset_index(drop=True).astype(str), index=False).to_numpy().tobytes())
    return h.hexdigest()


def run_load(n_sessions: int, *, cases: int = 20, timeout_s: float = 600.0, workdir: Path | None = None,
             transport: bool = True) -> dict:
    """Single-session baselines (seeds 0 and 1), then ``n_sessions`` at once; returns the report."""
    from audit_core.runs.registry import RunRegistry

    workdir = Path(workdir or tempfile.mkdtemp(prefix="load_test_"))
    workdir.mkdir(parents=True, exist_ok=True)
    seeds = [i % 2 for i in range(n_sessions)]
    reg_path = workdir / "registry.sqlite3"
    with serve_app(reg_path) as url:
        port = int(url.rsplit(":", 1)[1])
        baseline = {s: asyncio.run(_drive(url, [s], cases, int(timeout_s * 1000), transport, workdir))[0]
                    for s in sorted(set(seeds))}
        baseline_peak_kib = server_peak_kib(port)
        t0 = time.perf_counter()
        results = asyncio.run(_drive(url, seeds, cases, int(timeout_s * 1000), transport, workdir))
        wall = time.perf_counter() - t0
        peak_kib = server_peak_kib(port)
    registry = RunRegistry(reg_path)
    runs = registry.list_runs()
    for res in [*baseline.values(), *results]:
        if res.transport_run:
            res.transport_hash = _transport_hash(registry, res.transport_run)
    all_ids = [r for res in results for r in res.run_ids]
    per_session = 3 if transport else 2
    mismatch = [res.index for res in results if res.ok and (res.numbers() != baseline[res.seed].numbers()
                                                             or res.transport_hash != baseline[res.seed].transport_hash)]
    clicks = [t for res in results for t in (res.train_s, res.fragility_s, res.transport_s) if res.ok and t == t]
    frag = [res.fragility_s for res in results if res.ok]
    train = [res.train_s for res in results if res.ok]
    trans = [res.transport_s for res in results if res.ok and transport]

    def pct(xs: list[float], q: float) -> float:
        return float(statistics.quantiles(xs, n=100, method="inclusive")[q - 1]) if len(xs) > 1 else float(xs[0])

    report = {
        "sessions": n_sessions,
        "cases": cases,
        "failed_sessions": [asdict(r) for r in results if not r.ok],
        "baseline_failed": [s for s, b in baseline.items() if not b.ok],
        "mismatched_sessions": mismatch,
        "transport": transport,
        "distinct_run_ids": len(set(all_ids)) == len(all_ids) == per_session * n_sessions,
        "registry_runs": int(len(runs)),
        "registry_all_done": bool(len(runs) and set(runs["status"]) == {"done"}),
        "train_p50_s": pct(train, 50) if train else None,
        "train_p95_s": pct(train, 95) if train else None,
        "fragility_p50_s": pct(frag, 50) if frag else None,
        "fragility_p95_s": pct(frag, 95) if frag else None,
        "transport_p50_s": pct(trans, 50) if trans else None,
        "transport_p95_s": pct(trans, 95) if trans else None,
        "click_to_result_p50_s": pct(clicks, 50) if clicks else None,
        "click_to_result_p95_s": pct(clicks, 95) if clicks else None,
        "wall_s": wall,
        "server_peak_mib": peak_kib / 1024,
        "server_peak_after_baselines_mib": baseline_peak_kib / 1024,
        "baseline_numbers": {s: b.numbers() for s, b in baseline.items()},
        "baseline_transport_hash": {s: b.transport_hash[:16] for s, b in baseline.items()},
        "websocket_reconnects": {r.index: len(r.websockets) - 1 for r in results if len(r.websockets) > 1},
        "workdir": str(workdir),
    }
    report["passed"] = (not report["failed_sessions"] and not report["baseline_failed"] and not mismatch
                        and report["distinct_run_ids"] and report["registry_all_done"]
                        and report["registry_runs"] == per_session * (n_sessions + len(baseline)))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--cases", type=int, default=20, help="fragility case-sample cap per session")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per step")
    ap.add_argument("--no-transport", action="store_true", help="skip the Transport audit per session")
    ap.add_argument("--workdir", type=Path, default=None, help="registry, server log and screenshots (default: a temp dir)")
    args = ap.parse_args(argv)
    report = run_load(args.sessions, cases=args.cases, timeout_s=args.timeout, workdir=args.workdir,
                      transport=not args.no_transport)
    print(json.dumps(report, indent=2, default=str))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
