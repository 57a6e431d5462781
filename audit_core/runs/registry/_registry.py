"""The run API: :class:`RunRegistry` (create, finish, save, restore, list, load, delete)."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from audit_core.errors import AuditInputError, fail

from . import _records
from ._owner import abandoned_reason, current_owner, stale_after_hours
from ._records import (
    _SUMMARY_COLUMNS, RUN_STATUSES, RunRecord, _iso, _model_kind, _new_run_id, default_registry_path,
    with_current_names,
)
from ._schema import _RegistryFile
from ._serial import (
    _check_artifacts, _check_text, _deserialise_table, _dump_json, _parse_bound, _serialise_tables,
)

__all__ = ["RunRegistry"]


class RunRegistry(_RegistryFile):
    """Saved-run registry backed by one SQLite file.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Database file. Defaults to :func:`default_registry_path`. The folder
        and file are created if missing.
    read_only : bool, default False
        Open for browsing only. A file that cannot be written (permissions,
        a read-only mount, an older schema awaiting upgrade) is opened
        read-only anyway: :attr:`read_only` and :attr:`read_only_reason` say
        so, and every write raises ``REGISTRY_READ_ONLY``.

    Raises
    ------
    AuditInputError
        ``REGISTRY_CORRUPT`` if the file is not an SQLite database,
        ``REGISTRY_FOREIGN`` if it belongs to another application,
        ``REGISTRY_NEWER_SCHEMA`` if it was written by a newer version,
        ``REGISTRY_UNAVAILABLE`` if it cannot be created or opened. In all
        these cases the existing file is left byte-for-byte untouched.

    Notes
    -----
    Every operation opens its own connection, so one instance can be shared
    by many threads; several processes may use the same file concurrently.
    Opening (and listing) marks ``running`` runs whose process is gone as
    ``interrupted`` (see :mod:`audit_core.runs.registry._owner`).
    """

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        self.path = Path(path).expanduser() if path is not None else default_registry_path()
        if read_only:
            self.read_only_reason = "opened read-only"
        self._ensure_schema()
        self.mark_interrupted()

    def __repr__(self) -> str:
        return f"RunRegistry({str(self.path)!r})"

    # -- writes --------------------------------------------------------------
    def create_run(
        self,
        *,
        audit_kind: str,
        dataset_name: str,
        dataset_fingerprint: str,
        grouping_hash: str | None,
        model_spec: dict,
        config: dict,
        manifest: dict | None = None,
    ) -> str:
        """Insert a new run with status ``"running"``.

        Parameters
        ----------
        audit_kind : str
            E.g. ``"model"``, ``"fragility"``, ``"transport"``, ``"receipts"``.
        dataset_name : str
            Display name of the dataset.
        dataset_fingerprint : str
            SHA-256 hex digest of the dataset.
        grouping_hash : str or None
            Hash of the grouping definition, if any.
        model_spec, config : dict
            JSON-compatible dictionaries (str keys; str/int/float/bool/None,
            list and dict values; finite floats).
        manifest : dict, optional
            JSON-compatible provenance manifest; ``{}`` if omitted.

        Returns
        -------
        str
            The new run id, ``YYYYMMDDTHHMMSSffffff-<8 hex>``: sortable by
            creation time and unique across processes.

        Raises
        ------
        AuditInputError
            ``REGISTRY_NOT_JSON`` naming the offending key,
            ``REGISTRY_BAD_FIELD`` for a missing/empty text field.
        """
        row = self._run_row(
            audit_kind=audit_kind,
            dataset_name=dataset_name,
            dataset_fingerprint=dataset_fingerprint,
            grouping_hash=grouping_hash,
            model_spec=model_spec,
            config=config,
            manifest=manifest,
        )
        with self._transaction(write=True) as conn:
            return self._insert_run(conn, row, status="running", owner=current_owner())

    def finish_run(
        self,
        run_id: str,
        *,
        tables: Mapping[str, pd.DataFrame],
        artifacts: Mapping[str, bytes] | None = None,
        manifest: dict | None = None,
        before_done: Callable[[RunRecord], None] | None = None,
    ) -> None:
        """Store a run's tables and artifacts and mark it ``"done"``.

        Everything happens in one transaction: a run is never ``"done"``
        without its tables, and a crash leaves it ``"running"``.

        With ``before_done`` the results are stored first (the run stays
        ``"running"``), ``before_done`` is called with the run exactly as it
        will read once done (status, ``updated_at``), and only when it
        returns is the run marked ``"done"``. The CLI writes the run's output
        folder there, so a run killed while writing it is never ``"done"``
        without it: it stays ``"running"`` until :meth:`mark_interrupted`
        finds its process gone. If ``before_done`` raises, the run is left
        ``"running"`` for the caller to fail.

        Parameters
        ----------
        run_id : str
            Id returned by :meth:`create_run`.
        tables : Mapping[str, pandas.DataFrame]
            Result tables (string column names), stored as Parquet.
        artifacts : Mapping[str, bytes], optional
            Binary artifacts, e.g. a saved model file.
        manifest : dict, optional
            If given, replaces the manifest saved at creation.
        before_done : callable(RunRecord), optional
            Called after the results are stored and before the status changes.

        Raises
        ------
        AuditInputError
            ``RUN_NOT_FOUND``, ``RUN_NOT_RUNNING`` (already done/failed),
            ``REGISTRY_BAD_TABLE``, ``REGISTRY_BAD_ARTIFACT``,
            ``REGISTRY_NOT_JSON``.
        """
        blobs = _serialise_tables(tables)
        arts = _check_artifacts(artifacts)
        manifest_json = _dump_json(manifest, "manifest") if manifest is not None else None
        done = "UPDATE runs SET status = 'done', updated_at = ?, error = NULL, owner = NULL WHERE run_id = ?"
        with self._transaction(write=True) as conn:
            self._require_running(conn, run_id)
            self._write_results(conn, run_id, blobs, arts)
            now = _iso(_records._utcnow())
            if manifest_json is not None:
                conn.execute("UPDATE runs SET manifest = ? WHERE run_id = ?", (manifest_json, run_id))
            if before_done is None:
                conn.execute(done, (now, run_id))
                return
        before_done(dataclasses.replace(self.load(run_id), status="done", updated_at=now, error=None))
        with self._transaction(write=True) as conn:
            self._require_running(conn, run_id)
            conn.execute(done, (now, run_id))

    def fail_run(self, run_id: str, *, error: str) -> None:
        """Mark a running run as ``"failed"`` with an error text.

        Parameters
        ----------
        run_id : str
            Id returned by :meth:`create_run`.
        error : str
            What went wrong (shown to the user).

        Raises
        ------
        AuditInputError
            ``RUN_NOT_FOUND``, ``RUN_NOT_RUNNING``.
        """
        with self._transaction(write=True) as conn:
            self._require_running(conn, run_id)
            conn.execute(
                "UPDATE runs SET status = 'failed', updated_at = ?, error = ?, owner = NULL "
                "WHERE run_id = ?",
                (_iso(_records._utcnow()), str(error), run_id),
            )

    def save(
        self,
        *,
        audit_kind: str,
        dataset_name: str,
        dataset_fingerprint: str,
        grouping_hash: str | None,
        model_spec: dict,
        config: dict,
        tables: Mapping[str, pd.DataFrame],
        artifacts: Mapping[str, bytes] | None = None,
        manifest: dict | None = None,
    ) -> str:
        """Create and finish a run in one transaction.

        Parameters are those of :meth:`create_run` and :meth:`finish_run`.
        All inputs are validated before anything is written, so a rejected
        save leaves no trace.

        Returns
        -------
        str
            The new run id (status ``"done"``).
        """
        row = self._run_row(
            audit_kind=audit_kind,
            dataset_name=dataset_name,
            dataset_fingerprint=dataset_fingerprint,
            grouping_hash=grouping_hash,
            model_spec=model_spec,
            config=config,
            manifest=manifest,
        )
        blobs = _serialise_tables(tables)
        arts = _check_artifacts(artifacts)
        with self._transaction(write=True) as conn:
            run_id = self._insert_run(conn, row, status="done")
            self._write_results(conn, run_id, blobs, arts)
            return run_id

    def restore(self, record: RunRecord) -> str:
        """Insert a complete run exactly as given (id, timestamps, status, tables).

        Used to import a run exported from another registry
        (:func:`audit_core.runs.bundle.import_bundle`); ordinary code uses
        :meth:`save` or :meth:`create_run`.

        Parameters
        ----------
        record : RunRecord
            The run to insert; all fields are validated like :meth:`save`.

        Returns
        -------
        str
            ``record.run_id``.

        Raises
        ------
        AuditInputError
            ``RUN_EXISTS`` if the id is taken (nothing is changed), and the
            validation errors of :meth:`save`.
        """
        _check_text(record.run_id, "run_id")
        if record.status not in RUN_STATUSES:
            raise fail("REGISTRY_BAD_STATUS", status=record.status)
        for name in ("created_at", "updated_at"):
            try:
                _parse_bound(getattr(record, name), name)
            except AuditInputError:  # that message is about filtering; this one is about the run
                raise fail("REGISTRY_BAD_RUN_DATE", run_id=record.run_id, name=name,
                           value=getattr(record, name)) from None
        row = self._run_row(
            audit_kind=record.audit_kind,
            dataset_name=record.dataset_name,
            dataset_fingerprint=record.dataset_fingerprint,
            grouping_hash=record.grouping_hash,
            model_spec=record.model_spec,
            config=record.config,
            manifest=record.manifest,
        )
        blobs = _serialise_tables(record.tables)
        arts = _check_artifacts(record.artifacts)
        with self._transaction(write=True) as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (record.run_id,)).fetchone():
                raise fail("RUN_EXISTS", run_id=record.run_id, path=self.path)
            conn.execute(
                "INSERT INTO runs (run_id, created_at, updated_at, audit_kind, status, "
                "dataset_name, dataset_fingerprint, grouping_hash, model, model_spec, "
                "config, manifest, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.run_id,
                    record.created_at,
                    record.updated_at,
                    row["audit_kind"],
                    record.status,
                    row["dataset_name"],
                    row["dataset_fingerprint"],
                    row["grouping_hash"],
                    row["model"],
                    row["model_spec"],
                    row["config"],
                    row["manifest"],
                    record.error,
                ),
            )
            self._write_results(conn, record.run_id, blobs, arts)
        return record.run_id

    def delete(self, run_id: str) -> None:
        """Delete a run with its tables and artifacts.

        Raises
        ------
        AuditInputError
            ``RUN_NOT_FOUND`` if no such run exists.
        """
        with self._transaction(write=True) as conn:
            cur = conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
            if cur.rowcount == 0:
                raise fail("RUN_NOT_FOUND", run_id=run_id, path=self.path)

    def mark_interrupted(self) -> list[str]:
        """Mark ``running`` runs whose owning process is gone as ``interrupted``; return their ids.

        Same host: the process no longer exists (or its pid was reused, or
        the machine restarted). Another host or an unknown owner: the run is
        older than ``AUDIT_STALE_RUN_HOURS`` (default 72). Nothing happens on
        a read-only registry, and a full disk only postpones it.
        """
        if self.read_only:
            return []
        hours = stale_after_hours()  # read every time, so a bad value is reported at once
        with self._connect() as conn:
            rows = conn.execute("SELECT run_id, owner, created_at FROM runs WHERE status = 'running'").fetchall()
        if not rows:
            return []
        marks = [(reason, run_id) for run_id, owner, created in rows
                 if (reason := abandoned_reason(owner, created, now=_records._utcnow, max_age_hours=hours))]
        if not marks:
            return []
        try:
            with self._transaction(write=True) as conn:
                stamp = _iso(_records._utcnow())
                conn.executemany(
                    "UPDATE runs SET status = 'interrupted', updated_at = ?, error = ? "
                    "WHERE run_id = ? AND status = 'running'",
                    [(stamp, reason, run_id) for reason, run_id in marks],
                )
        except AuditInputError as err:
            if err.code in ("REGISTRY_FULL", "REGISTRY_READ_ONLY"):
                return []
            raise
        return [run_id for _, run_id in marks]

    # -- reads ---------------------------------------------------------------
    def list_runs(
        self,
        *,
        audit_kind: str | None = None,
        dataset_fingerprint: str | None = None,
        model: str | None = None,
        status: str | None = None,
        since: str | dt.date | None = None,
        until: str | dt.date | None = None,
    ) -> pd.DataFrame:
        """List runs, newest first, without loading their tables.

        Parameters
        ----------
        audit_kind, dataset_fingerprint, model, status : str, optional
            Exact-match filters; ``model`` matches ``model_spec["kind"]``.
        since, until : str, datetime, date or pandas.Timestamp, optional
            Inclusive bounds on ``created_at``. Naive values are UTC; a
            ``datetime.date`` as ``until`` includes that whole day.

        Returns
        -------
        pandas.DataFrame
            One row per run with columns ``run_id``, ``created_at``,
            ``updated_at``, ``audit_kind``, ``status``, ``dataset_name``,
            ``dataset_fingerprint``, ``grouping_hash``, ``model``,
            ``n_tables`` (int64), sorted by ``created_at`` descending.

        Raises
        ------
        AuditInputError
            ``REGISTRY_BAD_STATUS``, ``REGISTRY_BAD_DATE``.
        """
        clauses: list[str] = []
        params: list[Any] = []
        if status is not None and status not in RUN_STATUSES:
            raise fail("REGISTRY_BAD_STATUS", status=status)
        self.mark_interrupted()
        for column, value in (
            ("audit_kind", audit_kind),
            ("dataset_fingerprint", dataset_fingerprint),
            ("model", model),
            ("status", status),
        ):
            if value is not None:
                clauses.append(f"r.{column} = ?")
                params.append(value)
        lo = _parse_bound(since, "since")
        hi = _parse_bound(until, "until")
        if lo is not None:
            clauses.append("r.created_at >= ?")
            params.append(lo)
        if hi is not None:
            clauses.append("r.created_at <= ?")
            params.append(hi)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        sql = (
            "SELECT r.run_id, r.created_at, r.updated_at, r.audit_kind, r.status, "
            "r.dataset_name, r.dataset_fingerprint, r.grouping_hash, r.model, "
            "(SELECT COUNT(*) FROM run_tables t WHERE t.run_id = r.run_id) AS n_tables "
            f"FROM runs r {where} ORDER BY r.created_at DESC, r.run_id DESC"
        )
        with self._connect() as conn:
            rows = conn.execute(sql, params).fetchall()
        df = pd.DataFrame.from_records(rows, columns=_SUMMARY_COLUMNS)
        df["n_tables"] = df["n_tables"].astype("int64")
        return df

    def load(self, run_id: str) -> RunRecord:
        """Load one run with its tables and artifacts, under the current names.

        A run saved before a table or manifest key was renamed is read through
        :func:`~audit_core.runs.registry.with_current_names` (the one migration
        of stored names); the stored run itself is not changed.

        Raises
        ------
        AuditInputError
            ``RUN_NOT_FOUND`` naming the id.
        """
        with self._transaction(write=False) as conn:
            row = conn.execute(
                "SELECT run_id, created_at, updated_at, audit_kind, status, "
                "dataset_name, dataset_fingerprint, grouping_hash, model_spec, "
                "config, manifest, error FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                raise fail("RUN_NOT_FOUND", run_id=run_id, path=self.path)
            table_rows = conn.execute(
                "SELECT name, parquet FROM run_tables WHERE run_id = ? ORDER BY position",
                (run_id,),
            ).fetchall()
            artifact_rows = conn.execute(
                "SELECT name, data FROM run_artifacts WHERE run_id = ? ORDER BY name",
                (run_id,),
            ).fetchall()
        tables = {name: _deserialise_table(blob) for name, blob in table_rows}
        artifacts = {name: bytes(data) for name, data in artifact_rows}
        return with_current_names(RunRecord(
            run_id=row[0],
            created_at=row[1],
            updated_at=row[2],
            audit_kind=row[3],
            status=row[4],
            dataset_name=row[5],
            dataset_fingerprint=row[6],
            grouping_hash=row[7],
            model_spec=json.loads(row[8]),
            config=json.loads(row[9]),
            manifest=json.loads(row[10]),
            tables=types.MappingProxyType(tables),
            artifacts=types.MappingProxyType(artifacts),
            error=row[11],
        ))

    # -- internals -----------------------------------------------------------
    @staticmethod
    def _run_row(
        *,
        audit_kind: str,
        dataset_name: str,
        dataset_fingerprint: str,
        grouping_hash: str | None,
        model_spec: dict,
        config: dict,
        manifest: dict | None,
    ) -> dict[str, Any]:
        _check_text(audit_kind, "audit_kind")
        _check_text(dataset_name, "dataset_name")
        _check_text(dataset_fingerprint, "dataset_fingerprint")
        _check_text(grouping_hash, "grouping_hash", optional=True)
        return {
            "audit_kind": audit_kind,
            "dataset_name": dataset_name,
            "dataset_fingerprint": dataset_fingerprint,
            "grouping_hash": grouping_hash,
            "model": _model_kind(model_spec),
            "model_spec": _dump_json(model_spec, "model_spec"),
            "config": _dump_json(config, "config"),
            "manifest": _dump_json(manifest, "manifest"),
        }

    @staticmethod
    def _insert_run(conn: sqlite3.Connection, row: dict[str, Any], *, status: str, owner: str | None = None) -> str:
        for _ in range(5):
            now = _records._utcnow()
            run_id = _new_run_id(now)
            try:
                conn.execute(
                    "INSERT INTO runs (run_id, created_at, updated_at, audit_kind, "
                    "status, dataset_name, dataset_fingerprint, grouping_hash, model, "
                    "model_spec, config, manifest, error, owner) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                    (
                        run_id,
                        _iso(now),
                        _iso(now),
                        row["audit_kind"],
                        status,
                        row["dataset_name"],
                        row["dataset_fingerprint"],
                        row["grouping_hash"],
                        row["model"],
                        row["model_spec"],
                        row["config"],
                        row["manifest"],
                        owner,
                    ),
                )
            except sqlite3.IntegrityError:  # pragma: no cover - 1 in 2**32
                continue
            return run_id
        raise RuntimeError("could not allocate a unique run id")  # pragma: no cover

    def _require_running(self, conn: sqlite3.Connection, run_id: str) -> None:
        row = conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise fail("RUN_NOT_FOUND", run_id=run_id, path=self.path)
        if row[0] not in ("running", "interrupted"):  # a late finish revives an interrupted guess
            raise fail("RUN_NOT_RUNNING", run_id=run_id, status=row[0])

    @staticmethod
    def _write_results(
        conn: sqlite3.Connection,
        run_id: str,
        blobs: list[tuple[str, bytes]],
        artifacts: list[tuple[str, bytes]],
    ) -> None:
        conn.executemany(
            "INSERT INTO run_tables (run_id, name, position, parquet) VALUES (?, ?, ?, ?)",
            [(run_id, name, i, blob) for i, (name, blob) in enumerate(blobs)],
        )
        conn.executemany(
            "INSERT INTO run_artifacts (run_id, name, data) VALUES (?, ?, ?)",
            [(run_id, name, data) for name, data in artifacts],
        )
