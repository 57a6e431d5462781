"""Run-bundle import refuses what would break or flood later, each with its own message, and writes nothing.

Types where the readers compute (text in a numeric column), run ids that are paths or Markdown, a table or
artifact listed twice, more tables, wider tables or longer cells than the caps of ``audit_core.limits``, and
artifacts that would not fit the expansion cap; a run exported while ``running`` comes back ``interrupted``.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json

import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs.bundle import BUNDLE_FORMAT, RUNNING_NOTE, import_bundle
from audit_core.runs.registry import RunRegistry

RUN = {"run_id": "20240101T000000000000-00000001", "created_at": "2024-01-01T00:00:00.000000+00:00",
       "updated_at": "2024-01-01T00:00:00.000000+00:00", "audit_kind": "model", "status": "done",
       "dataset_name": "d", "dataset_fingerprint": "f", "grouping_hash": None, "model_spec": {}, "config": {},
       "manifest": {}, "error": None}
METRICS = pd.DataFrame({"split": ["test", "test"], "metric": ["auroc", "brier"], "value": [0.8, 0.2]})


def _table(name: str, df: pd.DataFrame) -> dict:
    buf = io.BytesIO()
    df.to_parquet(buf)
    data = buf.getvalue()
    return {"name": name, "encoding": "parquet+base64", "sha256": hashlib.sha256(data).hexdigest(),
            "data": base64.b64encode(data).decode()}


def _artifact(name: str, data: bytes) -> dict:
    return {"name": name, "encoding": "base64", "sha256": hashlib.sha256(data).hexdigest(),
            "data": base64.b64encode(data).decode()}


def _bundle(tables: list[dict] | None = None, artifacts: list[dict] | None = None, **run) -> bytes:
    return json.dumps({"format": BUNDLE_FORMAT, "format_version": 1, "run": {**RUN, **run},
                       "tables": [_table("metrics", METRICS)] if tables is None else tables,
                       "artifacts": artifacts or []}).encode()


@pytest.fixture
def reg(tmp_path) -> RunRegistry:
    return RunRegistry(tmp_path / "reg.sqlite3")


def _refused(reg: RunRegistry, data: bytes) -> AuditInputError:
    with pytest.raises(AuditInputError) as err:
        import_bundle(reg, data, name="b.json")
    assert reg.list_runs().empty  # nothing written
    return err.value


def test_a_well_formed_bundle_imports(reg) -> None:
    run_id = import_bundle(reg, _bundle(), name="b.json")
    pd.testing.assert_frame_equal(reg.load(run_id).tables["metrics"], METRICS)


def test_text_where_numbers_belong_is_refused_naming_table_column_and_value(reg) -> None:
    bad = METRICS.assign(value=["0.8", "lots"])
    err = _refused(reg, _bundle([_table("metrics", bad)]))
    assert err.code == "BUNDLE_NOT_NUMBERS"
    assert err.message == ("The bundle b.json holds a model run whose table 'metrics' has str '0.8' in column "
                           "'value' (row 1), where the Runs page and the report read numbers; it was not exported "
                           "by this app, or it was edited.")


def test_missing_values_and_numbers_in_an_object_column_pass(reg) -> None:
    mixed = METRICS.assign(value=pd.Series([None, 0.5], dtype=object))
    run_id = import_bundle(reg, _bundle([_table("metrics", mixed)]), name="b.json")
    assert reg.load(run_id).tables["metrics"]["value"].tolist()[1] == 0.5


@pytest.mark.parametrize("run_id", ["../../x", "a/b", "[click](http://h)", "**bold**", ".hidden", "", "x" * 101,
                                    "a b", "-rf"])
def test_a_run_id_that_is_not_a_plain_id_is_refused(reg, run_id: str) -> None:
    err = _refused(reg, _bundle(run_id=run_id))
    assert err.code == "BUNDLE_BAD_RUN_ID" and err.message.startswith("The bundle b.json has the run id ")


def test_a_run_exported_while_running_comes_back_interrupted_with_a_note(reg) -> None:
    run_id = import_bundle(reg, _bundle(status="running"), name="b.json")
    record = reg.load(run_id)
    assert (record.status, record.error) == ("interrupted", RUNNING_NOTE)
    assert reg.mark_interrupted() == []  # nothing left running


@pytest.mark.parametrize("what", ["table", "artifact"])
def test_an_entry_listed_twice_is_refused(reg, what: str) -> None:
    if what == "table":
        data = _bundle([_table("metrics", METRICS), _table("metrics", METRICS.head(1))])
    else:
        data = _bundle(artifacts=[_artifact("m.txt", b"a"), _artifact("m.txt", b"b")])
    err = _refused(reg, data)
    assert err.code == "BUNDLE_DUPLICATE"
    assert err.message.startswith(f"The bundle b.json lists the {what} '{'metrics' if what == 'table' else 'm.txt'}' "
                                  "2 times; a run holds each")


def test_more_tables_than_the_cap_are_refused_before_decoding(reg, monkeypatch) -> None:
    monkeypatch.setenv("AUDIT_MAX_BUNDLE_TABLES", "3")
    tables = [_table(f"t{i}", METRICS) for i in range(4)]
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: pytest.fail("decoded before the count check"))
    err = _refused(reg, _bundle(tables))
    assert err.code == "LIMIT_COUNT"
    assert err.message.startswith("The bundle b.json asks for 4 tables (or artifacts) in one run bundle; the most "
                                  "allowed is 3 (limit AUDIT_MAX_BUNDLE_TABLES).")
    monkeypatch.undo()
    assert len(reg.load(import_bundle(reg, _bundle(tables[:3]), name="b.json")).tables) == 3


def test_a_wider_table_than_the_cap_is_refused_before_decoding(reg, monkeypatch) -> None:
    monkeypatch.setenv("AUDIT_MAX_BUNDLE_COLUMNS", "50")
    wide = pd.DataFrame({f"c{i}": [i] for i in range(51)})
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: pytest.fail("decoded before the width check"))
    err = _refused(reg, _bundle([_table("metrics", METRICS), _table("wide", wide)]))
    assert err.code == "LIMIT_COUNT"
    assert err.message.startswith("The bundle b.json, table 'wide', asks for 51 columns in one table of a run "
                                  "bundle; the most allowed is 50 (limit AUDIT_MAX_BUNDLE_COLUMNS).")


def test_a_longer_cell_than_the_cap_is_refused(reg, monkeypatch) -> None:
    monkeypatch.setenv("AUDIT_MAX_CELL_CHARS", "1000")
    err = _refused(reg, _bundle([_table("metrics", METRICS.assign(metric=["auroc", "x" * 1001]))]))
    assert err.code == "LIMIT_COUNT"
    assert err.message.startswith("The bundle b.json, table 'metrics' asks for 1,001 characters in one text cell "
                                  "of a run bundle; the most allowed is 1,000 (limit AUDIT_MAX_CELL_CHARS).")
    long_name = _refused(reg, _bundle([_table("metrics", METRICS.assign(**{"y" * 1001: 1}))]))
    assert long_name.code == "LIMIT_COUNT"  # a column name is a cell of the header


def test_artifacts_count_against_the_expansion_cap(reg, monkeypatch) -> None:
    monkeypatch.setenv("AUDIT_MAX_EXPANSION_MB", "1")
    big = _artifact("model.bin", bytes(2 * 1024 * 1024))
    monkeypatch.setattr(base64, "b64decode", lambda *a, **k: pytest.fail("an artifact decoded before the check"))
    err = _refused(reg, _bundle([], artifacts=[big]))
    assert err.code == "BUNDLE_EXPANDS"
    assert err.message.startswith("The bundle b.json would expand to 2.0 MB of tables and artifacts in memory")
    assert "its artifacts alone 2.0 MB" in err.message


@pytest.mark.parametrize("field", ["created_at", "updated_at"])
@pytest.mark.parametrize("value", ["yesterday", "2024-01-01", "2024-01-01T00:00:00", ""])
def test_a_run_date_that_is_not_a_timestamp_gets_a_message_about_the_date(reg, field: str, value: str) -> None:
    """Not "Cannot filter runs by created_at=...": the bundle's date is wrong, and the message says which."""
    err = _refused(reg, _bundle(**{field: value}))
    assert err.code == "BUNDLE_BAD_DATE"
    assert err.message.startswith(f"The bundle b.json gives run.{field} as '{value}', which is not a date and time "
                                  "with its time zone (a run's timestamps look like")
    assert "filter" not in err.message


def test_restoring_a_run_with_a_bad_date_names_the_run_not_a_filter(reg) -> None:
    import dataclasses

    from audit_core.runs.bundle import read_bundle

    record = dataclasses.replace(read_bundle(_bundle()), created_at="yesterday")
    with pytest.raises(AuditInputError) as err:
        reg.restore(record)
    assert err.value.code == "REGISTRY_BAD_RUN_DATE"
    assert err.value.message == (f"Cannot store the run {RUN['run_id']}: its created_at is 'yesterday', which is not "
                                 "a date and time (a run's timestamps look like '2024-05-01T13:00:00.000000+00:00').")
