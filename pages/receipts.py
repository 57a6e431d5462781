"""Receipts: when an evaluator's verdict changes, which change among grounds, norms and authority accounts for it."""
from components.routing import require_router

require_router()  # first, before the heavy imports: route through app.py even on a fresh server (see components/routing.py)

import streamlit as st

from components.shell import after_heading

st.title("Receipts")
st.caption(
    "Execute every hybrid of an old and a new evaluator state (grounds G, norms N, authority A). "
    "The receipt is every minimal set of replaced sources that reproduces the new verdict — "
    "executed, not predicted. See docs/receipts.md."
)
after_heading()  # the library, the sample and the workspace bar come after the heading is on screen

from components.widgets import receipts as rw

st.subheader("1 · Old and new evaluator state")
rw.editor_section()
st.subheader("2 · Executed cube and receipt")
rw.cube_section()
st.subheader("3 · Benchmark and learned baseline")
rw.benchmark_section()
st.subheader("4 · Score uploaded predictions")
rw.predictions_section()
st.subheader("5 · Release gate across saved runs")
rw.gate_section()
