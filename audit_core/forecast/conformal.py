"""Weighted split conformal (Tibshirani, Barber, Candès and Ramdas, 2019) for binary and multi-class sets.

Scores are ``s = 1 − P_y`` (the Transport score, :func:`audit_core.transport.conformal.class_scores`
for two classes). With calibration scores ``s_i`` of weights ``w_i`` and a
test point of weight ``w_t`` (all from the same density-ratio map), the
target-adapted quantile is the ``1 − α`` quantile of the distribution that
puts mass ``w_i / (Σ w + w_t)`` on each ``s_i`` and ``w_t / (Σ w + w_t)`` on
``+∞``: the smallest ``s_(k)`` with ``Σ_{j ≤ k} w_(j) ≥ (1 − α)(Σ w + w_t)``,
or ``+∞`` when no score reaches it. With equal weights this is the unweighted
order statistic ``s_(⌈(n+1)(1−α)⌉)`` of
:func:`audit_core.transport.conformal.conformal_quantile`.

* **marginal**: one weighted quantile from all calibration records (per test point, through ``w_t``);
* **label-conditional** (Mondrian by class): for class ``c``, the weighted
  quantile of the class-``c`` calibration records, applied to class ``c``'s score.

A class is in the set when ``1 − P_c ≤ q̂`` (ties included, the Transport
allowance :data:`audit_core.transport.conformal.TIE_EPS`).

**Label-free coverage forecast.** Under covariate shift the target coverage of
any fixed set rule is ``E_S[w(x) 1(y ∈ C(x))] / E_S[w(x)]``, so the weighted
coverage of labelled source records forecasts it (:func:`weighted_coverage`).
"""
from __future__ import annotations

import numpy as np

from audit_core.transport.conformal import TIE_EPS, conformal_quantile

__all__ = ["label_scores", "weighted_quantile", "set_quantiles", "membership", "weighted_coverage"]


def label_scores(P, y) -> np.ndarray:
    """``1 − P[i, y_i]`` of shape (n,) for probabilities ``P`` (n, C) and labels ``y`` (n,) in ``0..C−1``."""
    P = np.asarray(P, dtype=float)
    return 1.0 - P[np.arange(len(P)), np.asarray(y, dtype=int)]


def weighted_quantile(scores, weights, test_weight, alpha: float) -> np.ndarray:
    """Tibshirani et al.'s weighted conformal quantile, for one or many test weights.

    Parameters
    ----------
    scores : array-like of shape (n,)
        Calibration scores.
    weights : array-like of shape (n,)
        Their weights (any positive scale; the test weights must share it).
    test_weight : float or array-like of shape (m,)
    alpha : float

    Returns
    -------
    ndarray of shape () or (m,)
        ``+inf`` where the atom at infinity is needed.

    Examples
    --------
    Five scores 0.1 … 0.5 with weights 1, 1, 1, 1, 2 and a test weight of 1:
    the total is 7, and ``0.8 · 7 = 5.6`` is first reached at 0.5 (cumulative 6).

    >>> float(weighted_quantile([0.3, 0.1, 0.5, 0.2, 0.4], [1, 1, 2, 1, 1], 1.0, 0.2))
    0.5

    With weights 2, 1, 1, 1, 1 (weight 2 on 0.1) the cumulative weights are
    2, 3, 4, 5, 6 and the threshold is again 5.6: 0.5. With α = 0.3 the
    threshold is 4.9: 0.4.

    >>> float(weighted_quantile([0.1, 0.2, 0.3, 0.4, 0.5], [2, 1, 1, 1, 1], 1.0, 0.3))
    0.4
    """
    s = np.asarray(scores, dtype=float)
    w = np.asarray(weights, dtype=float)
    t = np.asarray(test_weight, dtype=float)
    if s.size == 0:
        return np.full(t.shape, np.inf)
    order = np.argsort(s, kind="stable")
    ss, cw = s[order], np.cumsum(w[order])
    need = (1 - alpha) * (cw[-1] + t)
    k = np.searchsorted(cw, need - 1e-12 * (cw[-1] + t), side="left")
    return np.where(k < len(ss), ss[np.minimum(k, len(ss) - 1)], np.inf)


def set_quantiles(P_cal, y_cal, alpha: float, *, n_classes: int, method: str, w_cal=None, w_test=None) -> np.ndarray:
    """Quantiles of one set method, shape (m, C) for ``m`` test points (1 when unweighted).

    Parameters
    ----------
    P_cal : array-like of shape (n, C)
    y_cal : array-like of shape (n,)
    alpha : float
    n_classes : int
    method : {"marginal", "label_conditional"}
    w_cal : array-like of shape (n,), optional
        Calibration weights; with ``w_test`` the weighted (target-adapted) quantiles.
    w_test : array-like of shape (m,), optional

    Returns
    -------
    ndarray of shape (1, C) (unweighted: the transported rule) or (m, C)
    """
    s = label_scores(P_cal, y_cal)
    y = np.asarray(y_cal, dtype=int)
    groups = [np.ones(len(y), bool)] * n_classes if method == "marginal" else [y == c for c in range(n_classes)]
    if w_cal is None:
        return np.array([[conformal_quantile(s[g], alpha) for g in groups]])
    wc = np.asarray(w_cal, dtype=float)
    return np.column_stack([weighted_quantile(s[g], wc[g], np.asarray(w_test, dtype=float), alpha) for g in groups])


def membership(P, q) -> np.ndarray:
    """Sets as a boolean matrix (n, C): class ``c`` in the set iff ``1 − P_c ≤ q_c`` (``q`` of shape (1, C) or (n, C))."""
    return (1.0 - np.asarray(P, dtype=float)) <= np.asarray(q, dtype=float) + TIE_EPS


def weighted_coverage(y, sets, w=None, *, n_classes: int) -> dict[str, float]:
    """Weighted coverage: ``coverage``, ``coverage_class{c}`` and ``worst_class_coverage``.

    ``w`` (n,) may be importance weights (a covariate-shift forecast), class
    weights (a label-shift forecast) or none (the plain coverage). A class
    without records has coverage ``nan`` and is left out of the worst class.
    """
    y = np.asarray(y, dtype=int)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    covered = sets[np.arange(len(y)), y].astype(float)
    out = {"coverage": float(np.dot(w, covered) / w.sum())}
    per = []
    for c in range(n_classes):
        m = y == c
        wc = w[m].sum()
        per.append(float(np.dot(w[m], covered[m]) / wc) if wc > 0 else float("nan"))
        out[f"coverage_class{c}"] = per[-1]
    out["worst_class_coverage"] = float(np.nanmin(per)) if not np.all(np.isnan(per)) else float("nan")
    return out
