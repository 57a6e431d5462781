"""Home: what the tool answers, the session's data and model, and recent runs."""
import streamlit as st

from components.routing import require_router
from components.widgets.home import questions, recent_runs, session_summary

require_router()  # first: route through app.py even on a fresh server (see components/routing.py)

st.title("Reliability audit")
questions()
session_summary()
st.page_link("pages/data_groups.py", label="Start with Data & groups →", icon=":material/table_chart:")
recent_runs()
