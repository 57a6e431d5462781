"""The registry file: connections, schema creation and inspection, and upgrades."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from audit_core.errors import fail

from . import _messages  # noqa: F401  (registers the REGISTRY_* messages)
from . import _records
from ._records import _iso

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION"]

#: Version of the on-disk schema written by this module.
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` stamped into every registry file ("RAUD").
APPLICATION_ID = 0x52415544

_BUSY_TIMEOUT_S = 30.0

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


class _RegistryFile:
    """One registry file: connections, transactions, schema checks and upgrades.

    The base of :class:`RunRegistry`, which adds the run API; ``path`` is set
    by its constructor.
    """

    path: Path

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
                                ("created_at", _iso(_records._utcnow())),
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
    def upgrade(cls, path: str | Path) -> Self:
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
