"""Three concurrent browser sessions against one server (the CI-sized load test).

Runs ``benchmarks/load_test.py`` with 3 sessions (model, Fragility and a small
Transport audit each): every session must finish, show the numbers of a
single-session run with its seed (Transport: identical hashes of the saved
tables), and own its saved runs. Under ``CI=true`` a missing Chromium fails (``browser.chromium_path``),
it never skips. No wall-clock assertion: times are printed, not checked.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from browser import chromium_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

# three sessions against one server, sized for a machine the test has mostly to itself: under `make test -n 3` it
# runs on the "serial" worker, never beside the other tests of that group (the wall-clock bound of the regex test)
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("serial")]


def test_three_concurrent_sessions(tmp_path):
    chromium_path()
    from load_test import run_load

    report = run_load(3, cases=20, timeout_s=600, workdir=tmp_path, transport=True)
    print({k: v for k, v in report.items() if k != "failed_sessions"})
    assert report["failed_sessions"] == [] and report["baseline_failed"] == []
    assert report["mismatched_sessions"] == []
    assert report["distinct_run_ids"]
    assert report["registry_runs"] == 3 * (3 + 2) and report["registry_all_done"]
    assert len(set(report["baseline_transport_hash"].values())) == 2  # the two seeds differ
    assert report["passed"]
