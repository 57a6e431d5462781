"""Session state, result slots and app-side caching.

All per-session values live under the keys in :class:`Keys`.

Widget values
-------------
Value widgets use a page prefix (``dg_``, ``fr_``, ``tr_``, ``rc_``, ``ru_``;
see :data:`PERSIST_PREFIXES`) and are created with ``persist_state="session"``
(:data:`PERSIST`), so Streamlit keeps their value while another page is shown
and restores it when the widget is rendered again. Nothing re-assigns widget
keys on every run: a value written through ``st.session_state`` during a run
is pushed back to the browser (``set_value``), and a push from a run that
started before the user's last edit resets what the user typed
(``tests/test_page_state.py``). Code writes a widget key only to change
its value on purpose (a new table, a new declaration), never to keep it.
Widgets whose state cannot persist use other prefixes: ``act_`` (buttons),
``up_`` (file uploaders), ``ed_`` (data editors, folded into non-widget keys
by their ``on_change`` callback) and ``view_`` (display elements).

Result slots
------------
Every result a page keeps (a trained workspace, a Fragility or Transport
result, a receipts cube, a release-gate comparison) is stored with the
:class:`Provenance` of what it was computed from: the table's SHA-256, a
digest of the declaration on Data & groups, the model (workspace) digest, or
a digest of other inputs. :class:`ResultSlot` compares that with the current
provenance; a result whose inputs changed is *stale*: the page says which input
changed (:func:`components.feedback.stale_notice`) and disables the actions on
it (save, export, audit) until it is computed again.

Workspaces
----------
What a user builds on the pages (the table and its declaration, the value
widgets, the result slots, the jobs) is one *workspace*: the keys for which
:func:`is_workspace_key` holds, i.e. the value-widget keys
(:data:`PERSIST_PREFIXES`) and every key declared with :func:`workspace_key`
(the :class:`Keys`, each :class:`ResultSlot` unless ``shared``, and the pages'
own keys). :mod:`components.workspaces` keeps a second workspace (the guided
demo's) aside and swaps the two. Functions that read or write a declaration
(:func:`declaration_digest`, :func:`current_provenance`, ``ResultSlot.put``)
take an optional ``state`` mapping, so a workspace kept aside can be built
and read without touching the session's.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import MutableMapping
from dataclasses import dataclass, fields
from typing import Any, Final

import pandas as pd
import streamlit as st

from audit_core.data.intake import LoadedTable, ReadOptions, SheetInfo, check_table, list_sheets, read_table, read_tables
from audit_core.data.samples import SampleInfo, load_sample
from audit_core.limits import setting
from audit_core.runs.registry import RunRegistry

__all__ = [
    "Keys",
    "PERSIST",
    "PERSIST_PREFIXES",
    "DECLARATION_KEYS",
    "workspace_key",
    "is_workspace_key",
    "session",
    "Provenance",
    "ResultSlot",
    "WORKSPACE_SLOT",
    "digest",
    "declaration_digest",
    "workspace_digest",
    "current_provenance",
    "get",
    "registry",
    "cached_sample",
    "cached_upload",
    "cached_uploads",
    "cached_sheets",
]

#: Value-widget key prefixes by page: Data & groups, Fragility, Transport, Receipts, Runs.
PERSIST_PREFIXES = ("dg_", "fr_", "tr_", "rc_", "ru_")
#: Passed as ``persist_state=PERSIST`` to every value widget with a persistent key.
PERSIST: Final = "session"

#: Session keys that belong to a workspace besides the value widgets (filled by :func:`workspace_key`).
_WORKSPACE_KEYS: set[str] = set()


def workspace_key(key: str) -> str:
    """Declare ``key`` part of the workspace (swapped with it, see :mod:`components.workspaces`); returns it."""
    _WORKSPACE_KEYS.add(key)
    return key


def is_workspace_key(key: str) -> bool:
    """Whether a session key belongs to the workspace: a value widget, or a key declared with :func:`workspace_key`."""
    return key in _WORKSPACE_KEYS or key.startswith(PERSIST_PREFIXES)


def session(state: MutableMapping | None = None) -> MutableMapping:
    """``state``, or the session's state when it is None (the active workspace)."""
    return st.session_state if state is None else state


class Keys:
    """Session-state keys (not widget keys)."""

    TABLE = "table"  # LoadedTable
    SOURCE_ID = "source_id"  # str: which table the declarations belong to
    SAMPLE = "sample_info"  # SampleInfo | None
    COLUMNS = "columns_table"  # DataFrame: column, kind, role, group, missing, unique (edits folded in)
    EDITOR_VERSION = "columns_editor_version"  # int, bumped when the base table is replaced
    TARGETS = "targets"  # list[dict]
    WORKSPACE = "workspace"  # Workspace | None (a result slot, see ResultSlot)
    MESSAGE = "last_message"  # str | None: the "Model ready" line of the current workspace


for _key in (Keys.TABLE, Keys.SOURCE_ID, Keys.SAMPLE, Keys.COLUMNS, Keys.EDITOR_VERSION, Keys.TARGETS, Keys.WORKSPACE,
             Keys.MESSAGE):
    workspace_key(_key)


#: Widget keys of Data & groups that, with the column roles and the targets, make the declaration.
DECLARATION_KEYS = ("dg_primary", "dg_key", "dg_weight", "dg_domain", "dg_group_col", "dg_source_value",
                    "dg_target_value", "dg_eligibility", "dg_missing_ind")


def digest(value: Any) -> str:
    """SHA-256 (hex) of a JSON-able value; anything else is written with ``str``."""
    blob = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _declared(key: str, value: Any, targets: list[dict]) -> Any:
    """A record widget's value as the declaration reads it (as :func:`current_config` does)."""
    if value in (None, "(none)", ""):
        value = None
    if key == "dg_primary" and value is None and targets:
        return targets[0].get("name")
    if key == "dg_missing_ind":
        return bool(value)
    if key == "dg_eligibility":
        return (value or "").strip() or None
    return value


def declaration_digest(state: MutableMapping | None = None) -> str | None:
    """Digest of the current declaration: column roles, targets and the record widgets.

    Evidence groups and the baseline are left out: they regroup a trained
    model without retraining it, and results that depend on them carry the
    workspace digest, which includes the grouping. ``state``: a workspace
    kept aside (default: the session's).
    """
    ss = session(state)
    columns = ss.get(Keys.COLUMNS)
    if columns is None:
        return None
    roles = list(zip(map(str, columns["column"]), map(str, columns["role"]), strict=True))
    targets = list(ss.get(Keys.TARGETS) or [])
    widgets = {k: _declared(k, ss.get(k), targets) for k in DECLARATION_KEYS}
    if widgets["dg_domain"] is None:
        widgets["dg_source_value"] = widgets["dg_target_value"] = None
    return digest({"roles": roles, "targets": targets, "widgets": widgets})


def workspace_digest(ws: Any) -> str | None:
    """Digest of a workspace: its dataset, model spec, split, grouping and baseline."""
    if ws is None:
        return None
    return digest({"dataset": ws.dataset.fingerprint, "config": ws.dataset.config.to_dict(),
                   "spec": dict(ws.model.spec), "train": len(ws.train_index), "test": len(ws.test_index),
                   "grouping": ws.grouping.hash, "baseline": ws.baseline_kind})


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """What a result was computed from; ``None`` means "not tied to this input".

    Attributes
    ----------
    table : str or None
        SHA-256 of the table (:attr:`LoadedTable.sha256`).
    declaration : str or None
        :func:`declaration_digest` at the time.
    model : str or None
        :func:`workspace_digest` of the model (and grouping) used.
    inputs : str or None
        Digest of any other inputs (texts of evaluator states, chosen runs).
    """

    table: str | None = None
    declaration: str | None = None
    model: str | None = None
    inputs: str | None = None

    #: what a changed part means, for the stale notice
    LABELS = {"table": "an earlier table", "declaration": "an earlier declaration on Data & groups",
              "model": "another model or grouping", "inputs": "other inputs than the ones shown now"}

    def changed(self, current: "Provenance") -> list[str]:
        """Names of the parts recorded here that differ in ``current``."""
        return [f.name for f in fields(self)
                if getattr(self, f.name) is not None and getattr(self, f.name) != getattr(current, f.name)]

    def describe(self, names: list[str]) -> str:
        return " and ".join(self.LABELS[n] for n in names)


def current_provenance(*, model: bool = False, inputs: Any = None, state: MutableMapping | None = None) -> Provenance:
    """The provenance a result computed now would get (``model``: include the current workspace)."""
    ss = session(state)
    table = ss.get(Keys.TABLE)
    return Provenance(
        table=getattr(table, "sha256", None),
        declaration=declaration_digest(ss),
        model=workspace_digest(ss.get(Keys.WORKSPACE)) if model else None,
        inputs=digest(inputs) if inputs is not None else None,
    )


class ResultSlot:
    """One result in session state with the provenance it was computed from.

    The value lives under ``key`` (so pages and tests may read it directly);
    its provenance and saved run id live under ``key + "__slot"``, together
    with the value they describe: a value written to ``key`` by other means
    (not the same object) has no recorded provenance and counts as current.
    Both keys belong to the workspace unless ``shared`` (a result of the
    session as a whole, such as the guided demo's).
    """

    def __init__(self, key: str, what: str, *, shared: bool = False) -> None:
        self.key = key
        self.what = what
        self._meta = key + "__slot"
        if not shared:
            workspace_key(self.key)
            workspace_key(self._meta)

    def put(self, value: Any, provenance: Provenance, *, run_id: str | None = None, note: str | None = None,
            state: MutableMapping | None = None) -> None:
        """Keep ``value`` with its provenance (in ``state``, a workspace kept aside, or the session's)."""
        ss = session(state)
        ss[self.key] = value
        ss[self._meta] = {"value": value, "provenance": provenance, "run_id": run_id, "note": note}

    def clear(self, state: MutableMapping | None = None) -> None:
        ss = session(state)
        ss[self.key] = None
        ss[self._meta] = None

    @property
    def value(self) -> Any:
        return st.session_state.get(self.key)

    def _meta_of_value(self) -> dict | None:
        meta = st.session_state.get(self._meta)
        value = self.value
        return meta if meta and value is not None and meta["value"] is value else None

    @property
    def run_id(self) -> str | None:
        meta = self._meta_of_value()
        return meta["run_id"] if meta else None

    @property
    def note(self) -> str | None:
        meta = self._meta_of_value()
        return meta["note"] if meta else None

    @property
    def provenance(self) -> Provenance | None:
        meta = self._meta_of_value()
        return meta["provenance"] if meta else None

    def changed(self, current: Provenance) -> list[str]:
        """The inputs that changed since the value was computed (empty: current or no value)."""
        prov = self.provenance
        return prov.changed(current) if prov is not None else []

    def is_stale(self, current: Provenance) -> bool:
        return bool(self.changed(current))

    def describe(self, changed: list[str]) -> str:
        """``changed`` (a non-empty :meth:`changed`) in words, by the recorded provenance."""
        prov = self.provenance
        assert prov is not None  # changed() is non-empty only when a provenance is recorded
        return prov.describe(changed)


#: The trained or imported workspace of Data & groups, tied to the table and declaration it was built from.
WORKSPACE_SLOT = ResultSlot(Keys.WORKSPACE, "model")


def get(key: str, default: Any = None) -> Any:
    return st.session_state.get(key, default)


@st.cache_resource
def _registry_at(path: str | None) -> RunRegistry:
    return RunRegistry(path)


def registry() -> RunRegistry:
    """One registry object per file; it opens a connection per call (thread-safe)."""
    return _registry_at(setting("AUDIT_REGISTRY_PATH") or None)


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


def sample_table(name: str) -> LoadedTable:
    """A bundled sample as a checked :class:`LoadedTable`."""
    frame, info = cached_sample(name)
    display = info.path.name if info.path is not None else f"{info.name} (scikit-learn)"
    checked, _ = check_table(frame.copy(), name=display)
    digest_ = hashlib.sha256(pd.util.hash_pandas_object(checked, index=False).to_numpy().tobytes()).hexdigest()
    return LoadedTable(frame=checked, name=display, format="csv", sha256=digest_, n_bytes=0)
