"""Private by default: a Fragility run stores record keys and true labels only when the user opts in.

The report's footer says exactly which of the two it holds, read from the run.
"""
from __future__ import annotations

import pandas as pd
import pytest

from audit_core.data.samples import load_sample
from audit_core.runs.bundle import export_bundle
from audit_core.runs.privacy import CASE_DATA, case_data_held, without_case_data
from audit_core.runs.registry import RunRegistry
from components.report.document import contents_note, render_report
from runs_data import save_fragility_run, save_model_run


def test_keys_become_case_numbers_in_every_table_and_labels_go() -> None:
    tables = {"delta": pd.DataFrame({"key": ["b", "a", "zz"], "g": [1.0, 2.0, 3.0]}),
              "certificates": pd.DataFrame({"key": ["a", "b"], "y_true": [1, 0], "y_hat": [1, 1]}),
              "metrics": pd.DataFrame({"metric": ["auroc"], "value": [0.7]})}
    out = without_case_data(tables)
    # the certificates number the cases (a -> #1, b -> #2); a key only in another table comes after
    assert out["certificates"].to_dict("list") == {"key": ["#1", "#2"], "y_hat": [1, 1]}
    assert out["delta"]["key"].tolist() == ["#2", "#1", "#3"]
    pd.testing.assert_frame_equal(out["metrics"], tables["metrics"])
    assert tables["certificates"]["key"].tolist() == ["a", "b"] and "y_true" in tables["certificates"]  # input unchanged


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[RunRegistry, dict[str, str]]:
    reg = RunRegistry(tmp_path_factory.mktemp("priv") / "reg.sqlite3")
    return reg, {"private": save_fragility_run(reg, max_cases=20),
                 "opted_in": save_fragility_run(reg, max_cases=20, store_case_data=True),
                 "model": save_model_run(reg, bootstrap=10)}


def _record_keys() -> set[str]:
    frame, info = load_sample("loan_synthetic")
    return set(frame[info.key_column].astype(str))


def test_a_run_saved_without_opt_in_holds_no_record_key_or_label(runs) -> None:
    reg, ids = runs
    record = reg.load(ids["private"])
    assert record.manifest[CASE_DATA] is False and not case_data_held(record.tables, record.manifest)
    for name, df in record.tables.items():
        assert "y_true" not in df.columns, name
        if "key" in df.columns:
            assert df["key"].str.fullmatch(r"#\d+").all(), name
    # nowhere in the stored run: not in a table cell, not in the manifest or config (the bundle holds them all)
    text = export_bundle(record).decode()
    cells = {str(v) for df in record.tables.values() for col in df.columns if df[col].dtype == object
             for v in df[col]}
    keys = _record_keys()
    assert not cells & keys
    assert not [k for k in keys if f'"{k}"' in text]
    assert len(record.tables["certificates"]) == 20


def test_a_run_saved_with_opt_in_holds_keys_and_labels(runs) -> None:
    reg, ids = runs
    record = reg.load(ids["opted_in"])
    assert record.manifest[CASE_DATA] is True and case_data_held(record.tables, record.manifest)
    certificates = record.tables["certificates"]
    assert "y_true" in certificates.columns and set(certificates["key"]) <= _record_keys()
    assert record.config["audit"]["store_case_data"] is True


def test_the_report_footer_says_what_the_report_holds(runs) -> None:
    reg, ids = runs
    head = "This report holds the run's result tables, manifest, configuration and model specification"
    expected = {
        "private": f"{head}. Its per-case tables show certified cases by number (#1, #2, ...), not by record key, "
                   "and no true labels; it holds no rows of the audited data.",
        "opted_in": f"{head}. Its per-case tables (the first 50 rows of each) show certified cases by their record "
                    "keys, with their true labels: the run was saved with them on request. It holds no other values "
                    "of the audited data.",
        "model": f"{head}: no record keys, no true labels and no rows of the audited data.",
    }
    for which, run_id in ids.items():
        record = reg.load(run_id)
        assert contents_note(record) == expected[which], which
        html = render_report(record, generated_at="2024-01-01T00:00:00+00:00")
        assert f"<p class='note' id='contents-note'>{expected[which].replace(chr(39), '&#39;')}</p>" in html, which
        keys_in_report = [k for k in list(record.tables["certificates"]["key"])[:5]] if which != "model" else []
        assert all(k in html for k in keys_in_report)  # what the footer says is what is there
        assert "never the audited data" not in html


def test_a_run_saved_before_the_choice_counts_its_labels() -> None:
    old = {"certificates": pd.DataFrame({"key": ["A1"], "y_true": [1]})}
    assert case_data_held(old, {}) and not case_data_held({"m": pd.DataFrame({"v": [1]})}, {})
    assert not case_data_held(old, {CASE_DATA: False})
