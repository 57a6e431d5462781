"""What every page shares around its own content, split at the page's heading.

``app.py`` draws the navigation and keeps a slot at the top of the main area
(:func:`reserve_top`), then runs the page. The page draws its heading first
and then calls :func:`after_heading`, which does the shared set-up: the heavy
imports (pandas, scikit-learn and the library come in through
:mod:`components.state`), the bundled sample, a workspace switch left
half-done, the workspace bar (drawn into the slot at the top) and the
sidebar's list of running jobs. So on a fresh server the first script run
puts the page's title on screen once Streamlit itself is imported, instead of
after some seconds of imports and the sample load
(``benchmarks/first_paint.py`` measures it, ``docs/reliability.md`` "First
paint" has the figures).

This module imports only streamlit; :func:`after_heading` imports the rest.
``tests/test_first_paint_static.py`` checks that every page draws its title before
anything heavier is imported and calls :func:`after_heading` before the
rest of its imports.
"""
from __future__ import annotations

import streamlit as st

__all__ = ["after_heading", "reserve_top"]

_TOP = "shell_top"  # session key: this run's slot at the top of the main area (a container), set by app.py


def reserve_top() -> None:
    """Keep an empty container at the top of the main area for the workspace bar (``app.py``, before the page)."""
    st.session_state[_TOP] = st.container()


def after_heading() -> None:
    """The shared set-up of every page, called by the page right after its heading (and caption).

    The workspace bar goes into the slot :func:`reserve_top` kept, above the
    heading; without one (a page run on its own) it is drawn here.
    """
    loading = st.empty()
    loading.caption("Loading the audit library…")
    from audit_core.native_threads import pin_blas_threads
    from components.jobs import sidebar_status
    from components.widgets.adoption import ensure_sample_loaded
    from components.workspaces import aside, finish_pending_switch, workspace_bar

    pin_blas_threads()  # sessions share this process: one fixed BLAS thread count (audit_core/native_threads.py)
    finish_pending_switch()  # a switch between your workspace and the demo's that a newer run cut short
    ensure_sample_loaded()  # a bundled sample is ready to explore on first start
    top = st.session_state.pop(_TOP, None)
    with top if top is not None else st.container():
        workspace_bar()  # once the demo has run: which workspace the pages show, and the way back to yours
    sidebar_status(aside())
    loading.empty()
