"""The forecast step of a label-free Transport run, and the realised values of a labelled one.

A Transport run whose config declares ``target_labels="absent"`` or
``"hidden"`` runs ``declare → split → fit → evaluate → forecast``: the
source is partitioned and fitted exactly as in the labelled run, the ID test
is evaluated, and :func:`forecast` forecasts on the target, per refit, model
and mapping, every labelled quantity of :func:`~.estimates.forecast_target`:

* **the rules** are fitted on the source *selection* partition with the run's
  ``selection_rates``, ``hcep_thresholds`` and ``alphas``, as the labelled
  run fits its thresholds and conformal quantiles there; the forecast's
  calibration records are that partition, its evidence the ID test;
* **importance weights** once per refit (:func:`~.weights.importance_weights`,
  seed ``seed · 1000 + refit + 101``): a domain classifier on the declared
  features of the selection and ID-test records against the target records
  (numeric as numbers, categoricals as codes of their 250 most frequent
  levels). A run without features (scores only) has no weights: its
  covariate methods are ``unknown`` with reason :data:`NO_FEATURES`;
* ``n_bootstrap`` and ``level`` are the run's; the forecast's seed is
  ``seed · 1000 + refit + 211``. Record weights (``weight_column``) are not
  used by the forecast.

:func:`realised_table` is the labelled run's counterpart: the same quantity
names on the labelled target, with the same (unweighted) rules, for
:func:`~.check.check_forecast`. The target-adapted (``weighted_*``) sets need
the weights, so they are not realised.

:func:`run_transport_with_forecast` runs either mode: label-free with the
forecast tables, labelled with the ``realised`` table added to its extras.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from audit_core.data.preprocess import category_text
from audit_core.errors import fail
from audit_core.transport.multiclass.classes import is_multiclass_target
from audit_core.transport.multiclass.run import MULTICLASS_STAGES, MulticlassTransportAudit
from audit_core.transport.runner import BINARY_STAGES, TransportAudit
from audit_core.transport.state import Tick, TransportState, no_tick
from audit_core.transport.verdicts import change_direction, classify_change

from .estimates import METHODS, forecast_target
from .quantities import fit_rules, labelled_quantities
from .weights import (AUROC_MAX, CLIP_QUANTILE, ESS_FLOOR_MIN, ESS_FLOOR_SHARE, MAX_RATIO, ImportanceWeights,
                      OverlapVerdict, importance_weights)

__all__ = ["FORECAST_TABLES", "NO_FEATURES", "LabelFreeTransportAudit", "LabelFreeMulticlassTransportAudit",
           "forecast", "feature_matrices", "realised_table", "run_transport_with_forecast", "tolerance_key"]

#: The tables of a label-free run, with their columns (in this order).
FORECAST_TABLES: dict[str, tuple[str, ...]] = {
    "forecast": ("refit", "model", "mapping", "quantity", "method", "assumption", "value", "low", "high", "level",
                 "status", "reason", "naive", "change", "tolerance", "verdict", "direction", "source"),
    "forecast_exact": ("refit", "model", "mapping", "quantity", "value"),
    "forecast_checks": ("refit", "model", "mapping", "method", "quantity", "source_weighted", "target_exact",
                        "tolerance", "ok"),
    "forecast_weights": ("refit", "domain_auroc", "ess", "n_source", "n_target", "cap", "n_clipped", "overlap_ok",
                         "reason"),
    "forecast_prevalence": ("refit", "model", "mapping", "class", "source", "em", "bbse"),
}
REALISED_COLUMNS = ("refit", "model", "mapping", "quantity", "value")
#: the reason of the covariate methods when the run declares no features
NO_FEATURES = "no features to weight"
_MAX_LEVELS = 250


def probability_matrix(p) -> np.ndarray:
    """Probabilities as (n, C): a binary run's positive-class vector (n,) becomes ``[1 − p, p]``."""
    p = np.asarray(p, dtype=float)
    return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p


def feature_matrices(source: pd.DataFrame, target: pd.DataFrame, numeric, categorical
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numeric matrices of the declared features for the domain classifier.

    Returns
    -------
    X_source : ndarray of shape (n_source, d)
    X_target : ndarray of shape (n_target, d)
    categorical : ndarray of bool of shape (d,)
        Columns of category codes (the 250 most frequent levels of both domains, the rest pooled; missing is NaN).
    """
    ns = len(source)
    cols, cat = [], []
    for col in numeric:
        v = pd.to_numeric(pd.concat([source[col], target[col]], ignore_index=True), errors="coerce")
        cols.append(v.to_numpy(dtype=float))
        cat.append(False)
    for col in categorical:
        text = category_text(pd.concat([source[col], target[col]], ignore_index=True))
        levels = text.value_counts().index[:_MAX_LEVELS]
        code = np.array(pd.Categorical(text, categories=levels).codes, dtype=float)
        code[(code < 0) & text.notna().to_numpy()] = _MAX_LEVELS  # pooled rare levels
        code[text.isna().to_numpy()] = np.nan
        cols.append(code)
        cat.append(True)
    X = np.column_stack(cols) if cols else np.empty((ns + len(target), 0))
    return X[:ns], X[ns:], np.asarray(cat, dtype=bool)


def tolerance_key(quantity: str, *, multiclass: bool) -> str | None:
    """The verdict metric a forecast quantity is read against (None: no declared tolerance).

    >>> tolerance_key("risk@s=0.8", multiclass=False), tolerance_key("marginal:coverage@a=0.1", multiclass=False)
    ('risk', 'coverage')
    >>> tolerance_key("hcep@tau=0.9", multiclass=False), tolerance_key("ece", multiclass=True)
    ('hcep_at_0.90', 'ece_top')
    >>> tolerance_key("citl", multiclass=False) is None
    True
    """
    stem = quantity.split(":")[-1]
    name, _, at = stem.partition("@")
    if name == "risk":
        return "risk"
    if name == "hcep" and at.startswith("tau="):
        return f"hcep_at_{float(at[4:]):.2f}"
    if name == "coverage" and ":" in quantity:
        return "coverage"
    plain = {"prevalence": "prevalence", "ece": "ece", "brier": "brier_score", "auroc": "auroc"}
    mc = {"ece": "ece_top", "brier": "brier_multiclass", "auroc": "auroc_macro"}
    return (mc if multiclass else plain).get(name)


def _at(quantity: str, key: str) -> float | None:
    m = re.search(rf"@{key}=([0-9.eE+-]+)$", quantity)
    return float(m.group(1)) if m else None


def _forecast_rows(res, ids: dict, *, level: float, tolerances, multiclass: bool) -> list[dict]:
    rows = []
    for f in res.forecasts:
        naive = float(res.naive.get(f.quantity, np.nan))
        key = tolerance_key(f.quantity, multiclass=multiclass)
        tol = float(tolerances[key]) if key is not None and key in tolerances else np.nan
        lo, hi = f.low - naive, f.high - naive
        verdict = classify_change(lo, hi, tol) if f.status == "forecast" and np.isfinite(tol) else "indeterminate"
        direction = change_direction(verdict, key or f.quantity, lo=lo, hi=hi, id_value=naive, ood_value=f.value,
                                     alpha=_at(f.quantity, "a"), selection_rate=_at(f.quantity, "s"))
        rows.append({**ids, "quantity": f.quantity, "method": f.method, "assumption": f.assumption,
                     "value": float(f.value), "low": float(f.low), "high": float(f.high), "level": float(level),
                     "status": f.status, "reason": f.reason, "naive": naive, "change": float(f.value) - naive,
                     "tolerance": tol, "verdict": verdict, "direction": direction, "source": "forecast"})
    return rows


def _weights(state: TransportState, refit: int) -> ImportanceWeights | None:
    """Importance weights of one refit's selection + ID-test records against the target (None without features)."""
    c = state.config
    numeric = [f for f in c.numeric if f not in c.score_columns]
    categorical = [f for f in c.categorical if f not in c.score_columns]
    if not (numeric or categorical):
        return None
    assert state.target is not None
    rows = np.concatenate([state.source_rows(refit, "selection"), state.source_rows(refit, "id_test")])
    Xs, Xt, cat = feature_matrices(state.source.iloc[rows], state.target, numeric, categorical)
    return importance_weights(Xs, Xt, seed=state.split.seeds[refit] + 101, categorical=cat if cat.any() else None)


def _class_names(state: TransportState) -> list[str]:
    if state.kind.multiclass:
        return [str(x) for x in state.classes]
    names = state.declared.label_classes.get("source", {}).get(state.config.primary_target)
    return [str(x) for x in names] if names is not None and len(names) == 2 else ["0", "1"]


def forecast(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """The forecast step (module docstring): the state with the five :data:`FORECAST_TABLES` and the manifest's
    ``forecast`` block.
    """
    c = state.config
    if not c.label_free or state.target is None:  # pragma: no cover - require_next and declare refuse earlier
        raise fail("TRANSPORT_FORECAST_LABELLED", order=" → ".join(state.stages))
    multiclass = state.kind.multiclass
    tolerances = dict(state.kind.tolerances or c.tolerances)
    y = state.y_source[c.primary_target]
    names = _class_names(state)
    out: dict[str, list[dict]] = {k: [] for k in FORECAST_TABLES}
    weights: dict[int, ImportanceWeights | None] = {}
    units = list(state.pipes)
    for i, (r, m) in enumerate(units):
        tick(i / len(units), f"Forecasting {m}, refit {r + 1} of {c.n_refits}")
        sel, idt = state.source_rows(r, "selection"), state.source_rows(r, "id_test")
        if r not in weights:
            iw = weights[r] = _weights(state, r)
            summary: dict[str, Any] = iw.summary() if iw is not None else {"domain_auroc": np.nan, "ess": np.nan, "cap": np.nan,
                                                           "n_clipped": 0, "ok": False, "reason": NO_FEATURES}
            out["forecast_weights"].append({
                "refit": r, "domain_auroc": float(summary["domain_auroc"]), "ess": float(summary["ess"]),
                "n_source": int(len(sel) + len(idt)), "n_target": int(len(state.target)), "cap": float(summary["cap"]),
                "n_clipped": int(summary["n_clipped"]), "overlap_ok": bool(summary["ok"]), "reason": str(summary["reason"])})
        iw = weights[r]
        if iw is None:
            kw: dict[str, Any] = {"overlap": OverlapVerdict(False, NO_FEATURES, np.nan, np.nan, np.nan)}
        else:
            kw = {"w_cal": iw.source[:len(sel)], "w_test": iw.source[len(sel):], "w_target": iw.target,
                  "overlap": iw.verdict}
        pipe = state.pipes[(r, m)]
        for mp in state.kind.mappings:
            res = forecast_target(
                y_cal=y[sel], P_cal=probability_matrix(pipe["maps"][mp](pipe["raw"]["selection"])), y_test=y[idt],
                P_test=probability_matrix(state.mapped(r, m, mp, "id")),
                P_target=probability_matrix(state.mapped(r, m, mp, "ood")), selection_rates=c.selection_rates,
                hcep_thresholds=c.hcep_thresholds, alphas=c.alphas, n_bootstrap=c.n_bootstrap,
                seed=state.split.seeds[r] + 211, level=c.level, **kw)
            ids = {"refit": r, "model": m, "mapping": mp}
            out["forecast"] += _forecast_rows(res, ids, level=c.level, tolerances=tolerances, multiclass=multiclass)
            out["forecast_exact"] += [{**ids, "quantity": q, "value": float(v)} for q, v in res.exact.items()]
            out["forecast_checks"] += [{**ids, "method": k.method, "quantity": k.quantity,
                                        "source_weighted": k.source_weighted, "target_exact": k.target_exact,
                                        "tolerance": k.tolerance, "ok": k.ok} for k in res.checks]
            prev = res.prevalence
            out["forecast_prevalence"] += [{**ids, "class": names[j] if j < len(names) else str(j),
                                            "source": float(prev["source"][j]), "em": float(prev["em"][j]),
                                            "bbse": float(prev["bbse"][j])} for j in range(len(prev["source"]))]
    tick(1.0, "Forecast done")
    tables = {**state.tables, **{k: _frame(v, FORECAST_TABLES[k]) for k, v in out.items()}}
    manifest = {**state.manifest, "forecast": forecast_manifest(state),
                "not_run": ["transport", "classify", "stress", "heterogeneity"] + list(state.manifest.get("not_run", []))}
    return replace(state, tables=tables, manifest=manifest)


def forecast_manifest(state: TransportState) -> dict:
    """What the forecast declared: the label mode, methods, the clip and overlap rules, replicates and level."""
    c = state.config
    return {"target_labels": c.target_labels, "methods": [*METHODS, "both:span"],
            "clip_rule": {"quantile": CLIP_QUANTILE, "max_ratio": MAX_RATIO},
            "overlap_rule": {"auroc_max": AUROC_MAX, "ess_floor_min": ESS_FLOOR_MIN, "ess_floor_share": ESS_FLOOR_SHARE},
            "n_bootstrap": int(c.n_bootstrap), "level": float(c.level),
            "rules_fitted_on": "selection", "evidence": "id_test",
            "weights": "domain classifier on selection + id_test vs target, 5 folds, seed = seed * 1000 + refit + 101",
            "seed": "seed * 1000 + refit + 211", "record_weights": "not used by the forecast",
            "target_fingerprint": state.declared.target_fingerprint}


def _frame(rows: list[dict], columns) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns))


def realised_table(state: TransportState) -> pd.DataFrame:
    """The forecast's labelled quantities on the labelled target, per refit, model and mapping.

    Rules fitted on the selection partition as in :func:`forecast`, unweighted (the ``weighted_*`` sets need
    the importance weights and are not realised). Columns :data:`REALISED_COLUMNS`; empty without labelled target.
    """
    c = state.config
    if not state.labelled_target:
        return _frame([], REALISED_COLUMNS)
    y, yt = state.y_source[c.primary_target], state.y_target[c.primary_target]
    rows = []
    for (r, m), pipe in state.pipes.items():
        sel = state.source_rows(r, "selection")
        for mp in state.kind.mappings:
            rules = fit_rules(probability_matrix(pipe["maps"][mp](pipe["raw"]["selection"])), y[sel],
                              selection_rates=c.selection_rates, hcep_thresholds=c.hcep_thresholds, alphas=c.alphas)
            q = labelled_quantities(yt, probability_matrix(state.mapped(r, m, mp, "ood")), rules)
            rows += [{"refit": r, "model": m, "mapping": mp, "quantity": k, "value": float(v)} for k, v in q.items()]
    return _frame(rows, REALISED_COLUMNS)


class LabelFreeTransportAudit(TransportAudit):
    """:class:`~audit_core.transport.runner.TransportAudit` with the forecast step (binary)."""

    stage_functions = {**BINARY_STAGES, "forecast": forecast}


class LabelFreeMulticlassTransportAudit(MulticlassTransportAudit):
    """:class:`~audit_core.transport.multiclass.run.MulticlassTransportAudit` with the forecast step."""

    stage_functions = {**MULTICLASS_STAGES, "forecast": forecast}


def run_transport_with_forecast(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config, progress=None,
                                should_stop=None, model=None, tolerances=None):
    """Run Transport in either label mode, binary or multi-class, on a model, a fixed model or scores.

    A label-free config (``target_labels`` absent or hidden) runs ``declare → split → fit → evaluate →
    forecast`` and its result's extras hold the five :data:`FORECAST_TABLES`; a labelled one runs the
    usual protocol and its extras gain ``realised`` (:func:`realised_table`), every other table as before.
    ``tolerances`` are a multi-class run's δ for its own metrics (``MC_TOLERANCES``; as
    :func:`~audit_core.transport.multiclass.run.run_multiclass_transport`); a binary run reads its config's.

    Returns
    -------
    TransportResult or MulticlassTransportResult
    """
    runner_cls = LabelFreeMulticlassTransportAudit if is_multiclass_target(config) else LabelFreeTransportAudit
    kw = {"tolerances": tolerances} if runner_cls is LabelFreeMulticlassTransportAudit else {"model": model}
    runner = runner_cls(config, progress=progress, should_stop=should_stop, **kw)
    result = runner.run(source, target)
    if config.label_free or not runner.state.labelled_target:
        return result
    return replace(result, extras={**result.extras, "realised": realised_table(runner.state)})
