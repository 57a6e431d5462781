"""Requests a canary server receives when reports of hostile runs are printed (PDF) and opened (Chromium with network).

The runs carry column, category, class and run names such as ``<span style="fill:url(http://HOST/a#a)">`` and
``<a href="http://HOST/phish">…</a>`` (``tests/hostile_names.py``). Run from the root of a checkout; pass another
checkout's root to measure its code (the hostile runs and the canary come from this checkout)::

    .venv/bin/python benchmarks/canary_requests.py [ROOT]
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # the test helpers come from this checkout, the code from ROOT
ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else HERE).resolve()
sys.path[:0] = [str(ROOT), str(HERE / "tests")]

import hostile_names  # noqa: E402

sys.modules["tests.hostile_names"] = hostile_names  # the test module's import, whatever ROOT's tests hold
from components.report import write_pdf, write_report  # noqa: E402
from hostile_names import hostile_registry  # noqa: E402
from test_report_offline import Canary, _page  # noqa: E402


def main() -> None:
    canary = Canary()
    tmp = Path(tempfile.mkdtemp())
    page = tmp / "p.html"
    page.write_text(_page(canary.host, canary.port))
    write_pdf(page, tmp / "p.pdf")
    print("a page asking for the canary 8 ways, printed:", len(canary.hits))
    reg, ids = hostile_registry(tmp, canary.host)
    printed = opened = 0
    for kind, run_id in ids.items():
        report = write_report(reg.load(run_id), tmp / f"{kind}.html")
        canary.hits.clear()
        write_pdf(report, tmp / f"{kind}.pdf")
        n_printed = len(canary.hits)
        canary.hits.clear()
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                            "--virtual-time-budget=10000", "--dump-dom", Path(report).as_uri()],
                           capture_output=True, timeout=180)
        n_opened = len(canary.hits)
        printed, opened = printed + n_printed, opened + n_opened
        print(f"{kind}: printed {n_printed}, opened {n_opened}")
    print(f"hostile reports: printed {printed}, opened {opened}")


if __name__ == "__main__":
    main()
