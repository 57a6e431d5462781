"""The ``transport`` audit for ``reliability-audit run``.

A class target without a positive class (every value a class, C > 2) runs
the multi-class protocol (:mod:`audit_core.transport.multiclass.run`): its
mappings are the counterparts of the declared ones (raw; Platt → temperature;
isotonic, beta → vector scaling), its conformal scores LAC, APS and RAPS.

Config entry (every key optional; domains, targets, roles, weights, groups and
strata come from the config's dataset declaration)::

    - kind: transport
      n_refits: 10
      n_bootstrap: 500
      models: [logistic_regression, lightgbm]
      mappings: [raw, platt, isotonic]
      alphas: [0.05, 0.1, 0.2]
      selection_rates: [0.5, 0.7, 0.8, 0.9, 0.95]
      stresses: [target_definition, degradation]
      degradation_m: 3
      n_random_sets: 20
      stress_max_rows: 20000
      subgroup_columns: [region]
      tolerances: {auroc: 0.02, ece: 0.02}
      headline: {model: logistic_regression, mapping: platt}   # the headline slice (docs/transport.md)
      seed: 0
      exact_bootstrap: false   # true: record-by-record replicates (default: binned cells)
      scores:                  # bring your own scores: audit the table's predictions, not a model
        columns: [p_yes]       # one probability column per class (sorted class order), or the positive class's
      target_labels: hidden    # label-free: forecast the target (absent | hidden; default available)

With ``scores`` the run audits the named probability columns as they are
(:mod:`audit_core.transport.scores`): no model is fitted (``models`` is
refused; the config's ``model`` section may be left out when every audit runs
on scores), the score columns are not features, and the stresses are listed
in the manifest's ``not_run`` as "not run: needs a model".

Tables: ``results`` (the long-form table), ``verdicts``, ``refit_summary``, the
figure tables (``reliability``, ``curves``) and the feature shift
(``feature_shift``, ``domain_classifier``), as the Transport page saves them;
a labelled run also ``realised`` (the forecast quantities on the labelled
target), a label-free run (``target_labels: absent`` or ``hidden``) instead
the forecast tables (:data:`~audit_core.forecast.transport_stage.FORECAST_TABLES`),
which ``reliability-audit check-forecast`` compares with ``realised``.
The audit fits its own pipelines (``needs_workspace=False``): without
``models`` it refits the config's ``model`` (its kind and ``params``) on each
refit's train partition, so it audits the model the config trains; with
``models`` it refits those kinds (the config's ``params`` apply to its own
kind). The registry labels the run by every model it holds
(``"logistic_regression + lightgbm"``).
"""
from __future__ import annotations

from typing import Any

from audit_core.errors import fail
from audit_core.limits import Limits
from audit_core.models.scores import scores_label
from audit_core.transport.config import TransportConfig
from audit_core.transport.mappings import DEFAULT_MAPPINGS
from audit_core.transport.multiclass.classes import is_multiclass_definition, is_multiclass_target
from audit_core.forecast.transport_stage import FORECAST_TABLES, run_transport_with_forecast
from audit_core.transport.multiclass.run import multiclass_mappings
from audit_core.transport.results import model_spec as transport_model_spec

from ..config import AuditConfig, check_keys, expect_type
from ..context import AuditContext
from ..plugin import AuditResult, AuditRunner, Progress, register_audit

__all__ = ["TRANSPORT_AUDIT", "validate_config", "run", "model_spec"]

_INTS = ("n_refits", "n_bootstrap", "degradation_m", "n_random_sets", "stress_max_rows", "seed")
_LISTS = ("models", "mappings", "alphas", "selection_rates", "stresses", "subgroup_columns")


def validate_config(options: dict, *, where: str) -> dict:
    """Check the entry's keys and types; values are checked by :class:`TransportConfig` at run time."""
    options = check_keys(options, where=where, allowed=_INTS + _LISTS + ("tolerances", "exact_bootstrap",
                                                                        "headline", "scores", "target_labels"))
    out: dict[str, Any] = {}
    if "scores" in options:
        block = check_keys(options["scores"], where=f"{where}.scores", allowed=("columns",), required=("columns",))
        cols = expect_type(block["columns"], list, where=f"{where}.scores.columns")
        for i, col in enumerate(cols):
            expect_type(col, str, where=f"{where}.scores.columns[{i}]")
        if not cols:
            raise fail("CONFIG_BAD_VALUE", where=f"{where}.scores.columns", expected="one or more column names", got=cols)
        if "models" in options:
            raise fail("CONFIG_BAD_VALUE", where=f"{where}.models",
                       expected="left out: a run on scores audits the scores, it fits no model", got=options["models"])
        out["score_columns"] = list(cols)
    if "target_labels" in options:  # its value is checked by TransportConfig
        out["target_labels"] = expect_type(options["target_labels"], str, where=f"{where}.target_labels")
    if "exact_bootstrap" in options:
        out["exact_bootstrap"] = expect_type(options["exact_bootstrap"], bool, where=f"{where}.exact_bootstrap")
    for k in _INTS:
        if k in options:
            out[k] = expect_type(options[k], int, where=f"{where}.{k}")
    for k in _LISTS:
        if k in options:
            out[k] = list(expect_type(options[k], list, where=f"{where}.{k}"))
    if "tolerances" in options:
        out["tolerances"] = dict(expect_type(options["tolerances"], dict, where=f"{where}.tolerances"))
    if "headline" in options:  # its values are checked against the run's models and mappings by TransportConfig
        out["headline"] = dict(expect_type(options["headline"], dict, where=f"{where}.headline"))
    Limits.from_env().check_fields("transport", out, where=where)
    return out


def _models(options: dict, config: AuditConfig) -> dict:
    """``models`` and ``model_params``: the config's model unless the entry names models."""
    kind, params = config.model["kind"], dict(config.model.get("params") or {})
    models = tuple(options.get("models") or (kind,))
    return {"models": models, "model_params": {kind: params} if params and kind in models else {}}


def model_spec(options: dict, config: AuditConfig) -> dict:
    """The registry's model description of the run (every model it refits, or the score columns)."""
    if options.get("score_columns"):
        label = scores_label(options["score_columns"])
        return transport_model_spec({"config": {"models": [label], "mappings": list(options.get("mappings") or
                                                                                  DEFAULT_MAPPINGS)},
                                     "model": {"refit": False, "spec": {"kind": "scores",
                                                                        "columns": list(options["score_columns"])}}})
    m = _models(options, config)
    mappings = list(options.get("mappings") or DEFAULT_MAPPINGS)
    targets = list((config.dataset or {}).get("targets") or [])
    primary = (config.dataset or {}).get("primary_target")
    first = next((t for t in targets if t.get("name") == primary), targets[0] if targets else {})
    if is_multiclass_definition(first):  # the multi-class run's counterparts
        mappings = list(multiclass_mappings(mappings))
    return transport_model_spec({"config": {"models": list(m["models"]), "model_params": m["model_params"],
                                            "mappings": mappings},
                                 "model": {"refit": True}})


def run(options: dict, *, context: AuditContext, progress: Progress) -> AuditResult:
    """Run the protocol on the config's dataset; the domain declaration must be present."""
    assert context.data is not None  # a transport audit's config has data (load_data)
    ds = context.data.dataset
    opts = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    tick = lambda f, m: progress(int(1000 * f), 1000, m)  # noqa: E731
    if opts.get("score_columns"):  # the score columns are the predictions, not features
        cols = set(opts["score_columns"])
        cfg = TransportConfig.from_dataset(ds, numeric=tuple(c for c in ds.numeric if c not in cols),
                                           categorical=tuple(c for c in ds.categorical if c not in cols), **opts)
    else:
        cfg = TransportConfig.from_dataset(ds, **{**opts, **_models(options, context.config)})
    multiclass = is_multiclass_target(cfg)  # a class target without a positive class: the multi-class run
    # either label mode, on a model or on scores; a labelled run adds its realised table (forecast check)
    res = run_transport_with_forecast(ds.frame, config=cfg, progress=tick)
    tables = {"results": res.table, "verdicts": res.verdicts, "refit_summary": res.refit_summary}
    tables.update({k: v for k, v in res.extras.items() if k in ("reliability", "curves", "conformal_tally", "model_family",
                                                                 "feature_shift", "domain_classifier", "realised",
                                                                 *FORECAST_TABLES)})
    counts = res.verdicts["verdict"].value_counts().to_dict() if len(res.verdicts) else {}
    key_numbers = {"binary_only": not multiclass, "n_source": res.manifest["n_source"], "n_target": res.manifest["n_target"],
               **{f"verdicts_{k}": int(v) for k, v in counts.items()}}
    import json

    manifest = json.loads(json.dumps({k: v for k, v in res.manifest.items() if k != "partitions"}, default=str))
    return AuditResult(tables=tables, key_numbers=key_numbers, manifest=manifest)


TRANSPORT_AUDIT = register_audit(
    AuditRunner(kind="transport", title="Transport", validate_config=validate_config, run=run, needs_workspace=False,
                tables={"results": ("analysis", "condition", "domain", "model", "mapping", "metric", "value"),
                        "verdicts": ("metric", "verdict"),
                        "reliability": ("domain", "model", "mapping", "mean_p", "frac_pos"),
                        "curves": ("coverage", "risk", "domain", "model", "mapping")},
                numbers={"results": ("value",), "reliability": ("mean_p", "frac_pos"), "curves": ("coverage", "risk")},
                model_spec=model_spec)
)
