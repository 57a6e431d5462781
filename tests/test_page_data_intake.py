"""AppTest of the Data & groups page on raw uploads: what was read is said, proposals are accepted in one click.

Uploads the public files as shipped from ``../shared/datasets`` (adult.data,
SouthGermanCredit.asc, the four heart site files together) and generated
bad files, and drives the page by widget keys.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"


@pytest.fixture(autouse=True)
def _registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "registry.sqlite3"))
    if not (DATA / "uci_adult" / "adult.data").exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the shared datasets are missing at {DATA}")
        pytest.skip("../shared/datasets not available")


def _upload(files: list[tuple[str, bytes]]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at = at.switch_page("pages/data_groups.py").run()
    at.radio(key="dg_source_mode").set_value("Upload a file").run()
    at.file_uploader(key="up_table").set_value([(n, d, "application/octet-stream") for n, d in files]).run()
    assert not at.exception, at.exception
    return at


def _report(at: AppTest) -> str:
    # The read report is Markdown with every special character escaped; compare the plain text.
    return " ".join(m.value.replace("\\", "") for m in at.markdown)


def test_adult_data_as_shipped_header_decision_and_missing_codes(tmp_path):
    at = _upload([("adult.data", (DATA / "uci_adult" / "adult.data").read_bytes())])
    assert not at.error, [e.value for e in at.error]
    text = _report(at)
    assert "First row: data, not a header" in text and "Columns named col_1 … col_15" in text
    assert "Proposed missing codes (not applied yet): '?' in col_2 (1,836)" in text
    assert at.session_state["table"].frame.shape == (32_561, 15)
    assert at.session_state["table"].frame.isna().sum().sum() == 0  # proposed, not applied
    at.button(key="act_accept_codes").click().run()
    assert not at.exception and not at.error
    frame = at.session_state["table"].frame
    assert int(frame.isna().any(axis=1).sum()) == 2_399  # PROVENANCE: rows containing a "?"
    assert "Missing codes applied: '?' in col_2 (1,836)" in _report(at)
    assert sorted(at.multiselect(key="dg_missing_codes").value) == ["'?' in col_14", "'?' in col_2", "'?' in col_7"]


def test_pasted_names_and_explicit_header_choice():
    at = _upload([("adult.csv", (DATA / "uci_adult" / "adult.data").read_bytes())])
    names = "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex," \
            "capital-gain,capital-loss,hours-per-week,native-country,income"
    at.text_input(key="dg_col_names").set_value(names).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    frame = at.session_state["table"].frame
    assert list(frame.columns)[:3] == ["age", "workclass", "fnlwgt"] and len(frame) == 32_561
    cols = at.session_state["columns_table"]
    assert list(cols["column"])[:2] == ["age", "workclass"]  # the column table follows the re-read
    at.selectbox(key="dg_header").set_value("is the header").run()
    assert "as chosen in Read options" in _report(at)


def test_south_german_credit_roles_proposed_and_accepted():
    at = _upload([("SouthGermanCredit.asc", (DATA / "south_german_credit" / "SouthGermanCredit.asc").read_bytes())])
    assert not at.error, [e.value for e in at.error]
    assert "Delimiter: runs of spaces" in _report(at)
    table = at.session_state["columns_table"]
    roles = dict(zip(table["column"], table["role"]))
    assert roles["laufkont"] == "numeric"  # inferred; the codes 1-4 are only proposed
    proposals = next(df.value for df in at.dataframe if "proposed" in df.value.columns)
    assert {"laufkont", "sparkont", "rate"} <= set(proposals["column"])
    assert "laufzeit" not in set(proposals["column"])  # 33 durations: numeric stays
    at.button(key="act_accept_roles").click().run()
    assert not at.exception
    table = at.session_state["columns_table"]
    roles = dict(zip(table["column"], table["role"]))
    assert roles["laufkont"] == "categorical" and roles["laufzeit"] == "numeric"


def test_four_heart_files_stacked_in_one_upload():
    files = [(f"processed.{s}.data", (DATA / "uci_heart_disease" / f"processed.{s}.data").read_bytes())
             for s in ("cleveland", "hungarian", "switzerland", "va")]
    at = _upload(files)
    assert not at.error, [e.value for e in at.error]
    frame = at.session_state["table"].frame
    assert frame.shape == (920, 15) and frame["source_file"].nunique() == 4
    assert "Stacked 4 files" in _report(at)
    at.button(key="act_accept_roles").click().run()  # cp (col_3) codes 1-4 -> categorical, among others
    assert dict(zip(at.session_state["columns_table"]["column"], at.session_state["columns_table"]["role"]))[
        "col_3"] == "categorical"
    at.button(key="act_accept_codes").click().run()
    assert not at.exception and not at.error
    assert pd.api.types.is_float_dtype(at.session_state["table"].frame["col_12"].dtype)  # ca, once "?" is missing
    # The re-read refreshed the column table: ca's new type is shown, the accepted role of cp is kept.
    cols = at.session_state["columns_table"].set_index("column")
    assert cols.loc["col_12", "dtype"] == "float64" and cols.loc["col_3", "role"] == "categorical"
    assert round(cols.loc["col_12", "missing_share"] * 920) == 4 + 291 + 118 + 198  # PROVENANCE, ca per site


def test_mismatched_stack_and_gzip_and_sheets_are_visible_text():
    at = _upload([("a.csv", b"x,y\n1,2\n3,4\n"), ("b.csv", b"x,z\n1,2\n3,4\n")])
    assert any("does not have the same columns" in e.value for e in at.error)
    import gzip

    at.file_uploader(key="up_table").set_value(("g.csv", gzip.compress(b"x,y\n1,2\n3,4\n"), "text/csv")).run()
    assert not at.error and "gzip-compressed" in _report(at)
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as w:
        pd.DataFrame().to_excel(w, sheet_name="Cover", index=False)
        pd.DataFrame({"a": range(30), "b": ["x", "y"] * 15}).to_excel(w, sheet_name="Data", index=False)
    at.file_uploader(key="up_table").set_value(("book.xlsx", buf.getvalue(), "application/octet-stream")).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="dg_sheet").options == ["(first sheet with data)", "Cover (0 × 0)", "Data (31 × 2)"]
    assert "Read sheet 'Data'" in _report(at)
    at.selectbox(key="dg_sheet").set_value("Cover").run()
    assert any("Sheet 'Cover' of 'book.xlsx' is empty" in e.value for e in at.error)
    at.file_uploader(key="up_table").set_value(("t.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 64,
                                                "application/octet-stream")).run()
    assert any("legacy Excel" in e.value for e in at.error)


def test_training_refusal_names_the_class_counts():
    rows = "\n".join(f"{i},{'yes' if i == 7 else 'no'}" for i in range(300))
    at = _upload([("one.csv", ("x,label\n" + rows).encode())])
    at.text_input(key="dg_new_name").set_value("t")
    at.selectbox(key="dg_new_col").set_value("label").run()
    at.selectbox(key="dg_new_pos").set_value("yes").run()
    at.button(key="act_add_target").click().run()
    at.button(key="act_train").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "class 'yes' has only 1 of the 300 eligible training rows" in errors, errors


def test_few_held_out_positives_warn_beside_the_metrics():
    rows = "\n".join(f"{i % 97},{'yes' if i % 100 == 0 else 'no'}" for i in range(2_000))  # 20 positives
    at = _upload([("rare.csv", ("x,label\n" + rows).encode())])
    at.text_input(key="dg_new_name").set_value("t")
    at.selectbox(key="dg_new_col").set_value("label").run()
    at.selectbox(key="dg_new_pos").set_value("yes").run()
    at.button(key="act_add_target").click().run()
    at.button(key="act_train").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    warnings = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "The held-out split has only 5 row(s) of class 'yes' (fewer than 20)" in warnings
