"""Shared pieces of the hardening suite: the declared-or-valid check and small fixtures.

Every entry point that takes user input must return a valid result or raise
an :class:`~audit_core.errors.AuditInputError` whose code is declared in
:data:`audit_core.errors.MESSAGES`. :func:`declared_or_valid` is that check;
any other exception propagates and fails the test.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pandas as pd
from hypothesis import HealthCheck

from audit_core.errors import MESSAGES, AuditInputError

__all__ = ["FUZZ", "declared_or_valid", "expr_frame", "tiny_gold"]

FUZZ = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def declared_or_valid(call: Callable[[], Any], check: Callable[[Any], None] | None = None) -> str:
    """Run ``call``; return ``"ok"`` or the declared code. Anything else raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call()
        except AuditInputError as exc:
            assert exc.code in MESSAGES, f"undeclared code {exc.code!r}"
            assert exc.message and str(exc) == exc.message
            return exc.code
    if check is not None:
        check(out)
    return "ok"


def expr_frame() -> pd.DataFrame:
    """Columns of every kind an expression can read, with NaN, inf and missing."""
    return pd.DataFrame(
        {
            "a": [1.0, 2.5, np.nan, np.inf, -3.0],
            "n": [1, 2, 3, 4, 5],
            "b": ["x", "y", None, "<script>", ""],
            "flag": [True, False, True, False, True],
            "d": pd.to_datetime(["2020-01-01", "2021-06-30", None, "2023-12-31", "2019-02-28"]),
            "income_real": [10_000.0, 60_000.0, np.nan, 50_000.0, 0.0],
        }
    )


def tiny_gold():
    """Two executed cases over G, N, A for the prediction parser."""
    from audit_core.receipts.accounting import Gold

    src = ("G", "N", "A")
    subsets = [frozenset(s) for s in ([], ["G"], ["N"], ["A"], ["G", "N"], ["G", "A"], ["N", "A"], ["G", "N", "A"])]
    cells1 = {s: ("deny" if "G" in s else "approve") for s in subsets}
    cells2 = {s: "approve" for s in subsets}
    return {
        "c1": Gold("c1", src, "approve", "deny", frozenset({frozenset({"G"})}), cells1),
        "c2": Gold("c2", src, "approve", "approve", frozenset(), cells2),
    }
