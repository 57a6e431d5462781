"""Entry point: `streamlit run app.py`. Routes to the pages in `pages/`."""
import streamlit as st

from components.data_widgets import ensure_sample_loaded
from components.state import keep_widget_state

st.set_page_config(page_title="Reliability audit", page_icon=":material/fact_check:", layout="wide")
keep_widget_state()
ensure_sample_loaded()  # a bundled sample is ready to explore on first start

pages = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/data_groups.py", title="Data & groups", icon=":material/table_chart:"),
    st.Page("pages/runs.py", title="Runs & reports", icon=":material/history:"),
    st.Page("pages/receipts.py", title="Receipts", icon=":material/receipt_long:"),
    st.Page("pages/fragility.py", title="Fragility", icon=":material/heart_broken:"),
]
st.navigation(pages).run()
