"""The registry file: connections (read-write or read-only), schema creation and inspection, and upgrades.

A file that cannot be written (permissions, a read-only mount) is opened
read-only (SQLite ``mode=ro``, or ``immutable=1`` when not even the WAL index
can be created): listing and loading work, every write raises
``REGISTRY_READ_ONLY``. A write that fails because the disk is full raises
``REGISTRY_FULL`` saying what to free; the transaction is rolled back, so
nothing partial is left.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from audit_core.errors import AuditInputError, fail

from . import _records
from ._records import _iso

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION"]

#: Version of the on-disk schema written by this module (2: status ``interrupted`` and the ``owner`` column).
SCHEMA_VERSION = 2
#: Oldest schema that can still be browsed read-only without an upgrade.
_READABLE_VERSION = 1
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
                        CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    dataset_name        TEXT NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    grouping_hash       TEXT,
    model               TEXT,
    model_spec          TEXT NOT NULL,
    config              TEXT NOT NULL,
    manifest            TEXT NOT NULL,
    error               TEXT,
    owner               TEXT
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


_V1_COLUMNS = ("run_id, created_at, updated_at, audit_kind, status, dataset_name, dataset_fingerprint, "
               "grouping_hash, model, model_spec, config, manifest, error")


def _migrate_1_to_2(con: sqlite3.Connection) -> None:
    """Version 2: ``status`` may be ``interrupted`` and ``runs`` gains ``owner``.

    SQLite cannot alter a CHECK constraint, so ``runs`` is rebuilt (copy, drop,
    rename; foreign keys are off on the upgrade connection, so nothing cascades).
    """
    runs_sql = _SCHEMA.split("CREATE TABLE runs (", 1)[1].split(");", 1)[0]
    con.execute(f"CREATE TABLE runs_v2 ({runs_sql})")
    con.execute(f"INSERT INTO runs_v2 ({_V1_COLUMNS}) SELECT {_V1_COLUMNS} FROM runs")
    con.execute("DROP TABLE runs")
    con.execute("ALTER TABLE runs_v2 RENAME TO runs")
    con.execute("CREATE INDEX runs_created_at ON runs (created_at)")
    con.execute("CREATE INDEX runs_fingerprint ON runs (dataset_fingerprint)")


#: Schema migrations: ``version -> function(conn)`` upgrading ``version`` to
#: ``version + 1`` inside one transaction. Version 1 is the first released
#: schema; a file stamped with an older version is backed up and recreated by
#: :meth:`RunRegistry.upgrade`.
_MIGRATIONS: dict[int, Any] = {1: _migrate_1_to_2}


def _is_read_only_error(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def _disk_is_full(path: Path, exc: BaseException) -> bool:
    """SQLITE_FULL, ENOSPC, or an I/O error while the disk holding ``path`` has (almost) no space left."""
    text = str(exc).lower()
    if "full" in text or getattr(exc, "errno", None) in (28, 122):  # ENOSPC, EDQUOT
        return True
    if "disk i/o error" in text:
        try:
            return shutil.disk_usage(path.parent).free < 1024 * 1024
        except OSError:
            return False
    return False


def _backup_path(path: Path, version: int) -> Path:
    return path.with_name(f"{path.name}.schema-v{version}.bak")


class _RegistryFile:
    """One registry file: connections, transactions, schema checks and upgrades.

    The base of :class:`RunRegistry`, which adds the run API; ``path`` is set
    by its constructor.
    """

    path: Path
    #: Why the file is open read-only (``None``: read-write).
    read_only_reason: str | None = None
    _immutable = False
    _older_version: int | None = None  # a readable older schema, open read-only until upgraded

    @property
    def older_version(self) -> int | None:
        """The schema version of a readable older file, open read-only until :meth:`upgrade`; ``None`` when current."""
        return self._older_version

    if TYPE_CHECKING:  # the constructor is RunRegistry's; upgrade() builds the subclass it is called on
        def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None: ...

    @property
    def read_only(self) -> bool:
        """Whether saving is off (the file could not be opened for writing)."""
        return self.read_only_reason is not None

    # -- connections -------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            if self.read_only:
                query = "immutable=1" if self._immutable else "mode=ro"
                uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?{query}"
                return sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=_BUSY_TIMEOUT_S, isolation_level=None
            )
        except (OSError, sqlite3.Error) as exc:
            if _disk_is_full(self.path, exc):
                raise self._full(exc) from exc
            raise fail("REGISTRY_UNAVAILABLE", path=self.path, reason=str(exc)) from exc
        return conn

    def _full(self, exc: BaseException) -> AuditInputError:
        return fail("REGISTRY_FULL", path=self.path, reason=str(exc), folder=self.path.parent)

    def _read_only_error(self, reason: str | None = None) -> AuditInputError:
        if self._older_version is not None:
            remedy = ("upgrade it first with `python -c \"from audit_core.runs.registry import RunRegistry; "
                      f"RunRegistry.upgrade('{self.path}')\"` (a byte-for-byte backup is written first)")
        else:
            remedy = ("make the file and its folder writable, or set the environment variable "
                      "AUDIT_REGISTRY_PATH to a writable file")
        return fail("REGISTRY_READ_ONLY", path=self.path, reason=reason or self.read_only_reason, remedy=remedy)

    def require_writable(self) -> None:
        """Raise ``REGISTRY_READ_ONLY`` (saying why and what to do) if saving is off."""
        if self.read_only:
            raise self._read_only_error()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A configured connection in autocommit mode, closed afterwards."""
        if not self.path.exists():
            # The file was removed after construction: recreate it.
            self._ensure_schema()
        conn = self._open()
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            if not self.read_only:
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        except sqlite3.OperationalError as exc:
            if _disk_is_full(self.path, exc):  # even reads fail when the WAL index cannot grow
                raise self._full(exc) from exc
            raise
        finally:
            conn.close()

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """One transaction: ``BEGIN IMMEDIATE`` for writes, snapshot for reads."""
        if write:
            self.require_writable()
        try:
            with self._connect() as conn:  # maps a full disk to REGISTRY_FULL
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                else:
                    conn.execute("COMMIT")  # on failure the connection closes and SQLite rolls back
        except sqlite3.OperationalError as exc:
            if write and _is_read_only_error(exc):
                raise self._read_only_error(str(exc)) from exc
            raise

    def _ensure_schema(self) -> None:
        """Validate an existing file or initialise a new one; fall back to read-only when it cannot be written.

        Only read statements run until the file is known to be empty or
        ours, so a foreign or corrupt file is never modified.
        """
        if not self.read_only and self.path.is_file() and not os.access(self.path, os.W_OK):
            self.read_only_reason = "no write permission on the file"
        if self.read_only:
            self._check_read_only()
            return
        try:
            self._check_writable()
        except AuditInputError as err:
            if err.code != "REGISTRY_OLDER_SCHEMA" or self._older_version is None:
                raise
            self.read_only_reason = f"it uses schema version {self._older_version}, older than {SCHEMA_VERSION}"
            self._check_read_only()
        except sqlite3.OperationalError as exc:
            if _disk_is_full(self.path, exc):
                raise self._full(exc) from exc
            if not (self.path.is_file() and _is_read_only_error(exc)):
                # locked / unable to open: not the file's content.
                raise fail("REGISTRY_UNAVAILABLE", path=self.path, reason=str(exc)) from exc
            self.read_only_reason = str(exc)
            self._check_read_only()

    def _check_read_only(self) -> None:
        """Inspect the file through a read-only connection (``mode=ro``, else ``immutable=1``)."""
        last: Exception | None = None
        for immutable in (False, True):
            self._immutable = immutable
            try:
                conn = self._open()
                try:
                    if self._inspect(conn, read_only=True) == "empty":
                        raise fail("REGISTRY_UNAVAILABLE", path=self.path,
                                   reason="the file is empty and cannot be written")
                    return
                finally:
                    conn.close()
            except sqlite3.OperationalError as exc:
                last = exc
            except sqlite3.DatabaseError as exc:
                raise fail("REGISTRY_CORRUPT", path=self.path, reason=str(exc)) from exc
        raise fail("REGISTRY_UNAVAILABLE", path=self.path, reason=str(last))

    def _check_writable(self) -> None:
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
            conn.execute("BEGIN IMMEDIATE")  # can this process write? (a read-only file opens without error)
            conn.execute("ROLLBACK")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise  # read-only, full, locked: decided by _ensure_schema
            raise fail("REGISTRY_CORRUPT", path=self.path, reason=str(exc)) from exc
        finally:
            conn.close()

    def _inspect(self, conn: sqlite3.Connection, *, read_only: bool = False) -> str:
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
        if _READABLE_VERSION <= version < SCHEMA_VERSION:
            self._older_version = version  # browsable read-only until upgraded
        if version < SCHEMA_VERSION and not (read_only and version >= _READABLE_VERSION):
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
            current = cls(p)
            if current.older_version is None:
                return current  # already current (or read-only for another reason)
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
