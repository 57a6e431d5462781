"""A run stopped half-way through adopting a table leaves a session that works.

Streamlit honours a newer rerun request at any session-state access, so the
run that adopts a table (the bundled sample on a session's first run, a new
upload, another sample) can end after any of its writes. Under load, a click
on a page link during a session's first run did exactly that: the source id
was written and the column table not, and every later run of Data & groups
failed with ``KeyError: 'st.session_state has no key "columns_table"'`` (the
CI load test's stuck "Train model" session). Here the first adoption is cut at
its n-th session-state write or delete, for every n, by raising the exception
Streamlit raises there; the next run must show the whole declaration of the
sample the session asked for.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

import components.widgets.adoption as ad
from components.state import Keys

ROOT = Path(__file__).resolve().parents[1]
WRITES = 24  # more than one adoption makes (about 18): the last cases cut nothing and must pass too


class _CutState:
    """``st.session_state`` whose n-th write or delete, while armed, raises :class:`StopException`."""

    def __init__(self, cut_at: int):
        self.cut_at, self.count, self.armed = cut_at, 0, False

    def _tick(self) -> None:
        if self.armed:
            self.count += 1
            if self.count == self.cut_at:
                self.armed = False  # one cut per test, like one late click
                raise StopException()

    def __setitem__(self, key, value):
        self._tick()
        st.session_state[key] = value

    def __delitem__(self, key):
        self._tick()
        del st.session_state[key]

    def __getattr__(self, name):
        return getattr(st.session_state, name)

    def __getitem__(self, key):
        return st.session_state[key]

    def __contains__(self, key):
        return key in st.session_state


class _St:
    def __init__(self, state: _CutState):
        self.session_state = state

    def __getattr__(self, name):
        return getattr(st, name)


@pytest.mark.parametrize("cut_at", range(1, WRITES + 1))
def test_an_adoption_cut_short_is_completed_on_the_next_run(registry_path, monkeypatch, cut_at):
    state = _CutState(cut_at)
    monkeypatch.setattr(ad, "st", _St(state))
    original, calls = ad.adopt_table, []

    def adopt(*args, **kwargs):
        calls.append(args[1])
        state.armed = len(calls) == 1  # only the first adoption is cut
        try:
            return original(*args, **kwargs)
        finally:
            state.armed = False

    monkeypatch.setattr(ad, "adopt_table", adopt)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()  # the session's first run, cut
    at.switch_page("pages/data_groups.py").run()
    assert not at.exception, at.exception
    s = at.session_state
    assert s[Keys.SOURCE_ID] == "sample:loan_synthetic"
    assert list(s[Keys.COLUMNS]["column"]) == list(s[Keys.TABLE].frame.columns)
    assert s[Keys.TARGETS], "the sample's target definitions were not restored"
    assert at.button(key="act_train").label == "Train model"


def test_a_training_cut_short_by_a_rerun_is_kept_and_announced(registry_path, monkeypatch):
    """The CI load test's other stuck session: "Train model" clicked, then the page run was interrupted (Streamlit
    raises at the next ``st.*`` call when a newer rerun request arrives, e.g. a late widget event under load). The
    rerun has the button up again, so a training done inside the page run was lost without a word. Training now
    runs as a job: the interrupted run leaves it running and the next run adopts the model and announces it."""
    from app_text import texts

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at.switch_page("pages/data_groups.py").run()
    assert not at.exception, at.exception
    original, cuts = st.progress, []

    def progress(*args, **kwargs):
        if not cuts:  # the first progress element after the click is where the newer rerun lands
            cuts.append(1)
            raise StopException()
        return original(*args, **kwargs)

    monkeypatch.setattr(st, "progress", progress)
    at.button(key="act_train").click().run()
    assert cuts, "the page run after the click drew no progress element to cut"
    at.run()  # the next run: no click
    assert not at.exception, at.exception
    ready = [t for t in texts(at, "success") if t.startswith("Model ready: logistic_regression")]
    assert ready and "saved as run" in ready[0], texts(at, "success")
    assert at.session_state[Keys.WORKSPACE] is not None
