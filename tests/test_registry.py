"""Tests for :mod:`audit_core.runs.registry`.

This file doubles as the worker script of the multi-process test:
``python tests/test_registry.py worker <db> <worker> <n> <ready> <go>``.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # when run as a worker script
    sys.path.insert(0, str(REPO))

from audit_core.errors import AuditInputError  # noqa: E402
from audit_core.runs import registry as reg  # noqa: E402
from audit_core.runs.registry import RunRecord, RunRegistry, default_registry_path  # noqa: E402


# ---------------------------------------------------------------------------
# Helpers (also used by the worker processes)
# ---------------------------------------------------------------------------
def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_tables(worker: int, index: int) -> dict[str, pd.DataFrame]:
    """Deterministic result tables for run ``index`` of ``worker``."""
    rng = np.random.default_rng(1000 * worker + index)
    n = 5 + (index % 7)
    values = rng.normal(size=n)
    values[::3] = np.nan
    metrics = pd.DataFrame(
        {
            "group": [f"w{worker}-g{k}" for k in range(n)],
            "n": rng.integers(0, 10_000, size=n).astype("int64"),
            "score": values,
            "flagged": rng.random(n) > 0.5,
        }
    )
    labels = pd.DataFrame({"worker": [worker], "index": [index], "label": [f"run {index}"]})
    return {"metrics": metrics, "labels": labels}


def run_kwargs(worker: int, index: int) -> dict:
    return dict(
        audit_kind="model" if index % 2 else "fragility",
        dataset_name=f"data-{worker}",
        dataset_fingerprint=fingerprint(f"data-{worker}"),
        grouping_hash=None,
        model_spec={"kind": "logistic", "C": 1.0},
        config={"worker": worker, "index": index},
    )


def _worker_main(db: str, worker: int, n: int, ready: str, go: str) -> None:
    """Write ``n`` runs (alternating save() and create/finish) with reads."""
    registry = RunRegistry(db)
    Path(ready).touch()
    while not Path(go).exists():  # start barrier, no timing assertion
        time.sleep(0.005)
    for i in range(n):
        kwargs = run_kwargs(worker, i)
        tables = make_tables(worker, i)
        artifacts = {"model.bin": f"model {worker}/{i}".encode()}
        if i % 2 == 0:
            run_id = registry.save(**kwargs, tables=tables, artifacts=artifacts)
        else:
            run_id = registry.create_run(**kwargs)
            registry.list_runs(status="running")  # interleaved read
            registry.finish_run(run_id, tables=tables, artifacts=artifacts)
        rec = registry.load(run_id)  # read back while the other process writes
        assert rec.status == "done" and rec.config == kwargs["config"]
        registry.list_runs()


@pytest.fixture
def registry(tmp_path: Path) -> RunRegistry:
    return RunRegistry(tmp_path / "reg.sqlite3")


def sample_tables() -> dict[str, pd.DataFrame]:
    return {
        "metrics": pd.DataFrame(
            {
                "i": pd.Series([1, 2, 3], dtype="int64"),
                "f": [0.5, np.nan, 2.25],
                "s": ["a", None, "c"],
                "b": [True, False, True],
                "ni": pd.array([1, None, 3], dtype="Int64"),
                "t": pd.to_datetime(["2024-01-01", None, "2024-01-03"], utc=True),
            }
        ),
        "by_group": pd.DataFrame(
            {"rate": [0.1, 0.2]}, index=pd.Index(["x", "y"], name="group")
        ),
        "empty": pd.DataFrame({"a": pd.Series([], dtype="float64")}),
    }


def save_sample(r: RunRegistry, **overrides) -> str:
    kwargs = dict(
        audit_kind="model",
        dataset_name="claims.csv",
        dataset_fingerprint=fingerprint("claims"),
        grouping_hash="g" * 16,
        model_spec={"kind": "lightgbm", "params": {"num_leaves": 31, "lr": 0.05}},
        config={"alpha": 0.05, "groups": ["a", "b"], "nested": {"x": None, "y": True}},
        manifest={"app_version": "1.0", "seed": 7},
        tables=sample_tables(),
        artifacts={"model.skops": b"\x00\x01binary\xff", "empty": b""},
    )
    kwargs.update(overrides)
    return r.save(**kwargs)


def raw_counts(path: Path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        return {
            t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("runs", "run_tables", "run_artifacts")
        }
    finally:
        con.close()


def sidecars(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p != path)


# ---------------------------------------------------------------------------
# Round trip and lifecycle
# ---------------------------------------------------------------------------
def test_save_load_round_trip(registry: RunRegistry) -> None:
    tables = sample_tables()
    run_id = save_sample(registry, tables=tables)
    rec = registry.load(run_id)

    assert isinstance(rec, RunRecord)
    assert rec.run_id == run_id
    assert rec.status == "done"
    assert rec.error is None
    assert rec.audit_kind == "model"
    assert rec.dataset_name == "claims.csv"
    assert rec.dataset_fingerprint == fingerprint("claims")
    assert rec.grouping_hash == "g" * 16
    assert rec.model_spec == {"kind": "lightgbm", "params": {"num_leaves": 31, "lr": 0.05}}
    assert rec.config == {"alpha": 0.05, "groups": ["a", "b"], "nested": {"x": None, "y": True}}
    assert rec.manifest == {"app_version": "1.0", "seed": 7}
    assert list(rec.tables) == list(tables)  # saved order kept
    for name, df in tables.items():
        pd.testing.assert_frame_equal(rec.tables[name], df)
    assert dict(rec.artifacts) == {"model.skops": b"\x00\x01binary\xff", "empty": b""}
    assert dt.datetime.fromisoformat(rec.created_at).utcoffset() == dt.timedelta(0)
    assert rec.created_at == rec.updated_at
    with pytest.raises(TypeError):
        rec.tables["new"] = pd.DataFrame()  # read-only mapping

    summary = rec.to_summary()
    assert summary["run_id"] == run_id
    assert summary["model"] == "lightgbm"
    assert summary["n_tables"] == 3
    assert summary["tables"]["metrics"] == (3, 6)
    assert summary["artifacts"] == {"model.skops": 9, "empty": 0}


def test_run_id_format_and_uniqueness(registry: RunRegistry) -> None:
    ids = [save_sample(registry, tables={}) for _ in range(5)]
    assert len(set(ids)) == 5
    for run_id in ids:
        assert re.fullmatch(r"\d{8}T\d{12}-[0-9a-f]{8}", run_id), run_id
    listed = registry.list_runs()["run_id"].tolist()
    assert listed == sorted(ids, reverse=True)  # newest first == id order


def test_create_then_finish(registry: RunRegistry) -> None:
    run_id = registry.create_run(
        audit_kind="transport",
        dataset_name="d",
        dataset_fingerprint=fingerprint("d"),
        grouping_hash=None,
        model_spec={},
        config={"k": 1},
    )
    rec = registry.load(run_id)
    assert rec.status == "running"
    assert dict(rec.tables) == {} and rec.manifest == {}
    row = registry.list_runs().iloc[0]
    assert (row["status"], row["n_tables"], row["model"]) == ("running", 0, None)

    tables = make_tables(0, 1)
    registry.finish_run(run_id, tables=tables, manifest={"finished": True})
    rec = registry.load(run_id)
    assert rec.status == "done"
    assert rec.manifest == {"finished": True}
    assert rec.updated_at >= rec.created_at
    for name, df in tables.items():
        pd.testing.assert_frame_equal(rec.tables[name], df)

    with pytest.raises(AuditInputError) as err:
        registry.finish_run(run_id, tables=tables)
    assert err.value.code == "RUN_NOT_RUNNING"
    assert str(err.value) == (
        f"Run {run_id!r} is already 'done'; only a run that is still 'running' "
        "(or was marked 'interrupted') can be finished or marked as failed."
    )


def test_run_never_finished_stays_running(tmp_path: Path) -> None:
    path = tmp_path / "reg.sqlite3"
    run_id = RunRegistry(path).create_run(**run_kwargs(0, 0))
    # A fresh object (as after the creating process died) still sees "running".
    again = RunRegistry(path)
    assert again.load(run_id).status == "running"
    assert again.list_runs(status="done").empty
    assert again.list_runs(status="running")["run_id"].tolist() == [run_id]


def test_fail_run(registry: RunRegistry) -> None:
    run_id = registry.create_run(**run_kwargs(0, 0))
    registry.fail_run(run_id, error="model did not converge")
    rec = registry.load(run_id)
    assert rec.status == "failed"
    assert rec.error == "model did not converge"
    assert dict(rec.tables) == {}
    with pytest.raises(AuditInputError) as err:
        registry.finish_run(run_id, tables=make_tables(0, 0))
    assert err.value.code == "RUN_NOT_RUNNING"
    assert registry.load(run_id).status == "failed"
    assert raw_counts(registry.path)["run_tables"] == 0


def test_finish_is_atomic_when_a_table_is_bad(registry: RunRegistry) -> None:
    run_id = registry.create_run(**run_kwargs(0, 0))
    bad = {"ok": pd.DataFrame({"a": [1]}), "bad": pd.DataFrame({"o": [object()]})}
    with pytest.raises(AuditInputError) as err:
        registry.finish_run(run_id, tables=bad)
    assert err.value.code == "REGISTRY_BAD_TABLE"
    assert "'bad'" in str(err.value)
    assert registry.load(run_id).status == "running"
    assert raw_counts(registry.path)["run_tables"] == 0


# ---------------------------------------------------------------------------
# Listing and deleting
# ---------------------------------------------------------------------------
def test_list_runs_filters(registry: RunRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(
        [dt.datetime(2024, 1, d, 12, 0, tzinfo=dt.timezone.utc) for d in range(1, 6)]
    )
    monkeypatch.setattr(reg._records, "_utcnow", lambda: next(clock))  # the clock seam lives in _records
    fp_a, fp_b = fingerprint("a"), fingerprint("b")
    ids = [
        save_sample(registry, audit_kind="model", dataset_fingerprint=fp_a,
                    model_spec={"kind": "logistic"}, tables={}),
        save_sample(registry, audit_kind="model", dataset_fingerprint=fp_b,
                    model_spec={"kind": "lightgbm"}),
        save_sample(registry, audit_kind="fragility", dataset_fingerprint=fp_a,
                    model_spec={}),
        save_sample(registry, audit_kind="receipts", dataset_fingerprint=fp_b,
                    model_spec={"kind": "logistic"}),
    ]
    running = registry.create_run(**run_kwargs(0, 1))  # day 5, model, logistic

    df = registry.list_runs()
    assert list(df.columns) == [
        "run_id", "created_at", "updated_at", "audit_kind", "status", "dataset_name",
        "dataset_fingerprint", "grouping_hash", "model", "n_tables",
    ]
    assert df["run_id"].tolist() == [running, *reversed(ids)]
    assert df["n_tables"].tolist() == [0, 3, 3, 3, 0]
    assert df["n_tables"].dtype == "int64"

    def ids_of(**kw) -> list[str]:
        return registry.list_runs(**kw)["run_id"].tolist()

    assert ids_of(audit_kind="model") == [running, ids[1], ids[0]]
    assert ids_of(dataset_fingerprint=fp_a) == [ids[2], ids[0]]
    assert ids_of(model="logistic") == [running, ids[3], ids[0]]
    assert ids_of(model="logistic", audit_kind="model", status="done") == [ids[0]]
    assert ids_of(status="running") == [running]
    assert ids_of(status="failed") == []
    assert ids_of(since="2024-01-02T12:00:00Z", until="2024-01-04T12:00:00Z") == [
        ids[3], ids[2], ids[1]
    ]
    assert ids_of(since=dt.date(2024, 1, 3)) == [running, ids[3], ids[2]]
    assert ids_of(until=dt.date(2024, 1, 2)) == [ids[1], ids[0]]  # whole day
    assert ids_of(until=pd.Timestamp("2024-01-02")) == [ids[0]]  # midnight
    # A naive datetime is UTC; an aware one is converted.
    assert ids_of(since=dt.datetime(2024, 1, 4, 12)) == [running, ids[3]]
    tz = dt.timezone(dt.timedelta(hours=2))
    assert ids_of(since=dt.datetime(2024, 1, 4, 14, tzinfo=tz)) == [running, ids[3]]

    with pytest.raises(AuditInputError) as err:
        registry.list_runs(status="finished")
    assert err.value.code == "REGISTRY_BAD_STATUS"
    with pytest.raises(AuditInputError) as err:
        registry.list_runs(since="last tuesday")
    assert err.value.code == "REGISTRY_BAD_DATE"
    assert "since='last tuesday'" in str(err.value)


def test_list_runs_empty_registry(registry: RunRegistry) -> None:
    df = registry.list_runs()
    assert df.empty
    assert "run_id" in df.columns and "n_tables" in df.columns


def test_delete_removes_tables_and_artifacts(registry: RunRegistry) -> None:
    keep = save_sample(registry)
    gone = save_sample(registry)
    assert raw_counts(registry.path) == {"runs": 2, "run_tables": 6, "run_artifacts": 4}
    registry.delete(gone)
    assert raw_counts(registry.path) == {"runs": 1, "run_tables": 3, "run_artifacts": 2}
    assert registry.list_runs()["run_id"].tolist() == [keep]
    assert len(registry.load(keep).tables) == 3
    with pytest.raises(AuditInputError) as err:
        registry.load(gone)
    assert err.value.code == "RUN_NOT_FOUND"


@pytest.mark.parametrize("op", ["load", "delete", "finish_run", "fail_run"])
def test_unknown_run_id(registry: RunRegistry, op: str) -> None:
    call = {
        "load": lambda: registry.load("20240101T000000000000-deadbeef"),
        "delete": lambda: registry.delete("20240101T000000000000-deadbeef"),
        "finish_run": lambda: registry.finish_run(
            "20240101T000000000000-deadbeef", tables={}
        ),
        "fail_run": lambda: registry.fail_run(
            "20240101T000000000000-deadbeef", error="x"
        ),
    }[op]
    with pytest.raises(AuditInputError) as err:
        call()
    assert err.value.code == "RUN_NOT_FOUND"
    assert str(err.value) == (
        "No saved run with id '20240101T000000000000-deadbeef' in the registry "
        f"{registry.path}. It may have been deleted; pick a run from the list of "
        "saved runs."
    )


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("config", "key", "type_name"),
    [
        ({"a": {"b": np.int64(3)}}, "config['a']['b']", "int64"),
        ({"groups": ["x", ("y", "z")]}, "config['groups'][1]", "tuple"),
        ({"s": {1, 2}}, "config['s']", "set"),
        ({"when": dt.date(2024, 1, 1)}, "config['when']", "date"),
        ({"alpha": float("nan")}, "config['alpha']", "float (nan)"),
        ({"m": {1: "a"}}, "config['m'][1]", "a dict key of type int"),
    ],
)
def test_non_json_values_are_refused(
    registry: RunRegistry, config: dict, key: str, type_name: str
) -> None:
    with pytest.raises(AuditInputError) as err:
        save_sample(registry, config=config)
    assert err.value.code == "REGISTRY_NOT_JSON"
    assert str(err.value).startswith(
        f"Cannot save the run: config value at {key} is of type {type_name}, "
        "which cannot be stored as JSON."
    )
    assert raw_counts(registry.path)["runs"] == 0  # nothing half-written


def test_non_json_in_model_spec_and_manifest(registry: RunRegistry) -> None:
    with pytest.raises(AuditInputError) as err:
        registry.create_run(**{**run_kwargs(0, 0), "model_spec": {"obj": object()}})
    assert "model_spec value at model_spec['obj']" in str(err.value)
    run_id = registry.create_run(**run_kwargs(0, 0))
    with pytest.raises(AuditInputError) as err:
        registry.finish_run(run_id, tables={}, manifest={"path": Path("/x")})
    assert "manifest value at manifest['path']" in str(err.value)
    assert registry.load(run_id).status == "running"


def test_bad_fields_tables_and_artifacts(registry: RunRegistry) -> None:
    with pytest.raises(AuditInputError) as err:
        save_sample(registry, audit_kind="")
    assert err.value.code == "REGISTRY_BAD_FIELD"
    assert str(err.value) == "Cannot save the run: audit_kind must be a non-empty string, got ''."
    with pytest.raises(AuditInputError) as err:
        save_sample(registry, tables={"m": [1, 2]})
    assert err.value.code == "REGISTRY_BAD_TABLE"
    assert str(err.value) == (
        "Cannot save the run: table 'm' cannot be stored (expected a pandas "
        "DataFrame, got list)."
    )
    with pytest.raises(AuditInputError) as err:
        save_sample(registry, artifacts={"model": "not bytes"})
    assert err.value.code == "REGISTRY_BAD_ARTIFACT"
    assert str(err.value) == "Cannot save the run: artifact 'model' must be bytes, got str."
    assert raw_counts(registry.path)["runs"] == 0


def test_json_round_trip_property() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53)
        | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
        max_leaves=10,
    )
    with tempfile.TemporaryDirectory() as tmp:
        registry = RunRegistry(Path(tmp) / "reg.sqlite3")

        @hypothesis.settings(max_examples=40, deadline=None)
        @hypothesis.given(config=st.dictionaries(st.text(max_size=5), json_values, max_size=4))
        def check(config: dict) -> None:
            run_id = registry.create_run(**{**run_kwargs(0, 0), "config": config})
            assert registry.load(run_id).config == config

        check()


# ---------------------------------------------------------------------------
# Location, persistence
# ---------------------------------------------------------------------------
def test_env_var_overrides_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "nested" / "dir" / "custom.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(target))
    assert default_registry_path() == target
    r = RunRegistry()
    assert r.path == target and target.is_file()  # folder + file created
    save_sample(r)
    assert raw_counts(target)["runs"] == 1


def test_default_path_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIT_REGISTRY_PATH", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    expected = tmp_path / ".reliability_audit" / "registry.sqlite3"
    assert default_registry_path() == expected
    assert not expected.exists()
    RunRegistry()
    assert expected.is_file()
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", "  ")  # blank means unset
    assert default_registry_path() == expected


def test_survives_restart_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "reg.sqlite3"
    first = RunRegistry(path)
    run_id = save_sample(first)
    # Another object in this process.
    assert RunRegistry(path).list_runs()["run_id"].tolist() == [run_id]
    # A fresh interpreter; also checks the module stays free of UI imports.
    script = (
        "import sys, json\n"
        "from audit_core.runs.registry import RunRegistry\n"
        f"rec = RunRegistry({str(path)!r}).load({run_id!r})\n"
        "assert 'streamlit' not in sys.modules and 'plotly' not in sys.modules\n"
        "print(json.dumps({'status': rec.status, 'config': rec.config,\n"
        "  'metrics': rec.tables['metrics'].to_json(date_format='iso'), 'art': rec.artifacts['model.skops'].hex()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["status"] == "done"
    assert got["config"] == first.load(run_id).config
    assert got["metrics"] == sample_tables()["metrics"].to_json(date_format="iso")
    assert bytes.fromhex(got["art"]) == b"\x00\x01binary\xff"


def test_recreated_after_file_removed(tmp_path: Path) -> None:
    path = tmp_path / "reg.sqlite3"
    r = RunRegistry(path)
    save_sample(r)
    path.unlink()
    for extra in tmp_path.glob("reg.sqlite3-*"):
        extra.unlink()
    assert r.list_runs().empty
    save_sample(r)
    assert len(r.list_runs()) == 1


# ---------------------------------------------------------------------------
# Concurrency
# ---------------------------------------------------------------------------
def test_shared_object_across_threads(registry: RunRegistry) -> None:
    def work(i: int) -> str:
        run_id = registry.save(**run_kwargs(9, i), tables=make_tables(9, i))
        registry.list_runs()
        return run_id

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(work, range(16)))
    assert len(set(ids)) == 16
    for run_id in ids:
        rec = registry.load(run_id)
        i = rec.config["index"]
        for name, df in make_tables(9, i).items():
            pd.testing.assert_frame_equal(rec.tables[name], df)


def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    n = 50
    go = tmp_path / "go"
    procs, readies = [], []
    for worker in (1, 2):
        ready = tmp_path / f"ready{worker}"
        readies.append(ready)
        procs.append(
            subprocess.Popen(
                [sys.executable, __file__, "worker", str(path), str(worker), str(n),
                 str(ready), str(go)],
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        while not all(r.exists() for r in readies):
            if any(p.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.01)
        go.touch()
        results = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (_, stderr) in zip(procs, results):
        assert p.returncode == 0, stderr

    registry = RunRegistry(path)
    runs = registry.list_runs()
    assert len(runs) == 2 * n
    assert runs["run_id"].is_unique
    assert set(runs["status"]) == {"done"}
    assert set(runs["n_tables"]) == {2}
    seen = set()
    for run_id in runs["run_id"]:
        rec = registry.load(run_id)
        worker, index = rec.config["worker"], rec.config["index"]
        seen.add((worker, index))
        assert rec.dataset_name == f"data-{worker}"
        assert rec.artifacts["model.bin"] == f"model {worker}/{index}".encode()
        expected = make_tables(worker, index)
        assert list(rec.tables) == list(expected)
        for name, df in expected.items():
            pd.testing.assert_frame_equal(rec.tables[name], df)
    assert seen == {(w, i) for w in (1, 2) for i in range(n)}
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        con.close()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "worker":
    _db, _worker, _n, _ready, _go = sys.argv[2:7]
    _worker_main(_db, int(_worker), int(_n), _ready, _go)
    # End as the CLI does (audit_cli.commands.console_main): the work is saved and the
    # registry closed; the interpreter's normal shutdown sometimes aborts in a native
    # thread pool ("terminate called without an active exception", exit 134).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
