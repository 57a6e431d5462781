"""Session state across reruns and pages (AppTest and a static scan): nothing typed is lost, nothing shown is stale.

* A rerun never pushes a widget value the user did not change back to the
  browser (``set_value``); the old ``keep_widget_state`` re-assigned every page
  widget on every run, which is how a late rerun undid a typed value
  (``tests/test_browser_state.py`` shows the race in Chromium).
* Widget values survive a page switch (``persist_state="session"``), and every
  persistent widget declares it (a static scan of the source).
* Results are tied to what they were computed from: a regrouped model makes a
  Fragility audit stale (notice, exports off), a changed declaration makes the
  model stale (Fragility's Run off), and Transport's declaration widgets follow
  the declaration on Data & groups, with the tolerances unlocked.
* A refused Train leaves no progress bar behind.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import texts
from fragility_data import loan_workspace

ROOT = Path(__file__).resolve().parents[1]
PREFIXES = ("dg_", "fr_", "tr_", "rc_", "ru_")
KINDS = ("number_input", "selectbox", "multiselect", "text_input", "text_area", "checkbox", "radio")


def _app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)


def _pushed(at: AppTest) -> list[str]:
    """Keys of persistent widgets whose value this run sent to the browser (``set_value``)."""
    out = []
    for kind in KINDS:
        for w in getattr(at, kind):
            if w.key and w.key.startswith(PREFIXES) and getattr(w.proto, "set_value", False):
                out.append(w.key)
    return out


@pytest.mark.parametrize("page, key, value", [
    ("pages/transport.py", "tr_refits", 2),
    ("pages/data_groups.py", "dg_seed", 3),
])
def test_a_rerun_pushes_no_value_the_user_did_not_change(registry_path, page, key, value):
    at = _app().run()
    at.switch_page(page).run()
    at.run()  # a plain rerun: nothing changed, nothing is pushed
    assert not at.exception and _pushed(at) == []
    at.number_input(key=key).set_value(value).run()  # the user edits one field
    assert not at.exception
    assert _pushed(at) == [], "a rerun re-sent widget values: a late rerun would undo what the user typed"
    assert at.number_input(key=key).value == value


def test_widget_values_survive_a_page_switch(registry_path):
    at = _app().run()
    at.switch_page("pages/transport.py").run()
    at.number_input(key="tr_sets").set_value(2)
    at.multiselect(key="tr_mappings").set_value(["platt"]).run()
    at.switch_page("pages/data_groups.py").run()
    at.number_input(key="dg_seed").set_value(7)
    at.text_input(key="dg_eligibility").set_value("age >= 21").run()
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/transport.py").run()
    assert at.number_input(key="tr_sets").value == 2 and at.multiselect(key="tr_mappings").value == ["platt"]
    at.switch_page("pages/data_groups.py").run()
    assert at.number_input(key="dg_seed").value == 7
    assert at.text_input(key="dg_eligibility").value == "age >= 21"


def _widget_calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in KINDS
                + ("date_input", "slider", "select_slider", "toggle", "pills", "segmented_control")):
            continue
        key = next((k.value for k in node.keywords if k.arg == "key"), None)
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            name = key.value
        elif isinstance(key, ast.JoinedStr) and key.values and isinstance(key.values[0], ast.Constant):
            name = str(key.values[0].value)
        else:
            continue
        if name.startswith(PREFIXES):
            yield node, name


def test_every_persistent_widget_declares_persist_state():
    files = [ROOT / "app.py", *sorted((ROOT / "components").rglob("*.py")), *sorted((ROOT / "pages").glob("*.py"))]
    missing, seen = [], 0
    for path in files:
        for node, name in _widget_calls(path):
            seen += 1
            persist = next((k.value for k in node.keywords if k.arg == "persist_state"), None)
            if not (isinstance(persist, ast.Name) and persist.id == "PERSIST"):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert seen > 60, seen  # the scan sees the widgets
    assert missing == [], "widgets with a page prefix must pass persist_state=PERSIST: " + ", ".join(missing)


def test_scan_flags_a_widget_without_persist_state(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('st.number_input("x", key="tr_x")\nst.selectbox("y", [1], key=f"dg_{n}", persist_state=PERSIST)\n'
                   'st.button("b", key="act_x")\n')
    names = {name: any(k.arg == "persist_state" for k in node.keywords) for node, name in _widget_calls(bad)}
    assert names == {"tr_x": False, "dg_": True}


def test_transport_defaults_follow_the_declaration(registry_path):
    at = _app().run()
    at.switch_page("pages/transport.py").run()
    assert at.selectbox(key="tr_domain").value == "year"
    at.button(key="act_tr_lock").click().run()
    assert at.number_input(key="tr_tol_auroc").disabled
    # a new declaration on Data & groups: the domain is now the region
    at.switch_page("pages/data_groups.py").run()
    at.selectbox(key="dg_domain").set_value("region").run()
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="tr_domain").value == "region"
    assert not at.number_input(key="tr_tol_auroc").disabled, "tolerances locked for another declaration"
    assert at.button(key="act_tr_run").disabled
    # another table: its declaration (no domain declared: the first column), its targets
    at.switch_page("pages/data_groups.py").run()
    at.selectbox(key="dg_sample").set_value("breast_cancer").run()
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    names = [t["name"] for t in at.session_state["targets"]]
    assert at.multiselect(key="tr_targets").value[:1] == names[:1] and names


def _fragility_page(ws) -> AppTest:
    at = _app().run()
    at.session_state["workspace"] = ws
    return at.switch_page("pages/fragility.py").run()


def test_a_regrouped_model_makes_the_fragility_audit_stale(registry_path):
    ws, _ = loan_workspace()
    at = _fragility_page(ws)
    at.number_input(key="fr_max_cases").set_value(20)
    at.button(key="act_fr_run").click().run()
    assert not at.exception and any("Certified 20 cases" in s for s in texts(at, "success"))
    downloads = [b for b in at.get("download_button")]
    assert downloads and not any(b.proto.disabled for b in downloads)
    # the user regroups the evidence: the audit was computed under another grouping
    raw = dict(ws.grouping.raw_map())
    first = next(iter(raw))
    at.session_state["workspace"] = ws.with_grouping({**raw, first: "merged"})
    at.run()
    assert not at.exception
    warnings = " ".join(texts(at, "warning"))
    assert "computed on another model or grouping" in warnings
    assert all(b.proto.disabled for b in at.get("download_button")), "exports of a stale audit must be off"
    assert not any("saved as run" in s for s in texts(at, "success"))  # its run id is not shown as current


def test_a_changed_declaration_makes_the_model_stale(registry_path):
    at = _app().run()
    at.switch_page("pages/data_groups.py").run()
    at.button(key="act_train").click().run()
    assert not at.exception and any("Model ready" in s for s in texts(at, "success"))
    at.text_input(key="dg_eligibility").set_value("age >= 30").run()
    assert any("computed on an earlier declaration" in w for w in texts(at, "warning"))
    assert not any("Model ready" in s for s in texts(at, "success"))
    at.switch_page("pages/fragility.py").run()
    assert not at.exception
    assert at.button(key="act_fr_run").disabled
    assert any("computed on an earlier declaration" in w for w in texts(at, "warning"))
    # back to the declaration the model was trained on: the model is current again
    at.switch_page("pages/data_groups.py").run()
    at.text_input(key="dg_eligibility").set_value("").run()
    at.switch_page("pages/fragility.py").run()
    assert not at.button(key="act_fr_run").disabled


def test_a_refused_train_leaves_no_progress_bar(registry_path):
    at = _app().run()
    at.switch_page("pages/data_groups.py").run()
    at.radio(key="dg_source_mode").set_value("Upload a file").run()
    rows = "\n".join(f"{i},{i % 7},{'yes' if i == 0 else 'no'}" for i in range(300))
    at.file_uploader(key="up_table").set_value(("one_pos.csv", ("x,z,label\n" + rows).encode(), "text/csv")).run()
    at.text_input(key="dg_new_name").set_value("label_yes")
    at.selectbox(key="dg_new_col").set_value("label").run()
    at.selectbox(key="dg_new_pos").set_value("yes").run()
    at.button(key="act_add_target").click().run()
    assert not at.exception and not texts(at, "error"), texts(at, "error")
    at.button(key="act_train").click().run()
    assert not at.exception
    assert texts(at, "error"), "training on one positive row is refused"
    assert len(at.get("progress")) == 0, "the progress bar of a refused Train stays on the page"
