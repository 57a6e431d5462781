"""Entry point: `streamlit run app.py`. Routes with st.navigation to the pages in `pages/`.

First paint: Streamlit sees the `pages/` folder and, on a fresh server, runs
its old (v1) page discovery, whose sidebar lists the raw file names (`app`,
`data groups`, `home`, …) until a script calls `st.navigation`.
`.streamlit/config.toml` sets `client.showSidebarNavigation = false`, so that
list is never shown, and :func:`main` calls `st.navigation` (hidden) and draws
our own sidebar links, importing nothing but streamlit, so the navigation is
on screen within the first messages of the first run
(`tests/test_browser_first_paint.py` checks it in Chromium). The page then
draws its heading before anything heavy is imported, and calls
:func:`components.shell.after_heading` for the shared set-up (the library,
the sample, the workspace bar in the slot kept at the top).
"""
import streamlit as st

from components.shell import reserve_top

PAGES = [
    ("pages/home.py", "Home", ":material/home:"),
    ("pages/data_groups.py", "Data & groups", ":material/table_chart:"),
    ("pages/fragility.py", "Fragility", ":material/heart_broken:"),
    ("pages/transport.py", "Transport", ":material/swap_horiz:"),
    ("pages/receipts.py", "Receipts", ":material/receipt_long:"),
    ("pages/runs.py", "Runs & reports", ":material/history:"),
]


def main() -> None:
    """Navigation first, then the selected page (which does the shared set-up after its heading)."""
    st.set_page_config(page_title="Reliability audit", page_icon=":material/fact_check:", layout="wide")
    pages = [
        st.Page(path, title=title, icon=icon, default=(i == 0)) for i, (path, title, icon) in enumerate(PAGES)
    ]
    current = st.navigation(pages, position="hidden")
    with st.sidebar:
        st.markdown("**Reliability audit**")
        for page in pages:
            st.page_link(page)
    reserve_top()  # the workspace bar's place, above the page's heading
    current.run()


if __name__ == "__main__":
    main()
