"""Widgets and display helpers of the Fragility page.

Widget keys: value widgets ``fr_``, buttons ``act_fr_``, display elements
``view_fr_``. Results live in session state under :data:`AUDIT_KEY`.

The audit runs as a :class:`components.jobs.Job` (:func:`start_audit`): it
goes on when the user leaves the page, saves its own run, and is adopted into
:data:`AUDIT_SLOT` when the page sees it finished (:func:`follow_and_adopt`).
**Stop** asks the job to stop; the library polls it between certificate
chunks (``should_stop``) and returns the certificates computed so far
(``complete=False``), which are shown and never saved. Results are result
slots (:class:`components.state.ResultSlot`) tied to the table, declaration
and workspace (model and grouping) they came from; a stale one is shown with
a notice and its actions (exports, comparisons) are disabled.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import streamlit as st

from audit_core.findings.cases import STRIKING_RULE, class_name, confident_brittle, confident_fragile, striking_case
from audit_core.fragility import neural
from audit_core.fragility.audit import (AuditOptions, FragilityAudit, compare_models, run_fragility_audit,
                                        stability_leaders)
from audit_core.fragility.engine import FragilityConfig
from audit_core.fragility.operators import FAMILIES
from audit_core.limits import Limits
from audit_core.models.training import Workspace
from audit_core.models.zoo import ZOO
from audit_core.runs.compare import runs_overview
from audit_core.runs.save import save_fragility_run
from audit_core.safe_text import csv_text
from components.counts import count_input
from components import jobs
from components.feedback import code, guarded, md_escape, progress_bar, stale_notice
from components.figures import fragility as ff
from components.glossary import table as show_table
from components.state import PERSIST, Keys, ResultSlot, current_provenance, registry, workspace_key

__all__ = ["AUDIT_KEY", "AUDIT_SLOT", "JOB", "NEURAL_KEY", "options_form", "case_data_choice", "start_audit",
           "follow_and_adopt",
           "show_audit", "neural_section"]

AUDIT_KEY = "fragility_audit"
COMPARE_KEY = workspace_key("fragility_compare")
NEURAL_KEY = "fragility_neural"
JOB = "fragility"  # components.jobs name
#: p̂ at or above which a prediction counts as confident (the findings' default).
CONFIDENT = 0.8
#: The audit shown on the page, tied to the table, declaration and workspace it was computed from.
AUDIT_SLOT = ResultSlot(AUDIT_KEY, "fragility audit")
NEURAL_SLOT = ResultSlot(NEURAL_KEY, "FR-ResMLP comparison")


def options_form(ws: Workspace) -> AuditOptions:
    """Setup widgets; returns the audit options."""
    G = ws.grouping.n_groups
    c1, c2, c3, c4 = st.columns(4)
    max_cases = count_input(c1, "Case-sample cap", count="cases", key="fr_max_cases", persist_state=PERSIST, min_value=20,
                            upper=len(ws.test_index), value=200, step=50,
                            help="Held-out cases certified (seeded sample). Raise it for a fuller audit.")
    k = count_input(c2, "Audit depth K", count="depth", key="fr_k", persist_state=PERSIST, min_value=1, upper=G, value=min(5, G))
    paths: list[Literal["static", "adaptive"]] = ["static", "adaptive"]
    path = c3.selectbox("Removal path", paths, key="fr_path", persist_state=PERSIST)
    seed = c4.number_input("Seed", min_value=0, value=0, key="fr_seed", persist_state=PERSIST)
    families = st.multiselect("Degradation families", list(FAMILIES), default=list(FAMILIES), key="fr_families", persist_state=PERSIST)
    c5, c6 = st.columns(2)
    base_sens = c5.checkbox("Baseline sensitivity (mean, median, mode, zero)", value=False, key="fr_baseline_sens", persist_state=PERSIST)
    draws = count_input(c6, "Draws R for stochastic operators", count="draws", key="fr_draws", persist_state=PERSIST, min_value=2, value=10)
    sample = st.session_state.get(Keys.SAMPLE)
    codes = dict(getattr(sample, "missing_codes", {}) or {})
    lim = Limits.from_env()
    return AuditOptions(
        config=FragilityConfig(k=int(k), path=path, families=tuple(families) or FAMILIES, n_draws=int(draws), seed=int(seed)),
        max_cases=int(max_cases), case_seed=int(seed), stress_seed=int(seed), missing_codes=codes,
        baseline_sensitivity=bool(base_sens), exact_max_groups=lim.max_exact_groups,
        max_quadratic_groups=lim.max_quadratic_groups, max_cells=lim.max_fragility_cells,
    )


def case_data_choice() -> bool:
    """The opt-in checkbox: store record keys and true labels of the certified cases in the registry (off)."""
    return st.checkbox(
        "Store the record keys and true labels of the certified cases in the registry", value=False,
        key="fr_store_case_data", persist_state=PERSIST,
        help="Off (the default): the saved run, its report and its bundle name the cases #1, #2, ... "
             "and hold no true labels. On: they hold each case's record key and true label, and anyone who can "
             "open this registry on Runs & reports can read them. This page shows them either way.")


def start_audit(ws: Workspace, options: AuditOptions, *, store_case_data: bool = False) -> jobs.Job:
    """Start the audit as a job; the worker saves a complete audit as a fragility run (case data only if asked)."""
    reg = registry()

    def work(job: jobs.Job):
        audit = run_fragility_audit(ws, options=options, progress=job.progress, should_stop=job.stop_requested)
        return audit, (save_fragility_run(reg, ws, audit, store_case_data=store_case_data) if audit.complete
                       else None)

    return jobs.start(JOB, "Fragility audit", work, provenance=current_provenance(model=True))


def follow_and_adopt(job: jobs.Job | None) -> None:
    """Follow a running audit; take a finished one into :data:`AUDIT_SLOT`; say how it ended."""
    if jobs.follow_and_adopt(job, AUDIT_SLOT, stopped="Run stopped by the user; nothing from the interrupted run "
                                                      "was saved."):
        st.session_state[COMPARE_KEY] = None


def _headline(audit: FragilityAudit, *, stale: bool = False) -> None:
    s = audit.certificates
    run_id = AUDIT_SLOT.run_id if AUDIT_SLOT.value is audit and not stale else None
    st.success(
        f"Certified {len(s)} cases · mean k* {s['k_star'].mean():.2f} · mean FDS {s['fds'].mean():.3f}"
        + (f" · saved as run {md_escape(run_id)}" if run_id else ""),
        icon=":material/verified:",
    )
    if AUDIT_SLOT.note:
        st.info(AUDIT_SLOT.note, icon=":material/update:")
    for note in audit.notes:
        st.caption(md_escape(note))
    conf = s[s["p_hat"] >= 0.8]
    if len(conf) and "donor_any" in s:
        st.markdown(
            f"**Confident but brittle:** {int(conf['donor_any'].sum())} of {len(conf)} cases with p̂ ≥ 0.8 flip "
            "under at least one donor replacement."
        )


def _ranking(audit: FragilityAudit) -> None:
    st.subheader("Which score finds brittle cases?")
    labels = list(audit.auroc["label"].unique())
    c1, c2 = st.columns(2)
    label = c1.selectbox("Brittle label", labels, key="fr_label", persist_state=PERSIST)
    stratum = c2.selectbox("Stratum", list(audit.auroc["stratum"].unique()), key="fr_stratum", persist_state=PERSIST)
    st.plotly_chart(ff.auroc_figure(audit.auroc, label=label, stratum=stratum), key="view_fr_auroc")
    part = audit.auroc[(audit.auroc["label"] == label) & (audit.auroc["stratum"] == stratum)]
    show_table(part.sort_values("auroc", ascending=False), hide_index=True, key="view_fr_auroc_table")
    if part["same_ranking"].any():
        st.caption("Binary task: max-softmax, negative entropy, margin and negative energy are monotone transforms "
                   "of one another and rank identically, so they count as one piece of evidence.")
    st.markdown("**Incremental value over confidence** (5-fold CV AUROC of a logistic model; paired bootstrap interval)")
    show_table(audit.incremental, hide_index=True, key="view_fr_incremental")


def _heatmaps(audit: FragilityAudit) -> None:
    st.subheader("Heatmaps")
    with guarded("reading saved fragility runs"):
        reg = registry()
        runs = reg.list_runs(audit_kind="fragility", status="done")
        overview = runs_overview([reg.load(r) for r in runs["run_id"].head(30)])
        if overview["model"].nunique() > 1 or overview["dataset"].nunique() > 1:
            value = st.radio("Summary", ["mean_fds", "share_brittle_confident", "mean_rcma"], horizontal=True, key="fr_heat_value",
                             persist_state=PERSIST)
            st.plotly_chart(ff.runs_heatmap_figure(overview, value=value), key="view_fr_runs_heatmap")
        else:
            st.caption("The dataset × model heatmap appears once fragility runs of several models or datasets are saved.")
    order = audit.certificates.sort_values("fds", ascending=False)["key"]
    delta = audit.batch.delta_frame()
    st.plotly_chart(ff.delta_heatmap_figure(delta.loc[order]), key="view_fr_delta_heatmap")


#: Column of :func:`case_values` marking the groups set to reference values up to the flip.
REMOVED = "removed to flip"


def case_values(ws: Workspace, cert) -> pd.DataFrame:
    """One case's raw values, one row per column: evidence group, column, value, removed up to the flip (first)."""
    keys = np.asarray(ws.dataset.keys).astype(str)
    row = ws.dataset.frame.iloc[int(np.flatnonzero(keys == str(cert.key))[0])]
    removed = set(cert.removal_order_names()[:min(cert.k_star, cert.protocol.k)])
    rows = [{"evidence group": g, "column": c, "value": "missing" if pd.isna(row[c]) else str(row[c]),
             REMOVED: "yes" if g in removed else ""}
            for c, g in sorted(ws.grouping.raw_map().items(), key=lambda cg: (cg[1] not in removed, cg[1], cg[0]))
            if c in row.index]
    return pd.DataFrame(rows, columns=["evidence group", "column", "value", REMOVED])


#: The case inspector's lists: the two meanings, named so that they cannot be confused.
FRAGILE_LIST = "Confident and fragile (the certificate flips within K groups)"
BRITTLE_LIST = "Confident and brittle (they flip under the donor test)"
FDS_LIST = "Top of the FDS ranking"


def _pool_note(audit: FragilityAudit, mode: str, pool: pd.DataFrame, *, shown: int) -> str:
    """What the listed cases are, in the words of the findings sentence that counts them."""
    K, more = int(audit.batch.protocol.k), f" (the first {shown} shown)" if shown < len(pool) else ""
    if mode == FRAGILE_LIST:
        return (f"Listed: the {len(pool)} confident cases (probability ≥ {CONFIDENT:g}) that are **fragile**: their "
                f"certificate flips when at most {K} evidence groups are set to reference values, fewest groups first, "
                f"then highest probability{more}. The findings' certificate sentence counts the same cases; the "
                "**brittle** count is a different test (the donor test).")
    return (f"Listed: the {len(pool)} confident cases (probability ≥ {CONFIDENT:g}) that are **brittle**: they change "
            f"class when up to {audit.options.donor_groups} evidence groups take another case's values (the donor "
            f"test), highest probability first{more}. These are the cases the findings' brittle sentence counts.")


def _case_inspector(ws: Workspace, audit: FragilityAudit, *, stale: bool = False) -> None:
    st.subheader("Case inspector")
    s = audit.certificates
    K = int(audit.batch.protocol.k)
    mode = st.radio("Pick from", [FRAGILE_LIST, BRITTLE_LIST, FDS_LIST], horizontal=True,
                    key="fr_case_mode", persist_state=PERSIST)
    lists = {FRAGILE_LIST: confident_fragile(s, k=K, confident=CONFIDENT),
             BRITTLE_LIST: confident_brittle(s, confident=CONFIDENT)}
    chosen = lists.get(mode)
    if chosen is not None and len(chosen):
        pool = chosen.head(50)
        st.caption(_pool_note(audit, mode, chosen, shown=len(pool)))
    else:
        if chosen is not None:
            st.caption(f"No confident case (probability ≥ {CONFIDENT:g}) is "
                       f"{'fragile' if mode == FRAGILE_LIST else 'brittle'}: the FDS ranking is listed.")
        pool = s.sort_values("fds", ascending=False, kind="stable").head(50)
    keys = [str(k) for k in pool["key"]]
    if st.session_state.get("fr_case") not in keys:
        best = striking_case(s, k=K, confident=CONFIDENT)
        st.session_state["fr_case"] = best.key if best is not None and best.key in keys else keys[0]
    key = st.selectbox("Case", keys, key="fr_case", persist_state=PERSIST,
                       help="Opens on the most striking case: " + STRIKING_RULE.format(confident=CONFIDENT) + ".")
    i = int(np.flatnonzero(s["key"].astype(str).to_numpy() == key)[0])
    cert = audit.batch.certificate(i)
    names = ws.dataset.primary.class_names
    st.markdown(f"#### Case trajectory · {md_escape(key)}")
    flips = (f"flips to '{md_escape(class_name(names, int(cert.path_labels[cert.k_star])))}' after {cert.k_star} "
             f"group{'s' if cert.k_star != 1 else ''}" if cert.k_star <= K else f"does not flip within {K} groups")
    st.caption(f"Predicted '{md_escape(class_name(names, cert.y_hat))}' for {md_escape(ws.dataset.primary.name)} "
               f"with probability {cert.p_hat:.3f} (actually '{md_escape(class_name(names, int(s['y_true'].iloc[i])))}'); "
               f"{flips}. Margin {cert.m0:.3f}, RCMA {cert.rcma:.3f}, d {cert.d:.2f}, FDS {cert.fds:.3f}.")
    c1, c2 = st.columns(2)
    c1.plotly_chart(ff.trajectory_figure(cert), key="view_fr_trajectory")
    c2.plotly_chart(ff.degradation_figure(cert), key="view_fr_degradation")
    c3, c4 = st.columns(2)
    names_g = cert.protocol.group_names
    order = pd.DataFrame({"rank": range(1, len(cert.order) + 1), "group": [names_g[g] for g in cert.order],
                          "margin drop when removed alone (Δ_g)": [cert.delta[g] for g in cert.order]})
    with c3:
        show_table(order, hide_index=True, key="view_fr_order")
    with c4:
        show_table(case_values(ws, cert), hide_index=True, key="view_fr_case_values")
    _model_comparison(ws, audit, str(key), stale=stale)


def _model_comparison(ws: Workspace, audit: FragilityAudit, key: str, *, stale: bool = False) -> None:
    st.markdown("#### Same case under the nominal winner and the sturdiest model")
    kinds = st.multiselect("Comparison models (trained on the same split)", list(ZOO),
                           default=["lightgbm"] if "lightgbm" in ZOO else [], key="fr_compare_kinds", persist_state=PERSIST)
    if st.button("Train and compare", key="act_fr_compare", disabled=stale):
        with guarded("training the comparison models"), st.spinner("Training and certifying…"):
            st.session_state[COMPARE_KEY] = compare_models(ws, kinds, audit=audit)
    result = st.session_state.get(COMPARE_KEY)
    if result is None:
        return
    table, batches = result
    show_table(table, hide_index=True, key="view_fr_compare_table")
    winner = table.loc[table["heldout_auroc"].idxmax(), "model"]
    leaders = stability_leaders(table)
    agree = len(set(leaders.values())) == 1
    # "most stable" only when mean RCMA, mean FDS and mean k* agree; else the model with the lowest mean RCMA, named so
    stable_role = "most stable" if agree else "lowest mean RCMA"
    cols = st.columns(2)
    for col, (role, kind) in zip(cols, (("nominal winner", winner), (stable_role, leaders["mean_rcma"])), strict=True):
        b = batches[kind][1]
        i = int(np.flatnonzero(np.asarray(b.keys).astype(str) == key)[0])
        col.plotly_chart(ff.trajectory_figure(b.certificate(i), title=f"{role}: {kind}"), key=f"view_fr_traj_{role.replace(' ', '_')}")
    if not agree:
        st.caption("The stability measures disagree (" + "; ".join(f"{m}: {k}" for m, k in leaders.items())
                   + "), so no model is called the most stable.")


def _search_and_temperature(audit: FragilityAudit) -> None:
    st.subheader("Greedy vs exact and beam search")
    show_table(audit.search, hide_index=True, key="view_fr_search")
    if audit.temperature is not None:
        t = audit.temperature
        st.subheader("Brittleness-aware temperature")
        st.caption(f"T(x) = T0·(1 + β·FDS): T0 = {t.t0:.3f}, β = {t.beta:.3f} (fitted on {t.n_val:d} cases; "
                   f"evaluated on {t.n_test:d}; pseudo-logits)")
        st.plotly_chart(ff.temperature_figure(t.table), key="view_fr_temperature")
        show_table(t.table, hide_index=True, key="view_fr_temperature_table")
    if audit.baseline is not None:
        st.subheader("Baseline sensitivity")
        show_table(audit.baseline, hide_index=True, key="view_fr_baseline")


def _exports(audit: FragilityAudit, *, stale: bool = False) -> None:
    st.subheader("Export")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Certificates (JSON lines)", audit.batch.to_jsonl(), file_name="certificates.jsonl",
                       mime="application/jsonl", key="act_fr_dl_jsonl", disabled=stale)
    c2.download_button("Certificate table (CSV)", csv_text(audit.certificates, index=False), file_name="fragility_certificates.csv",
                       mime="text/csv", key="act_fr_dl_csv", disabled=stale)
    c3.download_button("Certificate table (Parquet)", audit.certificates.astype({"key": str}).to_parquet(index=False),
                       file_name="fragility_certificates.parquet", key="act_fr_dl_parquet", disabled=stale)


def show_audit(ws: Workspace, audit: FragilityAudit) -> None:
    """Everything the page shows for a finished audit (with a notice, and no actions, when it is stale)."""
    changed = AUDIT_SLOT.changed(current_provenance(model=True)) if AUDIT_SLOT.value is audit else []
    stale = bool(changed)
    if stale:
        stale_notice(AUDIT_SLOT.what, AUDIT_SLOT.describe(changed))
    _headline(audit, stale=stale)
    st.plotly_chart(ff.distributions_figure(audit.certificates, k=int(audit.batch.protocol.k)), key="view_fr_distributions")
    if not audit.complete:
        st.warning("The run was stopped early: only the certificates computed so far are shown.")
        _case_inspector(ws, audit, stale=stale)
        return
    _ranking(audit)
    _heatmaps(audit)
    _case_inspector(ws, audit, stale=stale)
    _search_and_temperature(audit)
    _exports(audit, stale=stale)


def neural_section(ws: Workspace, options: AuditOptions) -> None:
    """Expander "FR-ResMLP (optional)": how to enable it, or train and compare with α = γ = 0."""
    with st.expander("FR-ResMLP (optional)", expanded=NEURAL_SLOT.value is not None):
        st.caption("A fragility-regularised residual MLP (PyTorch, CPU): cross-entropy + α·SymKL(p(x) ‖ p(x̃)) + "
                   "γ·margin hinge, where x̃ attenuates random evidence groups toward the baseline. It is trained on "
                   "this workspace's training rows (same preprocessing) and compared with the same network at "
                   "α = γ = 0 on held-out AUROC, mean RCMA and mean FDS.")
        if not neural.torch_available():
            st.info(
                "FR-ResMLP needs PyTorch, which is not installed. Enable it with "
                f"{code(neural.INSTALL_COMMAND)} (CPU build, torch==2.13.0) and restart the app; "
                "`make test` installs it too.",
                icon=":material/extension:",
            )
            return
        c1, c2, c3, c4 = st.columns(4)
        alpha = c1.number_input("α (SymKL weight)", min_value=0.0, max_value=10.0, value=float(neural.DEFAULTS["alpha"]),
                                step=0.25, key="fr_neural_alpha", persist_state=PERSIST)
        gamma = c2.number_input("γ (margin hinge weight)", min_value=0.0, max_value=10.0,
                                value=float(neural.DEFAULTS["gamma"]), step=0.25, key="fr_neural_gamma", persist_state=PERSIST)
        epochs = count_input(c3, "Epochs", count="epochs", key="fr_neural_epochs", persist_state=PERSIST, min_value=1,
                             value=int(neural.DEFAULTS["epochs"]))
        width = count_input(c4, "Width", count="width", key="fr_neural_width", persist_state=PERSIST, min_value=4,
                            value=int(neural.DEFAULTS["width"]), step=8)
        if st.button("Train FR-ResMLP and compare", key="act_fr_neural"):
            with guarded("training FR-ResMLP"), progress_bar("Starting…") as progress:
                result = neural.compare_fr_resmlp(
                    ws, alpha=float(alpha), gamma=float(gamma), seed=options.config.seed,
                    max_cases=options.max_cases, case_seed=options.case_seed, config=options.config,
                    params={"epochs": int(epochs), "width": int(width)},
                    progress=progress,
                )
                NEURAL_SLOT.put(result, current_provenance(model=True))
        result = NEURAL_SLOT.value
        if result is None:
            return
        changed = NEURAL_SLOT.changed(current_provenance(model=True))
        if changed:
            stale_notice(NEURAL_SLOT.what, NEURAL_SLOT.describe(changed))
        table = result.to_frame()
        st.markdown(f"**FR-ResMLP vs the same network at α = γ = 0** · {result.n_train:,} training rows · "
                    f"AUROC on {result.n_heldout:,} held-out rows · certificates on {result.n_cases:,} held-out cases")
        show_table(table, hide_index=True, key="view_fr_neural_table")
        st.plotly_chart(ff.neural_comparison_figure(table), key="view_fr_neural_figure")
        st.caption("Lower mean RCMA / FDS = less fragile under the same certificate protocol. "
                   "RCMA is relative to each case's own margin, so it can move differently from FDS.")
