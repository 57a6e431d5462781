"""Runs saved before a stored name was renamed still load, under the current names (one migration, in the readers).

:func:`audit_core.runs.registry.with_current_names` is the only place that
knows the old names; :meth:`RunRegistry.load` and the bundle reader pass every
run through it. These tests write runs with the *old* names straight into a
registry file and a bundle (as an older version of the library did) and read
them back.
"""
from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from audit_core.runs.bundle import bundle_from_record, export_bundle, read_bundle
from audit_core.runs.registry import RENAMED_MANIFEST_KEYS, RENAMED_TABLES, RunRecord, RunRegistry, with_current_names

CERTIFICATES = pd.DataFrame({"key": ["a", "b"], "p_hat": [0.9, 0.6], "k_star": [1, 3], "rcma": [0.2, 0.4],
                             "fds": [0.5, 0.1]})
OTHER = pd.DataFrame({"label": ["x"], "value": [0.7]})


def _old_tables(kind: str) -> dict[str, pd.DataFrame]:
    """A run's tables as a version before the renames stored them: the old name first, then another table."""
    old = {o: CERTIFICATES.copy() for o in RENAMED_TABLES[kind]}
    return {**old, "extra": OTHER.copy()}


def _save_old(registry: RunRegistry, kind: str) -> str:
    manifest = {"seeds": {"split": 1}, **{o: {"n_cases": 2} for o in RENAMED_MANIFEST_KEYS}}
    return registry.save(audit_kind=kind, dataset_name="d", dataset_fingerprint="f" * 64, grouping_hash=None,
                         model_spec={"kind": "logistic_regression"}, config={}, tables=_old_tables(kind),
                         manifest=manifest)


def _current(kind: str) -> list[str]:
    return [*RENAMED_TABLES[kind].values(), "extra"]


@pytest.mark.parametrize("kind", sorted(RENAMED_TABLES))
def test_an_old_run_loads_under_the_current_names_and_stays_as_stored(tmp_path, kind: str) -> None:
    registry = RunRegistry(tmp_path / "r.sqlite3")
    run_id = _save_old(registry, kind)
    record = registry.load(run_id)
    assert list(record.tables) == _current(kind)  # renamed in place: the order is kept
    for new in RENAMED_TABLES[kind].values():
        pd.testing.assert_frame_equal(record.tables[new], CERTIFICATES)
    pd.testing.assert_frame_equal(record.tables["extra"], OTHER)
    for old, new in RENAMED_MANIFEST_KEYS.items():
        assert old not in record.manifest and record.manifest[new] == {"n_cases": 2}
    assert record.manifest["seeds"] == {"split": 1}
    with sqlite3.connect(tmp_path / "r.sqlite3") as con:  # nothing written back
        stored = [n for (n,) in con.execute("SELECT name FROM run_tables WHERE run_id = ? ORDER BY position",
                                            (run_id,))]
    assert stored == list(_old_tables(kind))


@pytest.mark.parametrize("kind", sorted(RENAMED_TABLES))
def test_an_old_bundle_reads_under_the_current_names(tmp_path, kind: str) -> None:
    registry = RunRegistry(tmp_path / "r.sqlite3")
    run_id = _save_old(registry, kind)
    fields = {f: getattr(registry.load(run_id), f) for f in ("run_id", "created_at", "updated_at", "audit_kind",
                                                             "status", "dataset_name", "dataset_fingerprint",
                                                             "grouping_hash", "model_spec", "config", "error")}
    old = RunRecord(**fields, manifest={o: {"n_cases": 2} for o in RENAMED_MANIFEST_KEYS}, tables=_old_tables(kind))
    assert bundle_from_record(old)["tables"][0]["name"] in RENAMED_TABLES[kind]  # the bundle holds the old names
    record = read_bundle(export_bundle(old))
    assert list(record.tables) == _current(kind)
    assert set(record.manifest) == set(RENAMED_MANIFEST_KEYS.values())


def test_only_the_renamed_kinds_and_absent_names_are_touched() -> None:
    base = dict(run_id="r", created_at="", updated_at="", status="done", dataset_name="d", dataset_fingerprint="f",
                grouping_hash=None, model_spec={}, config={}, manifest={})
    custom = RunRecord(audit_kind="custom", tables={"summary": OTHER}, **base)
    assert with_current_names(custom) is custom  # an audit kind with no renamed tables keeps its names
    both = RunRecord(audit_kind="fragility", tables={"summary": OTHER, "certificates": CERTIFICATES}, **base)
    assert list(with_current_names(both).tables) == ["summary", "certificates"]  # never overwrites a current table
    current = RunRecord(audit_kind="fragility", tables={"certificates": CERTIFICATES}, **base)
    assert with_current_names(current) is current


def test_every_renamed_table_is_a_name_the_audit_writes_now() -> None:
    from audit_core.findings.transport import result_tables
    from audit_core.runs.plugins import fragility
    from audit_core.transport.results import TransportResult

    assert set(RENAMED_TABLES["fragility"].values()) <= set(fragility.TABLES)
    empty = pd.DataFrame()
    written = result_tables(TransportResult(table=empty, verdicts=empty, refit_summary=empty, extras={}, manifest={}))
    assert set(RENAMED_TABLES["transport"].values()) <= set(written)
