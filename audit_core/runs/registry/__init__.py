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

from ._messages import REGISTRY_MESSAGES  # first: every submodule may fail with these
from ._records import (
    ENV_VAR, RENAMED_MANIFEST_KEYS, RENAMED_TABLES, RUN_STATUSES, RunRecord, RunStatus, default_registry_path,
    with_current_names,
)
from ._registry import RunRegistry
from ._schema import _MIGRATIONS, APPLICATION_ID, SCHEMA_VERSION  # noqa: F401  (_MIGRATIONS: the upgrade hook tests patch)

__all__ = [
    "REGISTRY_MESSAGES",
    "APPLICATION_ID",
    "ENV_VAR",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "RunRecord",
    "RunRegistry",
    "RunStatus",
    "default_registry_path",
    "RENAMED_TABLES",
    "RENAMED_MANIFEST_KEYS",
    "with_current_names",
]
