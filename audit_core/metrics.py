"""Weighted metrics for binary targets (SPEC §2, stage 4).

Every metric has the signature ``f(y_true, p, *, sample_weight=None)``:

* ``y_true`` — array-like of shape (n,), values in {0, 1} (bool accepted);
* ``p`` — array-like of shape (n,), the positive-class probability in [0, 1];
* ``sample_weight`` — optional array-like of shape (n,), finite and
  non-negative with a positive sum. Weights are normalised to mean 1, so
  ``sample_weight=np.full(n, c)`` gives the same value as no weights.

NaN or infinite inputs are refused with a declared
:class:`~audit_core.errors.AuditInputError` (code ``METRIC_NOT_FINITE``).
A metric that is undefined on the data (AUROC with one class present, for
example) returns ``nan`` instead of raising, so that subgroup tables can show
an empty cell; the docstring of each metric says when.

Binary only: multi-class targets are refused (``METRIC_NOT_BINARY``).

Conventions
-----------
* AUROC is the weighted Mann–Whitney statistic with tied scores counted as
  one half; it equals :func:`sklearn.metrics.roc_auc_score`.
* Average precision is the stepwise sum ``Σ_k (R_k − R_{k−1}) P_k`` over the
  distinct score thresholds (no interpolation), as
  :func:`sklearn.metrics.average_precision_score`.
* ``log_loss`` clips ``p`` to ``[1e-8, 1 − 1e-8]`` (SPEC §0 clipping); for
  probabilities inside that range it equals :func:`sklearn.metrics.log_loss`.
* ECE uses equal-width bins on [0, 1] assigned exactly as
  :func:`sklearn.calibration.calibration_curve` with ``strategy="uniform"``
  (bin ``i`` holds ``(i/B, (i+1)/B]``, the first bin also holds 0), weighted by
  bin mass: ``ECE = Σ_b (W_b / W) |ȳ_b − p̄_b|``.
* Calibration intercept and slope come from the unpenalised weighted logistic
  regression ``logit P(Y=1) = a + b · logit p̂`` (Newton–Raphson), with
  ``p̂`` clipped to ``[1e-8, 1 − 1e-8]``. When the fit does not converge
  (perfect separation) both are ``nan``.

Examples
--------
>>> brier_score([0, 1], [0.25, 0.75])
0.0625
>>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
0.75
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import calibration_error as _cal
from .errors import fail, register_messages
from .logistic import EPS_LOGIT, fit_logistic_1d, logit

__all__ = [
    "METRICS",
    "prevalence",
    "auroc",
    "auroc_by_row",
    "auroc_one_vs_rest",
    "bin_ids",
    "average_precision",
    "pr_skill",
    "brier_score",
    "log_loss",
    "expected_calibration_error",
    "adaptive_calibration_error",
    "maximum_calibration_error",
    "spiegelhalter_z",
    "smooth_ece",
    "calibration_bins",
    "calibration_intercept_slope",
    "calibration_intercept",
    "metric_values",
    "calibration_slope",
    "check_binary_inputs",
]

register_messages(
    {
        "METRIC_NOT_FINITE": "{what} contains NaN or infinite values; metrics refuse them (drop or impute first).",
        "METRIC_SHAPE": "{what} must be one-dimensional with {n} entries, got shape {shape}.",
        "METRIC_NOT_BINARY": (
            "Metrics here are binary-only: y_true must hold only 0 and 1, got values {values}."
        ),
        "METRIC_PROB_RANGE": "p must be a probability in [0, 1]; found values from {lo} to {hi}.",
        "METRIC_BAD_WEIGHTS": "sample_weight must be non-negative with a positive sum ({detail}).",
        "METRIC_EMPTY": "Metrics need at least one record.",
        "METRIC_BAD_BINS": "n_bins must be a positive integer, got {n_bins!r}.",
    }
)

def _as_1d(x, what: str) -> np.ndarray:
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise fail("METRIC_NOT_FINITE", what=what) from None
    return arr


def check_binary_inputs(y_true, p, sample_weight=None, *, probabilities: bool = True
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert metric inputs.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    p : array-like of shape (n,)
    sample_weight : array-like of shape (n,), optional
    probabilities : bool
        Refuse a ``p`` outside ``[0, 1]`` (``False`` for rank metrics, which take any finite score).

    Returns
    -------
    y : ndarray of float, shape (n,), values 0.0/1.0
    p : ndarray of float, shape (n,)
    w : ndarray of float, shape (n,), mean 1
    """
    y = _as_1d(y_true, "y_true")
    q = _as_1d(p, "p")
    if y.ndim != 1:
        raise fail("METRIC_SHAPE", what="y_true", n="n", shape=y.shape)
    n = y.shape[0]
    if n == 0:
        raise fail("METRIC_EMPTY")
    if q.shape != (n,):
        raise fail("METRIC_SHAPE", what="p", n=n, shape=q.shape)
    if not np.isfinite(y).all():
        raise fail("METRIC_NOT_FINITE", what="y_true")
    if not np.isfinite(q).all():
        raise fail("METRIC_NOT_FINITE", what="p")
    bad = (y != 0) & (y != 1)
    if bad.any():
        raise fail("METRIC_NOT_BINARY", values=sorted(set(np.unique(y[bad]).tolist()))[:5])
    if probabilities and (q.min() < 0 or q.max() > 1):
        raise fail("METRIC_PROB_RANGE", lo=float(q.min()), hi=float(q.max()))
    if sample_weight is None:
        w = np.ones(n)
    else:
        w = _as_1d(sample_weight, "sample_weight")
        if w.shape != (n,):
            raise fail("METRIC_SHAPE", what="sample_weight", n=n, shape=w.shape)
        if not np.isfinite(w).all():
            raise fail("METRIC_NOT_FINITE", what="sample_weight")
        if (w < 0).any() or w.sum() <= 0:
            raise fail("METRIC_BAD_WEIGHTS", detail=f"min {w.min():.3g}, sum {w.sum():.3g}")
        w = w * (n / w.sum())
    return y, q, w


def prevalence(y_true, p=None, *, sample_weight=None) -> float:
    """Weighted share of positives ``π = Σ w y / Σ w``.

    ``p`` is accepted (and validated when given) so that every registry
    metric shares one signature; it does not enter the value.
    """
    if p is None:
        p = np.zeros(len(_as_1d(y_true, "y_true")))
    y, _, w = check_binary_inputs(y_true, p, sample_weight)
    return float(np.dot(w, y) / w.sum())


def _levels(y: np.ndarray, q: np.ndarray, w: np.ndarray, order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Positive and negative weight of each distinct score, scores ascending (ties grouped).

    ``order``: ``np.argsort(q, kind="stable")`` when the caller has it.
    """
    order = np.argsort(q, kind="stable") if order is None else order
    s = q[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return np.add.reduceat((w * y)[order], starts), np.add.reduceat((w * (1 - y))[order], starts)


def _auroc_levels(pos_lvl: np.ndarray, neg_lvl: np.ndarray) -> float:
    W1, W0 = pos_lvl.sum(), neg_lvl.sum()
    if W1 <= 0 or W0 <= 0:
        return float("nan")
    neg_below = np.cumsum(neg_lvl) - neg_lvl
    return float(np.dot(pos_lvl, neg_below + 0.5 * neg_lvl) / (W1 * W0))


def _ap_levels(pos_lvl: np.ndarray, neg_lvl: np.ndarray) -> float:
    W1 = pos_lvl.sum()
    if W1 <= 0:
        return float("nan")
    tp = np.cumsum(pos_lvl[::-1])  # thresholds in decreasing order
    fp = np.cumsum(neg_lvl[::-1])
    dtp = np.diff(np.r_[0.0, tp])
    prec = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=(tp + fp) > 0)
    return float(np.dot(dtp, prec) / W1)


def auroc(y_true, p, *, sample_weight=None) -> float:
    """Weighted area under the ROC curve; ties count one half. The project's one AUROC.

    ``p`` may be any finite score (only its order matters), not only a
    probability. Returns ``nan`` when only one class is present.

    Examples
    --------
    Scores 0.1, 0.4 (negatives) and 0.35, 0.8 (positives): of the four
    positive–negative pairs, three are ordered correctly, so AUROC = 3/4.

    >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight, probabilities=False)
    if not (0 < np.dot(w, y) < w.sum()):  # one class present: undefined, no sort needed
        return float("nan")
    return _auroc_levels(*_levels(y, q, w))


def auroc_by_row(labels, scores) -> np.ndarray:
    """Unweighted :func:`auroc` of every row: along the last axis of ``labels`` and ``scores`` broadcast together.

    Parameters
    ----------
    labels : array_like of shape (..., n), 0/1 or bool
    scores : array_like of shape (..., n)

    Returns
    -------
    ndarray of the broadcast shape without its last axis; ``nan`` where a row
    holds one class or a non-finite score.

    Examples
    --------
    >>> auroc_by_row([[0, 0, 1, 1]], [[0.1, 0.4, 0.35, 0.8], [0.8, 0.35, 0.4, 0.1]]).tolist()
    [0.75, 0.25]
    """
    L, S = np.broadcast_arrays(np.asarray(labels, dtype=float), np.asarray(scores, dtype=float))
    out = np.full(L.shape[:-1], np.nan)
    w = np.ones(L.shape[-1])
    for i in np.ndindex(out.shape):
        y, q = L[i], S[i]
        if 0 < y.sum() < len(y) and np.isfinite(q).all():
            out[i] = _auroc_levels(*_levels(y, q, w))
    return out


def auroc_one_vs_rest(y_true, P, *, sample_weight=None) -> float:
    """Mean over classes of the weighted one-vs-rest :func:`auroc` of ``P[:, c]`` (macro average).

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Class indices ``0 … C−1``.
    P : array_like of shape (n, C)
        One score row per record (only each column's order matters).
    sample_weight : array_like of shape (n,), optional

    Returns
    -------
    float
        The mean of the classes' AUROCs; a class absent from ``y_true`` (or
        present in every record) has none and is left out; ``nan`` when no
        class has one. With every class present it equals
        ``sklearn.metrics.roc_auc_score(y, P, multi_class="ovr")``.

    Examples
    --------
    >>> auroc_one_vs_rest([0, 1, 2, 2], [[.8, .1, .1], [.2, .7, .1], [.3, .3, .4], [.1, .1, .8]])
    1.0
    """
    y = np.asarray(y_true)
    Q = np.asarray(P, dtype=float).reshape(len(y), -1)
    vals = [auroc((y == c).astype(float), Q[:, c], sample_weight=sample_weight) for c in range(Q.shape[1])]
    vals = [v for v in vals if np.isfinite(v)]
    return float(np.mean(vals)) if vals else float("nan")


def average_precision(y_true, p, *, sample_weight=None) -> float:
    """Weighted stepwise average precision ``Σ_k (R_k − R_{k−1}) P_k``.

    Thresholds are the distinct scores in decreasing order; tied scores
    enter together. Returns ``nan`` when there is no positive.

    Examples
    --------
    Scores 0.9 (pos), 0.8 (neg), 0.7 (pos): recall steps of 1/2 at
    precision 1/1 and 2/3, so AP = 1/2 + 1/3 = 5/6.

    >>> round(average_precision([1, 0, 1], [0.9, 0.8, 0.7]), 10)
    0.8333333333
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    if not np.dot(w, y) > 0:
        return float("nan")
    return _ap_levels(*_levels(y, q, w))


def pr_skill(y_true, p, *, sample_weight=None) -> float:
    """PR skill ``(AP − π) / (1 − π)``: 0 for a random ranking, 1 for a perfect one.

    Returns ``nan`` when ``π`` is 0 or 1.
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    pi = float(np.dot(w, y) / w.sum())
    if pi <= 0 or pi >= 1:
        return float("nan")
    ap = average_precision(y, q, sample_weight=w)
    return float((ap - pi) / (1 - pi))


def brier_score(y_true, p, *, sample_weight=None) -> float:
    """Weighted mean squared error ``Σ w (p − y)² / Σ w``.

    >>> brier_score([0, 1], [0.25, 0.75])
    0.0625
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    return float(np.dot(w, (q - y) ** 2) / w.sum())


def log_loss(y_true, p, *, sample_weight=None) -> float:
    """Weighted negative log-likelihood with ``p`` clipped to ``[1e-8, 1 − 1e-8]``."""
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    q = np.clip(q, EPS_LOGIT, 1 - EPS_LOGIT)
    ll = y * np.log(q) + (1 - y) * np.log1p(-q)
    return float(-np.dot(w, ll) / w.sum())


def bin_ids(q: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bin of each score in ``[0, 1]``: bin ``k`` is ``(k/B, (k+1)/B]``, bin 0 also holds 0; shape of ``q``.

    >>> bin_ids(np.array([0.0, 0.1, 0.5, 1.0]), 10).tolist()
    [0, 0, 4, 9]
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], q)


def _check_bins(n_bins) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise fail("METRIC_BAD_BINS", n_bins=n_bins)
    return int(n_bins)


def calibration_bins(y_true, p, *, n_bins: int = 15, sample_weight=None):
    """Per-bin reliability table on equal-width bins (the reliability diagram).

    Parameters
    ----------
    y_true, p : array-like of shape (n,)
    n_bins : int, default 15
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    pandas.DataFrame with ``n_bins`` rows and columns ``bin``, ``lower``,
    ``upper``, ``count`` (records), ``weight`` (normalised weight mass),
    ``mean_p`` and ``frac_pos`` (``nan`` for empty bins).
    """
    import pandas as pd

    n_bins = _check_bins(n_bins)
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    ids = bin_ids(q, n_bins)
    cnt = np.bincount(ids, minlength=n_bins)
    W = np.bincount(ids, weights=w, minlength=n_bins)
    sp = np.bincount(ids, weights=w * q, minlength=n_bins)
    sy = np.bincount(ids, weights=w * y, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mp = np.where(W > 0, sp / W, np.nan)
        fy = np.where(W > 0, sy / W, np.nan)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "lower": edges[:-1],
            "upper": edges[1:],
            "count": cnt,
            "weight": W,
            "mean_p": mp,
            "frac_pos": fy,
        }
    )


def expected_calibration_error(y_true, p, *, n_bins: int = 15, sample_weight=None) -> float:
    """Expected calibration error on ``n_bins`` equal-width bins.

    ``ECE = Σ_b (W_b / W) |ȳ_b − p̄_b|`` where ``ȳ_b`` and ``p̄_b`` are the
    weighted mean label and mean probability of bin ``b``.

    Examples
    --------
    With 2 bins, p = 0.2, 0.4 (labels 0, 1) fall in bin 0 (mean p 0.3, mean y
    0.5) and p = 0.9 (label 1) in bin 1: ECE = 2/3·0.2 + 1/3·0.1 = 1/6.

    >>> round(expected_calibration_error([0, 1, 1], [0.2, 0.4, 0.9], n_bins=2), 10)
    0.1666666667
    """
    n_bins = _check_bins(n_bins)
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    ids = bin_ids(q, n_bins)
    sp = np.bincount(ids, weights=w * q, minlength=n_bins)
    sy = np.bincount(ids, weights=w * y, minlength=n_bins)
    return float(np.abs(sy - sp).sum() / w.sum())


def adaptive_calibration_error(y_true, p, *, n_bins: int = 15, sample_weight=None) -> float:
    """ACE: ECE's mass-weighted gap on ``n_bins`` equal-mass bins (ties share a bin).

    See :mod:`audit_core.calibration_error` for the bin rule.

    Examples
    --------
    Four distinct scores in two bins: {0.1, 0.2} (mean p 0.15, mean y 0) and
    {0.7, 0.8} (mean p 0.75, mean y 1): ACE = ½·0.15 + ½·0.25 = 0.2.

    >>> round(adaptive_calibration_error([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.8], n_bins=2), 10)
    0.2
    """
    n_bins = _check_bins(n_bins)
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    return _cal.ace_arrays(y, q, w, n_bins)


def maximum_calibration_error(y_true, p, *, n_bins: int = 15, sample_weight=None) -> float:
    """MCE: the largest ``|ȳ_b − p̄_b|`` over the non-empty ECE bins (same edges as ECE).

    >>> round(maximum_calibration_error([0, 1, 1], [0.2, 0.4, 0.9], n_bins=2), 10)
    0.2
    """
    n_bins = _check_bins(n_bins)
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    return _cal.mce_arrays(y, q, w, bin_ids(q, n_bins), n_bins)


def spiegelhalter_z(y_true, p, *, sample_weight=None) -> float:
    """Spiegelhalter's z: ``Σ w (y − p)(1 − 2p) / sqrt(Σ w² (1 − 2p)² p (1 − p))``.

    Near 0 for a calibrated model (standard normal under ``H0``); ``nan`` when
    the variance is 0. Scaling every weight leaves it unchanged.

    With p = 0.25 twice (labels 1, 0): numerator 0.75·0.5 − 0.25·0.5 = 0.25,
    variance 2 · 0.5²·0.25·0.75 = 0.09375, so z = 0.25 / √0.09375 = √(2/3).

    >>> round(spiegelhalter_z([1, 0], [0.25, 0.25]), 10)
    0.8164965809
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    return _cal.spiegelhalter_arrays(y, q, w)


def smooth_ece(y_true, p, *, sample_weight=None, return_bandwidth: bool = False):
    """Smooth ECE (kernel-smoothed, automatic bandwidth; :mod:`audit_core.calibration_error`), weighted.

    Not in :data:`METRICS`: every bootstrap replicate would need its own
    bandwidth search, so Transport reports it beside the reliability diagram.
    ``return_bandwidth=True`` returns ``(smECE, σ*)``.
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    val, sigma = _cal.smooth_ece_arrays(y, q, w)
    return (val, sigma) if return_bandwidth else val


#: Newton starts the calibration fit at a perfectly calibrated model: the MLE is unique, so the
#: start only changes how many steps it takes (usually fewer than from the intercept-only fit).
_CALIBRATED = (0.0, 1.0)


def calibration_intercept_slope(y_true, p, *, sample_weight=None) -> tuple[float, float]:
    """Calibration intercept ``a`` and slope ``b`` of ``logit P(Y=1) = a + b · logit p̂``.

    Unpenalised and weighted; a perfectly calibrated model has ``a = 0``,
    ``b = 1``. Returns ``(nan, nan)`` with one class present or under
    perfect separation.

    Returns
    -------
    (float, float)
    """
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    if y.min() == y.max():
        return float("nan"), float("nan")
    return fit_logistic_1d(logit(q), y, w, start=_CALIBRATED)


def calibration_intercept(y_true, p, *, sample_weight=None) -> float:
    """Intercept ``a`` of :func:`calibration_intercept_slope`."""
    return calibration_intercept_slope(y_true, p, sample_weight=sample_weight)[0]


def calibration_slope(y_true, p, *, sample_weight=None) -> float:
    """Slope ``b`` of :func:`calibration_intercept_slope`."""
    return calibration_intercept_slope(y_true, p, sample_weight=sample_weight)[1]


def metric_values(y_true, p, names=None, *, sample_weight=None, n_bins: int = 15,
                  order: np.ndarray | None = None) -> dict[str, float]:
    """Several registry metrics of one ``(y, p)`` at once; ``names`` defaults to all of :data:`METRICS`.

    The same values as calling each registry function, but the inputs are
    checked once and the calibration logistic is fitted once when both the
    intercept and the slope are asked for (they are the two coefficients of
    one fit, ``logit P(Y=1) = a + b · logit p̂``). ``order``, when the caller
    has it, is ``np.argsort(p, kind="stable")`` (the ranking metrics then do not sort).

    Returns
    -------
    dict of name to float, in the order of ``names``.
    """
    names = list(METRICS) if names is None else list(names)
    y, q, w = check_binary_inputs(y_true, p, sample_weight)
    out, cal, lv = {}, None, None
    pi = float(np.dot(w, y) / w.sum())
    for name in names:
        if name in ("calibration_intercept", "calibration_slope"):
            if cal is None:
                cal = (float("nan"), float("nan")) if y.min() == y.max() else fit_logistic_1d(
                    logit(q), y, w, start=_CALIBRATED)
            out[name] = cal[0 if name == "calibration_intercept" else 1]
        elif name in ("auroc", "average_precision", "pr_skill"):
            if not 0 < pi < 1:  # one class present: AUROC and PR skill undefined, AP too without positives
                out[name] = float("nan") if name != "average_precision" or pi <= 0 else _ap_levels(
                    np.array([w.sum()]), np.array([0.0]))
                continue
            lv = _levels(y, q, w, order) if lv is None else lv  # one sort for the three ranking metrics
            if name == "auroc":
                out[name] = _auroc_levels(*lv)
            else:
                ap = _ap_levels(*lv)
                out[name] = ap if name == "average_precision" else (
                    float("nan") if pi <= 0 or pi >= 1 else float((ap - pi) / (1 - pi)))
        elif name == "prevalence":
            out[name] = pi
        elif name in ("ece", "ace", "mce"):
            out[name] = METRICS[name](y, q, n_bins=n_bins, sample_weight=w)
        else:
            out[name] = METRICS[name](y, q, sample_weight=w)
    return out


#: name -> scalar metric ``f(y_true, p, *, sample_weight=None)``.
METRICS: dict[str, Callable[..., float]] = {
    "prevalence": prevalence,
    "auroc": auroc,
    "average_precision": average_precision,
    "pr_skill": pr_skill,
    "brier_score": brier_score,
    "log_loss": log_loss,
    "ece": expected_calibration_error,
    "calibration_intercept": calibration_intercept,
    "calibration_slope": calibration_slope,
    "ace": adaptive_calibration_error,
    "mce": maximum_calibration_error,
    "spiegelhalter_z": spiegelhalter_z,
}
