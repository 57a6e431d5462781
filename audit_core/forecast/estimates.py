"""Forecasts of a target's reliability before its labels arrive, under two named assumptions.

Inputs are the source calibration partition (the rules are fitted there and
transported unchanged), the source ID-test partition (labelled evidence), and
the target's probabilities, with importance weights for every record
(:mod:`audit_core.forecast.weights`).

Methods (``assumption:name``):

* ``covariate:weighted``: ID-test quantities weighted by ``w(x)``;
* ``covariate:cbpe``: confidence-based expectations on the target itself: the
  target's probabilities taken as calibrated, each record counted as class
  ``c`` with weight ``P_c`` (like NannyML's CBPE);
* ``covariate:cbpe_refit``: the same with expected outcomes from a per-class
  Platt map re-fitted on the calibration partition with the importance
  weights (one-vs-rest, renormalised), the quantities still of the model's own
  probabilities;
* ``label:em`` and ``label:bbse``: ID-test quantities weighted by class,
  ``π_T(y) / π_S(y)``, with the target prevalence from EM or BBSE
  (:mod:`audit_core.forecast.labelshift`);
* ``label:em_cbpe``: confidence-based expectations from the prior-corrected probabilities;
* ``both:span``: the interval from the lower end of the two default methods
  (:data:`DEFAULT_METHODS`: ``covariate:cbpe`` and ``label:em``) to the upper
  end of the two (value: their mean).

The product shows ``covariate:cbpe``, ``label:em`` and ``both:span`` (:data:`DEFAULT_METHODS`);
``docs/forecast.md`` says why and when that was declared.

**Exact quantities** (selection rates, set sizes, singleton rates, mean
confidence) are computed on the target with no labels. Weighted on the source
they are the **weights check**: a weighting fails when any rate or singleton
share differs from the target's exact value by more than
``max(0.05, 3 · SE)``, ``SE² = v(1 − v)(1/ESS + 1/n_T)``.

**Intervals** (``level`` = 0.9, percentile): each of ``n_bootstrap`` seeded
replicates simulates a labelled target sample of ``min(n_T, max_draw)``
records under the method's assumption: re-weighting methods resample the
evidence records uniformly (and, for the label-shift methods, the target
records to re-estimate the prevalence) and then draw records with
probability proportional to their weights; confidence-based methods resample
target records and draw each label from its expected-outcome probabilities.
So the interval covers the estimate's error *and* the realised target value's
own sampling noise. The confidence-based methods also refit their
probability map on a bootstrap resample of the calibration records in each
replicate (``covariate:cbpe``: the resampled map's deviation from the
full-sample map, applied to the model's own probabilities;
``covariate:cbpe_refit``: the importance-weighted map itself), so their
interval carries the calibration evidence's own uncertainty. The importance
weights themselves are held fixed. The
point forecast is the method's value on its full evidence (for the
confidence-based methods, with fractional labels), except the ECE of the
confidence-based methods, which with fractional labels would be 0 by
construction: theirs is the replicates' median, the binning noise a
calibrated model shows on ``n_T`` records.

**Unknown.** A forecast is ``unknown`` (value still shown) when its
assumption's check fails: for covariate methods the overlap rule or the
importance weights' check, for label-shift methods that method's class
weights' check; and for both assumptions when the two default methods
(``covariate:cbpe`` and ``label:em``) differ by more than the quantity's tolerance
(:data:`TOLERANCES`). Under concept shift (``P(y | x)`` changes) both
assumptions are false and no label-free check can see it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from audit_core.logistic import fit_logistic_1d, logit

from .labelshift import adjust_probabilities, bbse_prevalence, class_weights, em_prevalence
from .quantities import Rules, fit_rules, label_free_quantities, labelled_quantities
from .weights import ImportanceWeights, OverlapVerdict, importance_weights, kish_ess

__all__ = ["METHODS", "DEFAULT_METHODS", "TOLERANCES", "Forecast", "WeightCheck", "ForecastResult", "forecast_target",
           "forecast_from_features", "tolerance_for", "refit_probabilities"]

METHODS = ("covariate:weighted", "covariate:cbpe", "covariate:cbpe_refit", "label:em", "label:bbse", "label:em_cbpe")
#: The method the product shows per assumption; the disagreement rule and ``both:span`` read the first two.
DEFAULT_METHODS = {"covariate": "covariate:cbpe", "label": "label:em", "both": "both:span"}
#: disagreement tolerance between the two assumptions, by the quantity's leading name
TOLERANCES = {"prevalence": 0.03, "risk": 0.05, "hcep": 0.03, "rate": 0.05, "ece": 0.03, "citl": 0.05, "brier": 0.03, "auroc": 0.05,
              "coverage": 0.05, "coverage_class": 0.05, "worst_class_coverage": 0.05, "set_size": 0.2,
              "singleton": 0.05}
LABEL_FREE = ("rate@", "set_size", "singleton", "mean_confidence")
CHECK_FLOOR = 0.05
#: the reason of a forecast whose value is not a number on its evidence
UNDEFINED = "not defined on the evidence (no record clears the rule, or one class only)"
CHECK_Z = 3.0


def tolerance_for(quantity: str) -> float:
    """The disagreement tolerance of a quantity name such as ``marginal:coverage@a=0.1`` or ``risk@s=0.8``."""
    stem = quantity.split(":")[-1].split("@")[0]
    for key in sorted(TOLERANCES, key=len, reverse=True):
        if stem.startswith(key):
            return TOLERANCES[key]
    return 0.05


@dataclass(frozen=True)
class Forecast:
    """One forecast: ``value`` with a ``level`` interval ``[low, high]``; ``status`` is ``forecast`` or ``unknown``."""

    quantity: str
    method: str
    value: float
    low: float
    high: float
    status: str
    reason: str = ""

    @property
    def assumption(self) -> str:
        """``covariate``, ``label`` or ``both``."""
        return self.method.split(":")[0]


@dataclass(frozen=True)
class WeightCheck:
    """A weighting's source value of a label-free quantity against the target's exact value."""

    method: str
    quantity: str
    source_weighted: float
    target_exact: float
    tolerance: float

    @property
    def ok(self) -> bool:
        """Within tolerance."""
        return bool(abs(self.source_weighted - self.target_exact) <= self.tolerance)


@dataclass(frozen=True)
class ForecastResult:
    """Forecasts, exact label-free target quantities, the weights' checks and the diagnostics.

    Attributes
    ----------
    forecasts : tuple of Forecast
    exact : dict of str to float
        Label-free quantities computed on the target.
    naive : dict of str to float
        Every quantity on the source ID test, unweighted ("unchanged from source").
    checks : tuple of WeightCheck
    prevalence : dict of str to tuple of float
        ``source`` and the ``em`` and ``bbse`` target estimates.
    weights : dict
        :meth:`ImportanceWeights.summary`-like scalars (domain AUROC, ESS, overlap verdict).
    level : float
    """

    forecasts: tuple[Forecast, ...]
    exact: dict = field(default_factory=dict)
    naive: dict = field(default_factory=dict)
    checks: tuple[WeightCheck, ...] = ()
    prevalence: dict = field(default_factory=dict)
    weights: dict = field(default_factory=dict)
    level: float = 0.9

    def get(self, quantity: str, method: str) -> Forecast:
        """The forecast of ``quantity`` by ``method``."""
        for f in self.forecasts:
            if f.quantity == quantity and f.method == method:
                return f
        raise KeyError((quantity, method))

    def to_frame(self):
        """Long table: quantity, method, assumption, value, low, high, status, reason, naive."""
        import pandas as pd

        return pd.DataFrame([{"quantity": f.quantity, "method": f.method, "assumption": f.assumption, "value": f.value,
                              "low": f.low, "high": f.high, "status": f.status, "reason": f.reason,
                              "naive": self.naive.get(f.quantity, np.nan)} for f in self.forecasts])


def _map_columns(C: int) -> list[int]:
    """The classes that get their own probability map: class 1 of a binary target, else every class."""
    return [1] if C == 2 else list(range(C))


def _map_params(P_cal: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per-class Platt parameters ``(a_c, b_c)`` fitted with weights ``w`` of shape (n,) or (B, n).

    Returns shape (k, 2) or (B, k, 2) for the ``k`` classes of :func:`_map_columns`; ``nan`` where the
    calibration records are separable (no finite fit).
    """
    cols = _map_columns(P_cal.shape[1])
    fits = [fit_logistic_1d(logit(P_cal[:, c]), (y == c).astype(float), w) for c in cols]
    return np.stack([np.stack([np.asarray(a, dtype=float), np.asarray(b, dtype=float)], axis=-1) for a, b in fits],
                    axis=-2)


def _apply_map(P: np.ndarray, params: np.ndarray | None = None, *, shift: np.ndarray | None = None) -> np.ndarray:
    """Probabilities through per-class maps ``logit P'_c = a_c + b_c logit P_c`` (``params`` (k, 2)).

    With ``shift`` (k, 2) the map is ``logit P'_c = logit P_c + Δa_c + Δb_c logit P_c`` instead: the
    model's own probabilities moved by a replicate's deviation from the fitted map.
    """
    C = P.shape[1]
    out = np.empty_like(P)
    for k, c in enumerate(_map_columns(C)):
        z = logit(P[:, c])
        if shift is not None:
            z = z + shift[k, 0] + shift[k, 1] * z
        else:
            assert params is not None
            z = params[k, 0] + params[k, 1] * z
        out[:, c] = 1.0 / (1.0 + np.exp(-z))
    if C == 2:
        out[:, 0] = 1.0 - out[:, 1]
        return out
    return out / out.sum(axis=1, keepdims=True)


def refit_probabilities(P_cal, y_cal, w_cal, P) -> np.ndarray:
    """Expected outcomes from a per-class Platt map re-fitted with weights ``w_cal`` (n,); returns shape of ``P``.

    Class ``c``'s map is ``logit P'_c = a_c + b_c logit P_c`` fitted on the
    calibration records (one-vs-rest); a binary target fits class 1 only and
    multi-class rows are renormalised.
    """
    P_cal, P = np.asarray(P_cal, dtype=float), np.asarray(P, dtype=float)
    return _apply_map(P, _map_params(P_cal, np.asarray(y_cal, dtype=int), np.asarray(w_cal, dtype=float)))


def _map_replicates(P_cal: np.ndarray, y_cal: np.ndarray, w_cal: np.ndarray, *, n_bootstrap: int, seed: int,
                    anchored: bool) -> np.ndarray:
    """Bootstrap replicates of the calibration map over the calibration records, shape (B, k, 2).

    ``anchored``: the replicates' deviations from the full-sample fit (applied to the model's own probabilities,
    as ``shift`` of :func:`_apply_map`); else the replicate maps themselves. A replicate with no finite fit
    keeps the full-sample map (zero deviation).
    """
    rng = np.random.default_rng([seed, 2026, 1])
    n = len(y_cal)
    full = _map_params(P_cal, y_cal, w_cal)
    if n_bootstrap == 0:
        return np.empty((0, *full.shape))
    counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(n_bootstrap)]).astype(float)
    reps = _map_params(P_cal, y_cal, counts * w_cal[None, :]).reshape(n_bootstrap, *full.shape)
    reps = np.where(np.isfinite(reps), reps, full[None])
    return reps - full[None] if anchored else reps


def _fractional(P: np.ndarray, tw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each record as every class ``c`` with weight ``P_c`` (labels, their row index, weights)."""
    n, C = P.shape
    return np.tile(np.arange(C), n), np.repeat(np.arange(n), C), P.ravel()


@dataclass(frozen=True)
class _Method:
    """What a method needs: reweighting evidence ``(y, P, tw, w)`` or expected outcomes ``Q`` for target ``P``."""

    kind: str  # "reweight" or "expected"
    y: np.ndarray | None = None
    P: np.ndarray | None = None
    tw: np.ndarray | None = None
    w: np.ndarray | None = None
    Q: np.ndarray | None = None
    #: (B, k, 2) bootstrap replicates of the calibration map behind ``Q`` (:func:`_map_replicates`)
    maps: np.ndarray | None = None
    #: the replicates are deviations applied to the model's own probabilities (``covariate:cbpe``)
    anchored: bool = False


def _point(m: _Method, P_t: np.ndarray, tw_t: np.ndarray, rules: Rules) -> dict[str, float]:
    if m.kind == "reweight":
        return labelled_quantities(m.y, m.P, rules, test_weight=m.tw, w=m.w)
    assert m.Q is not None
    y, row, w = _fractional(m.Q, tw_t)
    return labelled_quantities(y, P_t[row], rules, test_weight=tw_t[row], w=w)


def _replicates(methods: dict[str, _Method], P_t, tw_t, rules: Rules, *, n_bootstrap: int, seed: int, max_draw: int,
                prevalence_fn) -> dict[str, list[dict[str, float]]]:
    rng = np.random.default_rng([seed, 2026])
    nt = len(P_t)
    n_draw = min(nt, max_draw)
    out: dict[str, list[dict[str, float]]] = {k: [] for k in methods}
    for b in range(n_bootstrap):
        it = rng.integers(0, nt, nt)
        prev = prevalence_fn(it)
        for name, m in methods.items():
            if m.kind == "reweight":
                assert m.y is not None and m.w is not None and m.P is not None and m.tw is not None
                ie = rng.integers(0, len(m.y), len(m.y))
                w = m.w[ie] if name not in prev else class_weights(m.y[ie], *prev[name])
                take = ie[rng.choice(len(ie), n_draw, replace=True, p=w / w.sum())]
                out[name].append(labelled_quantities(m.y[take], m.P[take], rules, test_weight=m.tw[take]))
            else:
                assert m.Q is not None
                Q = m.Q if name not in prev else adjust_probabilities(P_t, *prev[name])
                sub = it[:n_draw]
                Qs = Q[sub]
                if m.maps is not None:  # the calibration map's own uncertainty: one bootstrap fit per replicate
                    Qs = (_apply_map(P_t[sub], shift=m.maps[b]) if m.anchored else _apply_map(P_t[sub], m.maps[b]))
                u = rng.random(n_draw)
                ys = np.minimum((np.cumsum(Qs, axis=1) < u[:, None]).sum(axis=1), Q.shape[1] - 1)
                out[name].append(labelled_quantities(ys, P_t[sub], rules, test_weight=tw_t[sub]))
    return out


def _checks(methods: dict[str, _Method], exact: dict[str, float], rules: Rules, nt: int) -> list[WeightCheck]:
    out = []
    for name in ("covariate:weighted", "label:em", "label:bbse"):
        m = methods.get(name)
        if m is None:
            continue
        assert m.P is not None and m.w is not None
        got = label_free_quantities(m.P, rules, test_weight=m.tw, w=m.w)
        ess = kish_ess(m.w)
        for q, v in got.items():
            if not (q.startswith("rate@") or q.endswith(tuple(f"singleton@a={a:g}" for a in rules.alphas))):
                continue
            if q.startswith("weighted_"):
                continue
            t = exact[q]
            se = np.sqrt(max(t * (1 - t), 1e-4) * (1 / ess + 1 / nt))
            out.append(WeightCheck(name, q, float(v), float(t), float(max(CHECK_FLOOR, CHECK_Z * se))))
    return out


def forecast_target(*, y_cal, P_cal, y_test, P_test, P_target, w_cal=None, w_test=None, w_target=None,
                    overlap: OverlapVerdict | None = None, selection_rates=(0.5, 0.7, 0.8, 0.9, 0.95),
                    hcep_thresholds=(0.8, 0.9, 0.95), alphas=(0.05, 0.1, 0.2), n_bootstrap: int = 200, seed: int = 0,
                    level: float = 0.9, max_draw: int = 20000, methods=METHODS) -> ForecastResult:
    """Label-free forecasts of every labelled quantity of the transported rules on the target.

    Parameters
    ----------
    y_cal : array-like of shape (n_cal,)
    P_cal : array-like of shape (n_cal, C)
        Source selection/conformal-calibration partition (the rules are fitted here).
    y_test : array-like of shape (n_test,)
    P_test : array-like of shape (n_test, C)
        Source ID-test partition (the evidence, and the naive forecast).
    P_target : array-like of shape (n_target, C)
        Target probabilities (no labels).
    w_cal, w_test, w_target : array-like, optional
        Importance weights on one scale (:func:`audit_core.forecast.weights.importance_weights`);
        none: all 1 (no covariate shift assumed, and no adapted sets).
    overlap : OverlapVerdict, optional
        The overlap rule's verdict on the weights (none: taken as ok).
    selection_rates, hcep_thresholds, alphas : tuple of float
    n_bootstrap, seed : int
    level : float
        Interval level.
    max_draw : int
        Cap on the simulated target sample of a replicate.
    methods : tuple of str
        A subset of :data:`METHODS` (``covariate:weighted``, whose weights are checked, and the
        :data:`DEFAULT_METHODS` are always run).

    Returns
    -------
    ForecastResult
    """
    P_cal, P_test, P_t = (np.asarray(a, dtype=float) for a in (P_cal, P_test, P_target))
    y_cal, y_test = np.asarray(y_cal, dtype=int), np.asarray(y_test, dtype=int)
    C, nt = P_cal.shape[1], len(P_t)
    ones = w_cal is None
    w_cal = np.ones(len(y_cal)) if w_cal is None else np.asarray(w_cal, dtype=float)
    w_test = np.ones(len(y_test)) if w_test is None else np.asarray(w_test, dtype=float)
    tw_t = np.ones(nt) if w_target is None else np.asarray(w_target, dtype=float)
    rules = fit_rules(P_cal, y_cal, selection_rates=selection_rates, hcep_thresholds=hcep_thresholds, alphas=alphas,
                      w_cal=None if ones else w_cal)
    prior_s = np.bincount(y_cal, minlength=C) / len(y_cal)
    prior_e = np.maximum(np.bincount(y_test, minlength=C) / len(y_test), 1e-12)
    em = em_prevalence(P_t, prior_s)
    bbse = bbse_prevalence(y_test, P_test, P_t, n_classes=C)
    cov_default, label_default = DEFAULT_METHODS["covariate"], DEFAULT_METHODS["label"]
    wanted = set(methods) | {"covariate:weighted", cov_default, label_default}
    ms: dict[str, _Method] = {}
    for name in METHODS:
        if name not in wanted:
            continue
        if name == "covariate:weighted":
            ms[name] = _Method("reweight", y_test, P_test, w_test, w_test)
        elif name in ("label:em", "label:bbse"):
            pi = em if name == "label:em" else bbse
            ms[name] = _Method("reweight", y_test, P_test, w_test, class_weights(y_test, prior_e, pi))
        elif name == "covariate:cbpe":
            ms[name] = _Method("expected", Q=P_t, maps=_map_replicates(P_cal, y_cal, np.ones(len(y_cal)),
                                                                        n_bootstrap=n_bootstrap, seed=seed,
                                                                        anchored=True), anchored=True)
        elif name == "covariate:cbpe_refit":
            ms[name] = _Method("expected", Q=refit_probabilities(P_cal, y_cal, w_cal, P_t),
                               maps=_map_replicates(P_cal, y_cal, w_cal, n_bootstrap=n_bootstrap, seed=seed,
                                                    anchored=False))
        else:
            ms[name] = _Method("expected", Q=adjust_probabilities(P_t, prior_s, em))
    # a map that has no finite fit (the calibration records are separable) forecasts nothing: unknown, with the reason
    broken = {name: ("its probability map has no finite fit on the calibration records (they are separable)"
                     if name == "covariate:cbpe_refit" else "its expected outcomes are not finite")
              for name, m in ms.items() if m.Q is not None and not np.isfinite(m.Q).all()}
    ms = {name: m for name, m in ms.items() if name not in broken}

    def prevalence_fn(it: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        pe = em_prevalence(P_t[it], prior_s)
        out = {"label:em": (prior_e, pe), "label:em_cbpe": (prior_s, pe)}
        if "label:bbse" in ms:
            out["label:bbse"] = (prior_e, bbse_prevalence(y_test, P_test, P_t[it], n_classes=C))
        return {k: v for k, v in out.items() if k in ms}

    points = {k: _point(m, P_t, tw_t, rules) for k, m in ms.items()}
    reps = _replicates(ms, P_t, tw_t, rules, n_bootstrap=n_bootstrap, seed=seed, max_draw=max_draw,
                       prevalence_fn=prevalence_fn)
    exact = label_free_quantities(P_t, rules, test_weight=tw_t)
    naive = labelled_quantities(y_test, P_test, rules, test_weight=w_test)
    checks = _checks(ms, exact, rules, nt)
    failed: dict[str, list[str]] = {}
    for c in checks:
        if not c.ok:
            failed.setdefault(c.method, []).append(c.quantity)
    cov_reason = [] if overlap is None or overlap.ok else [overlap.reason]
    if "covariate:weighted" in failed:
        cov_reason.append("importance weights miss the target's exact " + ", ".join(failed["covariate:weighted"][:3]))
    reasons = {k: list(cov_reason) if k.startswith("covariate") else
               (["class weights miss the target's exact " + ", ".join(failed[k][:3])] if k in failed else [])
               for k in ms}
    reasons["label:em_cbpe"] = reasons.get("label:em", [])
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    forecasts: list[Forecast] = []
    quantities = [q for q in naive if not any(q.startswith(p) or f":{p}" in q for p in LABEL_FREE)]
    for q in quantities:
        cw, le = points[cov_default][q], points[label_default][q]
        tol = tolerance_for(q)
        disagree = (f"covariate and label-shift forecasts differ by {abs(cw - le):.3f} > {tol:g}"
                    if np.isfinite(cw) and np.isfinite(le) and abs(cw - le) > tol else "")
        span = []
        for name in ms:
            r = np.array([d[q] for d in reps[name]], dtype=float)
            r = r[np.isfinite(r)]
            lo, hi = (float(np.quantile(r, lo_q)), float(np.quantile(r, hi_q))) if r.size else (np.nan, np.nan)
            v = float(np.median(r)) if q == "ece" and ms[name].kind == "expected" and r.size else float(points[name][q])
            why = reasons[name] + ([disagree] if disagree else []) + ([] if np.isfinite(v) else [UNDEFINED])
            forecasts.append(Forecast(q, name, v, lo, hi, "unknown" if why else "forecast", "; ".join(why)))
            if name in (cov_default, label_default):
                span.append(forecasts[-1])
        forecasts.extend(Forecast(q, name, np.nan, np.nan, np.nan, "unknown", why) for name, why in broken.items())
        own_fail = all(reasons[f.method] for f in span)
        value = float(np.mean([f.value for f in span]))
        lows, highs = [f.low for f in span if np.isfinite(f.low)], [f.high for f in span if np.isfinite(f.high)]
        why_span = (["both assumptions fail their checks"] if own_fail else []) + ([] if np.isfinite(value) else [UNDEFINED])
        forecasts.append(Forecast(q, "both:span", value, min(lows, default=np.nan), max(highs, default=np.nan),
                                  "unknown" if why_span else "forecast", "; ".join(why_span)))
    return ForecastResult(tuple(forecasts), exact, naive, tuple(checks),
                          {"source": tuple(prior_s), "em": tuple(em), "bbse": tuple(bbse)},
                          {} if overlap is None else {"domain_auroc": overlap.domain_auroc, "ess": overlap.ess,
                                                      "ess_floor": overlap.ess_floor, "ok": overlap.ok,
                                                      "reason": overlap.reason}, level)


def forecast_from_features(*, X_cal, y_cal, P_cal, X_test, y_test, P_test, X_target, P_target, seed: int = 0,
                           n_folds: int = 5, categorical=None, **options) -> tuple[ForecastResult, ImportanceWeights]:
    """:func:`forecast_target` with importance weights estimated from features (cross-fitted domain classifier).

    ``X_cal`` (n_cal, d), ``X_test`` (n_test, d) and ``X_target`` (n_target, d)
    are numeric feature matrices; the domain classifier pools the two labelled
    source partitions against the target; ``categorical`` (d,) marks columns of
    category codes. ``options`` go to :func:`forecast_target`.
    """
    iw = importance_weights(np.vstack([X_cal, X_test]), X_target, n_folds=n_folds, seed=seed, categorical=categorical)
    n_cal = len(X_cal)
    res = forecast_target(y_cal=y_cal, P_cal=P_cal, y_test=y_test, P_test=P_test, P_target=P_target,
                          w_cal=iw.source[:n_cal], w_test=iw.source[n_cal:], w_target=iw.target, overlap=iw.verdict,
                          seed=seed, **options)
    return res, iw
