"""The guided demo runs in its own workspace and keeps the user's (AppTest; ``components/workspaces.py``).

The user picks a table, declares a target, groups columns and trains a model;
then runs the demo on Home. Afterwards the active workspace is still theirs,
object for object: the table, the column table (roles and groups), the
targets, the record widgets, the model and its "Model ready" line. The
story's buttons open the full pages in the demo's workspace, on the demo's
results (not stale); the banner's button, or the sidebar switch, brings the
user back to their workspace exactly as it was. A switch cut short by a newer
run is completed by the next one.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import texts

from test_demo import SMALL
from test_page_state import _pushed

ROOT = Path(__file__).resolve().parents[1]
#: Values the user set on Data & groups, compared by value after the demo.
WIDGETS = ("dg_source_mode", "dg_sample", "dg_primary", "dg_key", "dg_domain", "dg_eligibility", "dg_seed",
           "dg_model_kind")
#: Objects of the user's workspace, compared by identity after the demo (the table by its name and SHA-256:
#: Data & groups re-reads a sample on every run).
OBJECTS = ("columns_table", "workspace", "targets")


def _users_workspace() -> AppTest:
    """A session whose own workspace is the breast-cancer sample, a second target, a group rule and a model."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    at.session_state["demo_options"] = SMALL
    at.switch_page("pages/data_groups.py").run()
    at.selectbox(key="dg_sample").set_value("breast_cancer").run()
    at.text_input(key="dg_new_name").set_value("large_tumour").run()
    at.radio(key="dg_new_kind").set_value("threshold").run()
    at.selectbox(key="dg_new_tcol").set_value("mean radius").run()
    at.number_input(key="dg_new_thr").set_value(15.0).run()
    at.button(key="act_add_target").click().run()
    at.text_area(key="dg_group_rules").set_value("prefix: mean -> means").run()
    at.button(key="act_apply_rules").click().run()
    at.selectbox(key="dg_model_kind").set_value("logistic_regression").run()
    at.button(key="act_train").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    assert [t["name"] for t in at.session_state["targets"]] == ["malignant", "large_tumour"]
    assert (at.session_state["columns_table"]["group"] == "means").sum() == 10
    assert at.session_state["workspace"] is not None
    return at


def _state(at: AppTest) -> tuple[dict, dict, str, tuple[str, str]]:
    objects = {k: at.session_state[k] for k in OBJECTS}
    widgets = {k: at.session_state[k] for k in WIDGETS}
    table = at.session_state["table"]
    return objects, widgets, at.session_state["last_message"], (table.name, table.sha256)


def _assert_same(at: AppTest, before: tuple[dict, dict, str]) -> None:
    objects, widgets, message, table = before
    for key, value in objects.items():
        assert at.session_state[key] is value, key
    assert {k: at.session_state[k] for k in WIDGETS} == widgets
    assert at.session_state["last_message"] == message
    assert (at.session_state["table"].name, at.session_state["table"].sha256) == table


def _run_demo(at: AppTest) -> None:
    at.switch_page("pages/home.py").run()
    at.button(key="act_demo_run").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    assert at.session_state["demo_result"] is not None


@pytest.fixture
def after_demo(registry_path) -> tuple[AppTest, tuple]:
    at = _users_workspace()
    before = _state(at)
    _run_demo(at)
    return at, before


def test_the_demo_keeps_the_users_table_declaration_groups_and_model(after_demo) -> None:
    at, before = after_demo
    _assert_same(at, before)
    at.switch_page("pages/data_groups.py").run()
    assert not at.exception and not at.error
    _assert_same(at, before)
    assert any(t.startswith("Model ready: logistic_regression") for t in texts(at, "success"))
    assert not any("shown for reference only" in t for t in texts(at, "warning"))  # the model is not stale
    assert at.session_state["table"].name.startswith("breast_cancer")
    assert not any("demo's workspace" in t for t in texts(at, "info"))  # no banner: this is the user's workspace


def test_the_story_opens_the_demos_workspace_and_the_banner_brings_the_user_back(after_demo) -> None:
    at, before = after_demo
    result = at.session_state["demo_result"]
    at.button(key="act_demo_open_3").click().run()  # step 3: the full Transport page
    assert not at.exception and not at.error, texts(at, "error")
    assert at.title[0].value == "Transport"
    assert any("the demo's workspace" in t for t in texts(at, "info"))
    assert at.session_state["transport_result"] is result.transport
    assert at.session_state["table"].name == "loan_synthetic.csv"
    assert not any("shown for reference only" in t for t in texts(at, "warning"))
    assert any(f"run {result.run_ids['transport']}" in t for t in texts(at, "success"))
    assert at.sidebar.radio(key="workspace_choice").value == "demo"
    at.button(key="act_ws_back").click().run()
    assert not at.exception and not at.error
    _assert_same(at, before)
    assert "transport_result" not in at.session_state or at.session_state["transport_result"] is None
    at.run()
    assert _pushed(at) == []  # the switch set the values once; a plain rerun pushes nothing
    # the sidebar switch goes both ways too
    at.sidebar.radio(key="workspace_choice").set_value("demo").run()
    assert at.session_state["workspace"] is result.workspace and not at.exception
    at.sidebar.radio(key="workspace_choice").set_value("yours").run()
    _assert_same(at, before)


def test_the_receipts_button_opens_the_gate_on_the_demos_runs(after_demo) -> None:
    at, _ = after_demo
    gate = at.session_state["demo_result"].gate
    at.button(key="act_demo_open_4").click().run()
    assert not at.exception and not at.error, texts(at, "error")
    assert at.multiselect(key="rc_gate_old_runs").value == list(gate.run_ids_a)
    assert at.multiselect(key="rc_gate_new_runs").value == list(gate.run_ids_b)
    assert at.selectbox(key="rc_gate_old_scope").value == at.selectbox(key="rc_gate_new_scope").value == gate.scope


def test_running_the_demo_again_from_its_workspace_returns_to_the_users(after_demo) -> None:
    at, before = after_demo
    first = at.session_state["demo_result"]
    at.button(key="act_demo_open_1").click().run()
    assert at.session_state["workspace"] is first.workspace
    at.switch_page("pages/home.py").run()
    at.button(key="act_demo_run").click().run()
    assert not at.exception and not at.error
    _assert_same(at, before)
    second = at.session_state["demo_result"]
    assert second is not first
    at.button(key="act_demo_open_1").click().run()
    assert at.session_state["workspace"] is second.workspace


def test_a_switch_cut_short_is_completed_by_the_next_run(after_demo, monkeypatch) -> None:
    """Streamlit can end a callback at any session-state access: half the keys swapped, the rest on the next run."""
    import streamlit as st

    from components import workspaces
    from components.state import is_workspace_key

    at, before = after_demo
    result = at.session_state["demo_result"]
    complete = workspaces.finish_pending_switch

    calls: list[str] = []

    def cut_short_once() -> None:
        """The callback's call stops after deleting half the keys; app.py's call, before the page, completes it."""
        calls.append("call")
        if len(calls) > 1:
            return complete()
        ss = st.session_state
        keys = [k for k in list(ss.keys()) if is_workspace_key(str(k))]
        for key in keys[: len(keys) // 2]:
            del ss[key]

    monkeypatch.setattr(workspaces, "finish_pending_switch", cut_short_once)
    at.sidebar.radio(key="workspace_choice").set_value("demo").run()
    assert not at.exception, at.exception
    assert len(calls) == 2
    assert at.session_state["workspace"] is result.workspace
    assert at.session_state["table"].name == "loan_synthetic.csv"
    at.sidebar.radio(key="workspace_choice").set_value("yours").run()
    _assert_same(at, before)
