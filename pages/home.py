"""Home: what the tool answers, the session's data and model, and recent runs."""
from components.routing import require_router

require_router()  # first, before the heavy imports: route through app.py even on a fresh server (see components/routing.py)

import streamlit as st

from components.shell import after_heading

st.title("Reliability audit")
after_heading()  # the library, the sample and the workspace bar come after the heading is on screen

from components.widgets.demo import demo_section
from components.widgets.home import questions, recent_runs, session_summary

questions()
demo_section()
session_summary()
st.page_link("pages/data_groups.py", label="Start with Data & groups →", icon=":material/table_chart:")
recent_runs()
