"""The BLAS thread count is one fixed number per process, whatever other threads do.

``threadpoolctl`` limits are process-wide. The Transport protocol's
one-thread sections used to restore the previous count when they ended, even
while another session's section was still running in another thread of the
same server, which then computed with two threads and wrote different last
digits (the load test's ``mismatched_sessions``). Each check runs in a fresh
interpreter with two BLAS threads to start from, so that a restored count is
visible (this test process is pinned to one by ``conftest.py``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from audit_core.native_threads import ENV, blas_threads


def _run(code: str, **env: str) -> dict:
    full = dict(os.environ, OPENBLAS_NUM_THREADS="2", **env)
    full.pop(ENV, None) if ENV not in env else None
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                         timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


_PRELUDE = """
import json, threading
import numpy, scipy.linalg
from threadpoolctl import threadpool_info
from audit_core.native_threads import pin_blas_threads, serial_blas

def blas():
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
"""


def test_overlapping_sections_in_two_threads_keep_one_thread_until_the_last_ends():
    got = _run(_PRELUDE + """
a_in, a_out, b_checked = threading.Event(), threading.Event(), threading.Event()
seen = {}
def a():
    with serial_blas():
        a_in.set(); a_out.wait()
def b():
    a_in.wait()
    with serial_blas():
        a_out.set(); ta.join()         # A's section has ended; B's has not
        seen["b_after_a"] = blas()
seen["before"] = blas()
ta = threading.Thread(target=a); tb = threading.Thread(target=b)
ta.start(); tb.start(); tb.join()
seen["after_both"] = blas()
print(json.dumps(seen))
""")
    assert got == {"before": [2], "b_after_a": [1], "after_both": [2]}


def test_the_pin_holds_for_the_process_and_sections_do_not_undo_it():
    got = _run(_PRELUDE + """
seen = {"n": pin_blas_threads(), "pinned": blas()}
with serial_blas():
    pass
seen["after_section"] = blas()
print(json.dumps(seen))
""")
    assert got == {"n": 1, "pinned": [1], "after_section": [1]}


def test_another_fixed_count_and_a_bad_one(monkeypatch):
    got = _run(_PRELUDE + """
print(json.dumps({"n": pin_blas_threads(), "pinned": blas()}))
""", AUDIT_BLAS_THREADS="2")
    assert got == {"n": 2, "pinned": [2]}
    monkeypatch.setenv(ENV, "two")
    with pytest.raises(ValueError, match="AUDIT_BLAS_THREADS='two' is not a whole number"):
        blas_threads()
    monkeypatch.setenv(ENV, "0")
    with pytest.raises(ValueError, match="must be at least 1"):
        blas_threads()
