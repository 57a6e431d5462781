"""Widget helpers of the Transport page.

Widget keys: value widgets ``tr_``, buttons ``act_tr_``, display elements
``view_tr_``. The result lives in the result slot :data:`RESULT_SLOT`, tied
to the table and declaration it came from; tolerances locked before a run
live under :data:`LOCK_KEY`. The declaration widgets (domain column and
values, targets, subgroups) take their defaults from the current declaration
on Data & groups, and are seeded again, with the tolerances unlocked, whenever
that declaration changes (:func:`sync_with_declaration`). A run is a
:class:`components.jobs.Job`: it goes on when the user leaves the page and
saves its own registry run; **Cancel** stops it (nothing is saved).
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from audit_core.data.dataset import build_dataset, build_source_dataset
from audit_core.findings.glossary import explain
from audit_core.errors import fail
from audit_core.models.training import Workspace
from audit_core.models.zoo import ZOO
from audit_core.forecast.transport_stage import run_transport_with_forecast
from audit_core.transport import DEFAULT_TOLERANCES, MAPPINGS, TransportConfig, model_options
from audit_core.transport.headline import HEADLINE_RULE, HeadlineSlice, pipeline_words, recorded_headline
from audit_core.transport.multiclass.classes import is_multiclass_definition
from audit_core.transport.multiclass.run import MC_TOLERANCES, MulticlassTransportAudit
from audit_core.transport.results import TransportResult
from components.counts import count_input
from components import jobs
from components.feedback import code, guarded, md_escape
from components.state import PERSIST, ResultSlot, current_provenance, declaration_digest, registry, workspace_key

__all__ = ["RESULT_KEY", "RESULT_SLOT", "LOCK_KEY", "HEADLINE_LOCK_KEY", "JOB", "sync_with_declaration",
           "declaration_section", "scores_choice", "on_scores", "model_section", "setup_form", "model_note",
           "tolerance_section", "locked_headline",
           "run_section", "verdict_table", "harm_table", "downloads", "headline_of", "view_selectors",
           "slice_caption"]

RESULT_KEY = "transport_result"  # TransportResult | None
LOCK_KEY = workspace_key("transport_locked_tolerances")  # dict | None
HEADLINE_LOCK_KEY = workspace_key("transport_locked_headline")  # dict (model, mapping) declared with the lock | None
SEEDED_KEY = workspace_key("transport_seeded_for")  # declaration digest the tr_ declaration widgets were seeded from
JOB = "transport"  # components.jobs name
#: The result shown on the page, tied to the table and declaration it came from (the models are refitted).
RESULT_SLOT = ResultSlot(RESULT_KEY, "transport result")
_DECLARATION_WIDGETS = ("tr_domain", "tr_source", "tr_target", "tr_targets", "tr_subgroups", "tr_target_labels")
_VERDICT_COLOURS = {"transport-stable": "#d4edda", "transport-sensitive": "#f8d7da", "indeterminate": "#fff3cd"}
RUN_KEY = "transport_run_id"
#: Colour of each change direction: only a harmful change is shown in alarm colour.
_DIRECTION_COLOURS = {"better": "#cfe2ff", "worse": "#f8d7da", "within tolerance": "#d4edda",
                      "undetermined": "#fff3cd", "shifted": "#e2e3e5"}


def _default(key: str, value: Any) -> None:
    st.session_state.setdefault(key, value)


def sync_with_declaration() -> None:
    """On a new declaration (or the first visit): seed the declaration widgets from it and unlock tolerances.

    Tolerances are declared before any target result is seen; a lock made for
    another declaration does not carry over.
    """
    current = declaration_digest()
    if st.session_state.get(SEEDED_KEY) == current:
        return
    st.session_state[SEEDED_KEY] = current
    for key in _DECLARATION_WIDGETS:
        if key in st.session_state:
            del st.session_state[key]
    st.session_state[LOCK_KEY] = None
    st.session_state[HEADLINE_LOCK_KEY] = None


def declaration_section(frame: pd.DataFrame, ds_config, info) -> dict:
    """Stage 1: domain column and values, target definitions, subgroups."""
    st.subheader("1 · Declaration")
    st.caption("A primary target with two classes runs the full protocol; the stresses, subgroup heterogeneity and "
               "feature shift are binary-only. A class target without a positive class (Data & groups: "
               "*(none) (multi-class)*) runs multi-class Transport here, as `reliability-audit run` does.")
    cols = list(frame.columns)
    dom_default = ds_config.domain_column or (info.domain_column if info else None) or cols[0]
    _default("tr_domain", dom_default if dom_default in cols else cols[0])
    c1, c2, c3 = st.columns(3)
    domain = c1.selectbox("Domain column", cols, key="tr_domain", persist_state=PERSIST)
    values = sorted(map(str, pd.unique(frame[domain].dropna())))[:200]
    src = ds_config.source_domain if ds_config.domain_column == domain else (info.source_domain if info else None)
    tgt = ds_config.target_domain if ds_config.domain_column == domain else (info.target_domain if info else None)
    if st.session_state.get("tr_source") not in values:
        st.session_state["tr_source"] = str(src) if str(src) in values else values[0]
    if st.session_state.get("tr_target") not in values:
        st.session_state["tr_target"] = str(tgt) if str(tgt) in values else values[min(1, len(values) - 1)]
    c2.selectbox("Source value (fit, map, thresholds)", values, key="tr_source", persist_state=PERSIST)
    c3.selectbox("Target value (evaluation only)", values, key="tr_target", persist_state=PERSIST)
    names = [t["name"] for t in ds_config.targets]
    primary = ds_config.primary_target or (names[0] if names else None)
    _default("tr_targets", [primary] + [n for n in names if n != primary][:1] if names else [])
    chosen = st.multiselect("Target definitions (first = primary estimand; others feed the definition stress)", names,
                            key="tr_targets", persist_state=PERSIST)
    strata_default = [c for c in (info.strata_columns if info else ()) if c in cols]
    _default("tr_subgroups", strata_default)
    st.multiselect("Subgroup columns (strata and heterogeneity)", cols, key="tr_subgroups", persist_state=PERSIST)
    return {"domain": domain, "targets": chosen}


#: The rule's choice in the headline-slice selectors.
BY_RULE = "by the rule"


def _headline_controls(locked: bool) -> None:
    """Model and mapping of the headline slice (the reading every headline number uses), locked with the tolerances."""
    c1, c2 = st.columns(2)
    c1.selectbox("Headline model", [BY_RULE, *ZOO], key="tr_headline_model", persist_state=PERSIST, disabled=locked,
                 format_func=lambda k: k if k == BY_RULE else ZOO[k][0],
                 help="The model whose numbers the findings, the release gate, the model card and the report "
                      "quote. By the rule: the first model of the run.")
    c2.selectbox("Headline mapping", [BY_RULE, *MAPPINGS], key="tr_headline_mapping", persist_state=PERSIST,
                 disabled=locked,
                 help="The probability mapping those numbers read. By the rule: Platt scaling when the run fits it "
                      "(temperature scaling for a multi-class target), else the first mapping.")
    st.caption(f"Headline slice by the rule: {HEADLINE_RULE}. Declare another model or mapping here, before any "
               "result is seen; the run must fit it.")


def locked_headline() -> dict[str, str] | None:
    """The headline slice declared when the tolerances were locked (``None``: the rule decides everything)."""
    return st.session_state.get(HEADLINE_LOCK_KEY) or None


def tolerance_section(multiclass: bool = False) -> dict | None:
    """Tolerances δ_m and the headline slice, locked before the run (with the multi-class metrics' δ for a
    multi-class target)."""
    locked = st.session_state.get(LOCK_KEY)
    st.markdown("**Tolerances δ_m and the headline slice** — declared before any target result is seen, then "
                "locked.", help=explain("δ_m"))
    declared = {**DEFAULT_TOLERANCES, **(MC_TOLERANCES if multiclass else {})}
    cols = st.columns(4)
    for i, (m, v) in enumerate(declared.items()):
        # value= (not a session-state default): an out-of-range entry resets to the declared tolerance, the
        # value the lock then reads, so the locked number and the one shown always agree
        cols[i % 4].number_input(m, min_value=0.0, value=float(v), step=0.005, format="%.3f", key=f"tr_tol_{m}",
                                 persist_state=PERSIST, disabled=locked is not None,
                                 help=f"{explain(m)} Tolerance: the largest change of it declared harmless.")
    _default("tr_headline_model", BY_RULE)
    _default("tr_headline_mapping", BY_RULE)
    _headline_controls(locked is not None)
    if locked is None:
        if st.button("Lock tolerances and headline", key="act_tr_lock"):
            st.session_state[LOCK_KEY] = {m: float(st.session_state[f"tr_tol_{m}"]) for m in declared}
            chosen = {"model": st.session_state["tr_headline_model"], "mapping": st.session_state["tr_headline_mapping"]}
            st.session_state[HEADLINE_LOCK_KEY] = {k: v for k, v in chosen.items() if v != BY_RULE}
            st.rerun()
        st.info("Lock the tolerances to enable the run.")
    else:
        st.success("Tolerances and headline slice locked.", icon=":material/lock:")
        if st.button("Unlock (discards the current result)", key="act_tr_unlock"):
            st.session_state[LOCK_KEY] = None
            st.session_state[HEADLINE_LOCK_KEY] = None
            RESULT_SLOT.clear()
            st.rerun()
    return st.session_state.get(LOCK_KEY)


MODEL_INPUT = "A model"
SCORES_INPUT = "I have predictions, not a model"


def scores_choice(frame: pd.DataFrame) -> tuple[str, ...] | None:
    """Bring your own scores: ``None`` for a model run, else the probability columns named (maybe none yet)."""
    _default("tr_input", MODEL_INPUT)
    st.radio("What to audit", (MODEL_INPUT, SCORES_INPUT), key="tr_input", persist_state=PERSIST, horizontal=True,
             help="A table of predictions (for example from Evidently, NannyML or Deepchecks) is audited as it is: "
                  "its probability columns replace the model.")
    if st.session_state["tr_input"] != SCORES_INPUT:
        return None
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and not
               pd.api.types.is_bool_dtype(frame[c])]
    _default("tr_score_columns", [])
    st.multiselect("Probability columns: one per class in sorted class order, or for a binary target the "
                   "positive class's alone", numeric, key="tr_score_columns", persist_state=PERSIST)
    st.caption("No model is fitted: the refits only re-partition the records, and the probability mappings, "
               "thresholds, conformal sets, bootstrap and verdicts run on your scores. The stresses need a model "
               "and are not run. The probability columns are not features.")
    return tuple(st.session_state["tr_score_columns"])


AS_IS = "Audit this model as it is (not refit)"
REFIT = "Refit zoo models on each train partition instead"


def model_section(ws: Workspace | None) -> tuple[dict, Any]:
    """Which model the audit examines: the Data & groups model by default.

    Returns the config options (``models`` and ``model_params``, or
    ``fixed_model``) and the fixed model (or None).
    """
    kind = dict(ws.model.spec).get("kind") if ws is not None else None
    if ws is not None and kind not in ZOO:  # an imported model
        _default("tr_model_mode", AS_IS)
        st.radio(f"Model: the imported model {code(ws.model.spec.get('source', kind))}", (AS_IS, REFIT),
                 key="tr_model_mode", persist_state=PERSIST, horizontal=True)
        if st.session_state["tr_model_mode"] == AS_IS:
            opts, fixed = model_options(ws, as_is=True)
            st.caption("The model is **not refit** and keeps its own preprocessing. The source partitions fit only "
                       "the probability mappings (calibration), the selection thresholds and conformal quantiles "
                       "(selection) and the stress quantities (train). Its training records are unknown here, so "
                       "the ID test may hold records it was trained on.")
            return opts, fixed
    _default("tr_models", [kind] if kind in ZOO else ["logistic_regression"])
    st.multiselect("Models (refitted on each refit's train partition; the first is the primary model)", list(ZOO),
                   format_func=lambda k: ZOO[k][0], key="tr_models", persist_state=PERSIST)
    opts, _ = model_options(ws) if ws is not None and kind in ZOO else ({"model_params": {}}, None)
    params = opts.get("model_params", {})
    chosen = list(st.session_state["tr_models"])
    if kind in ZOO:
        st.caption(f"Default: the model trained on Data & groups, {md_escape(ZOO[kind][0])}"
                   + (f" with its settings {code(params[kind])}" if params.get(kind) else " with its default settings")
                   + ". Each refit trains it again on its train partition (seed · 1000 + refit).")
    else:
        st.caption("No model trained on Data & groups yet: Transport refits the models chosen here.")
    return {"models": tuple(chosen), "model_params": {k: v for k, v in params.items() if k in chosen}}, None


def setup_form(ws: Workspace | None = None, *, scores: tuple[str, ...] | None = None,
               forecast: bool = False) -> tuple[dict, Any]:
    """Stages 2–7: split, model, evaluation grids, stresses. Returns the options and the fixed model (or None).

    ``scores`` (from :func:`scores_choice`): the probability columns of a run on scores, which replace the model.
    ``forecast``: the target's labels are not available; the options that need them are not offered.
    """
    st.subheader("2–3 · Split and fit")
    for k, v in (("tr_refits", 3), ("tr_seed", 0),
                 ("tr_mappings", ["raw", "platt", "isotonic"]), ("tr_bootstrap", 200), ("tr_alphas", [0.05, 0.1, 0.2]),
                 ("tr_rates", [0.5, 0.7, 0.8, 0.9, 0.95]), ("tr_stresses", ["target_definition", "degradation"]),
                 ("tr_m", 3), ("tr_sets", 10), ("tr_cap", 5000)):
        _default(k, v)
    model_opts, fixed = model_section(ws) if scores is None else ({"score_columns": scores}, None)
    c1, c2, c4 = st.columns(3)
    count_input(c1, "Refits R", count="refits", key="tr_refits", persist_state=PERSIST, min_value=1, step=1)
    c2.number_input("Seed", min_value=0, step=1, key="tr_seed", persist_state=PERSIST)
    c4.multiselect("Probability mappings (the headline slice, which the release gate reads, is set above)",
                   list(MAPPINGS),
                   key="tr_mappings", persist_state=PERSIST,
                   help="raw: the model's own probability. platt: a logistic fit on its logit. isotonic: a "
                        "monotone step fit. temperature: the logit divided by one fitted number T. beta: beta "
                        "calibration, a logistic fit on ln p and ln(1 − p) that stays monotone. All are fitted on "
                        "the source calibration partition only.")
    st.caption("Source split 60/15/10/15 (train / probability calibration / selection & conformal / ID test), "
               "stratified by target and subgroups, grouped by the declared group column."
               + (" On your scores the train partition fits nothing; it is kept so that the other partitions are "
                  "those of a model run on the same table and seed." if scores is not None else ""))
    st.subheader("4–5 · Evaluation and transported rules")
    d1, d2, d3 = st.columns(3)
    count_input(d1, "Bootstrap resamples", count="bootstrap", key="tr_bootstrap", persist_state=PERSIST, min_value=10, step=10)
    d2.multiselect("Conformal α", [0.01, 0.05, 0.1, 0.2, 0.3], key="tr_alphas", persist_state=PERSIST)
    d3.multiselect("Selection rates s", [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0], key="tr_rates", persist_state=PERSIST)
    st.subheader("6–7 · Stresses and heterogeneity")
    ss = st.session_state
    options = dict(n_refits=int(ss["tr_refits"]), seed=int(ss["tr_seed"]), **model_opts,
                   mappings=tuple(ss["tr_mappings"]), n_bootstrap=int(ss["tr_bootstrap"]),
                   alphas=tuple(sorted(ss["tr_alphas"])), selection_rates=tuple(sorted(ss["tr_rates"])))
    if scores is not None:  # the stresses score changed records: no settings to offer
        st.caption("The target-definition and evidence-degradation stresses need a model that can score changed "
                   "records, so they are not run on your scores. Subgroup heterogeneity and the feature shift run.")
        return {**options, "stresses": ()}, fixed
    if forecast:  # they compare labelled outcomes; kept in the declaration, so a labelled run of it matches
        from components.widgets.forecast import needs_labels_caption

        needs_labels_caption()
    e1, e2, e3, e4 = st.columns(4)
    e1.multiselect("Stresses", ["target_definition", "degradation"], key="tr_stresses", persist_state=PERSIST,
                   disabled=forecast)
    count_input(e2, "Feature budget m", count="depth", key="tr_m", persist_state=PERSIST, min_value=1, step=1,
                disabled=forecast)
    count_input(e3, "Random sets J per refit", count="random_sets", key="tr_sets", persist_state=PERSIST, min_value=2,
                step=1, disabled=forecast)
    count_input(e4, "Row cap per test set (stress)", count="rows", key="tr_cap", persist_state=PERSIST, min_value=200,
                step=500, disabled=forecast)
    return {**options, "stresses": tuple(ss["tr_stresses"]), "degradation_m": int(ss["tr_m"]),
            "n_random_sets": int(ss["tr_sets"]), "stress_max_rows": int(ss["tr_cap"])}, fixed


def _value(frame: pd.DataFrame, column: str, text: str) -> Any:
    for v in pd.unique(frame[column].dropna()):
        if str(v) == text:
            return v.item() if hasattr(v, "item") else v
    return text


def run_section(table, ds_config, decl: dict, options: dict, tolerances: dict | None, fixed=None,
                fixed_target: str | None = None) -> None:
    """The run button, Cancel and progress; the job stores its result in :data:`RESULT_SLOT` and saves a run."""
    job = jobs.current(JOB)
    no_scores = "score_columns" in options and not options["score_columns"]  # predictions chosen, no column named
    disabled = tolerances is None or not decl["targets"] or no_scores or (job is not None and job.running)
    c1, c2 = st.columns([1, 4])
    if c1.button("Run transport audit", type="primary", key="act_tr_run", disabled=disabled) and tolerances is not None:
        with guarded("running the transport audit"):
            if fixed is not None and decl["targets"][0] != fixed_target:
                raise fail("TRANSPORT_FIXED_MODEL_TARGET", label=options.get("fixed_model"), target=fixed_target)
            job = _start(table, ds_config, decl, options, tolerances, fixed)
    if no_scores:
        c2.caption("Name the probability columns of your predictions to run.")
    elif job is not None and job.running:
        if c2.button("Cancel", key="act_tr_cancel"):
            job.request_stop()
    else:
        c2.caption("A run goes on while you visit other pages; **Cancel** stops it, and nothing is saved for a "
                   "cancelled run.")
    jobs.follow_and_adopt(job, RESULT_SLOT, stopped="The transport run was cancelled; nothing was saved.")


def _start(table, ds_config, decl: dict, options: dict, tolerances: dict, fixed=None) -> jobs.Job:
    """Declare the run here (a refusal shows at once), then fit and evaluate in a job."""
    from dataclasses import replace

    frame = table.frame
    domain = decl["domain"]
    labels = decl.get("target_labels", "available")  # absent or hidden: the forecast, the target's labels unread
    targets = tuple(next(t for t in ds_config.targets if t["name"] == n) for n in decl["targets"])
    multiclass = is_multiclass_definition(targets[0])  # no positive class: the multi-class protocol, its target only
    if multiclass:  # a forecast keeps its stress settings (not run; the manifest's not_run says so) so that the
        targets = targets[:1]  # labelled run of the same declaration has the same declaration key
        options = {**options, "stresses": ()}  # not run for multi-class (the manifest's not_run says so)
    cfg_ds = replace(ds_config, targets=targets, primary_target=decl["targets"][0], domain_column=domain,
                     source_domain=_value(frame, domain, st.session_state["tr_source"]),
                     target_domain=_value(frame, domain, st.session_state["tr_target"]))
    # a forecast checks the declaration on the source rows: the target's labels may be missing on every row
    ds, target = (build_dataset(frame, cfg_ds), None) if labels == "available" else build_source_dataset(frame, cfg_ds)
    subgroups = tuple(st.session_state.get("tr_subgroups", []))
    mc_tol = {k: v for k, v in tolerances.items() if k in MC_TOLERANCES}  # the multi-class metrics' δ
    tolerances = {k: v for k, v in tolerances.items() if k not in MC_TOLERANCES}
    scored = set(options.get("score_columns") or ())  # predictions, not features
    if scored:
        options = {**options, "numeric": tuple(c for c in ds.numeric if c not in scored),
                   "categorical": tuple(c for c in ds.categorical if c not in scored)}
    cfg = TransportConfig.from_dataset(ds, tolerances=tolerances, strata_columns=subgroups,
                                       subgroup_columns=subgroups, headline=locked_headline(), target_labels=labels,
                                       **options)
    if multiclass:  # its refusals (an imported model as it is, Venn-Abers) show at once, not from the job
        MulticlassTransportAudit(cfg, tolerances=mc_tol)
    reg = registry()

    def work(job: jobs.Job):
        job.progress(0.0, "Declaring…")
        # either label mode: a labelled run also stores its realised values (the forecast check reads them)
        result: TransportResult = run_transport_with_forecast(
            ds.frame, target, config=cfg, model=fixed, tolerances=mc_tol if multiclass else None, progress=job.progress,
            should_stop=job.stop_requested)
        job.progress(1.0, "Saving to the registry…")
        return result, result.save_to_registry(reg, dataset_name=ds_config.name, dataset_fingerprint=ds.fingerprint)

    return jobs.start(JOB, "Transport audit", work, provenance=current_provenance())


def verdict_table(verdicts: pd.DataFrame, *, model: str, mapping: str, weighting: str = "unweighted"):
    """ID-vs-OOD paired changes with intervals, verdicts and their direction, coloured by direction (a Styler)."""
    v = verdicts[(verdicts["model"] == model) & (verdicts["mapping"] == mapping) & (verdicts["weighting"] == weighting)]
    cols = ["analysis", "metric", "alpha", "selection_rate", "id_value", "ood_value", "delta", "ci_low", "ci_high",
            "tolerance", "verdict", "direction", "good_direction"]
    v = v[[c for c in cols if c in v.columns]].rename(columns={
        "selection_rate": "selection rate", "id_value": "ID", "ood_value": "OOD", "delta": "change OOD − ID",
        "ci_low": "interval low", "ci_high": "interval high", "good_direction": "good direction"})
    colour = v.get("direction", v["verdict"])
    return v.style.apply(lambda col: [f"background-color: {_DIRECTION_COLOURS.get(x, '')}" for x in colour],
                         subset=[c for c in ("verdict", "direction") if c in v.columns]).format(precision=4, na_rep="")


def harm_table(percentiles: pd.DataFrame | None, *, model: str, mapping: str) -> pd.DataFrame | None:
    """Targeted deletion against the random sets, one direction for every metric (None when not run)."""
    if percentiles is None or percentiles.empty:
        return None
    p = percentiles[(percentiles["model"] == model) & (percentiles["mapping"] == mapping)
                    & (percentiles["weighting"] == "unweighted") & percentiles["value"].notna()]
    if p.empty:
        return None
    p = p.assign(analysis=p["analysis"].str.replace("degradation_percentile:", "", regex=False))
    wide = p.pivot_table(index=["analysis", "metric", "alpha", "selection_rate"], columns="domain", values="value",
                         dropna=False, aggfunc="first").dropna(how="all").reset_index()
    names = {"id": "ID: more harmful than % of random sets", "ood": "OOD: more harmful than % of random sets"}
    return wide.rename(columns={**names, "selection_rate": "selection rate"})


def on_scores(result) -> bool:
    """Whether the run audited the user's scores (no model: the stresses were not run, they need one)."""
    return (result.manifest.get("model") or {}).get("kind") == "scores"


def model_note(result) -> str:
    """One sentence on which model was audited and whether it was refit (from the manifest)."""
    m = result.manifest.get("model", {})
    if m.get("kind") == "scores":
        not_run = ", ".join(result.manifest.get("needs_a_model") or ())
        return (f"Audited: your {md_escape(m.get('label'))}, no model. Nothing was refit: each refit re-partitions "
                "the records" + (f". Not run: needs a model: {md_escape(not_run)}." if not_run else "."))
    if m.get("refit") is False:
        return (f"Audited model: {code(m.get('label'))}, as it is: **not refit**; only the probability mappings, "
                "thresholds, conformal quantiles and stress quantities were fitted on the source partitions.")
    kinds = m.get("kinds") or result.manifest.get("config", {}).get("models", [])
    params = {k: v for k, v in (m.get("params") or {}).items() if v}
    return ("Audited models: " + ", ".join(ZOO[k][0] if k in ZOO else str(k) for k in kinds)
            + (f" (settings {code(params)})" if params else "") + ", refitted on each refit's train partition.")


def id_ood_table(table: pd.DataFrame, *, model: str, mapping: str, weighting: str = "unweighted") -> pd.DataFrame:
    """Mean ID, OOD and paired change per metric across refits."""
    t = table[(table["analysis"] == "metrics") & (table["condition"] == "clean") & (table["model"] == model)
              & (table["mapping"] == mapping) & (table["weighting"] == weighting)]
    g = t.groupby(["metric", "domain"])["value"].agg(["mean", "std"]).unstack("domain")
    assert isinstance(g, pd.DataFrame)  # a (metric, domain) index unstacks to a frame
    g.columns = [f"{c[1]} {c[0]}" for c in g.columns]  # (statistic, domain) pairs: "ood mean"
    return g.reset_index()


def downloads(result, *, stale: bool = False) -> None:
    """Download buttons for the result table (Parquet, JSON) and the manifest (off for a stale result)."""
    import json

    c1, c2, c3 = st.columns(3)
    c1.download_button("Result table (Parquet)", result.results_parquet(), file_name="transport_results.parquet",
                       key="act_tr_dl_parquet", disabled=stale)
    c2.download_button("Results + manifest (JSON)", result.to_json(), file_name="transport_results.json",
                       key="act_tr_dl_json", disabled=stale)
    c3.download_button("Manifest (JSON)", json.dumps(result.manifest, indent=1, default=str),
                       file_name="transport_manifest.json", key="act_tr_dl_manifest", disabled=stale)


def headline_of(result) -> HeadlineSlice | None:
    """The headline slice a result records (the rule on its config for a result from before the record)."""
    h = recorded_headline(result.manifest)
    return None if isinstance(h, str) else h


def slice_caption(model: str, mapping: str, headline: HeadlineSlice | None, aggregation: str) -> str:
    """Which slice a tab's table shows, in words (and whether it is the headline slice)."""
    tag = "" if headline is None else (" — the headline slice" if (model, mapping) == (headline.model, headline.mapping)
                                       else " — not the headline slice")
    return f"{md_escape(pipeline_words(mapping, model))}{tag}: {aggregation}."


def view_selectors(result, headline: HeadlineSlice | None) -> tuple[str, str, float]:
    """Model, mapping and operating rate of the figures, defaulting to the headline slice; says which slice the
    findings read and whether the figures show it."""
    cfg = result.manifest["config"]
    c1, c2, c3 = st.columns(3)
    models, mappings = list(cfg["models"]), list(cfg["mappings"])
    h_model = headline.model if headline is not None and headline.model in models else models[0]
    h_mapping = headline.mapping if headline is not None and headline.mapping in mappings else mappings[0]
    if st.session_state.get("tr_view_model") not in models:
        st.session_state["tr_view_model"] = h_model
    if st.session_state.get("tr_view_mapping") not in mappings:
        st.session_state["tr_view_mapping"] = h_mapping
    model = c1.selectbox("Figures: model", models, key="tr_view_model", persist_state=PERSIST)
    mapping = c2.selectbox("Figures: mapping", mappings, key="tr_view_mapping", persist_state=PERSIST)
    rates = list(cfg["selection_rates"])
    rate = c3.selectbox("Operating selection rate", rates, index=min(2, len(rates) - 1), key="tr_view_rate",
                        persist_state=PERSIST)
    if headline is not None:
        shown = "the figures show it" if (model, mapping) == (headline.model, headline.mapping) else (
            "the figures below show another slice, and their titles say so")
        st.caption(f"Headline slice{' (declared)' if headline.declared else ' (by the rule)'}: "
                   f"{md_escape(headline.describe())}; ECE on {headline.n_bins} equal-width bins. The findings, the "
                   f"release gate, the model card and the report read it; {shown}.")
    return model, mapping, rate
