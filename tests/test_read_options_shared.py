"""The CLI reads a file as the app reads the same upload with the same Read options.

One function (:func:`audit_core.data.intake.user_read_options`) builds the read
options for both; giving column names must not switch off the delimiter or
header decisions. The public files are read as shipped from ``../shared/datasets``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from audit_core.data.intake import read_table, user_read_options
from audit_core.runs.config import data_read_options, load_config, load_data

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets"
GERMAN = DATA / "statlog_german_credit" / "german.data"
# german.doc lists 20 attributes then the class; these are our short names for them.
GERMAN_NAMES = ["checking", "duration", "history", "purpose", "amount", "savings", "employment", "rate",
                "personal", "debtors", "residence", "property", "age", "plans", "housing", "credits", "job",
                "liable", "telephone", "foreign", "risk"]
ADULT_NAMES = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
               "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
               "income"]
SGC_NAMES = ["status", "duration", "credit_history", "purpose", "amount", "savings", "employment_duration",
             "installment_rate", "personal_status_sex", "other_debtors", "present_residence", "property", "age",
             "other_installment_plans", "housing", "number_credits", "job", "people_liable", "telephone",
             "foreign_worker", "credit_risk"]
HEART_NAMES = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope",
               "ca", "thal", "num"]

# (file, config data keys besides the path); the app is given the same values in its Read options.
CASES = [
    ("statlog_german_credit/german.data", {"column_names": GERMAN_NAMES}),
    ("uci_adult/adult.data", {"column_names": ADULT_NAMES, "na_values": ["?"]}),
    ("south_german_credit/SouthGermanCredit.asc", {"column_names": SGC_NAMES}),
    ("uci_heart_disease/processed.va.data", {"column_names": HEART_NAMES, "na_values": ["?"]}),
]


@pytest.fixture(autouse=True)
def _datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "registry.sqlite3"))
    if not GERMAN.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the shared datasets are missing at {DATA}")
        pytest.skip("../shared/datasets not available")


def _config(tmp_path: Path, rel: str, keys: dict, **dataset) -> Path:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({
        "data": {"path": str(DATA / rel), **keys},
        "dataset": dataset,
        "model": {"kind": "logistic_regression", "seed": 0},
        "audits": [{"kind": "model", "bootstrap": 20}],
    }))
    return cfg


def test_cli_config_reads_space_separated_german_data_with_column_names(tmp_path):
    cfg = load_config(_config(tmp_path, "statlog_german_credit/german.data", {"column_names": GERMAN_NAMES},
                              targets=[{"kind": "threshold", "name": "bad", "column": "risk", "threshold": 2,
                                        "op": ">="}]))
    frame = load_data(cfg, base_dir=tmp_path).dataset.frame
    assert frame.shape == (1000, 21)  # PROVENANCE: 1,000 applicants, 20 attributes and the class
    assert list(frame.columns) == GERMAN_NAMES
    # The first line of the file, as shipped: "A11 6 A34 A43 1169 ... A201 1".
    assert frame.iloc[0][["checking", "duration", "amount", "foreign", "risk"]].tolist() == ["A11", 6, 1169, "A201", 1]
    assert int((frame["risk"] == 2).sum()) == 300  # german.doc: 700 good, 300 bad


def test_config_header_and_decimal_are_validated(tmp_path):
    from audit_core.errors import AuditInputError

    with pytest.raises(AuditInputError, match=r"data.header must be one of 'auto', 'first_row', 'none', got 'yes'"):
        load_config(_config(tmp_path, "statlog_german_credit/german.data", {"header": "yes"}))
    cfg = load_config(_config(tmp_path, "uci_adult/adult.data", {"column_names": ADULT_NAMES, "header": "none",
                                                                 "decimal": "."}))
    opts = data_read_options(cfg.data)
    assert (opts.header, opts.decimal, opts.delimiter) == ("none", ".", None)


@pytest.mark.parametrize("rel,keys", CASES, ids=[c[0].split("/")[-1] for c in CASES])
def test_cli_reads_as_the_app_reads(tmp_path, rel, keys):
    """The app's Data page, given the same names and missing codes, reads the same frame with the same decisions."""
    path = DATA / rel
    cli_opts = data_read_options(load_config(_config(tmp_path, rel, keys)).data)
    assert cli_opts == user_read_options(column_names=keys["column_names"], na_values=keys.get("na_values"))
    cli = read_table(path.read_bytes(), name=path.name, options=cli_opts)

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at = at.switch_page("pages/data_groups.py").run()
    at.radio(key="dg_source_mode").set_value("Upload a file").run()
    at.text_input(key="dg_col_names").set_value(", ".join(keys["column_names"]))
    at.text_input(key="dg_na_codes").set_value(", ".join(keys.get("na_values", [])))
    at.file_uploader(key="up_table").set_value([(path.name, path.read_bytes(), "application/octet-stream")]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    app = at.session_state["table"]

    assert list(cli.frame.columns) == keys["column_names"]
    assert (app.delimiter, app.encoding, app.report.header, app.report.names) == (
        cli.delimiter, cli.encoding, cli.report.header, cli.report.names)
    assert app.report.lines() == cli.report.lines()
    assert app.frame.equals(cli.frame)
