"""Data & groups: pick data, declare targets and records, group the evidence, train or import a model."""
from components.routing import require_router

require_router()  # first, before the heavy imports: route through app.py even on a fresh server (see components/routing.py)

import streamlit as st

from components.shell import after_heading

st.title("Data & groups")
st.caption("Every audit starts here: the table, what the label means, which columns form evidence blocks, and the model.")
after_heading()  # the library, the sample and the workspace bar come after the heading is on screen

from components.figures.data import group_sizes_figure, missingness_figure
from components.widgets import data as dw

table = dw.source_section()
if table is None:
    st.info("Pick a bundled sample or upload a table to begin.")
    st.stop()

edited = dw.columns_section()
dw.groups_tools_section(edited)
st.plotly_chart(missingness_figure(edited), key="view_fig_missing")
dw.targets_section(table.frame)
dw.special_columns_section(table.frame)
config, groups = dw.current_config(table, edited)
dw.model_section(table, config, groups)
ws = dw.workspace_section(groups)
if ws is not None:
    st.plotly_chart(group_sizes_figure(ws.grouping.group_sizes()), key="view_fig_groups")
