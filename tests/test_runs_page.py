"""AppTest of the Runs & reports page: browse, open without recomputing, compare, delete, import."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit_core.runs.bundle import export_bundle
from audit_core.runs.registry import RunRegistry
from tests.runs_data import save_custom_run, save_model_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunRegistry:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return RunRegistry(path)


def _frame(at: AppTest, column: str):
    """The first displayed dataframe with ``column`` (display frames are not addressable by key)."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with column {column!r}")


def _runs_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception, at.exception
    return at.switch_page("pages/runs.py").run()


def test_empty_registry(reg: RunRegistry) -> None:
    at = _runs_page()
    assert not at.exception and not at.error
    assert at.title[0].value == "Runs & reports"
    assert any("No saved runs yet" in i.value for i in at.info)


def test_open_compare_and_delete(reg: RunRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    model_id = save_model_run(reg, bootstrap=10)
    a = save_custom_run(reg, verdicts=("pass", "fail", "pass"))
    b = save_custom_run(reg, verdicts=("pass", "pass", "fail"))

    # Opening a run must not recompute anything.
    import audit_core.runs.execute as audits

    monkeypatch.setattr(audits, "run_config", lambda *a, **k: pytest.fail("recomputed"))
    at = _runs_page()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="ru_open").value == b  # newest first
    at.selectbox(key="ru_open").set_value(model_id).run()
    assert not at.exception
    summary = _frame(at, "item")
    assert "held_out_auroc" in set(summary["item"])
    assert at.get("plotly_chart") and len(at.get("plotly_chart")) == 2  # metrics + groups, from stored tables

    # Filters
    at.multiselect(key="ru_kind").set_value(["custom_audit"]).run()
    assert set(_frame(at, "n_tables")["run_id"]) == {a, b}

    # Compare: verdict changes between the two custom_audit runs
    at.selectbox(key="ru_cmp_a").set_value(a)
    at.selectbox(key="ru_cmp_b").set_value(b).run()
    # the summary opens it: changes by direction (calibration fail -> pass, abstention pass -> fail), the gate
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Verdicts better"] == "1" and metrics["Verdicts worse"] == "1"
    assert metrics["Verdicts changed (no order)"] == "0" and metrics["Verdicts only in one run"] == "0"
    assert any("Release gate" in m.value for m in at.markdown)
    assert "All verdict changes (2 row(s))" in [e.label for e in at.expander]  # the rows, on demand
    changes = _frame(at, "verdict_a")
    assert sorted(changes["check"]) == ["abstention", "calibration"]
    assert dict(zip(changes["check"], changes["change"])) == {"abstention": "worse", "calibration": "better"}

    # Delete with a confirmation step
    at.selectbox(key="ru_open").set_value(a).run()
    at.button(key="act_ru_delete").click().run()
    assert any("cannot be undone" in w.value for w in at.warning)
    assert len(reg.list_runs()) == 3  # not yet
    at.button(key="act_ru_confirm_delete").click().run()
    assert not at.exception
    assert a not in set(reg.list_runs()["run_id"])


def test_import_bundle_errors_are_messages(reg: RunRegistry, tmp_path: Path) -> None:
    other = RunRegistry(tmp_path / "other.sqlite3")
    run_id = save_custom_run(other)
    data = export_bundle(other.load(run_id))
    save_custom_run(reg)
    at = _runs_page()
    from audit_core.runs.bundle import import_bundle

    # The uploader cannot be driven by AppTest; the button calls this same function.
    assert import_bundle(reg, data) == run_id
    at.run()
    assert run_id in set(_frame(at, "n_tables")["run_id"])
    assert not at.exception


def test_pdf_summary_without_chromium_says_so(reg: RunRegistry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AUDIT_CHROMIUM", str(tmp_path / "no-chromium"))
    save_custom_run(reg)
    at = _runs_page()
    assert not at.exception, at.exception
    assert any("PDF summary: Chromium is not installed on this server" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "act_ru_pdf"]


def test_pdf_summary_button_prints_on_demand(reg: RunRegistry) -> None:
    from tests.browser import chromium_path

    chromium_path()
    save_custom_run(reg)
    at = _runs_page()
    at.button(key="act_ru_pdf").click().run()
    assert not at.exception, at.exception
    assert not [b for b in at.button if b.key == "act_ru_pdf"]  # replaced by the download of the printed PDF
    assert not at.error


def test_exports_are_built_when_clicked_not_when_a_run_opens(reg: RunRegistry,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a run builds none of its exports (the HTML report takes seconds); each is made on click."""
    import components.widgets.runs as runs_widgets

    run_id = save_model_run(reg, bootstrap=10)
    built: list[str] = []
    for name in ("render_report", "export_bundle", "parquet_zip"):
        real = getattr(runs_widgets, name)
        monkeypatch.setattr(runs_widgets, name,
                            lambda record, *a, _real=real, _name=name, **k: built.append(_name) or _real(record, *a, **k))
    at = _runs_page()
    assert not at.exception, at.exception
    assert at.selectbox(key="ru_open").value == run_id
    at.run()
    assert not at.exception, at.exception
    assert built == [], f"built on render: {built}"
    labels = {str(b.proto.label): b.proto for b in at.get("download_button")}
    assert {"HTML report", "JSON bundle", "Parquet tables (zip)"} <= set(labels)
    assert all(labels[k].HasField("deferred_file_id") for k in ("HTML report", "JSON bundle", "Parquet tables (zip)"))
    # what a click would serve: the deferred callables give the report, bundle and zip of the opened run
    record = reg.load(run_id)
    html = runs_widgets._report_bytes(run_id, record.updated_at, str(reg.path)).decode("utf-8")
    assert built == ["render_report"] and run_id in html and html.lstrip().lower().startswith("<!doctype html")


def test_a_run_whose_tables_cannot_share_one_zip_says_why_on_the_page(reg: RunRegistry) -> None:
    """Two tables that would be written as one file: the zip button is disabled with the reason, the run opens."""
    import hashlib

    import pandas as pd

    taken = f"a_b-{hashlib.sha256(b'a/b').hexdigest()[:8]}"
    run_id = reg.save(audit_kind="custom", dataset_name="d", dataset_fingerprint="f" * 64, grouping_hash=None,
                      model_spec={}, config={}, manifest={},
                      tables={"a/b": pd.DataFrame({"v": [1]}), taken: pd.DataFrame({"v": [2]})})
    at = _runs_page()
    assert not at.exception, at.exception
    assert at.selectbox(key="ru_open").value == run_id
    button = next(b.proto for b in at.get("download_button") if b.proto.label == "Parquet tables (zip)")
    assert button.disabled and button.help.startswith(f"Cannot export the tables 'a/b' and '{taken}' of this run")
