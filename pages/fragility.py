"""Fragility: which confident predictions rest on a narrow evidence base, and how fast does support collapse?"""
import streamlit as st

from audit_core.fragility.audit import run_fragility_audit
from components.feedback import guarded
from components.routing import require_router
from components.state import Keys
from components.widgets import fragility as fw
from components.widgets.findings import fragility_panel

require_router()  # first: route through app.py even on a fresh server (see components/routing.py)

st.title("Fragility")
st.caption("Counterfactual fragility certificates: how many evidence groups must fail before a prediction flips, "
           "and how fast its margin collapses.")
ws = st.session_state.get(Keys.WORKSPACE)
if ws is None:
    st.info("Train a model on Data & groups first: the audit needs a model, evidence groups and a baseline.")
    st.page_link("pages/data_groups.py", label="Go to Data & groups", icon=":material/table_chart:")
    st.stop()

options = fw.options_form(ws)
c1, c2 = st.columns([1, 4])
run = c1.button("Run fragility audit", type="primary", key="act_fr_run")
if c2.button("Stop", key="act_fr_stop"):
    st.session_state[fw.STOP_KEY] = True
    st.warning("Run stopped by the user; nothing from the interrupted run was saved.")
if run:
    st.session_state[fw.STOP_KEY] = False
    with guarded("running the fragility audit"):
        bar = st.progress(0.0, text="Starting…")
        audit = run_fragility_audit(ws, options=options, progress=lambda f, m: bar.progress(min(1.0, f), text=m),
                                    should_stop=fw.should_stop)
        fw.store_result(ws, audit)
        bar.empty()

audit = st.session_state.get(fw.AUDIT_KEY)
if audit is not None:
    fragility_panel(audit, st.session_state.get(fw.COMPARE_KEY))
    fw.show_audit(ws, audit)

fw.neural_section(ws, options)
