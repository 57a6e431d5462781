"""Selective prediction transported unchanged (stage 5).

Confidence is ``c = max(p̂, 1 − p̂)``; the prediction is ``ŷ = 1[p̂ ≥ 0.5]``
and an error is ``ŷ ≠ y``. A record is *selected* (answered) when
``c ≥ τ``.

Threshold for a desired selection rate ``s`` (weighted empirical quantile on
the selection partition): the largest observed confidence ``t`` whose
weighted share ``W(c ≥ t) / W`` is at least ``s``. With ties the achieved
rate may exceed ``s``; the threshold is never tuned on target data.

Risk–selection curve: records sorted by decreasing confidence with a stable
sort (input order breaks ties, so the curve is deterministic) and every
record kept as its own step. ``AURC = Σ_k w_k · risk_k / W`` with
``risk_k`` the weighted error rate among the first ``k`` records; the
excess AURC subtracts the AURC of the correct-first ordering (all correct
records, then all errors), the best any confidence score could do.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "confidence",
    "errors",
    "ordered_curve",
    "selection_threshold",
    "selective_stats",
    "selective_stats_many",
    "risk_selection_curve",
    "aurc",
    "excess_aurc",
    "aurc_and_excess",
    "aurc_pair",
    "stats_from",
]


def confidence(p: np.ndarray) -> np.ndarray:
    """``max(p̂, 1 − p̂)`` of shape (n,)."""
    p = np.asarray(p, dtype=float)
    return np.maximum(p, 1.0 - p)


def errors(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """0/1 error of the decision ``ŷ = 1[p̂ ≥ 0.5]``; shape (n,)."""
    return ((np.asarray(p) >= 0.5).astype(float) != np.asarray(y, dtype=float)).astype(float)


def selection_threshold(c: np.ndarray, s: float, *, sample_weight: np.ndarray | None = None) -> float:
    """Largest confidence ``t`` with weighted share ``W(c ≥ t)/W ≥ s``.

    Parameters
    ----------
    c : ndarray of shape (n,)
        Confidences on the selection partition.
    s : float in (0, 1]
        Desired selection rate.

    Examples
    --------
    c = 0.6, 0.7, 0.8, 0.9 and s = 0.5: W(c ≥ 0.8) = 2/4 ≥ 0.5 while
    W(c ≥ 0.9) = 1/4 < 0.5, so τ = 0.8.

    >>> selection_threshold(np.array([0.6, 0.7, 0.8, 0.9]), 0.5)
    0.8
    """
    c = np.asarray(c, dtype=float)
    w = np.ones(len(c)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    order = np.argsort(-c, kind="stable")
    cs, ws = c[order], w[order]
    # share selected by threshold cs[k] includes all ties of cs[k]
    last_of_tie = np.r_[cs[1:] != cs[:-1], True]
    share = np.cumsum(ws) / ws.sum()
    ok = last_of_tie & (share >= s - 1e-12)
    k = int(np.flatnonzero(ok)[0])
    return float(cs[k])


def selective_stats(y, p, tau: float, *, sample_weight=None) -> dict[str, float]:
    """Achieved selection rate, selective risk and HCEP at threshold ``tau``.

    Returns
    -------
    dict with ``rate = W(c ≥ τ)/W``, ``risk`` (weighted error rate among the
    selected; ``nan`` when nothing is selected) and ``hcep = rate × risk``
    (the weighted share of records that are selected *and* wrong).
    """
    return selective_stats_many(y, p, [tau], sample_weight=sample_weight)[0]


def selective_stats_many(y, p, taus, *, sample_weight=None) -> list[dict[str, float]]:
    """:func:`selective_stats` for several thresholds, sharing the confidence and the errors."""
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return stats_from(confidence(p), errors(y, p), w, taus)


def stats_from(c: np.ndarray, e: np.ndarray, w: np.ndarray, taus) -> list[dict[str, float]]:
    """``rate``, ``risk`` and ``hcep`` at each threshold for any confidence ``c`` and 0/1 errors ``e`` (n,)."""
    W = w.sum()
    out = []
    for tau in taus:
        sel = c >= tau
        ws = w[sel].sum()
        rate = ws / W
        risk = float(np.dot(w[sel], e[sel]) / ws) if ws > 0 else float("nan")
        out.append({"rate": float(rate), "risk": risk, "hcep": float(np.dot(w[sel], e[sel]) / W)})
    return out


def ordered_curve(e: np.ndarray, w: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and selective risk after each record taken in ``order`` (errors ``e``, weights ``w``; shape (n,))."""
    cw = np.cumsum(w[order])
    ce = np.cumsum((w * e)[order])
    return cw / cw[-1], ce / cw


def risk_selection_curve(y, p, *, sample_weight=None) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and selective risk after each record, most confident first.

    Returns
    -------
    coverage, risk : ndarray of shape (n,)
    """
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    order = np.argsort(-confidence(p), kind="stable")
    return ordered_curve(errors(y, p), w, order)


def aurc(y, p, *, sample_weight=None) -> float:
    """Area under the risk–selection curve, ``Σ_k w_k risk_k / W``.

    Examples
    --------
    p = 0.9 (y=1, right), 0.8 (y=0, wrong), 0.7 (y=1, right): risks after
    each record 0, 1/2, 1/3, so AURC = (0 + 1/2 + 1/3)/3 = 5/18.

    >>> round(aurc([1, 0, 1], [0.9, 0.8, 0.7]), 10)
    0.2777777778
    """
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    _, risk = risk_selection_curve(y, p, sample_weight=w)
    order = np.argsort(-confidence(np.asarray(p, dtype=float)), kind="stable")
    return float(np.dot(w[order], risk) / w.sum())


def aurc_and_excess(y, p, *, sample_weight=None) -> tuple[float, float]:
    """``(aurc, excess_aurc)`` with one sort by confidence (the same values as the two functions)."""
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return aurc_pair(confidence(p), errors(y, p), w)


def aurc_pair(c: np.ndarray, e: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``(aurc, excess_aurc)`` of any confidence ``c`` (n,) and 0/1 errors ``e`` (n,) with weights ``w`` (n,).

    The binary functions pass ``max(p̂, 1 − p̂)`` and the errors of the 0.5
    decision; the multi-class rules pass ``max_c P_c`` and the arg-max errors.
    """
    order = np.argsort(-c, kind="stable")
    _, risk = ordered_curve(e, w, order)
    a = float(np.dot(w[order], risk) / w.sum())
    best = np.r_[np.flatnonzero(e == 0), np.flatnonzero(e != 0)]  # = argsort(e, kind="stable")
    _, r = ordered_curve(e, w, best)
    return a, a - float(np.dot(w[best], r) / w.sum())


def excess_aurc(y, p, *, sample_weight=None) -> float:
    """AURC minus the AURC of the correct-first ordering.

    Examples
    --------
    Same records as :func:`aurc`: correct-first risks 0, 0, 1/3, AURC* = 1/9,
    so the excess is 5/18 − 2/18 = 1/6.

    >>> round(excess_aurc([1, 0, 1], [0.9, 0.8, 0.7]), 10)
    0.1666666667
    """
    y = np.asarray(y, dtype=float)
    p = np.asarray(p, dtype=float)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    e = errors(y, p)
    best = np.argsort(e, kind="stable")
    _, r = ordered_curve(e, w, best)
    return aurc(y, p, sample_weight=w) - float(np.dot(w[best], r) / w.sum())
