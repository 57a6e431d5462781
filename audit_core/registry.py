"""Saved-run registry: an embedded SQLite database of audit runs.

Every audit (model, fragility, transport, receipts, ...) can be saved as a
*run*: its inputs (dataset fingerprint, grouping hash, model spec, config),
its provenance manifest, its result tables and optional binary artifacts
(e.g. a saved model file). Runs are stored in one SQLite file shared by the
Streamlit app and any number of CLI processes.

Design
------
* SQLite (stdlib :mod:`sqlite3`) in WAL mode with a busy timeout, so several
  *processes* can write the same file at once; writers are serialised by
  SQLite's file locks and readers never block. Every write is one
  ``BEGIN IMMEDIATE`` transaction.
* A new connection per operation: a :class:`RunRegistry` object holds only a
  path and is safe to share across threads (e.g. Streamlit sessions).
* Result tables are stored as Parquet bytes (pyarrow) in BLOB columns, so
  dtypes, indexes and missing values round-trip exactly.
* ``config``, ``model_spec`` and ``manifest`` are JSON (``sort_keys=True``);
  only plain JSON values are accepted so that what is loaded equals what was
  saved.
* The file is stamped with ``PRAGMA application_id`` and a ``meta`` table
  holding ``schema_version``. A file that is not SQLite, belongs to another
  application, or has a newer schema is refused with a declared error and is
  never modified.

This module is pure: it must not import streamlit or plotly.
"""
from __future__ import annotations

import datetime as _dt
import io
import json
import math
import os
import secrets
import sqlite3
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = [
    "APPLICATION_ID",
    "ENV_VAR",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "RunRecord",
    "RunRegistry",
    "RunStatus",
    "default_registry_path",
]

#: Environment variable that overrides the registry location.
ENV_VAR = "AUDIT_REGISTRY_PATH"
#: Version of the on-disk schema written by this module.
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` stamped into every registry file ("RAUD").
APPLICATION_ID = 0x52415544
#: Allowed values of :attr:`RunRecord.status`.
RUN_STATUSES: tuple[str, ...] = ("running", "done", "failed")
RunStatus = Literal["running", "done", "failed"]

_BUSY_TIMEOUT_S = 30.0
_SUMMARY_COLUMNS = [
    "run_id",
    "created_at",
    "updated_at",
    "audit_kind",
    "status",
    "dataset_name",
    "dataset_fingerprint",
    "grouping_hash",
    "model",
    "n_tables",
]

_FRESH_HINT = (
    "Set the environment variable AUDIT_REGISTRY_PATH to a new file "
    "(e.g. ~/.reliability_audit/registry-2.sqlite3) to start a fresh registry; "
    "the existing file was left untouched."
)

register_messages(
    {
        "RUN_NOT_FOUND": (
            "No saved run with id {run_id!r} in the registry {path}. "
            "It may have been deleted; pick a run from the list of saved runs."
        ),
        "RUN_EXISTS": (
            "A run with id {run_id!r} is already in the registry {path}; delete it first "
            "to restore this copy."
        ),
        "RUN_NOT_RUNNING": (
            "Run {run_id!r} is already {status!r}; only a run that is still "
            "'running' can be finished or marked as failed."
        ),
        "REGISTRY_CORRUPT": (
            "The run registry at {path} is not a readable registry database "
            "({reason}). " + _FRESH_HINT
        ),
        "REGISTRY_FOREIGN": (
            "The file {path} is an SQLite database of another application, not "
            "a reliability-audit run registry. " + _FRESH_HINT
        ),
        "REGISTRY_NEWER_SCHEMA": (
            "The run registry at {path} uses schema version {found}, but this "
            "version of the app only understands version {supported}. Upgrade "
            "the app, or " + _FRESH_HINT[0].lower() + _FRESH_HINT[1:]
        ),
        "REGISTRY_OLDER_SCHEMA": (
            "The run registry at {path} uses schema version {found}, older than version {supported} "
            "of this app. Nothing was changed. Upgrade it explicitly with "
            "`python -c \"from audit_core.registry import RunRegistry; RunRegistry.upgrade('{path}')\"`: "
            "a byte-for-byte backup is written first to {backup}. Or " + _FRESH_HINT[0].lower() + _FRESH_HINT[1:]
        ),
        "REGISTRY_UNAVAILABLE": (
            "Cannot open the run registry at {path} ({reason}). Check that the "
            "folder is writable, or set the environment variable "
            "AUDIT_REGISTRY_PATH to a writable file."
        ),
        "REGISTRY_NOT_JSON": (
            "Cannot save the run: {field} value at {key} is of type {type_name}, "
            "which cannot be stored as JSON. {hint}"
        ),
        "REGISTRY_BAD_FIELD": (
            "Cannot save the run: {name} must be {expected}, got {got!r}."
        ),
        "REGISTRY_BAD_TABLE": (
            "Cannot save the run: table {name!r} cannot be stored ({reason})."
        ),
        "REGISTRY_BAD_ARTIFACT": (
            "Cannot save the run: artifact {name!r} must be bytes, "
            "got {type_name}."
        ),
        "REGISTRY_BAD_STATUS": (
            "Unknown run status {status!r}; use one of 'running', 'done', "
            "'failed'."
        ),
        "REGISTRY_BAD_DATE": (
            "Cannot filter runs by {name}={value!r}: not a date or timestamp. "
            "Use e.g. '2024-05-01' or '2024-05-01T13:00:00+00:00'."
        ),
    }
)

_SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE runs (
    run_id              TEXT PRIMARY KEY,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    audit_kind          TEXT NOT NULL,
    status              TEXT NOT NULL
                        CHECK (status IN ('running', 'done', 'failed')),
    dataset_name        TEXT NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    grouping_hash       TEXT,
    model               TEXT,
    model_spec          TEXT NOT NULL,
    config              TEXT NOT NULL,
    manifest            TEXT NOT NULL,
    error               TEXT
);
CREATE INDEX runs_created_at ON runs (created_at);
CREATE INDEX runs_fingerprint ON runs (dataset_fingerprint);
CREATE TABLE run_tables (
    run_id   TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    name     TEXT NOT NULL,
    position INTEGER NOT NULL,
    parquet  BLOB NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE run_artifacts (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    data   BLOB NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""


#: Schema migrations: ``version -> function(conn)`` upgrading ``version`` to
#: ``version + 1`` inside one transaction. Version 1 is the first released
#: schema, so there are none yet; a file stamped with an older version is
#: backed up and recreated by :meth:`RunRegistry.upgrade`.
_MIGRATIONS: dict[int, Any] = {}


def _backup_path(path: Path, version: int) -> Path:
    return path.with_name(f"{path.name}.schema-v{version}.bak")


# --------------------------------------------------------------------------
# Public helpers
# --------------------------------------------------------------------------
def default_registry_path() -> Path:
    """Return the registry location.

    Returns
    -------
    pathlib.Path
        ``$AUDIT_REGISTRY_PATH`` if that environment variable is set and not
        empty (``~`` is expanded), else
        ``~/.reliability_audit/registry.sqlite3``. Nothing is created here.
    """
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        return Path(override).expanduser()
    return Path.home() / ".reliability_audit" / "registry.sqlite3"


@dataclass(frozen=True, kw_only=True, eq=False)
class RunRecord:
    """One saved run, as returned by :meth:`RunRegistry.load`.

    Parameters
    ----------
    run_id : str
        Registry id, ``YYYYMMDDTHHMMSSffffff-<8 hex>`` (UTC creation time plus
        random suffix); sorts by creation time.
    created_at, updated_at : str
        UTC ISO-8601 timestamps with microseconds, e.g.
        ``"2024-05-01T13:00:00.123456+00:00"``.
    audit_kind : str
        Kind of audit, e.g. ``"model"``, ``"fragility"``, ``"transport"``,
        ``"receipts"``.
    status : {"running", "done", "failed"}
        Lifecycle state. ``"done"`` runs always have their tables.
    dataset_name : str
        Display name of the audited dataset.
    dataset_fingerprint : str
        SHA-256 hex digest of the dataset.
    grouping_hash : str or None
        Hash of the grouping definition, if any.
    model_spec, config, manifest : dict
        JSON-compatible dictionaries as saved.
    tables : Mapping[str, pandas.DataFrame]
        Result tables in the order they were saved (read-only mapping).
    artifacts : Mapping[str, bytes]
        Binary artifacts (read-only mapping).
    error : str or None
        Error text of a ``"failed"`` run.

    Notes
    -----
    Equality is identity (``eq=False``) because DataFrames have no boolean
    equality; compare fields explicitly.
    """

    run_id: str
    created_at: str
    updated_at: str
    audit_kind: str
    status: RunStatus
    dataset_name: str
    dataset_fingerprint: str
    grouping_hash: str | None
    model_spec: dict
    config: dict
    manifest: dict
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    artifacts: Mapping[str, bytes] = field(default_factory=dict)
    error: str | None = None

    @property
    def model(self) -> str | None:
        """``model_spec["kind"]`` if present, else ``None``."""
        return _model_kind(self.model_spec)

    def to_summary(self) -> dict[str, Any]:
        """Summarise the run without its table contents.

        Returns
        -------
        dict
            The :meth:`RunRegistry.list_runs` columns (``run_id``,
            ``created_at``, ``updated_at``, ``audit_kind``, ``status``,
            ``dataset_name``, ``dataset_fingerprint``, ``grouping_hash``,
            ``model``, ``n_tables``) plus ``tables`` (name -> ``(rows,
            columns)``), ``artifacts`` (name -> size in bytes) and ``error``.
        """
        return {
            "run_id": self.run_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "audit_kind": self.audit_kind,
            "status": self.status,
            "dataset_name": self.dataset_name,
            "dataset_fingerprint": self.dataset_fingerprint,
            "grouping_hash": self.grouping_hash,
            "model": self.model,
            "n_tables": len(self.tables),
            "tables": {name: tuple(df.shape) for name, df in self.tables.items()},
            "artifacts": {name: len(data) for name, data in self.artifacts.items()},
            "error": self.error,
        }


# --------------------------------------------------------------------------
# Internal helpers
# --------------------------------------------------------------------------
def _utcnow() -> _dt.datetime:
    """Current UTC time (a seam for tests)."""
    return _dt.datetime.now(_dt.timezone.utc)


def _iso(ts: _dt.datetime) -> str:
    return ts.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


def _new_run_id(ts: _dt.datetime) -> str:
    stamp = ts.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{secrets.token_hex(4)}"


def _model_kind(model_spec: Mapping[str, Any] | None) -> str | None:
    if isinstance(model_spec, Mapping):
        kind = model_spec.get("kind")
        if isinstance(kind, str):
            return kind
    return None


def _check_json(value: Any, field_name: str, key: str) -> None:
    """Raise a declared error unless ``value`` round-trips through JSON."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if math.isfinite(value):
            return
        raise fail(
            "REGISTRY_NOT_JSON",
            field=field_name,
            key=key,
            type_name=f"float ({value!r})",
            hint="NaN and infinity are not valid JSON; store null or a string.",
        )
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, field_name, f"{key}[{i}]")
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise fail(
                    "REGISTRY_NOT_JSON",
                    field=field_name,
                    key=f"{key}[{k!r}]",
                    type_name=f"a dict key of type {type(k).__name__}",
                    hint="Dictionary keys must be strings.",
                )
            _check_json(item, field_name, f"{key}[{k!r}]")
        return
    hint = "Use plain Python str, int, float, bool, None, list or dict values"
    if isinstance(value, tuple):
        hint += " (a tuple would be loaded back as a list; pass a list)"
    elif type(value).__module__ == "numpy":
        hint += " (convert numpy values with .item() or .tolist())"
    raise fail(
        "REGISTRY_NOT_JSON",
        field=field_name,
        key=key,
        type_name=type(value).__name__,
        hint=hint + ".",
    )


def _dump_json(value: Any, field_name: str) -> str:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise fail(
            "REGISTRY_BAD_FIELD",
            name=field_name,
            expected="a dict",
            got=type(value).__name__,
        )
    _check_json(value, field_name, field_name)
    return json.dumps(value, sort_keys=True, allow_nan=False)


def _check_text(value: Any, name: str, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str) or not value.strip():
        raise fail(
            "REGISTRY_BAD_FIELD",
            name=name,
            expected="a non-empty string" + (" or None" if optional else ""),
            got=value,
        )


def _serialise_tables(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, bytes]]:
    if not isinstance(tables, Mapping):
        raise fail(
            "REGISTRY_BAD_FIELD",
            name="tables",
            expected="a mapping of table name to DataFrame",
            got=type(tables).__name__,
        )
    out: list[tuple[str, bytes]] = []
    for name, df in tables.items():
        if not isinstance(name, str) or not name:
            raise fail(
                "REGISTRY_BAD_TABLE", name=name, reason="table names must be non-empty strings"
            )
        if not isinstance(df, pd.DataFrame):
            raise fail(
                "REGISTRY_BAD_TABLE",
                name=name,
                reason=f"expected a pandas DataFrame, got {type(df).__name__}",
            )
        buf = io.BytesIO()
        try:
            df.to_parquet(buf, engine="pyarrow")
        except Exception as exc:  # pyarrow raises many exception types
            raise fail("REGISTRY_BAD_TABLE", name=name, reason=str(exc)) from exc
        out.append((name, buf.getvalue()))
    return out


def _deserialise_table(blob: bytes) -> pd.DataFrame:
    return pd.read_parquet(io.BytesIO(blob), engine="pyarrow")


def _check_artifacts(artifacts: Mapping[str, bytes] | None) -> list[tuple[str, bytes]]:
    if artifacts is None:
        return []
    if not isinstance(artifacts, Mapping):
        raise fail(
            "REGISTRY_BAD_FIELD",
            name="artifacts",
            expected="a mapping of artifact name to bytes",
            got=type(artifacts).__name__,
        )
    out = []
    for name, data in artifacts.items():
        if not isinstance(name, str) or not name:
            raise fail(
                "REGISTRY_BAD_FIELD",
                name="artifact name",
                expected="a non-empty string",
                got=name,
            )
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise fail("REGISTRY_BAD_ARTIFACT", name=name, type_name=type(data).__name__)
        out.append((name, bytes(data)))
    return out


def _parse_bound(value: Any, name: str) -> str | None:
    """Normalise a ``since``/``until`` bound to the stored ISO format."""
    if value is None:
        return None
    date_only = isinstance(value, _dt.date) and not isinstance(value, _dt.datetime)
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise fail("REGISTRY_BAD_DATE", name=name, value=value) from exc
    if ts is pd.NaT or pd.isna(ts):
        raise fail("REGISTRY_BAD_DATE", name=name, value=value)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    if date_only and name == "until":
        # A calendar day as upper bound includes the whole day.
        ts = ts + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)
    return _iso(ts.to_pydatetime())


# --------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------
class RunRegistry:
    """Saved-run registry backed by one SQLite file.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Database file. Defaults to :func:`default_registry_path`. The folder
        and file are created if missing.

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
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_registry_path()
        self._ensure_schema()

    def __repr__(self) -> str:
        return f"RunRegistry({str(self.path)!r})"

    # -- connections -------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=_BUSY_TIMEOUT_S, isolation_level=None
            )
        except (OSError, sqlite3.Error) as exc:
            raise fail("REGISTRY_UNAVAILABLE", path=self.path, reason=str(exc)) from exc
        return conn

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A configured connection in autocommit mode, closed afterwards."""
        if not self.path.exists():
            # The file was removed after construction: recreate it.
            self._ensure_schema()
        conn = self._open()
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """One transaction: ``BEGIN IMMEDIATE`` for writes, snapshot for reads."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    def _ensure_schema(self) -> None:
        """Validate an existing file or initialise a new one.

        Only read statements run until the file is known to be empty or
        ours, so a foreign or corrupt file is never modified.
        """
        conn = self._open()
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            state = self._inspect(conn)
            if state == "empty":
                conn.execute("BEGIN IMMEDIATE")
                try:
                    # Another process may have initialised it meanwhile.
                    if self._inspect(conn) == "empty":
                        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                        for statement in _SCHEMA.split(";"):
                            if statement.strip():
                                conn.execute(statement)
                        conn.executemany(
                            "INSERT INTO meta (key, value) VALUES (?, ?)",
                            [
                                ("schema_version", str(SCHEMA_VERSION)),
                                ("application", "reliability-audit run registry"),
                                ("created_at", _iso(_utcnow())),
                            ],
                        )
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # pragma: no cover - e.g. network FS
                raise fail(
                    "REGISTRY_UNAVAILABLE",
                    path=self.path,
                    reason=f"could not enable WAL journal mode (got {mode!r})",
                )
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                # locked / unable to open / read-only: not the file's content.
                raise fail("REGISTRY_UNAVAILABLE", path=self.path, reason=str(exc)) from exc
            raise fail("REGISTRY_CORRUPT", path=self.path, reason=str(exc)) from exc
        finally:
            conn.close()

    def _inspect(self, conn: sqlite3.Connection) -> str:
        """Classify the file: ``"empty"``, ``"ours"``, or raise a declared error."""
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        names = {
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if app_id == 0 and not names:
            return "empty"
        if app_id != APPLICATION_ID:
            raise fail("REGISTRY_FOREIGN", path=self.path)
        if "meta" not in names:
            raise fail("REGISTRY_CORRUPT", path=self.path, reason="the meta table is missing")
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            version = int(row[0]) if row is not None else None
        except (TypeError, ValueError):
            version = None
        if version is None:
            raise fail(
                "REGISTRY_CORRUPT", path=self.path, reason="the schema version is missing"
            )
        if version > SCHEMA_VERSION:
            raise fail(
                "REGISTRY_NEWER_SCHEMA",
                path=self.path,
                found=version,
                supported=SCHEMA_VERSION,
            )
        if version < SCHEMA_VERSION:
            raise fail(
                "REGISTRY_OLDER_SCHEMA",
                path=self.path,
                found=version,
                supported=SCHEMA_VERSION,
                backup=_backup_path(self.path, version),
            )
        missing = {"runs", "run_tables", "run_artifacts"} - names
        if missing:
            raise fail(
                "REGISTRY_CORRUPT",
                path=self.path,
                reason="missing table(s) " + ", ".join(sorted(missing)),
            )
        return "ours"

    # -- upgrades ------------------------------------------------------------
    @classmethod
    def upgrade(cls, path: str | Path) -> "RunRegistry":
        """Upgrade an older-schema registry file, after a byte-for-byte backup.

        The file is first copied to ``<name>.schema-v<N>.bak`` next to it
        (never overwritten: an existing backup is an error). Each step
        ``N -> N+1`` listed in :data:`_MIGRATIONS` then runs in one
        transaction. When no migration exists for a step (there is none for
        versions before 1, which predate the released format), the old file is
        kept only as the backup and a fresh registry is created in its place.

        Returns
        -------
        RunRegistry
            The upgraded registry.

        Raises
        ------
        AuditInputError
            ``REGISTRY_FOREIGN``/``REGISTRY_CORRUPT``/``REGISTRY_NEWER_SCHEMA``
            exactly as the constructor (nothing is touched then), or
            ``REGISTRY_UNAVAILABLE`` when the backup cannot be written.
        """
        import shutil

        p = Path(path).expanduser()
        try:
            return cls(p)  # already current
        except Exception as exc:  # noqa: BLE001 - re-raised unless it is the older-schema case
            if getattr(exc, "code", None) != "REGISTRY_OLDER_SCHEMA":
                raise
        con = sqlite3.connect(str(p))
        try:
            version = int(con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            con.close()
        backup = _backup_path(p, version)
        if backup.exists():
            raise fail("REGISTRY_UNAVAILABLE", path=p, reason=f"the backup {backup} already exists; move it away first")
        try:
            shutil.copy2(p, backup)
        except OSError as exc:
            raise fail("REGISTRY_UNAVAILABLE", path=p, reason=f"cannot write the backup {backup}: {exc}") from exc
        if all(v in _MIGRATIONS for v in range(version, SCHEMA_VERSION)):
            con = sqlite3.connect(str(p), isolation_level=None)
            try:
                for v in range(version, SCHEMA_VERSION):
                    con.execute("BEGIN IMMEDIATE")
                    _MIGRATIONS[v](con)
                    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(v + 1),))
                    con.execute(f"PRAGMA user_version = {v + 1}")
                    con.execute("COMMIT")
            finally:
                con.close()
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(str(p) + suffix).unlink(missing_ok=True)
        return cls(p)

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
            return self._insert_run(conn, row, status="running")

    def finish_run(
        self,
        run_id: str,
        *,
        tables: Mapping[str, pd.DataFrame],
        artifacts: Mapping[str, bytes] | None = None,
        manifest: dict | None = None,
    ) -> None:
        """Store a run's tables and artifacts and mark it ``"done"``.

        Everything happens in one transaction: a run is never ``"done"``
        without its tables, and a crash leaves it ``"running"``.

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
        with self._transaction(write=True) as conn:
            self._require_running(conn, run_id)
            self._write_results(conn, run_id, blobs, arts)
            now = _iso(_utcnow())
            if manifest_json is None:
                conn.execute(
                    "UPDATE runs SET status = 'done', updated_at = ? WHERE run_id = ?",
                    (now, run_id),
                )
            else:
                conn.execute(
                    "UPDATE runs SET status = 'done', updated_at = ?, manifest = ? "
                    "WHERE run_id = ?",
                    (now, manifest_json, run_id),
                )

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
                "UPDATE runs SET status = 'failed', updated_at = ?, error = ? "
                "WHERE run_id = ?",
                (_iso(_utcnow()), str(error), run_id),
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
        (:func:`audit_core.bundle.import_bundle`); ordinary code uses
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
            if _parse_bound(getattr(record, name), name) is None:  # pragma: no cover
                raise fail("REGISTRY_BAD_DATE", name=name, value=getattr(record, name))
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

    # -- reads ---------------------------------------------------------------
    def list_runs(
        self,
        *,
        audit_kind: str | None = None,
        dataset_fingerprint: str | None = None,
        model: str | None = None,
        status: str | None = None,
        since: Any = None,
        until: Any = None,
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
        """Load one run with its tables and artifacts.

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
        return RunRecord(
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
        )

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
    def _insert_run(conn: sqlite3.Connection, row: dict[str, Any], *, status: str) -> str:
        for _ in range(5):
            now = _utcnow()
            run_id = _new_run_id(now)
            try:
                conn.execute(
                    "INSERT INTO runs (run_id, created_at, updated_at, audit_kind, "
                    "status, dataset_name, dataset_fingerprint, grouping_hash, model, "
                    "model_spec, config, manifest, error) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
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
        if row[0] != "running":
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
