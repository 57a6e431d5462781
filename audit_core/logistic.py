"""The logit and the weighted logistic fit on one score, shared by the metrics, the mappings and the bootstraps.

* :func:`logit` — ``log(q / (1 − q))`` of the probability clipped to
  ``[EPS_LOGIT, 1 − EPS_LOGIT]``, finite everywhere: the project's one logit.
* :func:`fit_logistic` — the unpenalised weighted logistic regression on a
  few features by Newton–Raphson with step halving, batched over bootstrap
  weight vectors: temperature and beta calibration call it, and through
  :func:`fit_logistic_1d` (``logit P(Y=1) = a + b x``) the calibration
  intercept and slope, Platt scaling and their bootstrap replicates. (The
  bootstrap's warm-started replicate fits, ``transport.bootstrap``, polish a
  Taylor model's root with this fit's Newton steps.)

This module is pure: it must not import streamlit or plotly.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EPS_LOGIT", "fit_logistic", "fit_logistic_1d", "logit"]

#: probabilities are clipped to [EPS_LOGIT, 1 - EPS_LOGIT] before logs/logits.
EPS_LOGIT = 1e-8


def logit(p) -> np.ndarray:
    """``log(q / (1 − q))`` of ``q = p`` clipped to ``[EPS_LOGIT, 1 − EPS_LOGIT]``; the project's one logit.

    Parameters
    ----------
    p : array_like of any shape

    Returns
    -------
    ndarray of the same shape, finite everywhere.

    Examples
    --------
    >>> logit([0.5, 0.0]).round(4).tolist()
    [0.0, -18.4207]
    """
    q = np.clip(np.asarray(p, dtype=float), EPS_LOGIT, 1 - EPS_LOGIT)
    return np.log(q) - np.log1p(-q)


def fit_logistic(X, y: np.ndarray, w: np.ndarray, *, intercept: bool = True, max_iter: int = 100,
                 tol: float = 1e-10, start=None) -> np.ndarray:
    """Unpenalised weighted logistic regression on features ``X``: the project's one Newton fit of it.

    Newton–Raphson with step halving (a step is halved until the negative
    log-likelihood does not rise), batched over the leading axis of ``w``;
    stops when no coefficient moves by more than ``tol · (1 + max |θ|)``.

    Parameters
    ----------
    X : ndarray of shape (n, k)
    y : ndarray of shape (n,), 0/1
    w : ndarray of shape (n,) or (B, n)
        Record weights (bootstrap counts, for instance), one row per fit.
    intercept : bool
        Prepend a constant column (its coefficient comes first).
    start : array_like of shape (k + intercept,), optional
        Warm start; default the intercept-only solution (zeros without an intercept).

    Returns
    -------
    ndarray of shape (k + intercept,) for 1-d ``w``, else (B, k + intercept):
    ``[c, β_1 … β_k]``; ``nan`` where the fit did not converge, where a
    coefficient passed 1e6, where the Hessian was singular, or (one feature
    with an intercept) where the classes are separated by the feature, so
    that the MLE does not exist.
    """
    X = np.asarray(X, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    cols = [None] * intercept + [X[:, j] for j in range(X.shape[1])]  # None: the constant column
    k = len(cols)
    w2 = np.atleast_2d(w)
    B = w2.shape[0]
    theta = np.zeros((B, k))
    if start is not None:
        theta[:] = np.asarray(start, dtype=float)
    elif intercept:
        pbar = np.clip((w2 @ y) / w2.sum(axis=1), 1e-6, 1 - 1e-6)
        theta[:, 0] = np.log(pbar / (1 - pbar))
    Xf = np.column_stack([np.ones(len(y)) if c is None else c for c in cols]) if k else np.zeros((len(y), 0))
    wy = w2 * y

    def state(th):
        # eta, exp(-|eta|) and the negative log-likelihood, shared by the
        # step-halving test and the next Newton step (one exp per evaluation)
        eta = th @ Xf.T
        e = np.exp(-np.abs(eta))
        return eta, e, (w2 * (np.maximum(eta, 0) + np.log1p(e))).sum(axis=1) - (wy * eta).sum(axis=1)

    def dot(v, i, j=None):  # v @ (col_i * col_j), with the constant column summed directly
        a, b = cols[i], (None if j is None else cols[j])
        if a is None and b is None:
            return v.sum(axis=1)
        if a is None or b is None:
            return v @ (a if b is None else b)
        return v @ (a * b)

    eta, e, cur = state(theta)
    converged = np.zeros(B, dtype=bool)
    singular = np.zeros(B, dtype=bool)
    for _ in range(max_iter):
        inv = 1.0 / (1.0 + e)
        mu = np.where(eta >= 0, inv, e * inv)
        r = wy - w2 * mu
        g = np.stack([dot(r, i) if cols[i] is not None else r.sum(axis=1) for i in range(k)], axis=1)
        v = w2 * mu * (1 - mu)
        H = np.empty((B, k, k))
        for i in range(k):
            for j in range(i, k):
                H[:, i, j] = H[:, j, i] = dot(v, i, j) if cols[i] is not None or cols[j] is not None else v.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            if k == 2:  # closed form
                h00, h01, h11 = H[:, 0, 0], H[:, 0, 1], H[:, 1, 1]
                det = h00 * h11 - h01 * h01
                step = np.stack([(h11 * g[:, 0] - h01 * g[:, 1]) / det, (h00 * g[:, 1] - h01 * g[:, 0]) / det], axis=1)
            else:
                try:
                    step = np.linalg.solve(H, g[:, :, None])[:, :, 0]
                except np.linalg.LinAlgError:
                    step = np.full((B, k), np.nan)
        bad = ~np.isfinite(step).all(axis=1)
        singular |= bad & (k != 2)
        step[~np.isfinite(step)] = 0.0
        t = np.ones(B)
        new = theta + step
        eta, e, val = state(new)
        for _h in range(30):
            worse = val > cur + 1e-12 * np.abs(cur)
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            new = theta + t[:, None] * step
            eta2, e2, val2 = state(new)
            eta, e = np.where(worse[:, None], eta2, eta), np.where(worse[:, None], e2, e)
            val = np.where(worse, val2, val)
        delta = np.abs(new - theta).max(axis=1, initial=0.0)
        theta, cur = new, val
        converged = delta < tol * (1 + np.abs(theta).max(axis=1, initial=0.0))
        if converged.all():
            break
    ok = converged & ~singular & (np.abs(theta).max(axis=1, initial=0.0) < 1e6)
    if intercept and k == 2:  # complete or quasi-complete separation: the MLE does not exist
        x = cols[1]
        live = w2 > 0
        neg, pos = live & (y == 0), live & (y == 1)
        sep_up = np.where(neg, x, -np.inf).max(axis=1) <= np.where(pos, x, np.inf).min(axis=1)
        sep_down = np.where(pos, x, -np.inf).max(axis=1) <= np.where(neg, x, np.inf).min(axis=1)
        ok &= ~sep_up & ~sep_down
    theta[~ok] = np.nan
    return theta[0] if np.ndim(w) == 1 else theta


def fit_logistic_1d(x: np.ndarray, y: np.ndarray, w: np.ndarray, *, max_iter: int = 100, tol: float = 1e-10, start=None):
    """:func:`fit_logistic` of ``logit P(Y=1) = a + b x``, returned as ``(a, b)``.

    Parameters
    ----------
    x, y : ndarray of shape (n,)
    w : ndarray of shape (n,) or (B, n)
    start : (a, b), optional
        Warm start (e.g. the full-sample fit when ``w`` holds bootstrap
        counts); default the intercept-only solution.

    Returns
    -------
    a, b : ndarray of shape ``w.shape[:-1]`` (floats for 1-d ``w``); ``nan``
        where the fit did not converge (separation).
    """
    theta = fit_logistic(np.asarray(x, dtype=float)[:, None], y, w, max_iter=max_iter, tol=tol, start=start)
    if np.ndim(w) == 1:
        return float(theta[0]), float(theta[1])
    return theta[:, 0], theta[:, 1]
