"""Split conformal prediction sets for binary targets (stage 5).

Scores are ``s = 1 − p̂_y`` with ``p̂_1 = p̂`` and ``p̂_0 = 1 − p̂``. On ``n``
calibration scores the quantile is the order statistic
``q̂ = s_(k)``, ``k = ⌈(n + 1)(1 − α)⌉``. A class ``c`` is in the set
when ``1 − p̂_c ≤ q̂``: ties are included and nothing is randomised.

**Small calibration sets.** When ``k > n`` (fewer than ``1/α − 1`` records:
under 19 at α = 0.05) no order statistic carries the finite-sample
guarantee, so ``q̂ = ∞`` and the class is in every set (as crepes does); an
earlier clamp to the largest score lost the guarantee without a word. The
rules note it (:func:`unbounded`; rows ``qhat_unbounded`` and
``qhat_class{c}_unbounded``).

* marginal: one ``q̂`` from all calibration records;
* label-conditional (Mondrian by class): ``q̂_c`` from the records of class
  ``c`` only, applied to class ``c``'s score.
* Mondrian by subgroup (:func:`mondrian_calibrate`): ``q̂_g`` from the
  calibration records of subgroup ``g`` of a declared column, applied to
  that subgroup's records; coverage then holds within every subgroup. A
  subgroup with too few (or no) calibration records gets ``q̂_g = ∞``.

Calibration uses the selection/conformal-calibration partition of the source
only. Coverage is reported unweighted (the guarantee's scale) and weighted.
"""
from __future__ import annotations

import math

import numpy as np

#: floating-point allowance for ties between a class score and q̂.
TIE_EPS = 1e-12

__all__ = ["TIE_EPS", "class_scores", "conformal_quantile", "unbounded", "calibrate", "prediction_sets", "set_report",
           "mondrian_calibrate", "mondrian_sets", "subgroup_coverage"]


def class_scores(p: np.ndarray) -> np.ndarray:
    """Non-conformity of each class, ``1 − p̂_c``; shape (n, 2).

    Column 0 is ``1 − (1 − p̂)`` and column 1 is ``1 − p̂``, computed with
    the same floating-point expressions for calibration and prediction so
    that ties are exact.
    """
    p = np.asarray(p, dtype=float)
    return np.stack([1.0 - (1.0 - p), 1.0 - p], axis=1)


def conformal_quantile(scores: np.ndarray, alpha: float) -> float:
    """``s_(k)`` with ``k = ⌈(n + 1)(1 − α)⌉`` (1-based order statistic); ``inf`` when ``k > n``.

    Examples
    --------
    n = 4 scores, α = 0.2: k = ⌈5 · 0.8⌉ = 4, the largest score.

    >>> conformal_quantile(np.array([0.1, 0.3, 0.3, 0.2]), 0.2)
    0.3

    At α = 0.1, k = ⌈4.5⌉ = 5 > 4: no score is high enough, every set holds the class.

    >>> conformal_quantile(np.array([0.1, 0.3, 0.3, 0.2]), 0.1)
    inf
    """
    s = np.asarray(scores, dtype=float)
    n = len(s)
    # round the float product before the ceiling so that a product that is an
    # integer in exact arithmetic is never pushed up by representation error
    k = math.ceil(round((n + 1) * (1 - alpha), 9))
    if k > n:  # too few calibration records for the guarantee (n = 0 included)
        return float("inf")
    # selection instead of a full sort: the same k-th smallest value (ties included)
    return float(np.partition(s, k - 1)[k - 1])


def calibrate(y: np.ndarray, p: np.ndarray, alpha: float) -> dict[str, np.ndarray | float]:
    """Marginal ``q̂`` and per-class ``q̂_c`` from calibration records.

    Returns
    -------
    dict with ``marginal`` (float) and ``label_conditional`` (ndarray of
    shape (2,)).
    """
    y = np.asarray(y).astype(int)
    S = class_scores(p)
    s = S[np.arange(len(y)), y]
    return {
        "marginal": conformal_quantile(s, alpha),
        "label_conditional": np.array([conformal_quantile(s[y == c], alpha) for c in (0, 1)]),
    }


def unbounded(qhat) -> np.ndarray | bool:
    """Where ``q̂`` is infinite (too few calibration records): the class is in every set."""
    return np.isinf(np.asarray(qhat, dtype=float)) if np.ndim(qhat) else bool(math.isinf(float(qhat)))


def prediction_sets(p: np.ndarray, qhat, *, scores: np.ndarray | None = None) -> np.ndarray:
    """Boolean membership matrix of shape (n, 2): class ``c`` in the set iff ``1 − p̂_c ≤ q̂_c``.

    Ties are included, up to a floating-point allowance of ``1e-12`` (so that
    ``1 − 0.7 = 0.30000000000000004`` counts as a tie with ``q̂ = 0.3``).
    ``scores`` may pass :func:`class_scores` of ``p`` when several sets are built.
    """
    q = np.broadcast_to(np.asarray(qhat, dtype=float), (2,))
    return (class_scores(p) if scores is None else scores) <= q[None, :] + TIE_EPS


def set_report(y: np.ndarray, sets: np.ndarray, *, sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """Coverage and set-size statistics.

    Returns
    -------
    dict with ``coverage`` and ``coverage_weighted``; ``coverage_class0/1``;
    ``singleton_accuracy_class0/1`` (of the records whose set is ``{c}``, the
    share with ``y = c``); ``mean_set_size``, ``singleton_rate``,
    ``two_class_rate``, ``empty_rate``; ``worst_class_coverage``. Rates are
    unweighted except ``coverage_weighted``.
    """
    y = np.asarray(y).astype(int)
    n = len(y)
    pos = y == 1
    covered = np.where(pos, sets[:, 1], sets[:, 0])
    s0, s1 = sets[:, 0], sets[:, 1]
    two, none = s0 & s1, ~(s0 | s1)
    size = s0.astype(np.int8) + s1
    count = np.count_nonzero
    n_two, n_none = count(two), count(none)
    out = {
        "coverage": count(covered) / n,
        "coverage_weighted": float(np.dot(np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float),
                                          covered) / (n if sample_weight is None else np.sum(sample_weight))),
        "mean_set_size": float(size.sum()) / n,
        "singleton_rate": (n - n_two - n_none) / n,
        "two_class_rate": n_two / n,
        "empty_rate": n_none / n,
    }
    for c, m in ((0, ~pos), (1, pos)):
        k = count(m)
        out[f"coverage_class{c}"] = count(covered & m) / k if k else float("nan")
        single = sets[:, c] & ~sets[:, 1 - c]
        ks = count(single)
        out[f"singleton_accuracy_class{c}"] = count(single & m) / ks if ks else float("nan")
    out["worst_class_coverage"] = float(np.nanmin([out["coverage_class0"], out["coverage_class1"]]))
    return out


def _levels(groups) -> np.ndarray:
    return np.asarray(groups, dtype=object).astype(str)


def mondrian_calibrate(y: np.ndarray, p: np.ndarray, groups, alpha: float) -> dict[str, float]:
    """``q̂_g`` per subgroup level (as text) from calibration records ``y, p`` (n,) and their ``groups`` (n,)."""
    y = np.asarray(y).astype(int)
    s = class_scores(p)[np.arange(len(y)), y]
    g = _levels(groups)
    return {str(level): conformal_quantile(s[g == level], alpha) for level in pd_unique(g)}


def mondrian_sets(p: np.ndarray, groups, qhat_by_group: dict[str, float], *, scores: np.ndarray | None = None) -> np.ndarray:
    """Membership (n, 2) with each record's subgroup ``q̂_g``; a level unseen in calibration gets ``∞``."""
    g = _levels(groups)
    q = np.array([qhat_by_group.get(level, float("inf")) for level in g], dtype=float)
    return (class_scores(p) if scores is None else scores) <= q[:, None] + TIE_EPS


def subgroup_coverage(y: np.ndarray, sets: np.ndarray, groups) -> list[dict]:
    """Per subgroup level: ``level``, ``n``, ``coverage`` and ``mean_set_size`` (unweighted, the guarantee's scale)."""
    y = np.asarray(y).astype(int)
    covered = sets[np.arange(len(y)), y]
    size = sets.sum(axis=1)
    g = _levels(groups)
    out = []
    for level in pd_unique(g):
        m = g == level
        out.append({"level": str(level), "n": int(m.sum()), "coverage": float(covered[m].mean()),
                    "mean_set_size": float(size[m].mean())})
    return out


def pd_unique(values: np.ndarray) -> list:
    """Distinct values in order of first appearance."""
    _, first = np.unique(values, return_index=True)
    return [values[i] for i in np.sort(first)]
