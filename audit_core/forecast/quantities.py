"""The operating rules and every quantity the forecast reports, for binary and multi-class probabilities.

Probabilities are a matrix ``P`` of shape (n, C) (two columns for a binary
target, column 1 the positive class). The rules are fitted on the source
selection/conformal-calibration partition and then transported unchanged, as
in Transport stage 5:

* selection thresholds ``τ_s`` for desired selection rates ``s``
  (:func:`audit_core.transport.selective.selection_threshold` on the
  confidence ``max_c P_c``); HCEP also at the fixed thresholds
  ``hcep_thresholds``;
* conformal quantiles for the marginal and label-conditional sets at each
  ``α``; with calibration weights, the target-adapted (weighted) sets
  beside them (:mod:`audit_core.forecast.conformal`).

**Labelled quantities** (:func:`labelled_quantities`, all weighted by ``w``):
``rate@s``, ``risk@s`` (error rate of the selected), ``hcep@s`` and
``hcep@tau`` (share selected *and* wrong); ``prevalence`` (binary; multi-class
``prevalence_class{c}``); ``ece`` (binary: 15 equal-width
bins on ``P_1``; multi-class: top-label confidence), ``citl``
(calibration-in-the-large, binary ``mean y − mean P_1``; multi-class half the
L1 distance between class shares and mean probabilities), ``brier`` (binary
``(P_1 − y)²``; multi-class ``Σ_c (P_c − 1[y = c])²``), ``auroc`` (binary; macro
one-vs-rest for multi-class); per set method and ``α``: ``coverage``,
``coverage_class{c}``, ``worst_class_coverage``, ``set_size`` and ``singleton``.

**Label-free quantities** (:func:`label_free_quantities`): ``rate@s``,
``set_size``, ``singleton`` and ``mean_confidence``; exact on the target,
and weighted on the source they check the weights.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audit_core.metrics import auroc, brier_score, expected_calibration_error
from audit_core.transport.selective import selection_threshold

from .conformal import membership, set_quantiles, weighted_coverage

__all__ = ["SET_METHODS", "Rules", "fit_rules", "predictions", "labelled_quantities", "label_free_quantities"]

#: transported sets, then the target-adapted (weighted) ones
SET_METHODS = ("marginal", "label_conditional", "weighted_marginal", "weighted_label_conditional")


@dataclass(frozen=True)
class Rules:
    """Operating rules fitted on source calibration records.

    Attributes
    ----------
    n_classes : int
    thresholds : tuple of (s, τ_s)
    hcep_thresholds : tuple of float
    alphas : tuple of float
    transported : tuple of ((method, α), ndarray of shape (1, C))
        Unweighted quantiles of the marginal and label-conditional sets.
    P_cal, y_cal, w_cal : ndarray of shapes (n, C), (n,), (n,) or None
        Kept for the weighted quantiles (``w_cal`` None: no adapted sets).
    """

    n_classes: int
    thresholds: tuple[tuple[float, float], ...]
    hcep_thresholds: tuple[float, ...]
    alphas: tuple[float, ...]
    transported: tuple[tuple[tuple[str, float], np.ndarray], ...]
    P_cal: np.ndarray
    y_cal: np.ndarray
    w_cal: np.ndarray | None

    @property
    def set_methods(self) -> tuple[str, ...]:
        """The set methods these rules can build."""
        return SET_METHODS if self.w_cal is not None else SET_METHODS[:2]

    def sets(self, P, method: str, alpha: float, test_weight=None) -> np.ndarray:
        """Membership (n, C) of ``method`` at ``alpha``; the weighted methods need each record's ``test_weight`` (n,)."""
        if not method.startswith("weighted_"):
            return membership(P, dict(self.transported)[(method, alpha)])
        q = set_quantiles(self.P_cal, self.y_cal, alpha, n_classes=self.n_classes, method=method[9:], w_cal=self.w_cal,
                          w_test=np.ones(len(P)) if test_weight is None else test_weight)
        return membership(P, q)


def fit_rules(P_cal, y_cal, *, selection_rates=(0.5, 0.7, 0.8, 0.9, 0.95), hcep_thresholds=(0.8, 0.9, 0.95),
              alphas=(0.05, 0.1, 0.2), w_cal=None) -> Rules:
    """Thresholds and conformal quantiles from calibration records ``P_cal`` (n, C), ``y_cal`` (n,).

    ``w_cal`` (n,), importance weights on the same scale as the target
    records' weights, adds the weighted (target-adapted) sets.
    """
    P = np.asarray(P_cal, dtype=float)
    y = np.asarray(y_cal, dtype=int)
    C = P.shape[1]
    conf = P.max(axis=1)
    thr = tuple((float(s), selection_threshold(conf, s)) for s in selection_rates)
    q = tuple(((m, float(a)), set_quantiles(P, y, a, n_classes=C, method=m))
              for a in alphas for m in ("marginal", "label_conditional"))
    return Rules(C, thr, tuple(float(t) for t in hcep_thresholds), tuple(float(a) for a in alphas), q, P, y,
                 None if w_cal is None else np.asarray(w_cal, dtype=float))


def predictions(P) -> tuple[np.ndarray, np.ndarray]:
    """Confidence ``max_c P_c`` and predicted class (n,); binary: ``ŷ = 1[P_1 ≥ 0.5]`` as in Transport."""
    P = np.asarray(P, dtype=float)
    yhat = (P[:, 1] >= 0.5).astype(int) if P.shape[1] == 2 else P.argmax(axis=1)
    return P.max(axis=1), yhat


def _calibration(y: np.ndarray, P: np.ndarray, w: np.ndarray, conf: np.ndarray, yhat: np.ndarray) -> dict[str, float]:
    C = P.shape[1]
    W = w.sum()
    if C == 2:
        p1 = P[:, 1]
        return {"prevalence": float(np.dot(w, y) / W),
                "ece": expected_calibration_error(y, p1, sample_weight=w),
                "citl": float(np.dot(w, y - p1) / W),
                "brier": brier_score(y, p1, sample_weight=w),
                "auroc": auroc(y, p1, sample_weight=w)}
    onehot = np.eye(C)[y]
    aucs = [auroc((y == c).astype(int), P[:, c], sample_weight=w) for c in range(C)]
    return {**{f"prevalence_class{c}": float(np.dot(w, y == c) / W) for c in range(C)},
            "ece": expected_calibration_error((yhat == y).astype(int), conf, sample_weight=w),
            "citl": float(0.5 * np.abs(w @ (onehot - P)).sum() / W),
            "brier": float(w @ ((P - onehot) ** 2).sum(axis=1) / W),
            "auroc": float(np.nanmean(aucs)) if not np.all(np.isnan(aucs)) else float("nan")}


def _set_stats(sets: np.ndarray, w: np.ndarray) -> dict[str, float]:
    size = sets.sum(axis=1)
    W = w.sum()
    return {"set_size": float(np.dot(w, size) / W), "singleton": float(np.dot(w, size == 1) / W)}


def label_free_quantities(P, rules: Rules, *, test_weight=None, w=None) -> dict[str, float]:
    """Quantities that need no labels, weighted by ``w`` (n,) (none: the plain values).

    Parameters
    ----------
    P : array-like of shape (n, C)
    rules : Rules
    test_weight : array-like of shape (n,), optional
        Each record's importance weight (the weighted sets need it).
    w : array-like of shape (n,), optional

    Returns
    -------
    dict of str to float
    """
    P = np.asarray(P, dtype=float)
    w = np.ones(len(P)) if w is None else np.asarray(w, dtype=float)
    conf, _ = predictions(P)
    W = w.sum()
    out = {f"rate@s={s:g}": float(w[conf >= t].sum() / W) for s, t in rules.thresholds}
    out["mean_confidence"] = float(np.dot(w, conf) / W)
    for a in rules.alphas:
        for m in rules.set_methods:
            for k, v in _set_stats(rules.sets(P, m, a, test_weight), w).items():
                out[f"{m}:{k}@a={a:g}"] = v
    return out


def labelled_quantities(y, P, rules: Rules, *, test_weight=None, w=None) -> dict[str, float]:
    """Every labelled quantity (module docstring), weighted by ``w`` (n,).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels ``0..C−1``.
    P : array-like of shape (n, C)
    rules : Rules
    test_weight : array-like of shape (n,), optional
        Each record's importance weight, for the weighted sets.
    w : array-like of shape (n,), optional
        Record weights: importance weights, class weights, or fractional-label weights.

    Returns
    -------
    dict of str to float
    """
    y = np.asarray(y, dtype=int)
    P = np.asarray(P, dtype=float)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    W = w.sum()
    conf, yhat = predictions(P)
    err = (yhat != y).astype(float)
    out: dict[str, float] = {}
    for s, t in rules.thresholds:
        sel = conf >= t
        ws = w[sel].sum()
        out[f"rate@s={s:g}"] = float(ws / W)
        out[f"risk@s={s:g}"] = float(np.dot(w[sel], err[sel]) / ws) if ws > 0 else float("nan")
        out[f"hcep@s={s:g}"] = float(np.dot(w[sel], err[sel]) / W)
    for t in rules.hcep_thresholds:
        sel = conf >= t
        out[f"hcep@tau={t:g}"] = float(np.dot(w[sel], err[sel]) / W)
    out.update(_calibration(y, P, w, conf, yhat))
    for a in rules.alphas:
        for m in rules.set_methods:
            sets = rules.sets(P, m, a, test_weight)
            stats = weighted_coverage(y, sets, w, n_classes=rules.n_classes) | _set_stats(sets, w)
            out.update({f"{m}:{k}@a={a:g}": v for k, v in stats.items()})
    return out
