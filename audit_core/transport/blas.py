"""One BLAS thread for the Transport protocol's own small matrix products."""
from __future__ import annotations

from ..native_threads import serial_blas as _serial_blas

__all__ = ["serial_blas"]


def serial_blas():
    """Context limiting BLAS to one thread for the protocol's own numerics.

    The metric, mapping and bootstrap code makes many small or skinny BLAS
    calls (``(8, n) @ (n, k)`` products, ``(1, n)`` dot products). With a
    multi-threaded OpenBLAS on a shared machine these run up to ten times
    slower than on one thread (measured: a 75,000-record
    ``fit_logistic_1d`` takes 318 ms with default threading under load and
    28 ms on one thread), and a fixed thread count also fixes the summation
    order. Model training and ``predict_proba`` are not wrapped.

    Overlapping blocks in several threads share one limit (see
    :func:`audit_core.native_threads.serial_blas`).
    """
    return _serial_blas()
