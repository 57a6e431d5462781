"""Split conformal sets for C ≥ 2 classes: LAC, APS and RAPS scores, marginal and by class (stage 5).

Calibration uses the source selection/conformal-calibration partition only.
The quantile is the binary module's
(:func:`audit_core.transport.conformal.conformal_quantile`): ``q̂ = s_(k)``
with ``k = ⌈(n + 1)(1 − α)⌉``, and ``q̂ = ∞`` when ``k > n`` (then every
class is in every set and the row ``qhat_unbounded`` says so).

Scores of class ``c`` for a record with probabilities ``p`` (nothing is
randomised anywhere):

* **LAC** — ``s_c = 1 − p_c``; ``c`` is in the set when ``1 − p_c ≤ q̂``
  (ties included, allowance ``TIE_EPS = 1e-12`` as in the binary code).
* **APS** — sort the classes by decreasing ``p``. With ``m_c`` the number of
  classes strictly more probable than ``c``, ``t_c`` the size of ``c``'s tie
  block and ``C_j`` the cumulative sorted mass, the score of the true class
  is ``s_y = C_{m_y + t_y}`` (the whole tie block counted, so the score does
  not depend on an arbitrary order among equal probabilities). Class ``c``
  is in the set when the mass strictly above it has not yet reached the
  quantile, ``A_c = C_{m_c} < q̂`` (allowance as above): the non-randomised
  rule that includes the last class. Tied classes are in or out together;
  without ties these are the sets of MAPIE's ``include_last_label=True``,
  which with ties orders the tied classes by index and can keep one and drop
  the other. The most probable class is always in the set.
* **RAPS** — APS plus the penalty ``λ · (j − k_reg)⁺`` added at sorted
  position ``j`` (1-based): ``s_y = C_{m_y+t_y} + λ (m_y + t_y − k_reg)⁺`` and
  ``A_c = C_{m_c} + λ (m_c − k_reg)⁺``. ``k_reg`` and ``λ`` are declared, not
  tuned (MAPIE tunes them on a further split of the calibration records).

Marginal: one ``q̂`` from all calibration records. Class-conditional
(Mondrian by class): ``q̂_c`` from the calibration records of class ``c``,
and class ``c`` is judged against ``q̂_c`` with the same rule.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audit_core.errors import fail

from ..conformal import TIE_EPS, conformal_quantile

__all__ = ["SCORES", "ScoreSpec", "class_scores", "true_scores", "prediction_sets", "calibrate", "set_report"]

SCORES = ("lac", "aps", "raps")


@dataclass(frozen=True)
class ScoreSpec:
    """A conformal score: ``name`` in :data:`SCORES`; ``k_reg`` (int ≥ 1) and ``lam`` (≥ 0) for RAPS."""

    name: str
    k_reg: int = 1
    lam: float = 0.0

    def __post_init__(self) -> None:
        if self.name not in SCORES:
            raise fail("MULTICLASS_SCORE", name=self.name, names=", ".join(SCORES))
        ok_k = isinstance(self.k_reg, (int, np.integer)) and not isinstance(self.k_reg, bool) and self.k_reg >= 1
        if not ok_k or not (np.isfinite(self.lam) and self.lam >= 0):
            raise fail("MULTICLASS_RAPS", k_reg=self.k_reg, lam=self.lam)

    @property
    def label(self) -> str:
        """``lac``, ``aps`` or ``raps(k=…,λ=…)`` for result tables."""
        return self.name if self.name != "raps" else f"raps(k={self.k_reg},lambda={self.lam:g})"


def _ranked(P: np.ndarray, spec: ScoreSpec) -> tuple[np.ndarray, np.ndarray]:
    """``(A, S)`` of shape (n, C): regularised mass strictly above each class, and its score as the true class."""
    P = np.asarray(P, dtype=float)
    n, k = P.shape
    order = np.argsort(-P, axis=1, kind="stable")
    ps = np.take_along_axis(P, order, axis=1)
    cum = np.concatenate([np.zeros((n, 1)), np.cumsum(ps, axis=1)], axis=1)  # cum[:, j] = C_j, C_0 = 0
    pos = np.broadcast_to(np.arange(k), (n, k))
    new = np.ones((n, k), dtype=bool)
    new[:, 1:] = ps[:, 1:] != ps[:, :-1]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)  # m: classes strictly above
    last = np.ones((n, k), dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = k - 1 - np.maximum.accumulate(np.where(last, k - 1 - pos, 0)[:, ::-1], axis=1)[:, ::-1]
    stop = end + 1  # m + t: the whole tie block
    A = np.take_along_axis(cum, start, axis=1)
    S = np.take_along_axis(cum, stop, axis=1)
    if spec.name == "raps" and spec.lam > 0:
        A = A + spec.lam * np.maximum(start - spec.k_reg, 0)
        S = S + spec.lam * np.maximum(stop - spec.k_reg, 0)
    inv = np.argsort(order, axis=1)
    return np.take_along_axis(A, inv, axis=1), np.take_along_axis(S, inv, axis=1)


def class_scores(P: np.ndarray, spec: ScoreSpec) -> tuple[np.ndarray, np.ndarray]:
    """``(inclusion statistic, score)`` per class, each of shape (n, C).

    LAC: both ``1 − P``, a class is in the set when the statistic is ``≤ q̂``.
    APS/RAPS: ``A`` and ``S`` as in the module docstring; a class is in the
    set when ``A < q̂``.
    """
    if spec.name == "lac":
        s = 1.0 - np.asarray(P, dtype=float)
        return s, s
    return _ranked(P, spec)


def true_scores(y: np.ndarray, P: np.ndarray, spec: ScoreSpec) -> np.ndarray:
    """Non-conformity score of each record's true class; shape (n,)."""
    y = np.asarray(y).astype(int)
    return class_scores(P, spec)[1][np.arange(len(y)), y]


def prediction_sets(P: np.ndarray, qhat, spec: ScoreSpec, *, stats: np.ndarray | None = None) -> np.ndarray:
    """Membership of shape (n, C); ``qhat`` a float (marginal) or shape (C,) (one per class).

    ``stats`` may pass the first output of :func:`class_scores` when several
    sets are built from the same probabilities.
    """
    a = class_scores(P, spec)[0] if stats is None else stats
    q = np.broadcast_to(np.asarray(qhat, dtype=float), (a.shape[1],))[None, :]
    if spec.name == "lac":
        return a <= q + TIE_EPS
    return a < q - TIE_EPS


def calibrate(y: np.ndarray, P: np.ndarray, alpha: float, spec: ScoreSpec) -> dict:
    """``{"marginal": float, "label_conditional": ndarray (C,)}`` from calibration records ``y`` (n,), ``P`` (n, C)."""
    if not 0 < float(alpha) < 1:
        raise fail("MULTICLASS_ALPHA", alpha=alpha)
    y = np.asarray(y).astype(int)
    s = true_scores(y, P, spec)
    k = np.asarray(P).shape[1]
    return {"marginal": conformal_quantile(s, alpha),
            "label_conditional": np.array([conformal_quantile(s[y == c], alpha) for c in range(k)])}


def set_report(y: np.ndarray, sets: np.ndarray, *, sample_weight: np.ndarray | None = None) -> dict[str, float]:
    """Coverage and set sizes of sets (n, C) for labels ``y`` (n,).

    Returns
    -------
    dict with ``coverage``, ``coverage_weighted``, ``mean_set_size``,
    ``singleton_rate``, ``empty_rate``, ``worst_class_coverage`` and, per
    class ``c``, ``coverage_class{c}`` and ``mean_set_size_class{c}`` (over
    the records of class ``c``; ``nan`` when there are none). All unweighted
    (the guarantee's scale) except ``coverage_weighted``.
    """
    y = np.asarray(y).astype(int)
    n, k = sets.shape
    covered = sets[np.arange(n), y]
    size = sets.sum(axis=1)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    out = {"coverage": float(covered.mean()), "coverage_weighted": float(np.dot(w, covered) / w.sum()),
           "mean_set_size": float(size.mean()), "singleton_rate": float((size == 1).mean()),
           "empty_rate": float((size == 0).mean())}
    per = []
    for c in range(k):
        m = y == c
        cov = float(covered[m].mean()) if m.any() else float("nan")
        out[f"coverage_class{c}"] = cov
        out[f"mean_set_size_class{c}"] = float(size[m].mean()) if m.any() else float("nan")
        per.append(cov)
    out["worst_class_coverage"] = float(np.nanmin(per)) if np.isfinite(per).any() else float("nan")
    return out
