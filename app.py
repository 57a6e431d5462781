"""Entry point: `streamlit run app.py`. Routes with st.navigation to the pages in `pages/`.

First paint: Streamlit sees the `pages/` folder and, on a fresh server, runs
its old (v1) page discovery, whose sidebar lists the raw file names (`app`,
`data groups`, `home`, …) until a script calls `st.navigation`.
`.streamlit/config.toml` sets `client.showSidebarNavigation = false`, so that
list is never shown, and :func:`main` calls `st.navigation` (hidden) and draws
our own sidebar links *before* importing anything heavy (pandas, the library,
the sample), so the navigation is on screen within the first messages of the
first run. `tests/test_browser_first_paint.py` checks it in Chromium.
"""
import streamlit as st

PAGES = [
    ("pages/home.py", "Home", ":material/home:"),
    ("pages/data_groups.py", "Data & groups", ":material/table_chart:"),
    ("pages/fragility.py", "Fragility", ":material/heart_broken:"),
    ("pages/transport.py", "Transport", ":material/swap_horiz:"),
    ("pages/receipts.py", "Receipts", ":material/receipt_long:"),
    ("pages/runs.py", "Runs & reports", ":material/history:"),
]


def main() -> None:
    """Navigation first, then the shared set-up, then the selected page."""
    st.set_page_config(page_title="Reliability audit", page_icon=":material/fact_check:", layout="wide")
    pages = [
        st.Page(path, title=title, icon=icon, default=(i == 0)) for i, (path, title, icon) in enumerate(PAGES)
    ]
    current = st.navigation(pages, position="hidden")
    with st.sidebar:
        st.markdown("**Reliability audit**")
        for page in pages:
            st.page_link(page)
    loading = st.empty()
    loading.caption("Loading the audit library…")
    from components.jobs import sidebar_status  # heavy imports only after the navigation is drawn
    from audit_core.native_threads import pin_blas_threads
    from components.widgets.adoption import ensure_sample_loaded
    from components.workspaces import aside, finish_pending_switch, workspace_bar

    pin_blas_threads()  # sessions share this process: one fixed BLAS thread count (audit_core/native_threads.py)
    finish_pending_switch()  # a switch between your workspace and the demo's that a newer run cut short
    ensure_sample_loaded()  # a bundled sample is ready to explore on first start
    workspace_bar()  # once the demo has run: which workspace the pages show, and the way back to yours
    sidebar_status(aside())
    loading.empty()
    current.run()


if __name__ == "__main__":
    main()
