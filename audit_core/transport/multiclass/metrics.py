"""Weighted metrics for multi-class probabilities (Transport, C ≥ 2 classes).

Every metric has the signature ``f(y_true, P, *, sample_weight=None)``:

* ``y_true`` — array-like of shape (n,), class indices ``0 … C−1``
  (integral floats accepted);
* ``P`` — array-like of shape (n, C), one probability row per record, each
  in [0, 1] and summing to 1 within ``1e-6``;
* ``sample_weight`` — optional array-like of shape (n,), finite,
  non-negative, positive sum; normalised to mean 1 (so equal weights give
  the unweighted value).

NaN or infinite inputs are refused (``METRIC_NOT_FINITE``), as the binary
registry does. A list, an ndarray or a pandas Series/DataFrame is accepted.

Conventions
-----------
* **Top-label ECE** (``ece_top``): the binary ECE-15 of
  :func:`audit_core.metrics.expected_calibration_error` applied to the
  confidence ``max_c P_c`` and the event "the arg-max class is right" (the
  first maximal column wins a tie, as :func:`numpy.argmax`). Bins are the
  binary registry's: equal width, right-closed, the first bin also holds 0.
* **Class-wise ECE** (``ece_classwise``): the mean over the ``C`` classes of
  the one-vs-rest ECE of ``(1[y = c], P_c)`` with the same bins.
* **Brier** (``brier_multiclass``): ``Σ_i w_i Σ_c (P_ic − 1[y_i = c])² / Σ w``,
  the *sum over classes* (range [0, 2]); for C = 2 it is twice the binary
  registry's ``brier_score``, which scores the positive column only.
* **Log loss** (``log_loss_multiclass``): ``−Σ w log max(P_iy, 1e-8) / Σ w``;
  ``EPS_LOGIT = 1e-8`` is the SPEC's probability floor, so for rows already
  inside [1e-8, 1] it equals :func:`sklearn.metrics.log_loss`.
* **Macro AUROC** (``auroc_macro``): the mean over classes of the weighted
  one-vs-rest AUROC of ``P_c`` (ties count one half), as
  ``roc_auc_score(multi_class="ovr", average="macro")``. A class absent from
  ``y`` (or present in every record) has no AUROC and is left out of the
  mean; ``nan`` when no class has one.

Examples
--------
Two records, three classes, both right with confidences 0.5 and 0.8:

>>> P = [[0.5, 0.3, 0.2], [0.1, 0.8, 0.1]]
>>> round(brier_multiclass([0, 1], P), 10)  # ((.25+.09+.04) + (.01+.04+.01)) / 2
0.22
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from audit_core.errors import fail
from audit_core.logistic import EPS_LOGIT
from audit_core.metrics import auroc_one_vs_rest, check_binary_inputs, expected_calibration_error


__all__ = [
    "MC_METRICS",
    "check_multiclass_inputs",
    "top_label",
    "ece_top",
    "ece_classwise",
    "brier_multiclass",
    "log_loss_multiclass",
    "auroc_macro",
    "accuracy",
    "multiclass_metric_values",
]

#: row sums may be off 1 by this much (model outputs in float32, rounding).
ROW_SUM_TOL = 1e-6


def _array(x) -> np.ndarray:
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise fail("METRIC_NOT_FINITE", what="input") from None


def check_multiclass_inputs(y_true, P, sample_weight=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert multi-class metric inputs.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    P : array-like of shape (n, C), C ≥ 2
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    y : ndarray of int, shape (n,)
    P : ndarray of float, shape (n, C)
    w : ndarray of float, shape (n,), mean 1
    """
    y = _array(y_true)
    Q = _array(P)
    if y.ndim != 1:
        raise fail("MULTICLASS_SHAPE", what="y_true", expected="(n,)", shape=y.shape)
    n = y.shape[0]
    if n == 0:
        raise fail("METRIC_EMPTY")
    if Q.ndim != 2 or Q.shape[0] != n:
        raise fail("MULTICLASS_SHAPE", what="P", expected=f"({n}, C)", shape=Q.shape)
    k = Q.shape[1]
    if k < 2:
        raise fail("MULTICLASS_FEW_CLASSES", k=k)
    if not np.isfinite(y).all():
        raise fail("METRIC_NOT_FINITE", what="y_true")
    if not np.isfinite(Q).all():
        raise fail("METRIC_NOT_FINITE", what="P")
    bad = (y != np.round(y)) | (y < 0) | (y > k - 1)
    if bad.any():
        raise fail("MULTICLASS_LABELS", last=k - 1, values=sorted(set(np.unique(y[bad]).tolist()))[:5])
    tot = Q.sum(axis=1)
    off = (Q.min(axis=1) < 0) | (Q.max(axis=1) > 1) | (np.abs(tot - 1) > ROW_SUM_TOL)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise fail("MULTICLASS_ROWS", row=i, lo=Q[i].min(), hi=Q[i].max(), total=tot[i])
    if sample_weight is None:
        w = np.ones(n)
    else:
        w = _array(sample_weight)
        if w.shape != (n,):
            raise fail("METRIC_SHAPE", what="sample_weight", n=n, shape=w.shape)
        _, _, w = check_binary_inputs(np.zeros(n), np.zeros(n), w)  # the binary registry's weight rules
    return y.astype(int), Q, w


def top_label(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ŷ, confidence)``: arg-max class (first on ties) and ``max_c P_c``, each of shape (n,)."""
    yhat = np.argmax(P, axis=1)
    return yhat, P[np.arange(len(P)), yhat]


def ece_top(y_true, P, *, n_bins: int = 15, sample_weight=None) -> float:
    """Top-label ECE: binary ECE of ``(1[ŷ = y], max_c P_c)`` on ``n_bins`` equal-width bins.

    Examples
    --------
    Confidences 0.5 (right) and 0.8 (wrong) in separate bins: ECE = ½·0.5 + ½·0.8.

    >>> ece_top([0, 0], [[0.5, 0.3, 0.2], [0.1, 0.8, 0.1]])
    0.65
    """
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    yhat, conf = top_label(Q)
    return expected_calibration_error((yhat == y).astype(float), conf, n_bins=n_bins, sample_weight=w)


def ece_classwise(y_true, P, *, n_bins: int = 15, sample_weight=None) -> float:
    """Class-wise ECE: mean over classes ``c`` of the ECE of ``(1[y = c], P_c)``."""
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    return float(np.mean([expected_calibration_error((y == c).astype(float), Q[:, c], n_bins=n_bins, sample_weight=w)
                          for c in range(Q.shape[1])]))


def _onehot(y: np.ndarray, k: int) -> np.ndarray:
    return (y[:, None] == np.arange(k)[None, :]).astype(float)


def brier_multiclass(y_true, P, *, sample_weight=None) -> float:
    """Weighted mean over records of ``Σ_c (P_c − 1[y = c])²`` (sum over classes, range [0, 2])."""
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    return float(np.dot(w, ((Q - _onehot(y, Q.shape[1])) ** 2).sum(axis=1)) / w.sum())


def log_loss_multiclass(y_true, P, *, sample_weight=None) -> float:
    """Weighted ``−mean log max(P_y, 1e-8)``."""
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    py = np.maximum(Q[np.arange(len(y)), y], EPS_LOGIT)
    return float(-np.dot(w, np.log(py)) / w.sum())


def auroc_macro(y_true, P, *, sample_weight=None) -> float:
    """Mean over classes of the weighted one-vs-rest AUROC (classes without one are left out)."""
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    return auroc_one_vs_rest(y, Q, sample_weight=w)


def accuracy(y_true, P, *, sample_weight=None) -> float:
    """Weighted share of records whose arg-max class (first on ties) is right."""
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    return float(np.dot(w, top_label(Q)[0] == y) / w.sum())


#: name -> scalar metric ``f(y_true, P, *, sample_weight=None)``.
MC_METRICS: dict[str, Callable[..., float]] = {
    "accuracy": accuracy,
    "auroc_macro": auroc_macro,
    "brier_multiclass": brier_multiclass,
    "log_loss_multiclass": log_loss_multiclass,
    "ece_top": ece_top,
    "ece_classwise": ece_classwise,
}

def multiclass_metric_values(y_true, P, *, sample_weight=None, n_bins: int = 15) -> dict[str, float]:
    """Every metric of :data:`MC_METRICS` on one ``(y, P)``, inputs checked once."""
    y, Q, w = check_multiclass_inputs(y_true, P, sample_weight)
    out = {}
    for name, f in MC_METRICS.items():
        out[name] = f(y, Q, n_bins=n_bins, sample_weight=w) if name.startswith("ece") else f(y, Q, sample_weight=w)
    return out
