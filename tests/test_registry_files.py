"""Tests for :mod:`audit_core.runs.registry`: files that are not ours are refused and left untouched."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs import registry as reg
from audit_core.runs.registry import RunRegistry
from tests.test_registry import raw_counts, registry, save_sample, sidecars  # noqa: F401  (registry: the fixture)


def _assert_refused(path: Path, code: str) -> AuditInputError:
    before = path.read_bytes()
    others = sidecars(path)
    with pytest.raises(AuditInputError) as err:
        RunRegistry(path)
    assert err.value.code == code
    assert str(path) in str(err.value)
    assert "AUDIT_REGISTRY_PATH" in str(err.value)
    assert path.read_bytes() == before
    assert sidecars(path) == others
    return err.value


def test_corrupt_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "reg.sqlite3"
    path.write_bytes(np.random.default_rng(0).bytes(8192))
    err = _assert_refused(path, "REGISTRY_CORRUPT")
    assert str(err) == (
        f"The run registry at {path} is not a readable registry database "
        "(file is not a database). Set the environment variable "
        "AUDIT_REGISTRY_PATH to a new file (e.g. ~/.reliability_audit/"
        "registry-2.sqlite3) to start a fresh registry; the existing file was "
        "left untouched."
    )


def test_text_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_text("these are my notes, not a database\n" * 20)
    _assert_refused(path, "REGISTRY_CORRUPT")


def test_foreign_sqlite_db_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO customers (name) VALUES ('ada')")
    con.commit()
    con.close()
    err = _assert_refused(path, "REGISTRY_FOREIGN")
    assert str(err).startswith(
        f"The file {path} is an SQLite database of another application, not a "
        "reliability-audit run registry."
    )


def test_db_with_other_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA application_id = 12345")
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    _assert_refused(path, "REGISTRY_FOREIGN")


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "reg.sqlite3"
    save_sample(RunRegistry(path))
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    err = _assert_refused(path, "REGISTRY_NEWER_SCHEMA")
    assert "uses schema version 3" in str(err)
    assert "only understands version 2" in str(err)


def test_zero_byte_file_is_initialised(tmp_path: Path) -> None:
    path = tmp_path / "reg.sqlite3"
    path.touch()
    save_sample(RunRegistry(path))
    assert raw_counts(path)["runs"] == 1


def test_unopenable_path_is_declared(tmp_path: Path) -> None:
    folder = tmp_path / "a_folder"
    folder.mkdir()
    with pytest.raises(AuditInputError) as err:
        RunRegistry(folder)
    assert err.value.code == "REGISTRY_UNAVAILABLE"
    assert str(folder) in str(err.value) and "AUDIT_REGISTRY_PATH" in str(err.value)


def test_file_metadata(registry: RunRegistry) -> None:
    con = sqlite3.connect(registry.path)
    try:
        assert con.execute("PRAGMA application_id").fetchone()[0] == reg.APPLICATION_ID
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        meta = dict(con.execute("SELECT key, value FROM meta"))
        assert meta["schema_version"] == "2"
    finally:
        con.close()
