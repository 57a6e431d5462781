"""The guided demo on Home: one button runs every audit on the loan sample, then a story of four steps.

The demo runs in its own workspace (:mod:`components.workspaces`), built aside
with the loan sample and its bundled declaration: the user's table, targets,
groups, model and results are never touched. It runs as a shared
:class:`components.jobs.Job` (it goes on when the user leaves Home); its work
is one library call, :func:`audit_core.findings.demo.run_demo`. When the job
ends, its results go into the result slots of the demo's workspace (Data &
groups, Fragility, Transport, and the release gate's runs on Receipts), and
each step's button opens the full page in that workspace, on the same
results; every page then says so, with a button back to the user's
workspace. Sentences come from the :class:`~audit_core.findings.demo.DemoStep`
findings; figures are the pages' own figure builders.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from audit_core.data.samples import SAMPLES
from audit_core.findings.cases import STRIKING_RULE, class_name
from audit_core.findings.demo import STEP_TITLES, DemoOptions, DemoResult, DemoStep, run_demo
from audit_core.findings.gate import GROUND_NAMES, VERDICT_WORDS
from audit_core.limits import setting
from audit_core.transport.config import class_names_of
from audit_core.transport.headline import recorded_headline
from components import jobs, workspaces
from components.feedback import guarded, md_escape
from components.figures import fragility as ff
from components.glossary import table as show_table
from components.figures import transport as tf
from components.figures.receipts import cube_view
from components.state import (WORKSPACE_SLOT, Keys, Provenance, ResultSlot, current_provenance, registry,
                              sample_table, workspace_digest)
from components.widgets.findings import findings_panel
from components.widgets.fragility import case_values

__all__ = ["DEMO_SLOT", "OPTIONS_KEY", "JOB", "SAMPLE", "demo_section"]

JOB = "demo"
SAMPLE = "loan_synthetic"
#: The finished demo (a DemoResult), tied to the table and declaration it ran on; it belongs to the session, not
#: to a workspace, so the story stays on Home whichever workspace is shown.
DEMO_SLOT = ResultSlot("demo_result", "demo", shared=True)
#: Session key for other :class:`DemoOptions` (AppTests); else ``AUDIT_DEMO_SIZE=quick`` (browser tests) gives
#: :meth:`DemoOptions.quick`, and the defaults otherwise.
OPTIONS_KEY = "demo_options"
SIZE_ENV = "AUDIT_DEMO_SIZE"
PAGES = {"fragility": ("pages/fragility.py", "Open the full Fragility audit", ":material/heart_broken:"),
         "transport": ("pages/transport.py", "Open the full Transport audit", ":material/swap_horiz:"),
         "receipts": ("pages/receipts.py", "Open Receipts (the release gate across saved runs)",
                      ":material/receipt_long:")}


def _demo_workspace() -> dict:
    """A fresh workspace with the loan sample adopted, as Data & groups would show it (built aside)."""
    from components.widgets.adoption import adopt_table

    state: dict = {"dg_source_mode": "Bundled sample", "dg_sample": SAMPLE}
    adopt_table(sample_table(SAMPLE), f"sample:{SAMPLE}", SAMPLES[SAMPLE], state=state)
    return state


def _start() -> jobs.Job:
    """Build the demo's workspace aside, read its declaration, start the job (the user's workspace is untouched)."""
    from components.widgets.data import current_config

    state = _demo_workspace()
    table = state[Keys.TABLE]
    config, groups = current_config(table, state[Keys.COLUMNS], state=state)
    provenance = current_provenance(state=state)
    info = state.get(Keys.SAMPLE)
    codes = dict(getattr(info, "missing_codes", {}) or {})
    options = st.session_state.get(OPTIONS_KEY) or (
        DemoOptions.quick() if setting(SIZE_ENV).lower() == "quick" else DemoOptions())
    reg = registry()

    def work(job: jobs.Job):
        result = run_demo(table.frame, config, raw_groups=groups, registry=reg, missing_codes=codes,
                          options=options, progress=job.progress, should_stop=job.stop_requested)
        return result, result.run_ids["transport"]

    job = jobs.start(JOB, "Demo", work, provenance=provenance, shared=True)
    workspaces.keep_aside(workspaces.DEMO, state)
    return job


def _share(result: DemoResult, provenance: Provenance) -> None:
    """Put the demo's results into the result slots of the demo's workspace (once, when the job is adopted).

    ``provenance`` is the job's (the table and declaration the demo started from), so a declaration edited in the
    demo's workspace while the demo ran makes its results stale on the pages, as any other result. The release
    gate's inputs on Receipts are set to the demo's two run sets and scope.
    """
    from components.widgets import fragility as fw
    from components.widgets import transport as tw

    state = workspaces.state_of(workspaces.DEMO)
    WORKSPACE_SLOT.put(result.workspace, provenance, run_id=result.run_ids["model"], state=state)
    state[Keys.MESSAGE] = (f"Model ready: {result.workspace.model.spec.get('kind')} (trained by the demo) "
                           f"· saved as run {result.run_ids['model']}.")
    fw.AUDIT_SLOT.put(result.audit, replace(provenance, model=workspace_digest(result.workspace)),
                      run_id=result.run_ids["fragility"], state=state)
    state[fw.COMPARE_KEY] = (result.models, result.batches)
    tw.RESULT_SLOT.put(result.transport, provenance, run_id=result.run_ids["transport"], state=state)
    g = result.gate
    state.update({"rc_gate_old_runs": list(g.run_ids_a), "rc_gate_new_runs": list(g.run_ids_b),
                  "rc_gate_old_scope": g.scope, "rc_gate_new_scope": g.scope})


def _link(step: DemoStep) -> None:
    """A button that opens the step's full page in the demo's workspace."""
    page, label, icon = PAGES[step.page]
    if st.button(f"{label} →", icon=icon, key=f"act_demo_open_{step.number}", on_click=workspaces.switch_to,
                 args=(workspaces.DEMO,)):
        st.switch_page(page)


def _step_case(result: DemoResult, step: DemoStep) -> None:
    case = result.case
    if case is None:
        return
    cert = result.audit.batch.certificate(case.index)
    names = result.workspace.dataset.primary.class_names
    target = result.workspace.dataset.primary.name
    truth = class_name(names, int(result.audit.certificates["y_true"].iloc[case.index]))
    st.caption(f"Chosen by rule: {STRIKING_RULE.format(confident=0.8)}. Target {md_escape(target)}: predicted "
               f"'{md_escape(class_name(names, cert.y_hat))}', actually '{md_escape(truth)}'. The table lists the "
               "case's values, the groups removed up to the flip first.")
    c1, c2 = st.columns([3, 2])
    c1.plotly_chart(ff.trajectory_figure(cert, title=f"Case {case.key}: margin as evidence groups are removed"),
                    key="view_demo_trajectory")
    with c2:
        show_table(case_values(result.workspace, cert), hide_index=True, key="view_demo_case_values", height=420)


#: The model comparison's columns in words (symbols in brackets).
MODEL_COLUMNS = {"model": "model", "heldout_auroc": "ranking quality on held-out rows (AUROC)",
                 "mean_rcma": "how fast margins collapse per evidence group (mean RCMA, lower = sturdier)",
                 "mean_fds": "fragility score (mean FDS, lower = sturdier)",
                 "mean_k_star": "evidence groups removed to flip (mean k*, higher = sturdier)", "role": "role"}


def _step_models(result: DemoResult) -> None:
    table = result.models[[c for c in MODEL_COLUMNS if c in result.models]].rename(columns=MODEL_COLUMNS)
    show_table(table, hide_index=True, key="view_demo_models")
    if result.case is None:
        return
    cols = st.columns(len(result.batches))
    for col, (kind, (_, batch)) in zip(cols, result.batches.items(), strict=True):
        i = int(np.flatnonzero(np.asarray(batch.keys).astype(str) == result.case.key)[0])
        col.plotly_chart(ff.trajectory_figure(batch.certificate(i), title=f"Case {result.case.key} under {kind}"),
                         key=f"view_demo_traj_{kind}")


def _step_transport(result: DemoResult) -> None:
    tr, o = result.transport, result.options
    cfg = tr.manifest["config"]
    h = recorded_headline(tr.manifest)
    assert not isinstance(h, str), h  # the demo's own run records its headline
    kw: dict[str, Any] = dict(model=h.model, mapping=h.mapping, headline=h)
    c1, c2 = st.columns(2)
    c1.plotly_chart(tf.risk_selection_figure(tr.extras["curves"], tr.table, selection_rate=o.selection_rate, **kw),
                    key="view_demo_risk")
    c2.plotly_chart(tf.frontier_figure(tr.table, class_names=class_names_of(cfg), **kw), key="view_demo_frontier")
    st.caption("Left: the markers are the sentence's numbers (the threshold fitted on the source, applied unchanged "
               "on each test set), on the curves averaged over the same refits. Right: the share of each class's "
               "cases whose prediction set contains the truth, against the set size, for each miscoverage α.")


def _step_gate(result: DemoResult) -> None:
    g = result.gate
    st.caption(f"Before: the model run alone ({md_escape(g.run_ids_a[0])}), before any audit. After: the model, "
               f"fragility and transport runs of the demo. Deployment scope: {md_escape(g.scope)}. The figure runs "
               "every mix of before and after; the outlined cells are the smallest changes that alone give the new "
               "decision.")
    cube = g.comparison.cube.cube
    if cube.k:
        plain = {s: GROUND_NAMES[s.split(":", 1)[1]] for s in cube.sources
                 if s.startswith("G:") and s.split(":", 1)[1] in GROUND_NAMES}
        st.plotly_chart(cube_view(cube, title=f"Release decision: {VERDICT_WORDS.get(cube.v_old, cube.v_old)} → "
                                              f"{VERDICT_WORDS.get(cube.v_new, cube.v_new)}",
                                  source_names=plain, verdict_words=VERDICT_WORDS), key="view_demo_cube")
    t = g.to_frame()
    table = pd.DataFrame({"what the gate reads": t["ground"].map(lambda n: GROUND_NAMES.get(n, n)),
                          "before the audits": t["value_a"].map(_value), "after": t["value_b"].map(_value),
                          "changed the decision": t["in_receipt"].map({True: "yes", False: ""}),
                          "name in the rules": t["ground"]})
    wide = {c: st.column_config.TextColumn(c, width="medium") for c in ("before the audits", "after")}
    show_table(table, hide_index=True, key="view_demo_gate_grounds", column_config=wide)  # "unknown (no run)" fits


def _value(v) -> str:
    """A ground's value for display: ``unknown`` when no run provides it (never "None")."""
    return "unknown (no run)" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.4g}"


_FIGURES = {1: _step_case, 2: lambda r, s: _step_models(r), 3: lambda r, s: _step_transport(r),
            4: lambda r, s: _step_gate(r)}


#: The tabs' short labels: the four fit side by side at 1600 px; each tab opens with its step's full question.
TAB_LABELS = {1: "A confident prediction that collapses", 2: "Which model holds up?", 3: "Does the rule still hold?",
              4: "The release decision"}


def _story(result: DemoResult) -> None:
    st.markdown("**The demo's story** · runs saved: " + ", ".join(
        f"{k} {md_escape(v)}" for k, v in result.run_ids.items()))
    st.caption("The demo ran in its own workspace: your table, targets, groups, model and results are as you left "
               "them. The buttons below open the full pages in the demo's workspace; a button at the top of each "
               "page brings you back to yours.")
    tabs = st.tabs([f"{s.number} · {TAB_LABELS.get(s.number, s.title)}" for s in result.steps])
    for tab, step in zip(tabs, result.steps, strict=True):
        with tab:
            st.markdown(f"#### {STEP_TITLES[step.number - 1]}")
            findings_panel(step.findings, key=f"view_demo_step{step.number}")
            with guarded(f"drawing step {step.number}"):
                _FIGURES[step.number](result, step)
            _link(step)


def demo_section() -> None:
    """The "Run the demo" button, its progress, and the story once it has run."""
    st.subheader("Guided demo")
    st.caption("One click runs the bundled loan sample (2019 → 2023) through Data & groups, Fragility, Transport "
               "and the release gate, saves the runs, and tells what they found in four steps (about a minute). "
               "It runs in its own workspace: your table, targets, groups, model and results stay as they are.")
    job = jobs.current(JOB, shared=True)
    running = job is not None and job.running
    c1, c2 = st.columns([1, 4])
    # in the demo's workspace, a new demo first brings the user back to theirs (the demo's is rebuilt aside)
    if c1.button("Run the demo", type="primary", key="act_demo_run", disabled=running,
                 on_click=workspaces.switch_to, args=(workspaces.YOURS,)):
        with guarded("starting the demo"):
            job = _start()
    if running and job is not None and c2.button("Stop", key="act_demo_stop"):
        job.request_stop()
    if jobs.follow_and_adopt(job, DEMO_SLOT, stopped="The demo was stopped; the runs saved so far are kept.") \
            and job is not None:
        _share(DEMO_SLOT.value, job.provenance)
    result = DEMO_SLOT.value
    if result is not None:
        _story(result)
