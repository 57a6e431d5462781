"""Make sure every page runs inside ``app.py``'s ``st.navigation``.

Streamlit keeps a server-wide flag for its old (v1) multipage mode, set when a
``pages/`` folder sits next to the main script, and clears it only once a
script calls ``st.navigation``. While it is set, a request for a sub-page
(the first request of a fresh server for ``/fragility``, say) runs
``pages/fragility.py`` on its own: without ``app.py``'s set-up and with the
v1 sidebar. Our layout keeps the page files in ``pages/``, so every page calls
:func:`require_router` first, before its heavy imports (this module imports
only streamlit), so the navigation is on screen at once. In v1 mode it runs ``app.main()`` in place,
which calls ``st.navigation`` (clearing the flag) and renders the requested
page through it, then stops the outer run. Nothing is rerun, so a button
click that arrived with the request is not lost.
"""
from __future__ import annotations

import streamlit as st

__all__ = ["require_router"]


def require_router() -> None:
    """Route through ``app.main()`` when Streamlit runs a page in v1 multipage mode."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        import app  # the entry point module; importing it does not run main()

        app.main()
        st.stop()
