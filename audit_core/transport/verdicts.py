"""Tolerance verdicts for paired OOD − ID changes.

For a metric with declared tolerance ``δ`` and a bootstrap interval
``[lo, hi]`` of its change ``Δ``:

* ``transport-stable`` — the whole interval lies within ``±δ``
  (``−δ ≤ lo`` and ``hi ≤ δ``);
* ``transport-sensitive`` — the whole interval lies beyond ``δ``
  (``lo > δ`` or ``hi < −δ``);
* ``indeterminate`` — otherwise (or when the interval is undefined).

Each verdict also gets a **direction**, from the metric's good direction
(:data:`GOOD_DIRECTION`):

* ``within tolerance`` — the change is transport-stable;
* ``better`` / ``worse`` — the change is transport-sensitive and moves the
  metric in its good / harmful direction. For a metric whose good value is a
  target (calibration slope 1, intercept 0, coverage ``1 − α``, selection
  rate ``s``), "better" means the OOD value is closer to the target than the
  ID value (refit means);
* ``undetermined`` — the change is indeterminate;
* ``shifted`` — the prevalence changed beyond its tolerance; a prevalence is
  a fact about the population, neither better nor worse.

An improvement is never reported as a harm: the page colours by direction.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, TypeGuard

from ..errors import fail, register_messages

__all__ = ["VERDICTS", "DIRECTIONS", "DEFAULT_TOLERANCES", "GOOD_DIRECTION", "classify_change", "check_tolerances",
           "good_direction", "change_direction", "verdict_agreement"]

VERDICTS = ("transport-stable", "transport-sensitive", "indeterminate")
DIRECTIONS = ("better", "worse", "within tolerance", "undetermined", "shifted")

#: The good direction of each metric the project reports (binary, multi-class, selective and conformal; the
#: project's one such table): ``"higher"``, ``"lower"``, ``"target"`` (closer to
#: :func:`good_direction`'s target is better) or ``"none"`` (a population fact).
GOOD_DIRECTION: dict[str, str] = {
    "prevalence": "none",
    "auroc": "higher",
    "average_precision": "higher",
    "pr_skill": "higher",
    "brier_score": "lower",
    "log_loss": "lower",
    "ece": "lower",
    "calibration_intercept": "target",  # 0
    "calibration_slope": "target",  # 1
    "ace": "lower",
    "mce": "lower",
    "spiegelhalter_z": "target",  # 0
    "venn_abers_width": "lower",  # a narrower [p0, p1]: the calibration data pin the probability down better
    "rate": "target",  # the nominal selection rate s
    "risk": "lower",
    "hcep_at_0.80": "lower",
    "hcep_at_0.90": "lower",
    "hcep_at_0.95": "lower",
    "coverage": "target",  # the nominal 1 - alpha
    "mean_set_size": "lower",  # read with coverage: smaller sets at the same coverage
    # multi-class Transport (audit_core.transport.multiclass)
    "accuracy": "higher",
    "auroc_macro": "higher",
    "brier_multiclass": "lower",
    "log_loss_multiclass": "lower",
    "ece_top": "lower",
    "ece_classwise": "lower",
    "aurc": "lower",
    "excess_aurc": "lower",
}

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
    "ace": 0.02,
    "mce": 0.1,  # one bin's gap: noisier than the mass-weighted ECE and ACE
    "spiegelhalter_z": 2.0,  # in null standard deviations; z grows like √n, read with n
    "venn_abers_width": 0.01,  # mean p1 − p0 (venn_abers mapping only); about 1/n_cal where the scores are dense
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


def good_direction(metric: str, *, alpha: float | None = None, selection_rate: float | None = None):
    """``(kind, target, text)``: the metric's good direction, its target value (or None) and a label.

    Examples
    --------
    >>> good_direction("brier_score")
    ('lower', None, 'lower is better')
    >>> good_direction("coverage", alpha=0.1)
    ('target', 0.9, 'closer to 0.9 (1 − α) is better')
    """
    metric = metric.rsplit(":", 1)[-1]  # multi-class conformal names carry their score: "aps:coverage"
    kind = GOOD_DIRECTION.get(metric, "higher" if metric.startswith(("auroc", "average_precision")) else "none")
    if metric.startswith(("hcep", "risk")):
        kind = "lower"
    target, text = None, {"higher": "higher is better", "lower": "lower is better",
                          "none": "no better direction (a population fact)"}.get(kind, "")
    if kind == "target":
        if metric == "calibration_slope":
            target, why = 1.0, ""
        elif metric in ("calibration_intercept", "spiegelhalter_z"):
            target, why = 0.0, ""
        elif metric == "rate" and _finite(selection_rate):
            target, why = float(selection_rate), " (the selection rate s)"
        elif "coverage" in metric and _finite(alpha):
            target, why = round(1.0 - float(alpha), 12), " (1 − α)"
        else:
            return "none", None, "no better direction"
        text = f"closer to {target:g}{why} is better"
    return kind, target, text


def _finite(v: Any) -> TypeGuard[float]:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def change_direction(verdict: str, metric: str, *, lo: float, hi: float, id_value: float, ood_value: float,
                     alpha: float | None = None, selection_rate: float | None = None) -> str:
    """Direction of a classified change (see the module docstring).

    Parameters
    ----------
    verdict : str
        From :func:`classify_change` (or ``"no tolerance declared"``).
    lo, hi : float
        The interval of the change OOD − ID.
    id_value, ood_value : float
        Refit means of the metric on the ID and OOD tests (used for metrics
        with a target).

    Examples
    --------
    Brier score falling by 0.06 beyond a 0.01 tolerance is an improvement:

    >>> change_direction("transport-sensitive", "brier_score", lo=-0.07, hi=-0.05, id_value=0.2, ood_value=0.14)
    'better'
    >>> change_direction("transport-sensitive", "calibration_slope", lo=0.2, hi=0.4, id_value=0.8, ood_value=1.1)
    'better'
    """
    if verdict == "transport-stable":
        return "within tolerance"
    if verdict != "transport-sensitive":
        return "undetermined" if verdict == "indeterminate" else verdict
    kind, target, _ = good_direction(metric, alpha=alpha, selection_rate=selection_rate)
    if kind == "higher":
        return "better" if lo > 0 else "worse"
    if kind == "lower":
        return "better" if hi < 0 else "worse"
    if kind == "target" and _finite(id_value) and _finite(ood_value):
        d_id, d_ood = abs(id_value - target), abs(ood_value - target)
        if d_ood != d_id:
            return "better" if d_ood < d_id else "worse"
        return "undetermined"
    return "shifted"


def verdict_agreement(a, b) -> dict[str, float]:
    """How far two verdict tables of the same run apart (two bootstraps, or one reseeded).

    Parameters
    ----------
    a, b : pandas.DataFrame
        ``verdicts`` tables of :func:`~audit_core.transport.changes.classify_changes`, rows in the same order.

    Returns
    -------
    dict
        ``max_gap``: the largest ``|Δ endpoint|`` of the verdict intervals;
        ``max_gap_width``: the largest ``|Δ endpoint|`` in units of ``b``'s
        interval width (rows with a positive width); ``flips``: rows whose
        verdict differs; ``rows``.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"ci_low": [0.0, 0.1], "ci_high": [1.0, 0.3], "verdict": ["x", "y"]})
    >>> b = pd.DataFrame({"ci_low": [0.0, 0.1], "ci_high": [0.9, 0.2], "verdict": ["x", "z"]})
    >>> {k: round(v, 3) for k, v in verdict_agreement(a, b).items()}
    {'max_gap': 0.1, 'max_gap_width': 1.0, 'flips': 1, 'rows': 2}
    """
    import numpy as np

    gap = np.maximum((a["ci_low"] - b["ci_low"]).abs().to_numpy(), (a["ci_high"] - b["ci_high"]).abs().to_numpy())
    width = (b["ci_high"] - b["ci_low"]).to_numpy()
    ok = np.isfinite(gap)
    rel = gap[ok & (width > 0)] / width[ok & (width > 0)]
    return {"max_gap": float(gap[ok].max()) if ok.any() else 0.0, "max_gap_width": float(rel.max()) if rel.size else 0.0,
            "flips": int((a["verdict"].to_numpy() != b["verdict"].to_numpy()).sum()), "rows": int(len(a))}
