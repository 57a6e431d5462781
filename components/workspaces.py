"""Two workspaces in one session: yours, and the guided demo's.

A *workspace* is what a user builds on the pages: the table and its
declaration, the value widgets, the result slots and the jobs of the pages —
the session keys for which :func:`components.state.is_workspace_key` holds.
The pages read the *active* workspace from ``st.session_state``; the other one
is kept aside in the store (:data:`_STORE`), as a plain mapping of the same
keys.

The guided demo builds its workspace aside (``keep_aside``), never in yours,
so running it leaves your table, targets, groups, model and results exactly as
they were. Its story opens the full pages *in the demo's workspace*
(:func:`switch_to`), and every page then says so at the top, with a button
back to yours (:func:`workspace_bar`); the sidebar offers the same switch.

A switch swaps the two sets of keys. Streamlit can end a run at any
session-state access, so a switch is a small transaction, as an adoption is
(:func:`components.widgets.adoption.adopt_table`): the snapshot of the
workspace being left and the target's name are written first, in one
assignment (:data:`_SWITCH`); :func:`finish_pending_switch`, run on every
page right after its heading (:func:`components.shell.after_heading`), completes a switch an interrupted
run left half-done. Switches run in widget callbacks or before any page widget is
drawn, where Streamlit allows widget values to be set.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import streamlit as st

from components.state import Keys, is_workspace_key

__all__ = ["YOURS", "DEMO", "LABELS", "active", "exists", "label", "snapshot", "keep_aside", "state_of",
           "switch_to", "finish_pending_switch", "aside", "workspace_bar"]

YOURS = "yours"
DEMO = "demo"
LABELS = {YOURS: "Your workspace", DEMO: "The demo's workspace"}
_ACTIVE = "workspace_active"  # the name of the workspace in st.session_state (YOURS when unset)
_STORE = "workspace_store"  # {name: {key: value}}: the workspaces kept aside
_SWITCH = "workspace_switch"  # (target, leaving, snapshot of the one left) of a switch not yet complete
_CHOICE = "workspace_choice"  # the sidebar's radio (a session-level widget, not part of a workspace)


def active() -> str:
    """The name of the workspace the pages show."""
    return st.session_state.get(_ACTIVE) or YOURS


def label(name: str | None = None) -> str:
    """How the pages name a workspace (default: the active one)."""
    return LABELS[name or active()]


def _store() -> dict[str, dict[str, Any]]:
    return st.session_state.setdefault(_STORE, {})


def exists(name: str) -> bool:
    """Whether the workspace is active or kept aside."""
    return name == active() or name in _store()


def snapshot() -> dict[str | int, Any]:
    """The active workspace's keys and values (a shallow copy: results are shared, not copied)."""
    ss = st.session_state
    return {k: ss[k] for k in list(ss.keys()) if is_workspace_key(str(k))}


def keep_aside(name: str, state: dict[str, Any]) -> None:
    """Store a workspace built aside (the demo's) under ``name``; refused for the active workspace."""
    if name == active():
        raise ValueError(f"the workspace {name!r} is active: switch away from it before replacing it")
    _store()[name] = state


def state_of(name: str) -> MutableMapping:
    """Where workspace ``name`` lives now: the session's state when active, else its mapping aside."""
    return st.session_state if name == active() else _store()[name]


def aside() -> dict[str, dict[str, Any]]:
    """Label -> workspace kept aside, for the workspaces that are not active."""
    return {LABELS[n]: s for n, s in _store().items() if n != active()}


def switch_to(name: str) -> None:
    """Make workspace ``name`` the active one; the active one is kept aside, unchanged.

    Call it from a widget callback (or before any page widget is drawn). A
    switch to the active workspace does nothing.
    """
    if name == active() or name not in _store():
        return
    leaving = snapshot()  # an interruption here has changed nothing
    st.session_state[_SWITCH] = (name, active(), leaving)
    finish_pending_switch()


def finish_pending_switch() -> None:
    """Complete a switch (begun by :func:`switch_to`, perhaps cut short by a newer run); idempotent."""
    pending = st.session_state.get(_SWITCH)
    if pending is None:
        return
    target, leaving_name, leaving = pending
    store = _store()
    store[leaving_name] = leaving
    ss = st.session_state
    for key in [k for k in list(ss.keys()) if is_workspace_key(str(k))]:
        del ss[key]
    incoming = store[target]
    for key, value in incoming.items():
        ss[key] = value
    # a fresh editor for the column table (its edits are folded in already): an editor state left from the
    # other workspace under the same version never applies
    versions = [s.get(Keys.EDITOR_VERSION, 0) or 0 for s in store.values()]
    ss[Keys.EDITOR_VERSION] = max(versions) + 1
    ss[_ACTIVE] = target
    ss[_CHOICE] = target
    ss[_SWITCH] = None  # last: the switch is complete


def workspace_bar() -> None:
    """On every page, once the demo has a workspace: the sidebar switch, and a banner while the demo's is shown."""
    if not exists(DEMO):
        return
    st.session_state.setdefault(_CHOICE, active())
    st.sidebar.radio("Workspace", [YOURS, DEMO], format_func=LABELS.get, key=_CHOICE,
                     on_change=lambda: switch_to(st.session_state[_CHOICE]),
                     help="The guided demo keeps its own workspace (the loan sample and its results), so it never "
                          "replaces your table, targets, groups, model or results.")
    if active() == DEMO:
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        c1.info("You are looking at **the demo's workspace**: the loan sample and the results of the guided demo. "
                "Your own table, targets, groups, model and results are kept aside, unchanged.",
                icon=":material/science:")
        c2.button("Back to your workspace", key="act_ws_back", on_click=switch_to, args=(YOURS,), type="primary")
