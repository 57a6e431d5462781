"""Widget helpers of the Transport page.

Widget keys: value widgets ``tr_``, buttons ``act_tr_``, display elements
``view_tr_``. The result lives in session state under :data:`RESULT_KEY`;
tolerances locked before a run live under :data:`LOCK_KEY`.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from audit_core.data.dataset import build_dataset
from audit_core.models.zoo import ZOO
from audit_core.transport import DEFAULT_TOLERANCES, MAPPINGS, TransportConfig, run_transport
from components.counts import count_input
from components.feedback import guarded
from components.state import registry

__all__ = ["RESULT_KEY", "LOCK_KEY", "declaration_section", "setup_form", "tolerance_section", "run_section",
           "verdict_table", "downloads"]

RESULT_KEY = "transport_result"  # TransportResult | None
LOCK_KEY = "transport_locked_tolerances"  # dict | None
RUN_KEY = "transport_run_id"
_VERDICT_COLOURS = {"transport-stable": "#d4edda", "transport-sensitive": "#f8d7da", "indeterminate": "#fff3cd"}


def _default(key: str, value: Any) -> None:
    st.session_state.setdefault(key, value)


def declaration_section(frame: pd.DataFrame, ds_config, info) -> dict:
    """Stage 1: domain column and values, target definitions, subgroups."""
    st.subheader("1 · Declaration")
    st.caption("Transport is **binary-only**: every target definition must have two classes.")
    cols = list(frame.columns)
    dom_default = ds_config.domain_column or (info.domain_column if info else None) or cols[0]
    _default("tr_domain", dom_default if dom_default in cols else cols[0])
    c1, c2, c3 = st.columns(3)
    domain = c1.selectbox("Domain column", cols, key="tr_domain")
    values = sorted(map(str, pd.unique(frame[domain].dropna())))[:200]
    src = ds_config.source_domain if ds_config.domain_column == domain else (info.source_domain if info else None)
    tgt = ds_config.target_domain if ds_config.domain_column == domain else (info.target_domain if info else None)
    if st.session_state.get("tr_source") not in values:
        st.session_state["tr_source"] = str(src) if str(src) in values else values[0]
    if st.session_state.get("tr_target") not in values:
        st.session_state["tr_target"] = str(tgt) if str(tgt) in values else values[min(1, len(values) - 1)]
    c2.selectbox("Source value (fit, map, thresholds)", values, key="tr_source")
    c3.selectbox("Target value (evaluation only)", values, key="tr_target")
    names = [t["name"] for t in ds_config.targets]
    primary = ds_config.primary_target or (names[0] if names else None)
    _default("tr_targets", [primary] + [n for n in names if n != primary][:1] if names else [])
    chosen = st.multiselect("Target definitions (first = primary estimand; others feed the definition stress)", names,
                            key="tr_targets")
    strata_default = [c for c in (info.strata_columns if info else ()) if c in cols]
    _default("tr_subgroups", strata_default)
    st.multiselect("Subgroup columns (strata and heterogeneity)", cols, key="tr_subgroups")
    return {"domain": domain, "targets": chosen}


def tolerance_section() -> dict | None:
    """Tolerances δ_m, locked before the run."""
    locked = st.session_state.get(LOCK_KEY)
    st.markdown("**Tolerances δ_m** — declared before any target result is seen, then locked.")
    cols = st.columns(4)
    for i, (m, v) in enumerate(DEFAULT_TOLERANCES.items()):
        _default(f"tr_tol_{m}", float(v))
        cols[i % 4].number_input(m, min_value=0.0, step=0.005, format="%.3f", key=f"tr_tol_{m}",
                                 disabled=locked is not None)
    if locked is None:
        if st.button("Lock tolerances", key="act_tr_lock"):
            st.session_state[LOCK_KEY] = {m: float(st.session_state[f"tr_tol_{m}"]) for m in DEFAULT_TOLERANCES}
            st.rerun()
        st.info("Lock the tolerances to enable the run.")
    else:
        st.success("Tolerances locked.", icon=":material/lock:")
        if st.button("Unlock (discards the current result)", key="act_tr_unlock"):
            st.session_state[LOCK_KEY] = None
            st.session_state[RESULT_KEY] = None
            st.rerun()
    return st.session_state.get(LOCK_KEY)


def setup_form() -> dict:
    """Stages 2–7: split, fit, evaluation grids, stresses."""
    st.subheader("2–3 · Split and fit")
    for k, v in (("tr_refits", 3), ("tr_seed", 0), ("tr_models", ["logistic_regression"]),
                 ("tr_mappings", ["raw", "platt", "isotonic"]), ("tr_bootstrap", 200), ("tr_alphas", [0.05, 0.1, 0.2]),
                 ("tr_rates", [0.5, 0.7, 0.8, 0.9, 0.95]), ("tr_stresses", ["target_definition", "degradation"]),
                 ("tr_m", 3), ("tr_sets", 10), ("tr_cap", 5000)):
        _default(k, v)
    c1, c2, c3, c4 = st.columns(4)
    count_input(c1, "Refits R", count="refits", key="tr_refits", min_value=1, step=1)
    c2.number_input("Seed", min_value=0, step=1, key="tr_seed")
    c3.multiselect("Models", list(ZOO), key="tr_models")
    c4.multiselect("Probability mappings", list(MAPPINGS), key="tr_mappings")
    st.caption("Source split 60/15/10/15 (train / probability calibration / selection & conformal / ID test), "
               "stratified by target and subgroups, grouped by the declared group column.")
    st.subheader("4–5 · Evaluation and transported rules")
    d1, d2, d3 = st.columns(3)
    count_input(d1, "Bootstrap resamples", count="bootstrap", key="tr_bootstrap", min_value=10, step=10)
    d2.multiselect("Conformal α", [0.01, 0.05, 0.1, 0.2, 0.3], key="tr_alphas")
    d3.multiselect("Selection rates s", [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0], key="tr_rates")
    st.subheader("6–7 · Stresses and heterogeneity")
    e1, e2, e3, e4 = st.columns(4)
    e1.multiselect("Stresses", ["target_definition", "degradation"], key="tr_stresses")
    count_input(e2, "Feature budget m", count="depth", key="tr_m", min_value=1, step=1)
    count_input(e3, "Random sets J per refit", count="random_sets", key="tr_sets", min_value=2, step=1)
    count_input(e4, "Row cap per test set (stress)", count="rows", key="tr_cap", min_value=200, step=500)
    ss = st.session_state
    return dict(n_refits=int(ss["tr_refits"]), seed=int(ss["tr_seed"]), models=tuple(ss["tr_models"]),
                mappings=tuple(ss["tr_mappings"]), n_bootstrap=int(ss["tr_bootstrap"]),
                alphas=tuple(sorted(ss["tr_alphas"])), selection_rates=tuple(sorted(ss["tr_rates"])),
                stresses=tuple(ss["tr_stresses"]), degradation_m=int(ss["tr_m"]), n_random_sets=int(ss["tr_sets"]),
                stress_max_rows=int(ss["tr_cap"]))


def _value(frame: pd.DataFrame, column: str, text: str) -> Any:
    for v in pd.unique(frame[column].dropna()):
        if str(v) == text:
            return v.item() if hasattr(v, "item") else v
    return text


def run_section(table, ds_config, decl: dict, options: dict, tolerances: dict | None) -> None:
    """The run button with progress and cancellation; stores and saves the result."""
    disabled = tolerances is None or not decl["targets"]
    c1, c2 = st.columns([1, 4])
    go_ = c1.button("Run transport audit", type="primary", key="act_tr_run", disabled=disabled)
    c2.caption("Cancel by pressing **Cancel** while the run is in progress; nothing is saved for a cancelled run.")
    if not go_:
        return
    st.button("Cancel", key="act_tr_cancel")  # any interaction stops the running script at the next progress update
    with guarded("running the transport audit"):
        frame = table.frame
        domain = decl["domain"]
        targets = tuple(next(t for t in ds_config.targets if t["name"] == n) for n in decl["targets"])
        from dataclasses import replace

        cfg_ds = replace(ds_config, targets=targets, primary_target=decl["targets"][0], domain_column=domain,
                         source_domain=_value(frame, domain, st.session_state["tr_source"]),
                         target_domain=_value(frame, domain, st.session_state["tr_target"]))
        ds = build_dataset(frame, cfg_ds)
        subgroups = tuple(st.session_state.get("tr_subgroups", []))
        cfg = TransportConfig.from_dataset(ds, tolerances=tolerances, strata_columns=subgroups,
                                           subgroup_columns=subgroups, **options)
        bar = st.progress(0.0, text="Declaring…")
        result = run_transport(ds.frame, config=cfg,
                               progress=lambda f, m: bar.progress(min(max(f, 0.0), 1.0), text=m))
        st.session_state[RESULT_KEY] = result  # kept even if the save is refused (full disk, read-only registry)
        st.session_state[RUN_KEY] = None
        run_id = result.save_to_registry(registry(), dataset_name=ds_config.name, dataset_fingerprint=ds.fingerprint)
        st.session_state[RUN_KEY] = run_id
        bar.progress(1.0, text=f"Done · saved as run {run_id}")


def verdict_table(verdicts: pd.DataFrame, *, model: str, mapping: str, weighting: str = "unweighted"):
    """ID-vs-OOD paired changes with intervals and coloured verdicts (a Styler)."""
    v = verdicts[(verdicts["model"] == model) & (verdicts["mapping"] == mapping) & (verdicts["weighting"] == weighting)]
    v = v[["analysis", "metric", "alpha", "selection_rate", "delta", "ci_low", "ci_high", "tolerance", "verdict"]]
    return v.style.apply(lambda col: [f"background-color: {_VERDICT_COLOURS.get(x, '')}" for x in col],
                         subset=["verdict"]).format(precision=4, na_rep="")


def id_ood_table(table: pd.DataFrame, *, model: str, mapping: str) -> pd.DataFrame:
    """Mean ID, OOD and paired change per metric across refits."""
    t = table[(table["analysis"] == "metrics") & (table["condition"] == "clean") & (table["model"] == model)
              & (table["mapping"] == mapping) & (table["weighting"] == "unweighted")]
    g = t.groupby(["metric", "domain"])["value"].agg(["mean", "std"]).unstack("domain")
    g.columns = [f"{d} {s}" for s, d in g.columns]
    return g.reset_index()


def downloads(result) -> None:
    """Download buttons for the result table (Parquet, JSON) and the manifest."""
    import json

    c1, c2, c3 = st.columns(3)
    c1.download_button("Result table (Parquet)", result.results_parquet(), file_name="transport_results.parquet",
                       key="act_tr_dl_parquet")
    c2.download_button("Results + manifest (JSON)", result.to_json(), file_name="transport_results.json",
                       key="act_tr_dl_json")
    c3.download_button("Manifest (JSON)", json.dumps(result.manifest, indent=1, default=str),
                       file_name="transport_manifest.json", key="act_tr_dl_manifest")
