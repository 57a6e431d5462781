"""Probability mappings fitted on the probability-calibration partition (stage 3).

* ``raw`` — the model's own positive-class probability;
* ``platt`` — unpenalised weighted logistic regression of the label on the
  clipped logit ``logit p̂`` (clip ``[1e-8, 1 − 1e-8]``), Newton–Raphson;
* ``isotonic`` — weighted isotonic regression of the label on ``p̂``
  (:class:`sklearn.isotonic.IsotonicRegression`, ``out_of_bounds="clip"``);
* ``temperature`` — ``σ(logit p̂ / T)``, one parameter, no intercept: the
  weighted MLE of ``b = 1/T`` (Newton on a concave one-dimensional likelihood);
* ``beta`` — beta calibration (Kull, Silva Filho and Flach, 2017):
  ``logit q = c + a ln p̂ − b ln(1 − p̂)``, the weighted logistic MLE on the
  two features ``ln p̂`` and ``−ln(1 − p̂)`` (clipped as above). A negative
  ``a`` or ``b`` would make the map non-monotone; that feature is then
  dropped and the rest refitted, as the method prescribes.
* ``venn_abers`` — the inductive Venn-Abers predictor
  (:mod:`~audit_core.transport.venn_abers`): the merged probability
  ``p1 / (1 − p0 + p1)``; its interval width ``p1 − p0`` is reported as the
  metric ``venn_abers_width`` (:meth:`ProbabilityMapping.extra_metrics`).

Temperature and beta fall back to the identity when the fit does not converge
(``params["fallback"]``), like Platt. ``MAPPINGS`` lists every mapping a run
may declare; ``DEFAULT_MAPPINGS`` are the ones a run uses when it declares none.

A mapping is fitted only from source calibration records; the protocol never
passes target-domain records here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import fail, register_messages
from ..logistic import EPS_LOGIT, fit_logistic, fit_logistic_1d, logit
from .venn_abers import fit_venn_abers

__all__ = ["MAPPINGS", "DEFAULT_MAPPINGS", "ProbabilityMapping", "fit_mapping"]

MAPPINGS = ("raw", "platt", "isotonic", "temperature", "beta", "venn_abers")
DEFAULT_MAPPINGS = ("raw", "platt", "isotonic")

register_messages({"TRANSPORT_UNKNOWN_MAPPING": "Unknown probability mapping {name!r}; choose from {names}."})


@dataclass(frozen=True, eq=False)
class ProbabilityMapping:
    """A fitted map from raw to mapped positive-class probabilities.

    Attributes
    ----------
    kind : one of :data:`MAPPINGS`
    params : dict
        The fitted numbers (``{"a": .., "b": ..}`` for Platt, ``T`` for
        temperature, ``a, b, c`` for beta); empty for raw, isotonic and Venn-Abers.
    model : object or None
        The fitted isotonic regressor, or the
        :class:`~audit_core.transport.venn_abers.VennAbers` predictor.
    """

    kind: str
    params: dict
    model: Any = None  # an sklearn IsotonicRegression (untyped) or a VennAbers

    def __call__(self, p: np.ndarray) -> np.ndarray:
        """Map probabilities of shape (n,) to shape (n,)."""
        p = np.asarray(p, dtype=float)
        if self.kind == "raw":
            return p
        if self.kind == "platt":
            z = self.params["a"] + self.params["b"] * logit(p)
            return 1.0 / (1.0 + np.exp(-z))
        if self.kind == "temperature":
            return 1.0 / (1.0 + np.exp(-logit(p) / self.params["T"]))
        if self.kind == "beta":
            q = np.clip(p, EPS_LOGIT, 1 - EPS_LOGIT)
            z = self.params["c"] + self.params["a"] * np.log(q) - self.params["b"] * np.log1p(-q)
            return 1.0 / (1.0 + np.exp(-z))
        if self.kind == "venn_abers":
            return self.model.predict(p)
        return np.clip(self.model.predict(p), 0.0, 1.0)

    def interval(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Venn-Abers ``(p0, p1)`` of raw probabilities ``p`` (n,), each (n,); ``None`` for other mappings."""
        return self.model.interval(p) if self.kind == "venn_abers" else None

    def extra_metrics(self, p: np.ndarray) -> dict[str, np.ndarray]:
        """Per-record columns of metrics only this mapping has (their mean is the metric), for raw ``p`` (n,).

        ``{"venn_abers_width": p1 − p0}`` for Venn-Abers; empty otherwise.
        """
        iv = self.interval(p)
        return {} if iv is None else {"venn_abers_width": iv[1] - iv[0]}


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
        a, b = fit_logistic_1d(logit(p), y, w)
        if not (np.isfinite(a) and np.isfinite(b)):
            return ProbabilityMapping("platt", {"a": 0.0, "b": 1.0, "fallback": True})
        return ProbabilityMapping("platt", {"a": float(a), "b": float(b), "fallback": False})
    if kind == "temperature":
        (b,) = fit_logistic(logit(p)[:, None], y, w, intercept=False)
        if not (np.isfinite(b) and b > 0):
            return ProbabilityMapping("temperature", {"T": 1.0, "fallback": True})
        return ProbabilityMapping("temperature", {"T": float(1.0 / b), "fallback": False})
    if kind == "beta":
        return _fit_beta(p, y, w)
    if kind == "venn_abers":
        return ProbabilityMapping("venn_abers", {}, fit_venn_abers(p, y, sample_weight=w))
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y, sample_weight=w)
    return ProbabilityMapping("isotonic", {}, iso)


def _fit_beta(p: np.ndarray, y: np.ndarray, w: np.ndarray) -> ProbabilityMapping:
    """Beta calibration with its monotonicity rule (a negative shape coefficient is dropped)."""
    q = np.clip(p, EPS_LOGIT, 1 - EPS_LOGIT)
    feats = {"a": np.log(q), "b": -np.log1p(-q)}
    keep = ["a", "b"]
    while True:
        theta = fit_logistic(np.column_stack([feats[k] for k in keep]) if keep else np.zeros((len(q), 0)), y, w)
        if not np.isfinite(theta).all():
            return ProbabilityMapping("beta", {"a": 1.0, "b": 1.0, "c": 0.0, "fallback": True})
        coef = dict(zip(keep, theta[1:], strict=True))
        neg = [k for k in keep if coef[k] < 0]
        if not neg:
            break
        keep.remove(min(neg, key=lambda k: coef[k]))
    return ProbabilityMapping("beta", {"a": float(coef.get("a", 0.0)), "b": float(coef.get("b", 0.0)),
                                       "c": float(theta[0]), "fallback": False})
