"""Label shift (``P(x | y)`` the same in both domains): the target's class prevalence from unlabelled scores.

* **EM** (Saerens, Latinne and Decaestecker, 2002): starting from the source
  prevalence ``π_S``, alternate ``P_T(c | x) ∝ P_S(c | x) π_T(c) / π_S(c)``
  (E step) and ``π_T(c) = mean_x P_T(c | x)`` (M step) until the prevalence
  moves by less than ``tol``. It assumes the source probabilities are
  calibrated.
* **BBSE** (black-box shift estimation, Lipton, Wang and Smola, 2018): with
  the source confusion matrix ``M[i, j] = P_S(ŷ = i, y = j)`` (from labelled
  source records) and the target's predicted-class shares ``μ[i] = P_T(ŷ = i)``,
  solve ``M r = μ`` for the class ratios ``r = π_T / π_S``; negative ratios
  are set to 0 and the prevalence renormalised. It needs no calibration, only
  an invertible confusion matrix.

The class weights ``r_c = π_T(c) / π_S(c)`` re-weight labelled source records
(:func:`class_weights`), so every source metric becomes a label-shift forecast.
"""
from __future__ import annotations

import numpy as np

__all__ = ["em_prevalence", "bbse_prevalence", "class_weights", "adjust_probabilities"]


def adjust_probabilities(P, prior_source, prior_target) -> np.ndarray:
    """Bayes' prior correction ``P_T(c | x) ∝ P(c | x) π_T(c) / π_S(c)``; shape (n, C).

    >>> adjust_probabilities(np.array([[0.5, 0.5]]), [0.5, 0.5], [0.2, 0.8]).round(3).tolist()
    [[0.2, 0.8]]
    """
    r = np.asarray(prior_target, dtype=float) / np.asarray(prior_source, dtype=float)
    Q = np.asarray(P, dtype=float) * r[None, :]
    return Q / Q.sum(axis=1, keepdims=True)


def em_prevalence(P_target, prior_source, *, max_iter: int = 1000, tol: float = 1e-8) -> np.ndarray:
    """Target prevalence (C,) by EM on calibrated source-model probabilities of the target records.

    Parameters
    ----------
    P_target : array-like of shape (m, C)
    prior_source : array-like of shape (C,)
    max_iter : int
    tol : float

    Returns
    -------
    ndarray of shape (C,)

    Examples
    --------
    Two target records with ``P = (0.8, 0.2)`` and ``(0.2, 0.8)`` under a
    balanced source: the fixed point is ``π = (0.5, 0.5)`` by symmetry.

    >>> em_prevalence(np.array([[0.8, 0.2], [0.2, 0.8]]), [0.5, 0.5]).round(6).tolist()
    [0.5, 0.5]
    """
    P = np.asarray(P_target, dtype=float)
    ps = np.asarray(prior_source, dtype=float)
    pi = ps.copy()
    for _ in range(max_iter):
        new = adjust_probabilities(P, ps, pi).mean(axis=0)
        done = np.max(np.abs(new - pi)) < tol
        pi = new
        if done:
            break
    return pi


def bbse_prevalence(y_source, P_source, P_target, *, n_classes: int, sample_weight=None) -> np.ndarray:
    """Target prevalence (C,) by black-box shift estimation from arg-max predictions.

    Parameters
    ----------
    y_source : array-like of shape (n,)
        Labels of held-out source records.
    P_source : array-like of shape (n, C)
    P_target : array-like of shape (m, C)
    n_classes : int
    sample_weight : array-like of shape (n,), optional

    Returns
    -------
    ndarray of shape (C,)
    """
    y = np.asarray(y_source, dtype=int)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    yhat_s = np.asarray(P_source).argmax(axis=1)
    M = np.zeros((n_classes, n_classes))
    np.add.at(M, (yhat_s, y), w)
    M /= w.sum()
    prior = M.sum(axis=0)
    mu = np.bincount(np.asarray(P_target).argmax(axis=1), minlength=n_classes) / len(P_target)
    r, *_ = np.linalg.lstsq(M, mu, rcond=None)
    pi = np.clip(r, 0, None) * prior
    return pi / pi.sum() if pi.sum() > 0 else prior


def class_weights(y, prior_source, prior_target) -> np.ndarray:
    """Record weights ``π_T(y) / π_S(y)`` of shape (n,), normalised to mean 1.

    Ratios 0.5 and 1.5, divided by their mean over the records (7/6):

    >>> class_weights(np.array([0, 1, 1]), [0.5, 0.5], [0.25, 0.75]).round(3).tolist()
    [0.429, 1.286, 1.286]
    """
    r = np.asarray(prior_target, dtype=float) / np.asarray(prior_source, dtype=float)
    w = r[np.asarray(y, dtype=int)]
    return w / w.mean()
