"""Brittleness-aware temperature scaling (SPEC §1, "Using the certificate").

``T(x) = T0 · (1 + β · FDS(x))`` applied to the pseudo-logits ``z`` of SPEC §0
(the model's native logits are not used, so trees and linear models are
treated alike; the result says ``logits="pseudo"``).

* ``T0`` minimises the validation NLL of ``softmax(z / T0)`` (global
  temperature scaling), searched on ``log T0 ∈ [log 0.05, log 20]``.
* ``β ∈ [0, 20]`` minimises the validation NLL with ``T0`` fixed.

Both are fitted on a validation split of the audited cases and compared on
the held-out remainder by ECE (15 equal-width bins of the top-label
confidence), NLL and Brier score, overall and on the *fragile quartile*
(test cases whose FDS is at or above the 75th percentile of the validation
FDS). Brier is ``mean (p_1 - y)^2`` for binary tasks and
``mean Σ_c (p_c - 1[y=c])^2`` for multi-class. These metrics are written here
(multi-class) rather than imported from ``audit_core.metrics`` (binary only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from audit_core.errors import fail, register_messages
from audit_core.models.probs import clip_probs, pseudo_logits

__all__ = [
    "ece",
    "nll",
    "brier",
    "fit_global_temperature",
    "fit_beta",
    "TemperatureResult",
    "brittleness_temperature",
]

register_messages(
    {
        "FR_TEMP_TOO_FEW": "Temperature scaling needs at least {minimum} audited cases with known labels; got {n}.",
    }
)


def ece(y: np.ndarray, p: np.ndarray, *, n_bins: int = 15) -> float:
    """Top-label expected calibration error with equal-width bins.

    Parameters
    ----------
    y : int ndarray of shape (n,)
    p : ndarray of shape (n, n_classes)

    Examples
    --------
    Top-label confidences 0.8 (correct) and 0.6 (wrong) fall in different
    bins: ECE = 0.5·|1 − 0.8| + 0.5·|0 − 0.6| = 0.4.

    >>> round(ece(np.array([1, 0]), np.array([[0.2, 0.8], [0.4, 0.6]])), 6)
    0.4
    """
    p = np.asarray(p, dtype=float)
    conf = p.max(axis=1)
    correct = p.argmax(axis=1) == np.asarray(y)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        sel = bins == b
        total += sel.sum() * abs(correct[sel].mean() - conf[sel].mean())
    return float(total / len(y))


def nll(y: np.ndarray, p: np.ndarray) -> float:
    """Mean negative log-likelihood of clipped probabilities."""
    q = clip_probs(p)
    return float(-np.mean(np.log(q[np.arange(len(y)), np.asarray(y)])))


def brier(y: np.ndarray, p: np.ndarray) -> float:
    """Brier score (binary: positive class; multi-class: summed over classes)."""
    p = np.asarray(p, dtype=float)
    onehot = np.eye(p.shape[1])[np.asarray(y)]
    if p.shape[1] == 2:
        return float(np.mean((p[:, 1] - onehot[:, 1]) ** 2))
    return float(np.mean(((p - onehot) ** 2).sum(axis=1)))


def _nll_z(z: np.ndarray, y: np.ndarray, t: np.ndarray | float) -> float:
    t = np.asarray(t, dtype=float).reshape(-1, 1) if np.ndim(t) else t
    return float(-np.mean(log_softmax(z / t, axis=1)[np.arange(len(y)), y]))


def fit_global_temperature(z: np.ndarray, y: np.ndarray) -> float:
    """``T0`` minimising NLL of ``softmax(z / T0)``."""
    res = minimize_scalar(lambda lt: _nll_z(z, y, np.exp(lt)), bounds=(np.log(0.05), np.log(20.0)), method="bounded")
    return float(np.exp(res.x))


def fit_beta(z: np.ndarray, y: np.ndarray, fds: np.ndarray, t0: float, *, beta_max: float = 20.0) -> float:
    """``β ≥ 0`` minimising NLL of ``softmax(z / (T0 (1 + β FDS)))``; 0 is kept unless it is beaten."""
    res = minimize_scalar(lambda b: _nll_z(z, y, t0 * (1 + b * fds)), bounds=(0.0, beta_max), method="bounded")
    b = float(res.x)
    return b if _nll_z(z, y, t0 * (1 + b * fds)) < _nll_z(z, y, t0) else 0.0


@dataclass(frozen=True, eq=False)
class TemperatureResult:
    """Global vs brittleness-aware temperature on held-out cases.

    Attributes
    ----------
    t0, beta : float
    n_val, n_test : int
    fragile_threshold : float
        FDS at the validation 75th percentile.
    table : DataFrame
        ``method, subset, n, ece, nll, brier``; methods ``uncalibrated``,
        ``global_T``, ``brittleness_T``; subsets ``all``, ``fragile_quartile``.
    logits : str
    """

    t0: float
    beta: float
    n_val: int
    n_test: int
    fragile_threshold: float
    table: pd.DataFrame
    logits: str = "pseudo"

    def to_dict(self) -> dict[str, Any]:
        return {
            "t0": self.t0, "beta": self.beta, "n_val": self.n_val, "n_test": self.n_test,
            "fragile_threshold": self.fragile_threshold, "logits": self.logits,
            "table": self.table.to_dict(orient="records"),
        }

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()


def brittleness_temperature(
    p: np.ndarray,
    y: np.ndarray,
    fds: np.ndarray,
    *,
    val_share: float = 0.5,
    seed: int = 0,
    n_bins: int = 15,
) -> TemperatureResult:
    """Fit ``T0`` and ``β`` on a seeded validation split and compare on the rest.

    Parameters
    ----------
    p : ndarray of shape (n, n_classes)
        Model probabilities of the audited cases.
    y : int ndarray of shape (n,)
        True class codes.
    fds : ndarray of shape (n,)
    val_share : float
    seed : int

    Returns
    -------
    TemperatureResult
    """
    y = np.asarray(y, dtype=int)
    n = len(y)
    if n < 20:
        raise fail("FR_TEMP_TOO_FEW", minimum=20, n=n)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 179424673]))
    perm = rng.permutation(n)
    n_val = int(round(n * val_share))
    val, test = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    z = pseudo_logits(p)
    fds = np.asarray(fds, dtype=float)
    t0 = fit_global_temperature(z[val], y[val])
    beta = fit_beta(z[val], y[val], fds[val], t0)
    thr = float(np.quantile(fds[val], 0.75))
    from scipy.special import softmax

    probs = {
        "uncalibrated": clip_probs(p[test]),
        "global_T": softmax(z[test] / t0, axis=1),
        "brittleness_T": softmax(z[test] / (t0 * (1 + beta * fds[test]))[:, None], axis=1),
    }
    rows = []
    fragile = fds[test] >= thr
    for method, q in probs.items():
        for subset, keep in (("all", np.ones(len(test), dtype=bool)), ("fragile_quartile", fragile)):
            if keep.sum() == 0:
                continue
            yy, qq = y[test][keep], q[keep]
            rows.append(dict(method=method, subset=subset, n=int(keep.sum()), ece=ece(yy, qq, n_bins=n_bins),
                             nll=nll(yy, qq), brier=brier(yy, qq)))
    return TemperatureResult(t0=t0, beta=beta, n_val=len(val), n_test=len(test), fragile_threshold=thr,
                             table=pd.DataFrame(rows))
