"""What a saved run is: :class:`RunRecord`, run ids, timestamps and the registry location."""
from __future__ import annotations

import datetime as _dt
import secrets
import types
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from audit_core.limits import setting

__all__ = ["ENV_VAR", "RENAMED_MANIFEST_KEYS", "RENAMED_TABLES", "RUN_STATUSES", "RunRecord", "RunStatus",
           "default_registry_path", "with_current_names"]

#: Environment variable that overrides the registry location.
ENV_VAR = "AUDIT_REGISTRY_PATH"
#: Allowed values of :attr:`RunRecord.status`.
RUN_STATUSES: tuple[str, ...] = ("running", "done", "failed", "interrupted")
RunStatus = Literal["running", "done", "failed", "interrupted"]
#: Columns of :meth:`RunRegistry.list_runs`.
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
    override = setting(ENV_VAR)
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
    status : {"running", "done", "failed", "interrupted"}
        Lifecycle state. ``"done"`` runs always have their tables;
        ``"interrupted"`` runs were left ``"running"`` by a process that ended
        (found when the registry was next opened; :attr:`error` says why).
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


#: Stored table names renamed since runs were first saved: ``audit_kind -> {old name: current name}``.
RENAMED_TABLES: dict[str, dict[str, str]] = {
    "fragility": {"summary": "certificates"},  # the per-case certificate table
    "transport": {"summary": "refit_summary"},  # the across-refit aggregates
}
#: Manifest keys renamed since runs were first saved: ``{old key: current key}`` (every audit kind).
RENAMED_MANIFEST_KEYS: dict[str, str] = {
    "summary": "key_numbers",  # the run's key numbers (AuditResult.key_numbers)
}


def with_current_names(record: RunRecord) -> RunRecord:
    """The run under the current table and manifest names: the one migration of stored names.

    Runs saved before a rename stored a table or manifest key under its old
    name (:data:`RENAMED_TABLES`, :data:`RENAMED_MANIFEST_KEYS`); every reader
    of stored runs (:meth:`RunRegistry.load`, the bundle reader) passes the
    run through here, so the rest of the library only knows the current
    names. Nothing is written back: the stored run keeps its names.

    Parameters
    ----------
    record : RunRecord
        A run as stored.

    Returns
    -------
    RunRecord
        ``record`` itself when no old name is present, else a copy with the
        old names replaced in place (table order kept). An old name whose
        current name is also present is left as it is.

    Examples
    --------
    >>> old = RunRecord(run_id="r", created_at="", updated_at="", audit_kind="fragility", status="done",
    ...                 dataset_name="d", dataset_fingerprint="f", grouping_hash=None, model_spec={},
    ...                 config={}, manifest={}, tables={"summary": pd.DataFrame(), "auroc": pd.DataFrame()})
    >>> list(with_current_names(old).tables)
    ['certificates', 'auroc']
    """
    tables_renamed = RENAMED_TABLES.get(record.audit_kind, {})

    def current(names: Mapping[str, Any], renamed: Mapping[str, str]) -> dict[str, Any]:
        return {(renamed[n] if n in renamed and renamed[n] not in names else n): v for n, v in names.items()}

    if not (set(tables_renamed) & set(record.tables) or set(RENAMED_MANIFEST_KEYS) & set(record.manifest)):
        return record
    return replace(record, tables=types.MappingProxyType(current(record.tables, tables_renamed)),
                   manifest=current(record.manifest, RENAMED_MANIFEST_KEYS))


# --------------------------------------------------------------------------
# Internal helpers
# --------------------------------------------------------------------------
def _utcnow() -> _dt.datetime:
    """Current UTC time (a seam for tests).

    The rest of the package calls it as ``_records._utcnow()``, so patching
    ``audit_core.runs.registry._records._utcnow`` fixes every timestamp it writes.
    """
    return _dt.datetime.now(_dt.UTC)


def _iso(ts: _dt.datetime) -> str:
    return ts.astimezone(_dt.UTC).isoformat(timespec="microseconds")


def _new_run_id(ts: _dt.datetime) -> str:
    stamp = ts.astimezone(_dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}-{secrets.token_hex(4)}"


def _model_kind(model_spec: Mapping[str, Any] | None) -> str | None:
    if isinstance(model_spec, Mapping):
        kind = model_spec.get("kind")
        if isinstance(kind, str):
            return kind
    return None

