"""Probability mappings for C > 2 classes, fitted on source calibration records only.

All mappings work on the SPEC's pseudo-logits: ``P`` is clipped to
``[1e-8, 1]`` and renormalised, then ``z_c = log p_c − mean_c log p_c``
(centred log-probabilities, the same scale for every model family).

* ``raw`` — the model's probabilities unchanged;
* ``temperature`` — ``softmax(z / T)``, one parameter ``T > 0`` (the
  multi-class replacement of Platt's slope); the weighted MLE of ``β = 1/T``,
  by Newton's method on the convex one-dimensional NLL (its derivative is
  ``Σ w (E_β[z] − z_y)`` and its curvature the weighted variance of ``z``
  under ``softmax(β z)``);
* ``vector`` — vector scaling, ``softmax(a ⊙ z + b)`` with a scale ``a_c``
  and a bias ``b_c`` per class; the weighted MLE by L-BFGS
  (:func:`scipy.optimize.minimize`) with the analytic gradient, started at
  ``a = 1, b = 0`` (the raw probabilities). Softmax ignores a constant added
  to every bias, so ``b_0 = 0`` is fixed and ``2C − 1`` parameters are fitted.
  The NLL is convex in ``(a, b)``, so the optimum does not depend on the start.

With ``tie_scales=True`` :func:`fit_vector_scaling` fits one shared scale
and per-class biases (temperature with bias), the model vector scaling
reduces to when all ``a_c`` are equal.

A fit that fails (non-finite parameters, a non-positive ``β``, an optimiser
that does not converge) falls back to the identity and records
``params["fallback"] = True``. Nothing here is random.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audit_core.errors import fail
from audit_core.logistic import EPS_LOGIT

from .metrics import check_multiclass_inputs

__all__ = ["MC_MAPPINGS", "MulticlassMapping", "pseudo_logits", "softmax", "weighted_nll", "fit_multiclass_mapping",
           "fit_temperature", "fit_vector_scaling"]

MC_MAPPINGS = ("raw", "temperature", "vector")


def pseudo_logits(P: np.ndarray) -> np.ndarray:
    """Centred log-probabilities of the clipped, renormalised ``P``; shape (n, C)."""
    Q = np.clip(np.asarray(P, dtype=float), EPS_LOGIT, 1.0)
    L = np.log(Q / Q.sum(axis=1, keepdims=True))
    return L - L.mean(axis=1, keepdims=True)


def softmax(S: np.ndarray) -> np.ndarray:
    """Row-wise softmax of scores of shape (n, C), shifted by the row maximum."""
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def _lse(S: np.ndarray) -> np.ndarray:
    m = S.max(axis=1)
    return m + np.log(np.exp(S - m[:, None]).sum(axis=1))


def weighted_nll(S: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """``Σ w_i (logsumexp(S_i) − S_{i, y_i}) / Σ w`` for scores ``S`` (n, C)."""
    return float(np.dot(w, _lse(S) - S[np.arange(len(y)), y]) / w.sum())


@dataclass(frozen=True)
class MulticlassMapping:
    """A fitted map from raw to mapped class probabilities, shape (n, C) → (n, C).

    Attributes
    ----------
    kind : {"raw", "temperature", "vector"}
    params : dict
        ``{"T": float}`` for temperature; ``{"scale": tuple, "bias": tuple}``
        (length C each) for vector scaling; ``"fallback"`` (bool) when fitted.
    """

    kind: str
    params: dict

    def __call__(self, P: np.ndarray) -> np.ndarray:
        P = np.asarray(P, dtype=float)
        if self.kind == "raw":
            return P
        z = pseudo_logits(P)
        if self.kind == "temperature":
            return softmax(z / self.params["T"])
        return softmax(z * np.asarray(self.params["scale"])[None, :] + np.asarray(self.params["bias"])[None, :])

    def flat_params(self) -> dict[str, float]:
        """Scalar parameters for a long-form table: ``T``, or ``scale_c`` / ``bias_c`` per class."""
        if self.kind == "temperature":
            return {"T": float(self.params["T"])}
        if self.kind == "vector":
            return {**{f"scale_{c}": float(v) for c, v in enumerate(self.params["scale"])},
                    **{f"bias_{c}": float(v) for c, v in enumerate(self.params["bias"])}}
        return {}


def fit_temperature(z: np.ndarray, y: np.ndarray, w: np.ndarray, *, max_iter: int = 100, tol: float = 1e-12) -> float:
    """Weighted MLE of ``T`` in ``softmax(z / T)`` (Newton on ``β = 1/T``); ``nan`` when it fails.

    Parameters
    ----------
    z : ndarray of shape (n, C)
        Pseudo-logits.
    y : ndarray of int, shape (n,)
    w : ndarray of shape (n,)
    """
    zy = z[np.arange(len(y)), y]
    W = w.sum()

    def nll(beta):
        return weighted_nll(beta * z, y, w)

    beta, cur = 1.0, nll(1.0)
    for _ in range(max_iter):
        Q = softmax(beta * z)
        m = (Q * z).sum(axis=1)
        g = np.dot(w, m - zy) / W
        h = np.dot(w, (Q * z * z).sum(axis=1) - m * m) / W
        if not (np.isfinite(g) and np.isfinite(h)) or h <= 0:
            return float("nan")
        step = -g / h
        new = beta + step
        while (new <= 0 or nll(new) > cur + 1e-15 * abs(cur)) and abs(step) > 1e-15:
            step /= 2  # step halving keeps β positive and the NLL non-increasing
            new = beta + step
        if new <= 0 or new > 1e6:
            return float("nan")
        done = abs(new - beta) < tol * max(1.0, beta)
        beta, cur = new, nll(new)
        if done:
            return float(1.0 / beta)
    return float("nan")


def fit_vector_scaling(z: np.ndarray, y: np.ndarray, w: np.ndarray, *, tie_scales: bool = False) -> tuple[np.ndarray, np.ndarray, bool]:
    """Weighted MLE of ``softmax(a ⊙ z + b)`` by L-BFGS; ``b_0 = 0``.

    Returns
    -------
    scale : ndarray of shape (C,)
    bias : ndarray of shape (C,)
    converged : bool
    """
    from scipy.optimize import minimize

    n, k = z.shape
    onehot = np.zeros((n, k))
    onehot[np.arange(n), y] = 1.0
    wn = w / w.sum()
    na = 1 if tie_scales else k

    def unpack(theta):
        a = np.full(k, theta[0]) if tie_scales else theta[:k]
        return a, np.r_[0.0, theta[na:]]

    def f(theta):
        a, b = unpack(theta)
        S = z * a + b
        G = (softmax(S) - onehot) * wn[:, None]  # dL/dS
        ga = (G * z).sum(axis=0)
        grad = np.r_[[ga.sum()] if tie_scales else ga, G.sum(axis=0)[1:]]
        return float(np.dot(wn, _lse(S) - (S * onehot).sum(axis=1))), grad

    theta0 = np.r_[np.ones(na), np.zeros(k - 1)]
    res = minimize(f, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 1000, "gtol": 1e-10, "ftol": 1e-15})
    a, b = unpack(res.x)
    ok = bool(np.isfinite(res.x).all()) and (res.success or np.max(np.abs(res.jac)) < 1e-6)
    return a, b, ok


def fit_multiclass_mapping(kind: str, P, y, *, sample_weight=None) -> MulticlassMapping:
    """Fit mapping ``kind`` on calibration probabilities ``P`` (n, C) and class indices ``y`` (n,)."""
    if kind not in MC_MAPPINGS:
        raise fail("MULTICLASS_MAPPING", name=kind, names=", ".join(MC_MAPPINGS))
    y, Q, w = check_multiclass_inputs(y, P, sample_weight)
    if kind == "raw":
        return MulticlassMapping("raw", {})
    z = pseudo_logits(Q)
    if kind == "temperature":
        T = fit_temperature(z, y, w)
        if not (np.isfinite(T) and T > 0):
            return MulticlassMapping("temperature", {"T": 1.0, "fallback": True})
        return MulticlassMapping("temperature", {"T": T, "fallback": False})
    a, b, ok = fit_vector_scaling(z, y, w)
    if not ok:
        k = Q.shape[1]
        return MulticlassMapping("vector", {"scale": (1.0,) * k, "bias": (0.0,) * k, "fallback": True})
    return MulticlassMapping("vector", {"scale": tuple(map(float, a)), "bias": tuple(map(float, b)), "fallback": False})
