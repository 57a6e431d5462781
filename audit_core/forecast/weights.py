"""Importance weights for covariate shift: a cross-fitted domain classifier, a declared clip, Kish ESS, an overlap check.

Under covariate shift (``P(y | x)`` the same in both domains) a source record
stands for ``w(x) = p_T(x) / p_S(x)`` target records. A domain classifier
``g(x) = P(target | x)`` trained on the pooled records gives
``w(x) = g / (1 − g) · n_S / n_T`` (odds times the inverse size ratio).

* **Cross-fitting.** ``K`` folds stratified by domain
  (:func:`audit_core.transport.domain.domain_folds`); every record, source or
  target, is scored by the classifier fitted on the other folds, so no
  record's weight comes from a model that saw it. The classifier is the
  Transport recipe (scikit-learn ``HistGradientBoostingClassifier``, 50 trees
  of at most 15 leaves, learning rate 0.1, no early stopping, seeded, one
  thread), on numeric features with missing values left to the trees.
* **Clipping rule (declared).** Raw ratios are first normalised to mean 1
  over the source records, then every weight above
  ``cap = min(quantile_{0.99}(w), max_ratio)`` with ``max_ratio = 20`` is set
  to the cap, and the weights are normalised to mean 1 again. Target records'
  ratios (the test point's weight in weighted conformal) use the same
  normalising constant and cap.
* **Effective sample size.** Kish's ``ESS = (Σ w)² / Σ w²``.
* **Overlap check.** The covariate-shift forecasts are ``unknown`` when the
  out-of-fold domain AUROC is at least ``auroc_max = 0.95`` (the domains barely
  overlap, so the weights extrapolate) or when the ESS of the weighted records
  is below ``ess_floor = max(30, 0.05 n)``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from audit_core.metrics import auroc
from audit_core.transport.domain import domain_folds

__all__ = ["AUROC_MAX", "ESS_FLOOR_MIN", "ESS_FLOOR_SHARE", "CLIP_QUANTILE", "MAX_RATIO", "ImportanceWeights",
           "OverlapVerdict", "domain_probabilities", "density_ratio", "clip_weights", "kish_ess", "ess_floor",
           "overlap_check", "importance_weights"]

#: domain AUROC at or above which the domains are taken not to overlap
AUROC_MAX = 0.95
#: the ESS floor is ``max(ESS_FLOOR_MIN, ESS_FLOOR_SHARE · n)``
ESS_FLOOR_MIN = 30.0
ESS_FLOOR_SHARE = 0.05
#: clipping rule: cap at this quantile of the normalised source weights ...
CLIP_QUANTILE = 0.99
#: ... and never above this ratio to the mean weight
MAX_RATIO = 20.0
#: the classifier's probabilities are kept inside [PROB_EPS, 1 − PROB_EPS] before taking odds
PROB_EPS = 1e-4


@dataclass(frozen=True)
class OverlapVerdict:
    """Whether the weights may be used: ``ok`` and, when not, the ``reason`` (plain words)."""

    ok: bool
    reason: str
    domain_auroc: float
    ess: float
    ess_floor: float


@dataclass(frozen=True)
class ImportanceWeights:
    """Clipped, mean-1 density-ratio weights and their diagnostics.

    Attributes
    ----------
    source : ndarray of shape (n_source,)
        Weight of each source record (mean 1).
    target : ndarray of shape (n_target,)
        The same map evaluated at each target record (the test point's weight in weighted conformal).
    raw_source : ndarray of shape (n_source,)
        Before clipping (mean 1).
    domain_auroc : float
        Out-of-fold AUROC of the domain classifier (0.5: indistinguishable; 1: separable).
    ess : float
        Kish effective sample size of ``source``.
    cap : float
        The clip applied (on the mean-1 scale).
    n_clipped : int
        Source records at the cap.
    verdict : OverlapVerdict
    """

    source: np.ndarray
    target: np.ndarray
    raw_source: np.ndarray
    domain_auroc: float
    ess: float
    cap: float
    n_clipped: int
    verdict: OverlapVerdict

    def summary(self) -> dict:
        """Scalars only: ``domain_auroc``, ``ess``, ``ess_share``, ``cap``, ``n_clipped``, ``ok``, ``reason``."""
        return {"domain_auroc": self.domain_auroc, "ess": self.ess, "ess_share": self.ess / len(self.source),
                "cap": self.cap, "n_clipped": self.n_clipped, **{k: v for k, v in asdict(self.verdict).items()
                                                                 if k in ("ok", "reason")}}


def domain_probabilities(X_source, X_target, *, n_folds: int = 5, seed: int = 0,
                         categorical=None) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold ``P(target | x)`` for every source and target record.

    Parameters
    ----------
    X_source : array-like of shape (n_source, d)
    X_target : array-like of shape (n_target, d)
        Numeric features (NaN allowed).
    n_folds : int
    seed : int
    categorical : array-like of bool of shape (d,), optional
        Columns holding category codes ``0..254`` (native categorical splits).

    Returns
    -------
    p_source : ndarray of shape (n_source,)
    p_target : ndarray of shape (n_target,)
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    Xs, Xt = np.asarray(X_source, dtype=float), np.asarray(X_target, dtype=float)
    X = np.vstack([Xs, Xt])
    y = np.r_[np.zeros(len(Xs), bool), np.ones(len(Xt), bool)]
    folds = domain_folds(y, n_folds, seed)
    scores = np.empty(len(y))
    for k in range(n_folds):
        tr = folds != k
        clf = HistGradientBoostingClassifier(max_iter=50, max_leaf_nodes=15, learning_rate=0.1, early_stopping=False,
                                             categorical_features=None if categorical is None else np.asarray(categorical),
                                             random_state=seed)
        with threadpool_limits(limits=1, user_api="openmp"):
            clf.fit(X[tr], y[tr].astype(int))
            scores[~tr] = clf.predict_proba(X[~tr])[:, 1]
    return scores[: len(Xs)], scores[len(Xs):]


def density_ratio(p_target_given_x, n_source: int, n_target: int) -> np.ndarray:
    """``g / (1 − g) · n_S / n_T`` with ``g`` kept inside ``[1e-4, 1 − 1e-4]``; shape as ``p_target_given_x``.

    Examples
    --------
    Equal domain sizes and ``g = 0.5``: the ratio is 1; ``g = 0.8`` gives odds 4.

    >>> density_ratio(np.array([0.5, 0.8]), 100, 100).tolist()
    [1.0, 4.000000000000001]
    """
    g = np.clip(np.asarray(p_target_given_x, dtype=float), PROB_EPS, 1 - PROB_EPS)
    return g / (1 - g) * (n_source / n_target)


def clip_weights(w_source, w_target=None, *, quantile: float = CLIP_QUANTILE,
                 max_ratio: float = MAX_RATIO) -> tuple[np.ndarray, np.ndarray | None, float, int]:
    """The declared clipping rule: normalise to mean 1, cap at ``min(quantile(w), max_ratio)``, normalise again.

    Parameters
    ----------
    w_source : array-like of shape (n,)
    w_target : array-like of shape (m,), optional
        Scaled and capped with the source's constants (then divided by the same final mean).

    Returns
    -------
    source : ndarray of shape (n,)
    target : ndarray of shape (m,) or None
    cap : float
        On the first mean-1 scale.
    n_clipped : int
    """
    w = np.asarray(w_source, dtype=float)
    scale = w.mean()
    v = w / scale
    cap = float(min(np.quantile(v, quantile), max_ratio))
    clipped = np.minimum(v, cap)
    mean2 = clipped.mean()
    out_t = None if w_target is None else np.minimum(np.asarray(w_target, dtype=float) / scale, cap) / mean2
    return clipped / mean2, out_t, cap, int(np.count_nonzero(v >= cap))


def kish_ess(w) -> float:
    """Kish effective sample size ``(Σ w)² / Σ w²``.

    >>> kish_ess(np.array([1.0, 1.0, 1.0, 1.0]))
    4.0
    >>> kish_ess(np.array([3.0, 1.0]))  # 16 / 10
    1.6
    """
    w = np.asarray(w, dtype=float)
    return float(w.sum() ** 2 / np.dot(w, w))


def ess_floor(n: int) -> float:
    """``max(30, 0.05 n)``: the ESS below which the weights are not trusted."""
    return max(ESS_FLOOR_MIN, ESS_FLOOR_SHARE * n)


def overlap_check(domain_auroc: float, ess: float, n: int, *, auroc_max: float = AUROC_MAX) -> OverlapVerdict:
    """The overlap rule: ``ok`` unless domain AUROC ≥ ``auroc_max`` or ESS < :func:`ess_floor`.

    >>> overlap_check(0.97, 500.0, 1000).reason
    'domain AUROC 0.970 ≥ 0.95: the domains barely overlap'
    """
    floor = ess_floor(n)
    reasons = []
    if domain_auroc >= auroc_max:
        reasons.append(f"domain AUROC {domain_auroc:.3f} ≥ {auroc_max:g}: the domains barely overlap")
    if ess < floor:
        reasons.append(f"effective sample size {ess:.0f} < floor {floor:.0f}")
    return OverlapVerdict(not reasons, "; ".join(reasons), float(domain_auroc), float(ess), float(floor))


def importance_weights(X_source, X_target, *, n_folds: int = 5, seed: int = 0, quantile: float = CLIP_QUANTILE,
                       max_ratio: float = MAX_RATIO, auroc_max: float = AUROC_MAX, categorical=None) -> ImportanceWeights:
    """Cross-fitted, clipped density-ratio weights for source and target records, with the overlap verdict.

    Parameters
    ----------
    X_source : array-like of shape (n_source, d)
        The labelled source records to be weighted (e.g. calibration and ID-test partitions).
    X_target : array-like of shape (n_target, d)
    n_folds, seed : int
    categorical : array-like of bool of shape (d,), optional
        See :func:`domain_probabilities`.
    quantile, max_ratio : float
        The clipping rule (:func:`clip_weights`).
    auroc_max : float
        The overlap rule (:func:`overlap_check`).

    Returns
    -------
    ImportanceWeights
    """
    ps, pt = domain_probabilities(X_source, X_target, n_folds=n_folds, seed=seed, categorical=categorical)
    ns, nt = len(ps), len(pt)
    raw_s, raw_t = density_ratio(ps, ns, nt), density_ratio(pt, ns, nt)
    ws, wt, cap, n_clipped = clip_weights(raw_s, raw_t, quantile=quantile, max_ratio=max_ratio)
    assert wt is not None
    auc = auroc(np.r_[np.zeros(ns), np.ones(nt)], np.r_[ps, pt])
    ess = kish_ess(ws)
    return ImportanceWeights(ws, wt, raw_s / raw_s.mean(), float(auc), ess, cap, n_clipped,
                             overlap_check(auc, ess, ns, auroc_max=auroc_max))
