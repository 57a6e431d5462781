"""Making a table current on Data & groups: the column table, the declaration reset, and its transaction.

Streamlit can end a run at any session-state access (a newer rerun request is
honoured there), so adopting a table is written as a small transaction; see
:func:`adopt_table`.
"""
from __future__ import annotations

from collections.abc import MutableMapping

import pandas as pd
import streamlit as st

from audit_core.data.intake import LoadedTable
from audit_core.data.roles import infer_roles
from audit_core.data.samples import SAMPLES, SampleInfo
from components.feedback import guarded
from components.state import WORKSPACE_SLOT, Keys, sample_table, session, workspace_key

__all__ = ["NONE", "adopt_table", "adopted", "ensure_sample_loaded", "replace_columns_table",
           "seed_domain_values"]

NONE = "(none)"
# Widget values that name columns of the current table; cleared when the table changes.
_TABLE_BOUND = ("dg_new_", "dg_primary", "dg_drop_target", "dg_source_value", "dg_target_value")
# (table, source id, sample info) of an adoption not yet complete
_PENDING = workspace_key("adoption_pending")
# Column names and dtypes of the current table: a re-read that changes them refreshes the column table.
_TABLE_SIGNATURE = workspace_key("table_signature")


def _column_table(frame: pd.DataFrame, info: SampleInfo | None) -> pd.DataFrame:
    roles = infer_roles(frame)
    groups = dict(info.evidence_groups) if info else {}
    excluded = set(info.exclude_columns) if info else set()
    rows = []
    for col in frame.columns:
        s = frame[col]
        role = "ignore" if col in excluded else roles[col]
        rows.append(
            {
                "column": col,
                "dtype": str(s.dtype),
                "role": role,
                "group": groups.get(col, col),
                "missing_share": float(s.isna().mean()),
                "n_unique": int(s.nunique(dropna=True)),
            }
        )
    return pd.DataFrame(rows)


def _signature(frame: pd.DataFrame) -> tuple[tuple[str, str], ...]:
    return tuple((str(c), str(t)) for c, t in frame.dtypes.items())


def _edited_columns() -> pd.DataFrame:
    """The column table with the user's pending edits in the data editor applied."""
    base = st.session_state[Keys.COLUMNS].copy()
    edits = st.session_state.get(f"ed_columns_{st.session_state.get(Keys.EDITOR_VERSION, 0)}") or {}
    for row, changes in (edits.get("edited_rows") or {}).items():
        for col, value in changes.items():
            if col in base.columns and int(row) < len(base):
                base.loc[base.index[int(row)], col] = value
    return base


def _refresh_columns(table: LoadedTable, info: SampleInfo | None) -> None:
    """The same file re-read with other options: new column table, keeping the user's roles and groups
    for every column whose name and type did not change."""
    old = _edited_columns()
    fresh = _column_table(table.frame, info)
    kept = {r["column"]: r for r in old.to_dict("records")}
    for i, row in fresh.iterrows():
        prev = kept.get(row["column"])
        if prev is not None and prev["dtype"] == row["dtype"]:
            fresh.loc[i, ["role", "group"]] = [prev["role"], prev["group"]]
    replace_columns_table(fresh)


def adopt_table(table: LoadedTable, source_id: str, info: SampleInfo | None, *,
                state: MutableMapping | None = None) -> None:
    """Make ``table`` current; reset declarations only when the source changes.

    ``state``: a workspace kept aside (a plain mapping, see
    :mod:`components.workspaces`) to adopt into instead of the session's.

    Streamlit can end a run at any session-state access (a newer rerun request
    is honoured there), so an adoption can be cut short half-way: a click on
    a page link during a session's first run left the source id written and
    the column table not, and every later run failed with ``KeyError:
    columns_table``. So the adoption is a small transaction: the request is
    written first in one assignment (``_PENDING``) and the source id — the
    mark that an adoption is complete — is cleared, then set again last;
    :func:`ensure_sample_loaded` (run on every page right after its heading,
    :func:`components.shell.after_heading`) redoes a request left pending.
    """
    ss = session(state)
    if adopted(ss) == source_id:
        if ss.get(_TABLE_SIGNATURE) != _signature(table.frame):
            _refresh_columns(table, info)
            ss[_TABLE_SIGNATURE] = _signature(table.frame)
        ss[Keys.TABLE] = table
        return
    columns = _column_table(table.frame, info)
    ss[_PENDING] = (table, source_id, info)
    ss[Keys.SOURCE_ID] = None
    ss[_TABLE_SIGNATURE] = _signature(table.frame)
    ss[Keys.TABLE] = table
    ss[Keys.SAMPLE] = info
    ss[Keys.COLUMNS] = columns
    ss[Keys.EDITOR_VERSION] = ss.get(Keys.EDITOR_VERSION, 0) + 1
    ss[Keys.TARGETS] = [dict(t) for t in info.target_definitions] if info else []
    WORKSPACE_SLOT.clear(ss)
    ss[Keys.MESSAGE] = None
    for key in [k for k in ss.keys() if str(k).startswith(_TABLE_BOUND)]:
        del ss[key]
    for key, value in (
        ("dg_key", info.key_column if info else None),
        ("dg_domain", info.domain_column if info else None),
        ("dg_group_col", info.group_column if info else None),
        ("dg_weight", None),
        ("dg_eligibility", ""),
    ):
        ss[key] = value or NONE if key != "dg_eligibility" else ""
    if info is not None and info.domain_column is not None and info.domain_column in table.frame.columns:
        seed_domain_values(table.frame, info.domain_column, info, state=ss)
    ss[Keys.SOURCE_ID] = source_id  # last: the adoption is complete
    ss[_PENDING] = None


def adopted(state: MutableMapping | None = None) -> str | None:
    """The source id of the table adopted in full (``None`` before the first, or while one is half-adopted)."""
    ss = session(state)
    if Keys.COLUMNS not in ss or ss.get(Keys.TABLE) is None:
        return None
    return ss.get(Keys.SOURCE_ID)


def seed_domain_values(frame: pd.DataFrame, domain: str, info: SampleInfo | None, *,
                       state: MutableMapping | None = None) -> list[str]:
    """Source and target domain values: kept while valid, else the sample's, else the first two."""
    ss = session(state)
    values = sorted(map(str, pd.unique(frame[domain].dropna())))[:100]
    if not values:
        return values
    src = str(info.source_domain) if info and str(info.source_domain) in values else values[0]
    tgt = str(info.target_domain) if info and str(info.target_domain) in values else values[min(1, len(values) - 1)]
    if ss.get("dg_source_value") not in values:
        ss["dg_source_value"] = src
    if ss.get("dg_target_value") not in values:
        ss["dg_target_value"] = tgt
    return values


def ensure_sample_loaded(name: str = "loan_synthetic") -> None:
    """Finish an adoption a stopped run left pending; on a session's first run, adopt a bundled sample."""
    pending = st.session_state.get(_PENDING)
    if pending is not None:
        if adopted() != pending[1]:
            with guarded("loading the table"):
                adopt_table(*pending)
        st.session_state[_PENDING] = None  # done, or refused with a message: not retried on every run
    if st.session_state.get(Keys.TABLE) is None or Keys.COLUMNS not in st.session_state:
        with guarded("loading the sample"):
            adopt_table(sample_table(name), f"sample:{name}", SAMPLES[name])


def replace_columns_table(table: pd.DataFrame) -> None:
    st.session_state[Keys.COLUMNS] = table
    st.session_state[Keys.EDITOR_VERSION] = st.session_state.get(Keys.EDITOR_VERSION, 0) + 1
