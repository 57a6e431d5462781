"""One BLAS thread for the Transport protocol's own small matrix products."""
from __future__ import annotations

__all__ = ["serial_blas"]

_BLAS_CONTROLLER = None


def serial_blas():
    """Context limiting BLAS to one thread for the protocol's own numerics.

    The metric, mapping and bootstrap code makes many small or skinny BLAS
    calls (``(8, n) @ (n, k)`` products, ``(1, n)`` dot products). With a
    multi-threaded OpenBLAS on a shared machine these run up to ten times
    slower than on one thread (measured: a 75,000-record
    ``fit_logistic_1d`` takes 318 ms with default threading under load and
    28 ms on one thread), and a fixed thread count also fixes the summation
    order. Model training and ``predict_proba`` are not wrapped.
    """
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
            from contextlib import nullcontext

            return nullcontext()
        _BLAS_CONTROLLER = ThreadpoolController()  # library discovery once (about 10 ms)
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
