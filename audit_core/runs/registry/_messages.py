"""Message templates of the run registry, registered once at import."""
from __future__ import annotations

from audit_core.errors import register_messages

__all__ = ["REGISTRY_MESSAGES"]

_FRESH_HINT = (
    "Set the environment variable AUDIT_REGISTRY_PATH to a new file "
    "(e.g. ~/.reliability_audit/registry-2.sqlite3) to start a fresh registry; "
    "the existing file was left untouched."
)

#: code -> template, registered below; the package's ``__init__`` imports this table first, so every
#: module of the package finds its templates registered.
REGISTRY_MESSAGES: dict[str, str] = {
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
        "'running' (or was marked 'interrupted') can be finished or marked as failed."
    ),
    "REGISTRY_READ_ONLY": (
        "The run registry at {path} is open read-only ({reason}): saved runs can be browsed, "
        "but saving is off. To save runs, {remedy}."
    ),
    "REGISTRY_FULL": (
        "Cannot write to the run registry at {path}: the disk is full ({reason}). Nothing was "
        "written. Free space on the disk holding {folder} (delete old runs on Runs & reports, or "
        "other files there), or set AUDIT_REGISTRY_PATH to a file on another disk, then try again."
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
        "`python -c \"from audit_core.runs.registry import RunRegistry; RunRegistry.upgrade('{path}')\"`: "
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
        "'failed', 'interrupted'."
    ),
    "REGISTRY_READ_ONLY_NOTICE": (
        "The run registry is open read-only ({reason}): saved runs can be browsed and exported, "
        "but saving is off, so new models and audits stay in this session only."
    ),
    "RUN_TABLES_UNREADABLE": (
        "The figures of run {run_id!r} cannot be drawn from its stored tables ({reason}); "
        "it was saved by another version or edited. Its tables, manifest and configuration "
        "are shown as stored."
    ),
    "REGISTRY_BAD_RUN_DATE": (
        "Cannot store the run {run_id}: its {name} is {value!r}, which is not a date and time "
        "(a run's timestamps look like '2024-05-01T13:00:00.000000+00:00')."
    ),
    "REGISTRY_BAD_DATE": (
        "Cannot filter runs by {name}={value!r}: not a date or timestamp. "
        "Use e.g. '2024-05-01' or '2024-05-01T13:00:00+00:00'."
    ),
}
register_messages(REGISTRY_MESSAGES)
