"""The logit and the weighted logistic fit on one score, shared by the metrics, the mappings and the bootstraps.

* :func:`logit` — ``log(q / (1 − q))`` of the probability clipped to
  ``[EPS_LOGIT, 1 − EPS_LOGIT]``, finite everywhere: the project's one logit.
* :func:`fit_logistic_1d` — the unpenalised weighted logistic regression
  ``logit P(Y=1) = a + b x`` by Newton–Raphson with step halving, batched
  over bootstrap weight vectors: the calibration intercept and slope, Platt
  scaling and their bootstrap replicates all call it.

This module is pure: it must not import streamlit or plotly.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EPS_LOGIT", "fit_logistic_1d", "logit"]

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


def fit_logistic_1d(x: np.ndarray, y: np.ndarray, w: np.ndarray, *, max_iter: int = 100, tol: float = 1e-10, start=None):
    """Unpenalised weighted logistic regression ``logit P(Y=1) = a + b x``.

    Newton–Raphson with step halving; batched over leading axes of ``w``.

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
    w2 = np.atleast_2d(w)
    B = w2.shape[0]
    theta = np.zeros((B, 2))
    # start at the intercept-only solution
    if start is None:
        pbar = np.clip((w2 @ y) / w2.sum(axis=1), 1e-6, 1 - 1e-6)
        theta[:, 0] = np.log(pbar / (1 - pbar))
    else:
        theta[:] = np.asarray(start, dtype=float)
    X = np.stack([np.ones_like(x), x], axis=1)  # (n, 2)
    wy = w2 * y

    def state(th):
        # eta, exp(-|eta|) and the negative log-likelihood, shared by the
        # step-halving test and the next Newton step (one exp per evaluation)
        eta = th @ X.T
        e = np.exp(-np.abs(eta))
        return eta, e, (w2 * (np.maximum(eta, 0) + np.log1p(e))).sum(axis=1) - (wy * eta).sum(axis=1)

    eta, e, cur = state(theta)
    converged = np.zeros(B, dtype=bool)
    for _ in range(max_iter):
        inv = 1.0 / (1.0 + e)
        mu = np.where(eta >= 0, inv, e * inv)
        r = wy - w2 * mu
        g = np.stack([r.sum(axis=1), r @ x], axis=1)
        v = w2 * mu * (1 - mu)
        h00, h01, h11 = v.sum(axis=1), v @ x, v @ (x * x)
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.stack([(h11 * g[:, 0] - h01 * g[:, 1]) / det, (h00 * g[:, 1] - h01 * g[:, 0]) / det], axis=1)
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
        delta = np.abs(new - theta).max(axis=1)
        theta, cur = new, val
        converged = delta < tol * (1 + np.abs(theta).max(axis=1))
        if converged.all():
            break
    # complete or quasi-complete separation: the MLE does not exist
    live = w2 > 0
    neg, pos = live & (y == 0), live & (y == 1)
    sep_up = np.where(neg, x, -np.inf).max(axis=1) <= np.where(pos, x, np.inf).min(axis=1)
    sep_down = np.where(pos, x, -np.inf).max(axis=1) <= np.where(neg, x, np.inf).min(axis=1)
    ok = converged & ~sep_up & ~sep_down & (np.abs(theta).max(axis=1) < 1e6)
    theta[~ok] = np.nan
    if np.ndim(w) == 1:
        return float(theta[0, 0]), float(theta[0, 1])
    return theta[:, 0], theta[:, 1]
