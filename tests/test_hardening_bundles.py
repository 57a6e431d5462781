"""Run bundles: decompression bombs and malformed tables are refused on import; the Runs page reads any stored run.

* A bundle whose Parquet tables declare more uncompressed bytes than
  ``AUDIT_MAX_EXPANSION_MB`` (in total) is refused before a table is decoded.
* The tables of every known audit kind are checked against the columns its
  readers use (``AuditRunner.tables``): generated over every (kind, table,
  column) of that registry, dropping the column gives ``BUNDLE_BAD_TABLES``
  naming table and column, and nothing is written.
* The registry of columns is checked against real runs of every kind, so it
  cannot drift from what the audits store.
* A stored run whose tables lack those columns (saved by another version,
  or restored bypassing the check) opens on the Runs page with a declared
  warning and its tables, and its HTML report is still written.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.errors import AuditInputError
from audit_core.runs.bundle import export_bundle, import_bundle, read_bundle
from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.plugin import load_builtin_audits
from audit_core.runs.registry import RunRegistry
from hardening_cases import FUZZ

ROOT = Path(__file__).resolve().parents[1]
SPECS = {kind: dict(r.tables) for kind, r in load_builtin_audits().items()}
COLUMNS = sorted((kind, table, col) for kind, spec in SPECS.items() for table, cols in spec.items() for col in cols)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory) -> dict[str, object]:
    """One small real run of every audit kind (model, fragility, receipts benchmark, transport)."""
    reg = RunRegistry(tmp_path_factory.mktemp("real") / "reg.sqlite3")
    config = parse_config({
        "data": {"sample": "loan_synthetic"}, "model": {"kind": "logistic_regression", "seed": 0},
        "audits": [
            {"kind": "model", "bootstrap": 10, "refit_seeds": [1]},
            {"kind": "fragility", "max_cases": 20, "chunk_size": 10, "n_boot": 5, "shap_max_cases": 0,
             "search_max_cases": 5, "perm_repeats": 1, "stress_draws": 2},
            {"kind": "receipts", "mode": "benchmark", "n_cases": 40},
            {"kind": "transport", "n_refits": 1, "n_bootstrap": 10, "n_random_sets": 2, "stress_max_rows": 500,
             "mappings": ["raw", "platt"]},
        ],
    })
    outcomes = run_config(config, registry=reg, base_dir=ROOT)
    assert all(o.status == "done" for o in outcomes), [o.error for o in outcomes]
    return {o.kind: reg.load(o.run_id) for o in outcomes}


def test_every_kind_has_a_column_registry():
    assert set(SPECS) == {"model", "fragility", "receipts", "transport"} and all(SPECS.values())


def test_the_column_registry_matches_what_real_runs_store(real_runs):
    for kind, record in real_runs.items():
        for table, cols in SPECS[kind].items():
            if table in record.tables:
                assert set(cols) <= set(record.tables[table].columns), (kind, table)
        stored = set(record.tables) & set(SPECS[kind])
        assert stored, f"no table of the {kind} registry appears in a real {kind} run"
        read_bundle(export_bundle(record))  # an exported real run passes its own check


def _without(record, table: str, column: str) -> bytes:
    obj = json.loads(export_bundle(record))
    for entry in obj["tables"]:
        if entry["name"] == table:
            df = pd.read_parquet(io.BytesIO(base64.b64decode(entry["data"])))
            buf = io.BytesIO()
            df.drop(columns=[column]).to_parquet(buf)
            entry["data"] = base64.b64encode(buf.getvalue()).decode()
            entry["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    return json.dumps(obj).encode()


@settings(max_examples=len(COLUMNS), **FUZZ)
@given(case=st.sampled_from(COLUMNS))
def test_a_missing_column_is_refused_on_import_naming_table_and_column(real_runs, tmp_path_factory, case):
    kind, table, column = case
    record = real_runs[kind]
    if table not in record.tables:
        return  # an absent table is allowed (its figure is skipped); dropping a column needs the table
    reg = RunRegistry(tmp_path_factory.mktemp("imp") / "reg.sqlite3")
    with pytest.raises(AuditInputError) as err:
        import_bundle(reg, _without(record, table, column), name="edited.json")
    assert err.value.code == "BUNDLE_BAD_TABLES"
    assert f"holds a {kind} run whose table '{table}' lacks the column(s) '{column}'" in err.value.message
    assert reg.list_runs().empty


NUMBERS = sorted((kind, table, col) for kind, r in load_builtin_audits().items() for table, cols in r.numbers.items()
                 for col in cols)


def test_the_numeric_columns_are_declared_columns_and_numeric_in_real_runs(real_runs):
    for kind, table, column in NUMBERS:
        assert column in SPECS[kind][table], (kind, table, column)
        if table in real_runs[kind].tables:
            assert pd.api.types.is_numeric_dtype(real_runs[kind].tables[table][column]), (kind, table, column)


@pytest.mark.parametrize("case", NUMBERS, ids=["/".join(c) for c in NUMBERS])
def test_text_in_a_numeric_column_is_refused_on_import(real_runs, tmp_path, case):
    """Every declared numeric column of every kind: text there is refused naming table, column and row."""
    kind, table, column = case
    record = real_runs[kind]
    if table not in record.tables:  # a table the small run does not store: one row of its declared columns
        numeric = {c for k, t, c in NUMBERS if (k, t) == (kind, table)}
        row = {c: (0.0 if c in numeric else "x") for c in SPECS[kind][table]}
        record = dataclasses.replace(record, tables={**record.tables, table: pd.DataFrame([row])})
    obj = json.loads(export_bundle(record))
    for entry in obj["tables"]:
        if entry["name"] == table:
            df = pd.read_parquet(io.BytesIO(base64.b64decode(entry["data"])))
            df[column] = ["n/a"] + [str(v) for v in df[column].iloc[1:]]
            buf = io.BytesIO()
            df.to_parquet(buf)
            entry["data"] = base64.b64encode(buf.getvalue()).decode()
            entry["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    with pytest.raises(AuditInputError) as err:
        import_bundle(reg, json.dumps(obj).encode(), name="edited.json")
    assert err.value.code == "BUNDLE_NOT_NUMBERS"
    assert f"holds a {kind} run whose table '{table}' has str 'n/a' in column '{column}' (row 1)" in err.value.message
    assert reg.list_runs().empty


def _bomb_bundle(rows: int) -> bytes:
    """A bundle whose one table compresses ``rows`` zeros to a few KB."""
    from audit_core.runs.bundle import BUNDLE_FORMAT

    buf = io.BytesIO()
    pd.DataFrame({"z": np.zeros(rows, dtype="int64")}).to_parquet(buf, compression="zstd")
    data = buf.getvalue()
    run = {"run_id": "20240101T000000000000-00000001", "created_at": "2024-01-01T00:00:00.000000+00:00",
           "updated_at": "2024-01-01T00:00:00.000000+00:00", "audit_kind": "custom", "status": "done",
           "dataset_name": "d", "dataset_fingerprint": "f", "grouping_hash": None, "model_spec": {}, "config": {},
           "manifest": {}, "error": None}
    tables = [{"name": f"t{i}", "encoding": "parquet+base64", "sha256": hashlib.sha256(data).hexdigest(),
               "data": base64.b64encode(data).decode()} for i in range(3)]
    return json.dumps({"format": BUNDLE_FORMAT, "format_version": 1, "run": run, "tables": tables,
                       "artifacts": []}).encode()


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MAX_EXPANSION_MB", "5")
    data = _bomb_bundle(300_000)  # 3 tables × 2.4 MB in memory, from a few KB each
    assert len(data) < 100_000
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    import pandas

    monkeypatch.setattr(pandas, "read_parquet", lambda *a, **k: pytest.fail("decoded before the size check"))
    with pytest.raises(AuditInputError) as err:
        import_bundle(reg, data, name="bomb.json")
    assert err.value.code == "BUNDLE_EXPANDS"
    assert "AUDIT_MAX_EXPANSION_MB" in err.value.message and "table 't2'" in err.value.message
    assert reg.list_runs().empty


def test_the_same_bundle_imports_under_a_cap_it_fits(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MAX_EXPANSION_MB", "10")
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    run_id = import_bundle(reg, _bomb_bundle(300_000), name="ok.json")
    assert len(reg.load(run_id).tables["t0"]) == 300_000


@pytest.mark.parametrize("text", [b"[" * 5000 + b"]" * 5000, b'{"format": 1, "format": 2}', b"\xff\xfe{}"],
                         ids=["deep", "duplicate-key", "not-utf8"])
def test_hostile_json_bundles_are_declared(text):
    with pytest.raises(AuditInputError) as err:
        read_bundle(text, name="x.json")
    assert err.value.code in ("TEXT_TOO_DEEP", "JSON_DUPLICATE_KEY", "BUNDLE_NOT_JSON")


def _stored_without(reg: RunRegistry, record, table: str, column: str) -> str:
    """A run stored with a table missing a column (as an older version or a bypassed import would leave it)."""
    tables = {n: (df.drop(columns=[column]) if n == table else df) for n, df in record.tables.items()}
    return reg.save(audit_kind=record.audit_kind, dataset_name=record.dataset_name,
                    dataset_fingerprint=record.dataset_fingerprint, grouping_hash=record.grouping_hash,
                    model_spec=record.model_spec, config=record.config, tables=tables, manifest=record.manifest)


@pytest.mark.parametrize(("kind", "table", "column"), [("fragility", "certificates", "k_star"), ("fragility", "auroc", "label"),
                                                       ("model", "metrics", "split"), ("transport", "results", "model")])
def test_the_runs_page_and_the_report_read_a_run_with_a_missing_column(real_runs, tmp_path, monkeypatch, kind, table,
                                                                       column):
    from streamlit.testing.v1 import AppTest

    from components.report import write_report

    path = tmp_path / "reg.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    reg = RunRegistry(path)
    run_id = _stored_without(reg, real_runs[kind], table, column)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at = at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert not any("Unexpected problem" in e.value for e in at.error), [e.value for e in at.error]
    warnings = [w.value for w in at.warning if f"The figures of run '{run_id}' cannot be drawn" in w.value]
    assert warnings and column in warnings[0], [w.value for w in at.warning]
    assert not any("No figures are registered" in c.value for c in at.caption)  # the kind has figures; these failed
    assert any(f"Table `{table}`" in e.label for e in at.expander)  # the tables are still shown
    html = write_report(reg.load(run_id), tmp_path / "r.html").read_text()
    assert "Summary" in html or "summary" in html
