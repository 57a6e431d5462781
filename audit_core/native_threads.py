"""Thread counts of the native linear-algebra libraries, fixed so that a result never depends on what runs beside it.

OpenBLAS splits a product or a dot product across its threads, so the same
``X.T @ r`` summed on one thread and on two differs in the last bits. Two
things made that visible:

* ``threadpoolctl`` limits are process-wide. In the app, sessions run in
  threads of one server process; when one session's Transport protocol left
  its one-thread section it restored two threads for every other session,
  in the middle of their runs. Under concurrent sessions the same seed then
  gave Transport tables that differed by up to 3.6e-15 from a single-session
  run (the load test's ``mismatched_sessions``), and which
  digits were written depended on the other users' timing.
* Model fits outside those sections ran with one or two threads depending on
  whether another session happened to be inside one.

So every entry point (``app.py``, the CLI, the test suite) calls
:func:`pin_blas_threads` once, first: the process computes with one BLAS
thread from then on (``AUDIT_BLAS_THREADS`` chooses another fixed count), and
:func:`serial_blas` sections only re-assert that count, counted so that the
last one out, not the first, restores anything. On a shared two-core machine one thread is also the faster
choice for these skinny products (see :mod:`audit_core.transport.blas`).
OpenMP (LightGBM, HistGradientBoosting) is not pinned here: the zoo fits
LightGBM with ``n_jobs=1``.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager

from .limits import setting

__all__ = ["ENV", "blas_threads", "pin_blas_threads", "serial_blas"]

#: Environment variable naming the fixed BLAS thread count (default 1).
ENV = "AUDIT_BLAS_THREADS"
_LOCK = threading.Lock()
_STATE: dict = {"pinned": None, "depth": 0, "limiter": None, "controller": None}


def blas_threads() -> int:
    """The BLAS thread count this process computes with: ``AUDIT_BLAS_THREADS`` or 1."""
    raw = setting(ENV)
    try:
        n = int(raw) if raw else 1
    except ValueError:
        raise ValueError(f"{ENV}={raw!r} is not a whole number of threads") from None
    if n < 1:
        raise ValueError(f"{ENV}={raw!r} must be at least 1")
    return n


def _controller():
    if _STATE["controller"] is None:
        from threadpoolctl import ThreadpoolController

        _STATE["controller"] = ThreadpoolController()  # library discovery (about 10 ms)
    return _STATE["controller"]


def pin_blas_threads() -> int:
    """Fix the BLAS thread count of this process (idempotent); returns it.

    Sets ``OPENBLAS_NUM_THREADS`` and its kin for libraries loaded later
    (unless the user set them) and limits the ones already loaded.
    """
    n = blas_threads()
    with _LOCK:
        for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
            os.environ.setdefault(var, str(n))
        _controller().limit(limits=n, user_api="blas")  # never restored: the process's policy
        _STATE["pinned"] = n
    return n


@contextmanager
def serial_blas():
    """One BLAS thread inside the block, for every thread of the process, until the last block exits.

    Blocks may overlap across threads (app sessions, threaded schedulers): the
    first to enter sets the limit, the last to leave restores the count before
    the first, so no block runs with another's restored count.
    """
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["limiter"] = _controller().limit(limits=1, user_api="blas")
        else:
            _controller().limit(limits=1, user_api="blas")  # libraries loaded since the first block
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                _STATE["limiter"].restore_original_limits()
                _STATE["limiter"] = None
