"""Session state and app-side caching.

All per-session values live under the keys in :class:`Keys`. Widget values
that must survive a page switch use a page prefix (``dg_``, ``fr_``, ``tr_``,
``rc_``, ``ru_``; see :data:`PERSIST_PREFIXES`) and are re-assigned on
every run by :func:`keep_widget_state` (Streamlit otherwise drops the state of
widgets that are not on the current page). Widgets whose state cannot be
assigned use other prefixes: ``act_`` (buttons), ``up_`` (file uploaders),
``ed_`` (data editors) and ``view_`` (display elements).
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

import pandas as pd
import streamlit as st

from audit_core.data.intake import LoadedTable, ReadOptions, SheetInfo, check_table, list_sheets, read_table, read_tables
from audit_core.data.samples import SampleInfo, load_sample
from audit_core.limits import Limits
from audit_core.runs.registry import RunRegistry

__all__ = [
    "Keys",
    "keep_widget_state",
    "get",
    "registry",
    "cached_sample",
    "cached_upload",
    "cached_uploads",
    "cached_sheets",
    "upload_options",
]

#: Value-widget key prefixes by page: Data & groups, Fragility, Transport, Receipts, Runs.
PERSIST_PREFIXES = ("dg_", "fr_", "tr_", "rc_", "ru_")


class Keys:
    """Session-state keys (not widget keys)."""

    TABLE = "table"  # LoadedTable
    SOURCE_ID = "source_id"  # str: which table the declarations belong to
    SAMPLE = "sample_info"  # SampleInfo | None
    COLUMNS = "columns_table"  # DataFrame: column, kind, role, group, missing, unique
    EDITOR_VERSION = "columns_editor_version"  # int, bumped when the base table is replaced
    TARGETS = "targets"  # list[dict]
    WORKSPACE = "workspace"  # Workspace | None
    LAST_RUN = "last_run_id"  # str | None
    MESSAGE = "last_message"  # str | None


def keep_widget_state() -> None:
    """Re-assign persistent widget values so page switches do not drop them."""
    for key in list(st.session_state.keys()):
        if str(key).startswith(PERSIST_PREFIXES):
            st.session_state[key] = st.session_state[key]


def get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


@st.cache_resource
def _registry_at(path: str | None) -> RunRegistry:
    return RunRegistry(path)


def registry() -> RunRegistry:
    """One registry object per file; it opens a connection per call (thread-safe)."""
    return _registry_at(os.environ.get("AUDIT_REGISTRY_PATH") or None)


@st.cache_data(show_spinner="Loading sample…")
def cached_sample(name: str) -> tuple[pd.DataFrame, SampleInfo]:
    return load_sample(name)


@st.cache_data(show_spinner="Reading file…", max_entries=8)
def cached_upload(data: bytes, name: str, options: ReadOptions) -> LoadedTable:
    return read_table(data, name=name, options=options)


@st.cache_data(show_spinner="Reading files…", max_entries=4)
def cached_uploads(files: tuple[tuple[bytes, str], ...], options: ReadOptions) -> LoadedTable:
    """Several text files stacked into one table (see :func:`audit_core.data.intake.read_tables`)."""
    return read_tables(files, options=options)


@st.cache_data(show_spinner=False, max_entries=4)
def cached_sheets(data: bytes, name: str, options: ReadOptions) -> tuple[SheetInfo, ...]:
    return list_sheets(data, name=name, options=options)


def upload_options(**kwargs: Any) -> ReadOptions:
    """Read options with the caps of :meth:`audit_core.limits.Limits.from_env` (``AUDIT_MAX_*``)."""
    return ReadOptions.from_limits(Limits.from_env(), **kwargs)


def sample_table(name: str) -> LoadedTable:
    """A bundled sample as a checked :class:`LoadedTable`."""
    frame, info = cached_sample(name)
    display = info.path.name if info.path is not None else f"{info.name} (scikit-learn)"
    checked, _ = check_table(frame.copy(), name=display)
    digest = hashlib.sha256(pd.util.hash_pandas_object(checked, index=False).to_numpy().tobytes()).hexdigest()
    return LoadedTable(frame=checked, name=display, format="csv", sha256=digest, n_bytes=0)
