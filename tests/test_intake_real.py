"""Raw public files as they are shipped, read by content (``../shared/datasets``, never copied).

Every expected figure below comes from the folder's PROVENANCE.md (shapes,
label counts, missing-value counts), not from the reader's output.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.data.intake import ReadOptions, read_path, read_tables

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"

ADULT_NAMES = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
               "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
               "income")
HEART = ("cleveland", "hungarian", "switzerland", "va")
HEART_NAMES = ("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope",
               "ca", "thal", "num")
GERMAN_HEADER = ("laufkont laufzeit moral verw hoehe sparkont beszeit rate famges buerge wohnzeit verm alter "
                 "weitkred wohn bishkred beruf pers telef gastarb kredit").split()


@pytest.fixture(autouse=True)
def _datasets_present() -> None:
    if not (DATA / "uci_adult" / "adult.data").exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the shared datasets are missing at {DATA}: CI must have ../shared/datasets beside the project")
        pytest.skip("../shared/datasets not available")


def _accept_all(path: Path, **opts) -> tuple:
    """Read, then read again with every proposed missing code accepted (the page's one click)."""
    first = read_path(path, options=ReadOptions(**opts))
    codes = tuple(p.key for p in first.report.missing_proposals)
    return first, read_path(path, options=ReadOptions(missing_codes=codes, **opts))


def test_adult_data_as_shipped():
    first, t = _accept_all(DATA / "uci_adult" / "adult.data")
    # PROVENANCE: 32,561 rows x 15 columns, comma plus space, no header, an empty last line.
    assert t.frame.shape == (32_561, 15) and first.frame.shape == (32_561, 15)
    assert t.report.header is False and "data, not a header" in t.report.header_note
    assert list(t.frame.columns) == [f"col_{i}" for i in range(1, 16)] and t.report.names == "generated"
    assert t.delimiter == ","
    # "?" in workclass, occupation, native-country only: proposed, not applied, on the first read.
    assert {p.column for p in first.report.missing_proposals} == {"col_2", "col_7", "col_14"}
    assert {p.code for p in first.report.missing_proposals} == {"?"}
    assert first.frame.isna().sum().sum() == 0
    # Accepted: 2,399 rows contain one (PROVENANCE), nothing else is missing.
    assert int(t.frame.isna().any(axis=1).sum()) == 2_399
    assert set(t.frame.columns[t.frame.isna().any()]) == {"col_2", "col_7", "col_14"}
    # Labels without the space after the comma: <=50K 24,720, >50K 7,841.
    assert t.frame["col_15"].value_counts().to_dict() == {"<=50K": 24_720, ">50K": 7_841}
    assert t.frame["col_2"].iloc[0] == "State-gov"
    for col in ("col_1", "col_3", "col_5", "col_11", "col_12", "col_13"):
        assert pd.api.types.is_integer_dtype(t.frame[col].dtype), col
    assert t.frame["col_1"].iloc[0] == 39


def test_adult_data_with_pasted_names_and_renamed_csv():
    data = (DATA / "uci_adult" / "adult.data").read_bytes()
    from audit_core.data.intake import read_table

    t = read_table(data, name="adult.csv", options=ReadOptions(column_names=ADULT_NAMES, missing_codes=(
        ("workclass", "?"), ("occupation", "?"), ("native-country", "?"))))
    # Renamed to .csv it must not take its first record as the header: all 32,561 rows stay.
    assert t.frame.shape == (32_561, 15) and tuple(t.frame.columns) == ADULT_NAMES
    assert t.report.names == "given" and t.frame["age"].iloc[0] == 39
    assert int(t.frame.isna().any(axis=1).sum()) == 2_399


def test_south_german_credit_as_shipped():
    t = read_path(DATA / "south_german_credit" / "SouthGermanCredit.asc")
    # Whitespace separated with a header of German names; 1,000 rows x 21; no missing.
    assert t.delimiter == " " and "runs of spaces" in t.report.delimiter_note
    assert t.report.header is True and list(t.frame.columns) == GERMAN_HEADER
    assert t.frame.shape == (1_000, 21)
    assert t.frame.isna().sum().sum() == 0 and not t.report.missing_proposals
    assert all(pd.api.types.is_integer_dtype(d) for d in t.frame.dtypes)
    assert t.frame["kredit"].value_counts().to_dict() == {1: 700, 0: 300}
    assert t.report.warnings == ()


def test_statlog_german_data_as_shipped():
    t = read_path(DATA / "statlog_german_credit" / "german.data")
    # Space separated, no header, 1,000 rows x 21 (20 attributes + target), no missing.
    assert t.delimiter == " " and t.report.header is False
    assert t.frame.shape == (1_000, 21) and t.frame.columns[-1] == "col_21"
    assert t.frame.isna().sum().sum() == 0
    assert t.frame["col_21"].value_counts().to_dict() == {1: 700, 2: 300}
    assert t.frame["col_1"].iloc[0] == "A11"


# PROVENANCE "Missing values (?), by column" (the named ones; "and others" are not asserted).
HEART_MISSING = {
    "cleveland": {"ca": 4, "thal": 2},
    "hungarian": {"slope": 190, "ca": 291, "thal": 266, "chol": 23, "fbs": 8},
    "switzerland": {"ca": 118, "fbs": 75, "thal": 52, "slope": 17},
    "va": {"ca": 198, "thal": 166, "slope": 102, "trestbps": 56, "oldpeak": 56, "thalach": 53, "exang": 53},
}
HEART_ROWS = {"cleveland": 303, "hungarian": 294, "switzerland": 123, "va": 200}
HEART_LABELS = {"cleveland": [164, 55, 36, 35, 13], "hungarian": [188, 106], "switzerland": [8, 48, 32, 30, 5],
                "va": [51, 56, 41, 42, 10]}


@pytest.mark.parametrize("site", HEART)
def test_heart_site_file_as_shipped(site):
    path = DATA / "uci_heart_disease" / f"processed.{site}.data"
    first, t = _accept_all(path, column_names=HEART_NAMES)
    assert t.frame.shape == (HEART_ROWS[site], 14) and t.report.header is False
    proposed = {p.column: p.count for p in first.report.missing_proposals if p.code == "?"}
    for col, count in HEART_MISSING[site].items():
        assert proposed[col] == count, (site, col)
        assert int(t.frame[col].isna().sum()) == count
        assert pd.api.types.is_float_dtype(t.frame[col].dtype)  # numbers once "?" is accepted
    labels = t.frame["num"].value_counts().sort_index().tolist()
    assert labels == HEART_LABELS[site]


def test_heart_four_files_stacked_with_a_source_column():
    files = [((DATA / "uci_heart_disease" / f"processed.{s}.data").read_bytes(), f"processed.{s}.data") for s in HEART]
    t = read_tables(files, options=ReadOptions(column_names=HEART_NAMES))
    assert t.frame.shape == (920, 15) and t.report.source_column == "source_file"
    assert t.frame["source_file"].value_counts().to_dict() == {
        f"processed.{s}.data": n for s, n in HEART_ROWS.items()}
    codes = tuple(p.key for p in t.report.missing_proposals)
    t2 = read_tables(files, options=ReadOptions(column_names=HEART_NAMES, missing_codes=codes))
    by_site = t2.frame.groupby("source_file")["ca"].apply(lambda s: int(s.isna().sum())).to_dict()
    assert by_site == {f"processed.{s}.data": HEART_MISSING[s]["ca"] for s in HEART}
    # Cleveland writes 63.0, the others 63: one numeric column across the stack.
    assert pd.api.types.is_float_dtype(t2.frame["age"].dtype)
    assert t2.report.sources == tuple((f"processed.{s}.data", HEART_ROWS[s]) for s in HEART)


def test_acs_state_file_as_shipped():
    t = read_path(DATA / "acs_income_2018_folktables" / "ak_data.csv")
    assert t.frame.shape == (3_546, 11) and t.report.header is True
    assert list(t.frame.columns) == ["AGEP", "COW", "SCHL", "MAR", "OCCP", "POBP", "RELP", "WKHP", "SEX", "RAC1P",
                                     "PINCP"]
    assert t.frame["PINCP"].dtype == bool  # True/False
    assert t.frame.isna().sum().sum() == 0
    assert t.frame["AGEP"].between(17, 96).all() and t.frame["WKHP"].between(1, 99).all()


def test_oulad_student_info_as_shipped():
    t = read_path(DATA / "oulad" / "studentInfo.csv")
    assert t.frame.shape == (32_593, 12) and t.report.header is True
    # Missing values are empty strings: imd_band 1,111 (blank cells are always missing).
    assert int(t.frame["imd_band"].isna().sum()) == 1_111
    assert t.report.missing_applied == (("imd_band", "", 1_111),)
    assert t.frame["final_result"].value_counts().to_dict() == {
        "Pass": 12_361, "Withdrawn": 10_156, "Fail": 7_052, "Distinction": 3_024}
    assert "10-20" in set(t.frame["imd_band"].dropna())
    assert np.issubdtype(t.frame["id_student"].dtype, np.integer)
