"""Full disks, read-only registries and killed runs: declared errors, nothing partial, nothing lost.

Full disk, three ways: SQLite's own ``max_page_count`` (a real SQLITE_FULL
from the engine), the write raising ``OperationalError('database or disk is
full')`` or ``OSError(ENOSPC)``, and, where this process may mount (root), a
real 2 MB tmpfs filled up. Read-only, two ways: ``read_only=True`` and, with
mount rights, a tmpfs remounted read-only under a registry with runs (the
case of a registry on a read-only share). Killed runs: owner identities of a
gone, a reused and a live process, another host, and age.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs import export
from audit_core.runs.export import write_file, write_parquet_tables
from audit_core.runs.registry import RunRegistry, _owner, _schema
from tests.test_cli import ROOT, cli
from tests.test_cli_exit_codes import make_schema_1_registry


def _save(reg: RunRegistry, rows: int = 3, name: str = "d") -> str:
    return reg.save(audit_kind="model", dataset_name=name, dataset_fingerprint="f" * 64, grouping_hash=None,
                    model_spec={"kind": "logistic_regression"}, config={},
                    tables={"t": pd.DataFrame({"x": np.arange(rows, dtype="float64")})})


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------
# Full disk: the registry
# ---------------------------------------------------------------------------
def _cap_pages(monkeypatch, extra_pages: int) -> None:
    """Every registry connection may grow the file by ``extra_pages`` pages only (SQLite's own SQLITE_FULL)."""
    original = _schema._RegistryFile._open

    def capped(self):
        conn = original(self)
        if not self.read_only:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + extra_pages}")
        return conn

    monkeypatch.setattr(_schema._RegistryFile, "_open", capped)


def test_sqlite_full_is_declared_and_writes_nothing(tmp_path, monkeypatch):
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    kept = _save(reg)
    _cap_pages(monkeypatch, 2)
    with pytest.raises(AuditInputError) as err:
        _save(reg, rows=200_000)  # 1.6 MB of table: far more than two pages
    assert err.value.code == "REGISTRY_FULL"
    msg = err.value.message
    assert "the disk is full" in msg and f"Free space on the disk holding {tmp_path}" in msg
    assert "AUDIT_REGISTRY_PATH" in msg and "Nothing was written" in msg
    assert list(reg.list_runs()["run_id"]) == [kept]  # the transaction was rolled back
    monkeypatch.undo()
    assert len(RunRegistry(tmp_path / "reg.sqlite3").list_runs()) == 1
    _save(reg)  # and the registry works again once there is room


@pytest.mark.parametrize("error", [sqlite3.OperationalError("database or disk is full"),
                                   sqlite3.OperationalError("disk I/O error")], ids=["full", "io-error-no-space"])
def test_a_failing_write_is_declared(tmp_path, monkeypatch, error):
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    run_id = reg.create_run(audit_kind="model", dataset_name="d", dataset_fingerprint="f", grouping_hash=None,
                            model_spec={}, config={})
    monkeypatch.setattr(_schema.shutil, "disk_usage", lambda p: type("U", (), {"free": 4096})())

    def boom(*args, **kwargs):
        raise error

    monkeypatch.setattr(RunRegistry, "_write_results", staticmethod(boom))
    with pytest.raises(AuditInputError) as err:
        reg.finish_run(run_id, tables={"t": pd.DataFrame({"x": [1]})})
    assert err.value.code == "REGISTRY_FULL"
    assert reg.load(run_id).status == "running"  # not done without its tables


def test_run_config_saves_the_run_as_failed_when_the_disk_fills(tmp_path, monkeypatch):
    from tests.runs_data import model_config
    from audit_core.runs.execute import run_config

    reg = RunRegistry(tmp_path / "reg.sqlite3")

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(RunRegistry, "_write_results", staticmethod(full))
    (outcome,) = run_config(model_config(bootstrap=0), registry=reg, base_dir=ROOT)
    assert outcome.status == "failed" and "the disk is full" in outcome.error
    assert reg.load(outcome.run_id).status == "failed"


# ---------------------------------------------------------------------------
# Full disk: output files are written atomically
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["write", "fsync"])
def test_enospc_leaves_no_partial_file_and_keeps_the_old_one(tmp_path, monkeypatch, where):
    target = tmp_path / "summary.parquet"
    target.write_bytes(b"the previous complete file")

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "fsync":
        monkeypatch.setattr(export.os, "fsync", no_space)
    else:
        monkeypatch.setattr(export.os, "fdopen", lambda fd, mode: _FailingFile(fd, no_space))
    with pytest.raises(AuditInputError) as err:
        write_file(target, b"x" * 1000)
    assert err.value.code == "OUTPUT_DISK_FULL"
    assert f"no space left on the disk holding {tmp_path}" in err.value.message
    assert target.read_bytes() == b"the previous complete file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.parquet"]  # no temporary file left


class _FailingFile:
    def __init__(self, fd, fail):
        self.fd, self.fail = fd, fail

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.close(self.fd)

    def write(self, data):
        self.fail()


def test_an_unwritable_target_is_declared(tmp_path):
    (tmp_path / "dir.parquet").mkdir()
    with pytest.raises(AuditInputError) as err:
        write_file(tmp_path / "dir.parquet", b"x")
    assert err.value.code == "OUTPUT_UNWRITABLE"


# ---------------------------------------------------------------------------
# A real small filesystem (needs mount rights; the cases above always run)
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def _tmpfs(path: Path, size: str):
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()}); covered by the simulated cases")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(folder: Path) -> None:
    with open(folder / "filler", "wb") as fh:
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()


def test_a_real_full_disk(tmp_path):
    with _tmpfs(tmp_path / "small", "2m") as disk:
        reg = RunRegistry(disk / "reg.sqlite3")
        kept = _save(reg)
        record = reg.load(kept)
        _fill(disk)
        with pytest.raises(AuditInputError) as err:
            _save(reg, rows=100_000)
        assert err.value.code == "REGISTRY_FULL", err.value.message
        with pytest.raises(AuditInputError) as err:
            write_parquet_tables(record, disk / "out" / "tables")
        assert err.value.code in ("OUTPUT_DISK_FULL", "OUTPUT_UNWRITABLE"), err.value.message
        assert not any(p.stat().st_size == 0 for p in (disk / "out").rglob("*.parquet"))  # no 0-byte table
        assert not list((disk / "out").rglob("*.part"))
        (disk / "filler").unlink()
        assert list(RunRegistry(disk / "reg.sqlite3").list_runs()["run_id"]) == [kept]


def test_a_real_full_disk_under_the_cli_out_folder(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\naudits: [{kind: model, bootstrap: 0}]\n")
    with _tmpfs(tmp_path / "small", "1m") as disk:
        (disk / "out").mkdir()
        _fill(disk)
        (disk / "filler").write_bytes((disk / "filler").read_bytes()[:-8192])  # room for the --out probe only
        done = cli("run", str(cfg), "--registry", str(tmp_path / "reg.sqlite3"), "--out", str(disk / "out"))
        assert done.returncode == 3, done.stderr
        assert "no space left on the disk holding" in done.stderr and "reliability-audit export" in done.stderr
        assert not [p for p in (disk / "out").rglob("*") if p.is_file() and p.stat().st_size == 0]
        runs = RunRegistry(tmp_path / "reg.sqlite3").list_runs()
        assert list(runs["status"]) == ["done"]  # the run itself is saved and can be exported again


# ---------------------------------------------------------------------------
# The app keeps the trained model when the save is refused
# ---------------------------------------------------------------------------
def test_the_data_page_keeps_the_model_when_the_disk_is_full(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from components.state import Keys

    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "reg.sqlite3"))
    RunRegistry(tmp_path / "reg.sqlite3")

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(RunRegistry, "_write_results", staticmethod(full))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at = at.switch_page("pages/data_groups.py").run()  # the loan sample is loaded on the first visit
    at.selectbox(key="dg_model_kind").set_value("logistic_regression")
    at.button(key="act_train").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("the disk is full" in e and "Free space on the disk holding" in e for e in errors), errors
    assert not any("Unexpected problem" in e for e in errors)
    assert at.session_state[Keys.WORKSPACE] is not None  # the trained model is kept
    assert "kept in this session but not saved" in at.session_state[Keys.MESSAGE]



# ---------------------------------------------------------------------------
# Read-only registries
# ---------------------------------------------------------------------------
def test_read_only_registry_browses_and_refuses_writes(tmp_path):
    path = tmp_path / "reg.sqlite3"
    run_id = _save(RunRegistry(path))
    digest = _digest(path)
    reg = RunRegistry(path, read_only=True)
    assert reg.read_only and reg.read_only_reason == "opened read-only"
    assert list(reg.list_runs()["run_id"]) == [run_id] and len(reg.load(run_id).tables["t"]) == 3
    for write in (lambda: _save(reg), lambda: reg.delete(run_id),
                  lambda: reg.create_run(audit_kind="m", dataset_name="d", dataset_fingerprint="f", grouping_hash=None,
                                         model_spec={}, config={})):
        with pytest.raises(AuditInputError) as err:
            write()
        assert err.value.code == "REGISTRY_READ_ONLY" and "saving is off" in err.value.message
    assert _digest(path) == digest


def test_a_schema_1_registry_is_browsable_until_upgraded(tmp_path):
    path = tmp_path / "reg.sqlite3"
    old_id = make_schema_1_registry(path)
    digest = _digest(path)
    reg = RunRegistry(path)
    assert reg.read_only and "schema version 1" in reg.read_only_reason
    assert list(reg.list_runs()["run_id"]) == [old_id] and reg.load(old_id).status == "done"
    with pytest.raises(AuditInputError) as err:
        _save(reg)
    assert err.value.code == "REGISTRY_READ_ONLY" and "RunRegistry.upgrade" in err.value.message
    assert _digest(path) == digest
    upgraded = RunRegistry.upgrade(path)  # backup first, then the 1 -> 2 migration keeps the runs
    assert not upgraded.read_only and (tmp_path / "reg.sqlite3.schema-v1.bak").exists()
    assert upgraded.load(old_id).status == "done"
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    con.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (old_id,))  # the new status fits
    con.commit()
    con.close()
    assert _save(upgraded)


@contextlib.contextmanager
def _read_only_mount(tmp_path: Path):
    with _tmpfs(tmp_path / "share", "8m") as share:
        yield share
        subprocess.run(["mount", "-o", "remount,rw", str(share)], capture_output=True)


def test_a_registry_on_a_read_only_mount(tmp_path):
    with _read_only_mount(tmp_path) as share:
        reg = RunRegistry(share / "reg.sqlite3")
        run_id = _save(reg)
        del reg
        assert subprocess.run(["mount", "-o", "remount,ro", str(share)], capture_output=True).returncode == 0
        ro = RunRegistry(share / "reg.sqlite3")
        assert ro.read_only and ro.read_only_reason
        assert list(ro.list_runs()["run_id"]) == [run_id]
        with pytest.raises(AuditInputError) as err:
            _save(ro)
        assert err.value.code == "REGISTRY_READ_ONLY"
        listed = cli("list", "--registry", str(share / "reg.sqlite3"), "--json")
        assert listed.returncode == 0 and json.loads(listed.stdout)["run_id"] == run_id
        report = cli("report", run_id, "--html", str(tmp_path / "r.html"), "--registry", str(share / "reg.sqlite3"))
        assert report.returncode == 0 and (tmp_path / "r.html").stat().st_size > 1000
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text("data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\naudits: [{kind: model}]\n")
        run = cli("run", str(cfg), "--registry", str(share / "reg.sqlite3"), "--out", str(tmp_path / "o"))
        assert run.returncode == 2 and "is open read-only" in run.stderr and "saving is off" in run.stderr


def test_the_runs_page_says_saving_is_off(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    path = tmp_path / "reg.sqlite3"
    make_schema_1_registry(path)
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run().switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert any("open read-only" in i.value and "saving is off" in i.value for i in at.info), [i.value for i in at.info]
    assert any(df.value.shape[0] == 1 for df in at.dataframe)  # the saved run is listed


# ---------------------------------------------------------------------------
# Killed runs become interrupted
# ---------------------------------------------------------------------------
def _running(reg: RunRegistry, owner: str | None, created_at: str | None = None) -> str:
    run_id = reg.create_run(audit_kind="model", dataset_name="d", dataset_fingerprint="f", grouping_hash=None,
                            model_spec={}, config={})
    con = sqlite3.connect(reg.path)
    con.execute("UPDATE runs SET owner = ? WHERE run_id = ?", (owner, run_id))
    if created_at:
        con.execute("UPDATE runs SET created_at = ? WHERE run_id = ?", (created_at, run_id))
    con.commit()
    con.close()
    return run_id


def _identity(**changes) -> str:
    me = json.loads(_owner.current_owner())
    return json.dumps({**me, **changes})


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_owner_identity_decides_interrupted(tmp_path):
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    old = "2020-01-01T00:00:00.000000+00:00"
    cases = {
        "alive (this process)": (_running(reg, _owner.current_owner()), "running"),
        "gone pid": (_running(reg, _identity(pid=_gone_pid())), "interrupted"),
        "pid reused (other start time)": (_running(reg, _identity(start=-1)), "interrupted"),
        "machine restarted": (_running(reg, _identity(boot="another-boot")), "interrupted"),
        "other host, recent": (_running(reg, _identity(host="elsewhere")), "running"),
        "other host, old": (_running(reg, _identity(host="elsewhere"), created_at=old), "interrupted"),
        "no owner (schema 1), old": (_running(reg, None, created_at=old), "interrupted"),
    }
    marked = set(reg.mark_interrupted())  # what the next open (or listing) does
    for label, (run_id, status) in cases.items():
        rec = reg.load(run_id)
        assert rec.status == status, label
        assert (run_id in marked) == (status == "interrupted"), label
        if status == "interrupted":
            assert rec.error.startswith("interrupted: "), (label, rec.error)
    gone = reg.load(cases["gone pid"][0])
    assert "ended without finishing it (killed or crashed)" in gone.error and socket.gethostname() in gone.error


def test_a_late_finish_revives_an_interrupted_run(tmp_path):
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    run_id = _running(reg, _identity(host="elsewhere"), created_at="2020-01-01T00:00:00.000000+00:00")
    RunRegistry(reg.path)
    assert reg.load(run_id).status == "interrupted"
    reg.finish_run(run_id, tables={"t": pd.DataFrame({"x": [1]})})
    rec = reg.load(run_id)
    assert rec.status == "done" and rec.error is None


def test_the_stale_age_is_configurable(tmp_path, monkeypatch):
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    run_id = _running(reg, _identity(host="elsewhere"))
    monkeypatch.setenv(_owner.STALE_ENV, "0.0000001")
    RunRegistry(reg.path)
    assert reg.load(run_id).status == "interrupted" and _owner.STALE_ENV in reg.load(run_id).error
    monkeypatch.setenv(_owner.STALE_ENV, "soon")
    with pytest.raises(AuditInputError) as err:
        RunRegistry(reg.path)
    assert err.value.code == "LIMIT_BAD_VALUE" and _owner.STALE_ENV in err.value.message
