"""Entry point: `streamlit run app.py`. Routes with st.navigation to the pages in `pages/`."""
import streamlit as st

from components.state import keep_widget_state
from components.widgets.data import ensure_sample_loaded

PAGES = [
    ("pages/home.py", "Home", ":material/home:"),
    ("pages/data_groups.py", "Data & groups", ":material/table_chart:"),
    ("pages/fragility.py", "Fragility", ":material/heart_broken:"),
    ("pages/transport.py", "Transport", ":material/swap_horiz:"),
    ("pages/receipts.py", "Receipts", ":material/receipt_long:"),
    ("pages/runs.py", "Runs & reports", ":material/history:"),
]


def main() -> None:
    """Shared set-up, then route to the selected page."""
    st.set_page_config(page_title="Reliability audit", page_icon=":material/fact_check:", layout="wide")
    keep_widget_state()
    ensure_sample_loaded()  # a bundled sample is ready to explore on first start
    pages = [
        st.Page(path, title=title, icon=icon, default=(i == 0)) for i, (path, title, icon) in enumerate(PAGES)
    ]
    st.navigation(pages).run()


if __name__ == "__main__":
    main()
