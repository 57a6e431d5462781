"""Faults with nothing lost: killed runs, concurrent writers, corrupt/foreign/older registry files."""
from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs.registry import SCHEMA_VERSION, RunRegistry

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _integrity(path: Path) -> str:
    con = sqlite3.connect(str(path))
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _save(reg: RunRegistry, i: int, who: str) -> str:
    return reg.save(audit_kind="model", dataset_name=f"{who}-{i}", dataset_fingerprint=f"fp-{who}-{i}", grouping_hash=None,
                    model_spec={"kind": "logistic_regression"}, config={"i": i, "who": who},
                    tables={"metrics": pd.DataFrame({"i": [i], "who": [who]})}, manifest={"who": who})


def _wait_for(proc: subprocess.Popen, marker: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if marker in line:
            return
        if proc.poll() is not None:
            break
    raise AssertionError(f"child never printed {marker!r}; last line {line!r}; rc={proc.poll()}")


KILLED_CHILD = textwrap.dedent(
    """
    import sys, time
    import pandas as pd
    from audit_core.runs.registry import RunRegistry
    reg = RunRegistry(sys.argv[1])
    mode = sys.argv[2]
    if mode == "running":
        run_id = reg.create_run(audit_kind="fragility", dataset_name="half", dataset_fingerprint="fp-half", grouping_hash=None,
                                model_spec={"kind": "lr"}, config={}, manifest={})
        print("RUN", run_id, flush=True)
        time.sleep(600)  # mid-work: killed here
    else:  # killed inside an open write transaction, between the insert and the commit
        with reg._transaction(write=True) as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('half-written', 'x')")
            print("IN_TRANSACTION", flush=True)
            time.sleep(600)
    """
)


@pytest.mark.parametrize("mode", ["running", "transaction"])
def test_sigkill_mid_run_loses_nothing(tmp_path, mode):
    path = tmp_path / "reg.sqlite3"
    reg = RunRegistry(path)
    earlier = [_save(reg, i, "before") for i in range(3)]
    before = {r: reg.load(r).tables["metrics"] for r in earlier}
    script = tmp_path / "child.py"
    script.write_text(KILLED_CHILD)
    proc = subprocess.Popen([sys.executable, str(script), str(path), mode], stdout=subprocess.PIPE, text=True,
                            env=ENV, cwd=REPO)
    try:
        _wait_for(proc, "RUN" if mode == "running" else "IN_TRANSACTION")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    runs = RunRegistry(path).list_runs()
    assert _integrity(path) == "ok"
    for r in earlier:  # earlier runs intact, byte for byte in their tables
        pd.testing.assert_frame_equal(RunRegistry(path).load(r).tables["metrics"], before[r])
    if mode == "running":  # never "done"; the next open sees its process is gone
        half = runs[runs["dataset_name"] == "half"]
        assert len(half) == 1 and half["status"].iloc[0] == "interrupted"
        error = RunRegistry(path).load(half["run_id"].iloc[0]).error
        assert error.startswith(f"interrupted: process {proc.pid} on ") and "ended without finishing it" in error
        assert set(runs[runs["status"] == "done"]["run_id"]) == set(earlier)
    else:
        assert len(runs) == 3  # the open transaction was rolled back
        con = sqlite3.connect(str(path))
        assert con.execute("SELECT COUNT(*) FROM meta WHERE key = 'half-written'").fetchone()[0] == 0
        con.close()


def test_cancelled_run_is_failed_not_done(tmp_path):
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    run_id = reg.create_run(audit_kind="fragility", dataset_name="d", dataset_fingerprint="f", grouping_hash=None,
                            model_spec={"kind": "lr"}, config={}, manifest={})
    reg.fail_run(run_id, error="cancelled by the user")
    rec = reg.load(run_id)
    assert rec.status == "failed" and "cancelled" in rec.error
    with pytest.raises(AuditInputError) as err:
        reg.finish_run(run_id, tables={})
    assert err.value.code == "RUN_NOT_RUNNING"


WRITER = textwrap.dedent(
    """
    import sys
    import pandas as pd
    from audit_core.runs.registry import RunRegistry
    reg = RunRegistry(sys.argv[1])
    who, n = sys.argv[2], int(sys.argv[3])
    for i in range(n):  # the CLI's path: create as running, then finish
        run_id = reg.create_run(audit_kind="model", dataset_name=f"{who}-{i}", dataset_fingerprint=f"fp-{who}-{i}", grouping_hash=None,
                                model_spec={"kind": "logistic_regression"}, config={"i": i, "who": who}, manifest={})
        reg.finish_run(run_id, tables={"metrics": pd.DataFrame({"i": [i], "who": [who]})})
    print("DONE", flush=True)
    """
)


def test_app_and_two_cli_processes_write_100_runs(tmp_path):
    path = tmp_path / "reg.sqlite3"
    reg = RunRegistry(path)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), str(path), who, "33"], stdout=subprocess.PIPE, text=True,
                              env=ENV, cwd=REPO) for who in ("cli1", "cli2")]
    errors: list[BaseException] = []

    def app_side():  # the app's save path (runs.save_workspace -> RunRegistry.save)
        try:
            for i in range(34):
                _save(reg, i, "app")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=app_side)
    t.start()
    t.join(timeout=240)
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert not errors and all(p.returncode == 0 for p in procs) and all("DONE" in o for o in outs)
    runs = reg.list_runs()
    assert len(runs) == 100 and set(runs["status"]) == {"done"}  # 0 lost
    assert _integrity(path) == "ok"  # 0 corrupt
    for run_id in runs["run_id"]:
        rec = reg.load(run_id)
        who, i = rec.config["who"], rec.config["i"]
        assert rec.tables["metrics"].to_dict("list") == {"i": [i], "who": [who]}
    assert sorted(runs["dataset_name"]) == sorted([f"app-{i}" for i in range(34)]
                                                  + [f"cli{k}-{i}" for k in (1, 2) for i in range(33)])


# ---------------------------------------------------------------------------
# Corrupt, foreign and older files: a clear message, never overwritten
# ---------------------------------------------------------------------------


def _foreign(path: Path) -> None:
    con = sqlite3.connect(str(path))
    con.execute("CREATE TABLE notes (x TEXT)")
    con.execute("INSERT INTO notes VALUES ('mine')")
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "make, code",
    [
        (lambda p: p.write_bytes(b"not a database at all" * 100), "REGISTRY_CORRUPT"),
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000), "REGISTRY_CORRUPT"),
        (_foreign, "REGISTRY_FOREIGN"),
    ],
    ids=["text", "truncated-sqlite", "foreign"],
)
def test_corrupt_or_foreign_is_refused_and_untouched(tmp_path, make, code):
    path = tmp_path / "reg.sqlite3"
    make(path)
    digest = _digest(path)
    with pytest.raises(AuditInputError) as err:
        RunRegistry(path)
    assert err.value.code == code and "AUDIT_REGISTRY_PATH" in err.value.message
    with pytest.raises(AuditInputError):
        RunRegistry.upgrade(path)  # upgrade refuses these too, and touches nothing
    assert _digest(path) == digest


def _make_older(path: Path) -> str:
    reg = RunRegistry(path)
    run_id = _save(reg, 0, "old")
    con = sqlite3.connect(str(path))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.execute("PRAGMA user_version = 0")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return run_id


def test_older_schema_is_refused_with_an_upgrade_path(tmp_path):
    path = tmp_path / "reg.sqlite3"
    _make_older(path)
    digest = _digest(path)
    with pytest.raises(AuditInputError) as err:
        RunRegistry(path)
    msg = err.value.message
    assert err.value.code == "REGISTRY_OLDER_SCHEMA"
    assert "RunRegistry.upgrade" in msg and "reg.sqlite3.schema-v0.bak" in msg and "AUDIT_REGISTRY_PATH" in msg
    assert _digest(path) == digest  # never silently modified


def test_upgrade_backs_up_then_recreates(tmp_path):
    path = tmp_path / "reg.sqlite3"
    old_run = _make_older(path)
    digest = _digest(path)
    reg = RunRegistry.upgrade(path)
    backup = tmp_path / "reg.sqlite3.schema-v0.bak"
    assert _digest(backup) == digest  # the old file survives byte for byte
    con = sqlite3.connect(str(backup))
    assert con.execute("SELECT run_id FROM runs").fetchall() == [(old_run,)]
    con.close()
    assert reg.list_runs().empty and _integrity(path) == "ok"
    _save(reg, 1, "new")
    assert len(RunRegistry(path).list_runs()) == 1
    _make_older(tmp_path / "again.sqlite3")
    (tmp_path / "again.sqlite3.schema-v0.bak").write_bytes(b"earlier backup")
    with pytest.raises(AuditInputError) as err:  # an existing backup is never overwritten
        RunRegistry.upgrade(tmp_path / "again.sqlite3")
    assert "already exists" in err.value.message


def test_upgrade_runs_registered_migrations(tmp_path, monkeypatch):
    from audit_core.runs import registry as registry_module

    calls = []
    monkeypatch.setitem(registry_module._MIGRATIONS, 0, lambda con: calls.append(
        con.execute("ALTER TABLE runs ADD COLUMN note TEXT")))
    path = tmp_path / "reg.sqlite3"
    old_run = _make_older(path)
    reg = RunRegistry.upgrade(path)
    assert len(calls) == 1 and reg.load(old_run).status == "done"  # data kept by a migration
    con = sqlite3.connect(str(path))
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    con.close()
