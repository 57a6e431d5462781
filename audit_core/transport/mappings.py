"""Probability mappings fitted on the probability-calibration partition (stage 3).

* ``raw`` — the model's own positive-class probability;
* ``platt`` — unpenalised weighted logistic regression of the label on the
  clipped logit ``logit p̂`` (clip ``[1e-8, 1 − 1e-8]``), Newton–Raphson;
* ``isotonic`` — weighted isotonic regression of the label on ``p̂``
  (:class:`sklearn.isotonic.IsotonicRegression`, ``out_of_bounds="clip"``).

A mapping is fitted only from source calibration records; the protocol never
passes target-domain records here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import fail, register_messages
from ..metrics import EPS_LOGIT, fit_logistic_1d

__all__ = ["MAPPINGS", "ProbabilityMapping", "fit_mapping"]

MAPPINGS = ("raw", "platt", "isotonic")

register_messages({"TRANSPORT_UNKNOWN_MAPPING": "Unknown probability mapping {name!r}; choose from {names}."})


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, EPS_LOGIT, 1 - EPS_LOGIT)
    return np.log(q) - np.log1p(-q)


@dataclass(frozen=True, eq=False)
class ProbabilityMapping:
    """A fitted map from raw to mapped positive-class probabilities.

    Attributes
    ----------
    kind : {"raw", "platt", "isotonic"}
    params : dict
        ``{"a": .., "b": ..}`` for Platt; empty otherwise.
    model : object or None
        The fitted isotonic regressor.
    """

    kind: str
    params: dict
    model: object = None

    def __call__(self, p: np.ndarray) -> np.ndarray:
        """Map probabilities of shape (n,) to shape (n,)."""
        p = np.asarray(p, dtype=float)
        if self.kind == "raw":
            return p
        if self.kind == "platt":
            z = self.params["a"] + self.params["b"] * _logit(p)
            return 1.0 / (1.0 + np.exp(-z))
        return np.clip(self.model.predict(p), 0.0, 1.0)


def fit_mapping(kind: str, p: np.ndarray, y: np.ndarray, *, sample_weight: np.ndarray | None = None) -> ProbabilityMapping:
    """Fit mapping ``kind`` on calibration probabilities ``p`` (n,) and labels ``y`` (n,).

    Platt falls back to ``a = 0, b = 1`` (the identity) when the logistic fit
    does not converge (perfect separation of the calibration partition);
    the fallback is recorded in ``params["fallback"]``.
    """
    if kind not in MAPPINGS:
        raise fail("TRANSPORT_UNKNOWN_MAPPING", name=kind, names=", ".join(MAPPINGS))
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones(len(p)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if kind == "raw":
        return ProbabilityMapping("raw", {})
    if kind == "platt":
        a, b = fit_logistic_1d(_logit(p), y, w)
        if not (np.isfinite(a) and np.isfinite(b)):
            return ProbabilityMapping("platt", {"a": 0.0, "b": 1.0, "fallback": True})
        return ProbabilityMapping("platt", {"a": float(a), "b": float(b), "fallback": False})
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y, sample_weight=w)
    return ProbabilityMapping("isotonic", {}, iso)
