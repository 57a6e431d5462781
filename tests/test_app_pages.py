"""Streamlit AppTest for every page: smoke runs and behaviour driven by widget keys."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import texts

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["pages/home.py", "pages/data_groups.py", "pages/fragility.py", "pages/receipts.py", "pages/runs.py"]


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path


def _app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)


def _page(page: str) -> AppTest:
    at = _app().run()
    assert not at.exception, at.exception
    return at.switch_page(page).run()


def _texts(at: AppTest, kind: str) -> list[str]:
    return texts(at, kind)  # as rendered: user strings are Markdown-escaped


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_without_exception(page: str, registry_path: Path) -> None:
    at = _page(page)
    assert not at.exception, at.exception
    assert not at.error, _texts(at, "error")
    assert at.title, "each page shows a title"


def test_home_says_what_the_tool_answers(registry_path: Path) -> None:
    at = _app().run()
    body = " ".join(_texts(at, "markdown"))
    for audit in ("Fragility", "Transport", "Receipts"):
        assert audit in body
    assert "No saved runs yet." in _texts(at, "info")
    # The bundled sample is ready on first start.
    assert at.metric[0].value == "loan_synthetic.csv"


def test_sample_is_ready_and_training_saves_a_run(registry_path: Path) -> None:
    at = _page("pages/data_groups.py")
    # The synthetic sample is loaded on first visit, with its presets.
    assert any("loan_synthetic.csv" in c for c in _texts(at, "caption"))
    assert at.selectbox(key="dg_domain").value == "year"
    assert at.selectbox(key="dg_key").value == "application_id"
    at.selectbox(key="dg_model_kind").set_value("logistic_regression")
    at.button(key="act_train").click().run()
    assert not at.exception, at.exception
    assert not at.error, _texts(at, "error")
    success = " ".join(_texts(at, "success"))
    assert "Model ready: logistic_regression" in success and "saved as run" in success
    origin = next(df.value for df in at.dataframe if "raw_column" in df.value.columns)
    # One-hot columns of a categorical variable join their variable's group.
    region_rows = origin[origin["raw_column"] == "region"]
    assert len(region_rows) >= 2 and region_rows["group"].nunique() == 1
    runs = RunRegistry(registry_path).list_runs()
    assert list(runs["status"]) == ["done"] and list(runs["model"]) == ["logistic_regression"]
    # The registry survives a restart: a new app session lists the run on Home.
    home = _app().run()
    listed = next(df.value for df in home.dataframe if "run_id" in df.value.columns)
    assert runs["run_id"].iloc[0] in set(listed["run_id"])


def test_bad_target_definition_shows_message_and_keeps_inputs(registry_path: Path) -> None:
    at = _page("pages/data_groups.py")
    before = [t["name"] for t in at.session_state["targets"]]
    at.radio(key="dg_new_kind").set_value("expression").run()
    at.text_input(key="dg_new_name").set_value("broken")
    at.text_input(key="dg_new_expr").set_value("no_such_column > 3")
    at.button(key="act_add_target").click().run()
    assert not at.exception
    errors = " ".join(_texts(at, "error"))
    assert "no_such_column" in errors
    # Nothing the user entered is lost.
    assert at.text_input(key="dg_new_expr").value == "no_such_column > 3"
    assert at.text_input(key="dg_new_name").value == "broken"
    assert [t["name"] for t in at.session_state["targets"]] == before


def test_malformed_upload_shows_clear_error(registry_path: Path) -> None:
    at = _page("pages/data_groups.py")
    at.radio(key="dg_source_mode").set_value("Upload a file").run()
    at.file_uploader(key="up_table").set_value(("dup.csv", b"a,a,b\n1,2,3\n4,5,6\n", "text/csv")).run()
    assert not at.exception
    assert any("duplicate column names" in e for e in _texts(at, "error"))


def test_upload_then_train_single_class_is_refused(registry_path: Path) -> None:
    at = _page("pages/data_groups.py")
    at.radio(key="dg_source_mode").set_value("Upload a file").run()
    rows = "\n".join(f"{i},{i % 7},yes" for i in range(60))
    at.file_uploader(key="up_table").set_value(("one.csv", ("x,z,label\n" + rows).encode(), "text/csv")).run()
    assert not at.exception and not at.error, _texts(at, "error")
    at.text_input(key="dg_new_name").set_value("label_yes")
    at.selectbox(key="dg_new_col").set_value("label").run()
    at.button(key="act_add_target").click().run()
    errors = " ".join(_texts(at, "error"))
    assert "label" in errors and ("single" in errors.lower() or "one class" in errors.lower()), errors


def test_group_rules_assign_groups(registry_path: Path) -> None:
    at = _page("pages/data_groups.py")
    at.text_area(key="dg_group_rules").set_value("prefix: n_ -> counts\nregex: income -> money")
    at.button(key="act_apply_rules").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    table = at.session_state["columns_table"]
    groups = dict(zip(table["column"], table["group"]))
    assert groups["n_open_accounts"] == "counts" and groups["n_delinquencies_2y"] == "counts"
    assert groups["monthly_income"] == "money"


def _group_tools(at: AppTest):
    (box,) = [e for e in at.expander if e.label == "Assign groups by rules or CSV"]
    return box


def test_group_tools_stay_open_through_an_upload_and_apply(registry_path: Path) -> None:
    """The "Assign groups" expander the user opened stays open through the reruns of a
    column,group CSV upload and its Apply (its state is kept on the server), and stays closed for one who did not."""
    at = _page("pages/data_groups.py")
    assert _group_tools(at).proto.expanded is False  # closed until asked for
    at.session_state["view_dg_group_tools"] = True  # what the browser sends when the user opens it
    at.run()
    assert _group_tools(at).proto.expanded is True
    csv = b"column,group\nn_open_accounts,counts\nn_delinquencies_2y,counts\n"
    at.file_uploader(key="up_group_csv").set_value(("groups.csv", csv, "text/csv")).run()
    assert not at.exception and not at.error, _texts(at, "error")
    assert _group_tools(at).proto.expanded is True, "the upload's rerun closed the expander"
    at.button(key="act_apply_csv").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    groups = dict(zip(at.session_state["columns_table"]["column"], at.session_state["columns_table"]["group"]))
    assert groups["n_open_accounts"] == groups["n_delinquencies_2y"] == "counts"
    assert _group_tools(at).proto.expanded is True, "Apply CSV's rerun closed the expander"
    at.session_state["view_dg_group_tools"] = False  # the user closes it: it stays closed
    at.run()
    assert _group_tools(at).proto.expanded is False
