"""Fragility: which confident predictions rest on a narrow evidence base, and how fast does support collapse?"""
from components.routing import require_router

require_router()  # first, before the heavy imports: route through app.py even on a fresh server (see components/routing.py)

import streamlit as st

from components.shell import after_heading

st.title("Fragility")
st.caption("Counterfactual fragility certificates: how many evidence groups must fail before a prediction flips, "
           "and how fast its margin collapses.")
after_heading()  # the library, the sample and the workspace bar come after the heading is on screen

from components import jobs
from components.feedback import stale_notice
from components.state import WORKSPACE_SLOT, current_provenance
from components.widgets import fragility as fw
from components.widgets.findings import fragility_panel

ws = WORKSPACE_SLOT.value
if ws is None:
    st.info("Train a model on Data & groups first: the audit needs a model, evidence groups and a baseline.")
    st.page_link("pages/data_groups.py", label="Go to Data & groups", icon=":material/table_chart:")
    st.stop()
model_changed = WORKSPACE_SLOT.changed(current_provenance())
if model_changed:
    stale_notice("model", WORKSPACE_SLOT.provenance.describe(model_changed))
    st.page_link("pages/data_groups.py", label="Retrain on Data & groups", icon=":material/table_chart:")

options = fw.options_form(ws)
store_case_data = fw.case_data_choice()
job = jobs.current(fw.JOB)
running = job is not None and job.running
c1, c2 = st.columns([1, 4])
run = c1.button("Run fragility audit", type="primary", key="act_fr_run", disabled=running or bool(model_changed))
if c2.button("Stop", key="act_fr_stop"):
    if running:
        job.request_stop()
    else:
        st.warning("Run stopped by the user; nothing from the interrupted run was saved.")
if run:
    job = fw.start_audit(ws, options, store_case_data=store_case_data)
fw.follow_and_adopt(job)

audit = fw.AUDIT_SLOT.value
if audit is not None:
    fragility_panel(audit, st.session_state.get(fw.COMPARE_KEY))
    fw.show_audit(ws, audit)

fw.neural_section(ws, options)
