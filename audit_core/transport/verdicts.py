"""Tolerance verdicts for paired OOD − ID changes.

For a metric with declared tolerance ``δ`` and a bootstrap interval
``[lo, hi]`` of its change ``Δ``:

* ``transport-stable`` — the whole interval lies within ``±δ``
  (``−δ ≤ lo`` and ``hi ≤ δ``);
* ``transport-sensitive`` — the whole interval lies beyond ``δ``
  (``lo > δ`` or ``hi < −δ``);
* ``indeterminate`` — otherwise (or when the interval is undefined).
"""
from __future__ import annotations

import math
from typing import Mapping

from ..errors import fail, register_messages

__all__ = ["VERDICTS", "DEFAULT_TOLERANCES", "classify_change", "check_tolerances"]

VERDICTS = ("transport-stable", "transport-sensitive", "indeterminate")

#: δ_m per metric name (absolute units of the metric). Declared before any
#: evaluation; a run refuses to change them afterwards.
DEFAULT_TOLERANCES: dict[str, float] = {
    "prevalence": 0.02,
    "auroc": 0.02,
    "average_precision": 0.03,
    "pr_skill": 0.05,
    "brier_score": 0.01,
    "log_loss": 0.03,
    "ece": 0.02,
    "calibration_intercept": 0.2,
    "calibration_slope": 0.1,
    "rate": 0.03,
    "risk": 0.02,
    "hcep_at_0.80": 0.01,
    "hcep_at_0.90": 0.01,
    "hcep_at_0.95": 0.01,
    "coverage": 0.02,
    "mean_set_size": 0.05,
}

register_messages(
    {
        "TRANSPORT_BAD_TOLERANCE": "Tolerance for {metric!r} must be a finite number ≥ 0, got {value!r}.",
        "TRANSPORT_UNKNOWN_TOLERANCE": (
            "Tolerance given for {metric!r}, which is not a metric with a verdict{hint}. "
            "Known metrics: {known}."
        ),
    }
)


def check_tolerances(tol: Mapping[str, float]) -> dict[str, float]:
    """Validate a tolerance mapping; returns a plain dict of floats."""
    import difflib

    out = {}
    for k, v in dict(tol).items():
        if str(k) not in DEFAULT_TOLERANCES:
            close = difflib.get_close_matches(str(k), list(DEFAULT_TOLERANCES), n=1)
            raise fail(
                "TRANSPORT_UNKNOWN_TOLERANCE",
                metric=k,
                hint=f" (did you mean {close[0]!r}?)" if close else "",
                known=", ".join(DEFAULT_TOLERANCES),
            )
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise fail("TRANSPORT_BAD_TOLERANCE", metric=k, value=v) from None
        if not math.isfinite(x) or x < 0:
            raise fail("TRANSPORT_BAD_TOLERANCE", metric=k, value=v)
        out[str(k)] = x
    return out


def classify_change(lo: float, hi: float, delta: float) -> str:
    """Verdict for interval ``[lo, hi]`` against tolerance ``delta``.

    Examples
    --------
    >>> classify_change(-0.01, 0.015, 0.02)
    'transport-stable'
    >>> classify_change(-0.09, -0.03, 0.02)
    'transport-sensitive'
    >>> classify_change(-0.03, 0.01, 0.02)
    'indeterminate'
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "indeterminate"
    if lo >= -delta and hi <= delta:
        return "transport-stable"
    if lo > delta or hi < -delta:
        return "transport-sensitive"
    return "indeterminate"
