"""Runs & reports: browse saved runs, reopen one without recomputing, compare, export, import."""
from components.routing import require_router

require_router()  # first, before the heavy imports: route through app.py even on a fresh server (see components/routing.py)

import streamlit as st

from components.shell import after_heading

st.title("Runs & reports")
st.caption(
    "Every saved run, from the app or the `reliability-audit` command line. A run is shown from its stored "
    "tables (nothing is recomputed); export it as a self-contained HTML report, a JSON bundle, Parquet tables or a model card."
)
after_heading()  # the library, the sample and the workspace bar come after the heading is on screen

from components.feedback import guarded
from components.widgets import forecast_check as fc
from components.widgets import runs as rw

runs = None
with guarded("reading the run registry"):
    runs = rw.filtered_runs()
if runs is None or runs.empty:
    st.info("No saved runs yet: train a model on Data & groups, or run `reliability-audit run CONFIG.yaml`.")
    with st.expander("Import a run bundle", expanded=True):
        rw.import_section()
    st.stop()

tab_open, tab_compare, tab_check, tab_import = st.tabs(["Open a run", "Compare two runs", "Check a forecast",
                                                       "Import a bundle"])
with tab_open:
    rw.run_view_section(runs)
with tab_compare:
    rw.compare_section(runs)
with tab_check:  # a forecast made before the labels arrived, against the labelled run
    with guarded("checking the forecast"):
        fc.check_section(runs)
with tab_import:
    rw.import_section()
