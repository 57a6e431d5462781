"""First paint: each page's first heading against a one-line Streamlit page, in Chromium.

Issue 25 goal 3: the first paint of each page is at most twice that of a
one-line page (``st.title("x")``) served the same way on the same machine.
For each page of ``app.py`` (Home at ``/``, the others at the stem of their
file, as ``st.Page`` names them) and each repeat, two servers are started in
turn, in alternating order (baseline first on even repeats, the app first on
odd ones):

* the baseline: the one-line page, written to a temporary folder with a copy
  of ``.streamlit/config.toml``;
* the app: ``streamlit run app.py`` with a fresh temporary registry
  (``AUDIT_REGISTRY_PATH``).

Both go through ``tests/browser.py``'s ``serve_app`` (the same flags) and
Debian's Chromium (its ``CHROMIUM_FLAGS``). On each server the time from
``page.goto`` to the first ``h1`` in the main area is measured twice: *fresh*
(the first request after the server started: the first script run imports
everything) and *warm* (a second load in a new browser context, so a new
session). One browser is launched before the servers, so its start is not
counted. After the heading the benchmark waits for the end of the page's
script run (Streamlit's ``data-test-script-state``), so the warm load does
not compete with the fresh run's imports. Printed per page: the median
[min–max] of the ratio app ÷ baseline, fresh and warm, the times, and the
app's time to the end of its run (the page complete).

``--demo`` also times Home's guided demo from the click on "Run the demo" to
its first story step (the first tab of the story on screen), with
``AUDIT_DEMO_SIZE=quick`` and at full size, each on a fresh server.

Usage::

    python benchmarks/first_paint.py --repeats 3 --demo
"""
from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser import CHROMIUM_FLAGS, chromium_path, serve_app

__all__ = ["app_pages", "app_server", "baseline_server", "demo_first_step_s", "first_heading_s", "main"]

HEADING = '[data-testid="stMain"] h1'
DONE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
ONE_LINE = 'import streamlit as st\n\nst.title("x")\n'
TIMEOUT_MS = 300_000
FIRST_STEP = "1 · A confident prediction that collapses"  # the story's first tab (tests/test_browser_demo.py)


def app_pages() -> list[tuple[str, str]]:
    """(title, URL path) of every page in ``app.PAGES``: the default page at ``/``, the others at their file stem."""
    from app import PAGES

    return [(title, "" if i == 0 else "/" + Path(path).stem) for i, (path, title, _) in enumerate(PAGES)]


@contextlib.contextmanager
def baseline_server(tmp: Path) -> Iterator[str]:
    """The one-line page, served as the app is (same ``serve_app``, a copy of the app's Streamlit config)."""
    folder = Path(tempfile.mkdtemp(dir=tmp, prefix="one_line_"))
    (folder / ".streamlit").mkdir()
    shutil.copy(ROOT / ".streamlit" / "config.toml", folder / ".streamlit" / "config.toml")
    (folder / "one_line.py").write_text(ONE_LINE)
    with serve_app(folder / "registry.sqlite3", script="one_line.py", cwd=folder, timeout=300) as url:
        yield url


@contextlib.contextmanager
def app_server(tmp: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` with a fresh registry of its own."""
    folder = Path(tempfile.mkdtemp(dir=tmp, prefix="app_"))
    with serve_app(folder / "registry.sqlite3", timeout=300, env=env) as url:
        yield url


def first_heading_s(browser, url: str) -> tuple[float, float]:
    """Seconds from navigation to the first heading of the main area, and to the end of the page's script run.

    In a new browser context (a new session). The run's end is when Streamlit marks the app ``notRunning``
    after the heading is on screen; waiting for it keeps the next load from competing with this run.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.locator(HEADING).first.wait_for(state="visible", timeout=TIMEOUT_MS)
        heading = time.perf_counter() - t0
        page.locator(DONE).wait_for(state="attached", timeout=TIMEOUT_MS)
        return heading, time.perf_counter() - t0
    finally:
        context.close()


def demo_first_step_s(browser, url: str) -> float:
    """Seconds from the click on "Run the demo" (Home drawn in full) to the story's first step on screen."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    try:
        page = context.new_page()
        page.goto(url, wait_until="commit")
        button = page.get_by_role("button", name="Run the demo")
        button.wait_for(timeout=TIMEOUT_MS)
        t0 = time.perf_counter()
        button.click()
        page.get_by_role("tab", name=FIRST_STEP).wait_for(timeout=1_800_000)
        return time.perf_counter() - t0
    finally:
        context.close()


def _measure(browser, server, path: str = "") -> tuple[tuple[float, float], tuple[float, float]]:
    """Fresh and warm (heading, run end) seconds for ``path`` on one new server."""
    with server as url:
        return first_heading_s(browser, url + path), first_heading_s(browser, url + path)


def _summary(values: list[float], digits: int = 2) -> str:
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}–{max(values):.{digits}f}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="pairs of servers per page (default 3)")
    parser.add_argument("--pages", nargs="*", help="only these page titles (default: all)")
    parser.add_argument("--demo", action="store_true", help="also time the demo to its first story step")
    parser.add_argument("--demo-only", action="store_true", help="only the demo")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    pages = [p for p in app_pages() if not args.pages or p[0] in args.pages]
    rows: dict[str, dict[str, list[float]]] = {}
    demo: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="first_paint_") as tmp_name, sync_playwright() as pw:
        tmp = Path(tmp_name)
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            for title, path in [] if args.demo_only else pages:
                row = rows.setdefault(title, {f"{w}_{k}": [] for w in ("base", "app")
                                              for k in ("fresh", "warm", "fresh_done", "warm_done")})
                for r in range(args.repeats):
                    order = ("base", "app") if r % 2 == 0 else ("app", "base")
                    for which in order:
                        if which == "base":
                            fresh, warm = _measure(browser, baseline_server(tmp))
                        else:
                            fresh, warm = _measure(browser, app_server(tmp), path)
                        for key, (heading, done) in (("fresh", fresh), ("warm", warm)):
                            row[f"{which}_{key}"].append(heading)
                            row[f"{which}_{key}_done"].append(done)
                        print(f"  {title} #{r + 1} {which}: fresh {fresh[0]:.2f} s (run ends {fresh[1]:.2f} s), "
                              f"warm {warm[0]:.2f} s (run ends {warm[1]:.2f} s)", flush=True)
            if args.demo or args.demo_only:
                for size in ("quick", "full"):
                    with app_server(tmp, env={"AUDIT_DEMO_SIZE": size}) as url:
                        demo[size] = demo_first_step_s(browser, url)
                    print(f"  demo {size}: {demo[size]:.1f} s to the first story step", flush=True)
        finally:
            browser.close()
    if rows:
        print(f"\nFirst heading, app ÷ one-line page, median [min–max] over {args.repeats} pairs of fresh servers")
        print(f"{'page':<16} {'fresh ratio':<20} {'warm ratio':<20} {'app fresh s':<20} {'one-line fresh s':<20}"
              f" {'app warm s':<20} {'one-line warm s'}")
        for title, row in rows.items():
            fresh = [a / b for a, b in zip(row["app_fresh"], row["base_fresh"])]
            warm = [a / b for a, b in zip(row["app_warm"], row["base_warm"])]
            print(f"{title:<16} {_summary(fresh):<20} {_summary(warm):<20} {_summary(row['app_fresh']):<20} "
                  f"{_summary(row['base_fresh']):<20} {_summary(row['app_warm']):<20} {_summary(row['base_warm'])}")
        print("\nEnd of the page's first script run (the page complete), app, seconds from navigation")
        print(f"{'page':<16} {'fresh':<20} {'warm':<20}")
        for title, row in rows.items():
            print(f"{title:<16} {_summary(row['app_fresh_done']):<20} {_summary(row['app_warm_done'])}")
    if demo:
        print("\nDemo, click on 'Run the demo' to the first story step: "
              + ", ".join(f"{size} {s:.1f} s" for size, s in demo.items()))


if __name__ == "__main__":
    main()
