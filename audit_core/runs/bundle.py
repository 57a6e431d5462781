"""Export a saved run as one JSON bundle and import it back (Parquet files per table: :mod:`.export`).

Bundle format (``format_version`` 1)::

    {
      "format": "reliability-audit-run",
      "format_version": 1,
      "run": {"run_id", "created_at", "updated_at", "audit_kind", "status",
              "dataset_name", "dataset_fingerprint", "grouping_hash",
              "model_spec", "config", "manifest", "error"},
      "tables": [{"name", "encoding": "parquet+base64", "sha256", "data"}],
      "artifacts": [{"name", "encoding": "base64", "sha256", "data"}]
    }

Tables are Parquet bytes (pyarrow) in base64, the registry's own encoding, so
every dtype, index and missing value comes back exactly; each carries the
SHA-256 of its bytes. The bundle holds result tables only, never rows of the audited
data. Keys are sorted, so exporting the same run twice gives the same bytes.

Importing checks before anything is decoded into memory or written: the
JSON is read by :func:`audit_core.safe_text.load_json` (depth, duplicate
keys), the tables' declared uncompressed size (Parquet metadata) must fit
``AUDIT_MAX_EXPANSION_MB`` in total, as for uploaded xlsx and Parquet files,
and the tables of a known audit kind must have the columns its readers use,
numbers where they read numbers (:func:`check_run_tables`), so a damaged
bundle is refused with the table and column instead of failing later on the
Runs page or in the report. A bundle is also refused, each with its own
message, when its run id is not a plain id (letters, digits, ``-``, ``_``,
``.``: never a path or Markdown), when it lists a table or an artifact twice,
or when it holds more tables, more columns in one table or a longer text cell
than the caps of :mod:`audit_core.limits` allow (``AUDIT_MAX_BUNDLE_TABLES``,
``AUDIT_MAX_BUNDLE_COLUMNS``, ``AUDIT_MAX_CELL_CHARS``); artifacts count
against the expansion cap with the tables. A run exported while still
``running`` is imported as ``interrupted``, with a note saying so, so it is
never left running forever.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import types
from typing import Any

import numpy as np
import pandas as pd

import re
from collections import Counter

from audit_core.errors import excerpt, excerpts, fail, register_messages
from audit_core.limits import Limits
from audit_core.safe_text import load_json

from .export import table_parquet, write_file  # write_file re-exported for earlier importers
from .plugin import AUDITS, load_builtin_audits
from .registry import RunRecord, RunRegistry, with_current_names

#: A run id as the registry makes them (``20260101T000000000000-1a2b3c4d``), and any other plain id.
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")
#: The note an imported run that was exported while running gets in place of its missing error.
RUNNING_NOTE = "exported while still running and imported as interrupted: its results may be incomplete"

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_VERSION",
    "MAX_BUNDLE_BYTES",
    "RUN_ID_PATTERN",
    "RUNNING_NOTE",
    "bundle_from_record",
    "check_run_tables",
    "export_bundle",
    "import_bundle",
    "read_bundle",
    "write_file",
]

BUNDLE_FORMAT = "reliability-audit-run"
BUNDLE_VERSION = 1
#: Largest bundle accepted by :func:`read_bundle` (bytes).
MAX_BUNDLE_BYTES = 500 * 1024 * 1024
_RUN_FIELDS = (
    "run_id",
    "created_at",
    "updated_at",
    "audit_kind",
    "status",
    "dataset_name",
    "dataset_fingerprint",
    "grouping_hash",
    "model_spec",
    "config",
    "manifest",
    "error",
)

register_messages(
    {
        "BUNDLE_TOO_LARGE": "The bundle {name} is {size:,} bytes; the limit is {limit:,} bytes.",
        "BUNDLE_NOT_JSON": "The bundle {name} is not a JSON file ({reason}).",
        "BUNDLE_WRONG_FORMAT": (
            "The file {name} is not a reliability-audit run bundle (its 'format' is {found}; "
            "export one with the Runs page or `reliability-audit export`)."
        ),
        "BUNDLE_NEWER_VERSION": (
            "The bundle {name} has format version {found}; this version of the app reads up to "
            "version {supported}. Upgrade the app to import it."
        ),
        "BUNDLE_MISSING_FIELD": "The bundle {name} is incomplete: {field} is missing or has the wrong type.",
        "BUNDLE_BAD_ENTRY": "The bundle {name} has a damaged {what} {entry!r}: {reason}.",
        "BUNDLE_CHECKSUM": (
            "The bundle {name} is damaged: the SHA-256 of {what} {entry!r} does not match "
            "(the file was modified or truncated)."
        ),
        "BUNDLE_EXPANDS": (
            "The bundle {name} would expand to {expanded_mb:,.1f} MB of tables and artifacts in memory (from "
            "{packed_mb:,.1f} MB; {entry} alone {entry_mb:,.1f} MB), more than the limit of "
            "{cap_mb:,.1f} MB. Raise the environment variable AUDIT_MAX_EXPANSION_MB to import it."
        ),
        "BUNDLE_BAD_RUN_ID": (
            "The bundle {name} has the run id {run_id}, which is not a run id: an id has 1 to 100 letters, "
            "digits, '-', '_' or '.', and does not start with '.' or '-'."
        ),
        "BUNDLE_BAD_DATE": (
            "The bundle {name} gives run.{field} as {value}, which is not a date and time with its time zone "
            "(a run's timestamps look like '2024-05-01T13:00:00.000000+00:00'); it was not exported by this app, "
            "or it was edited."
        ),
        "BUNDLE_DUPLICATE": (
            "The bundle {name} lists the {what} {entry} {count} times; a run holds each {what} once. It was not "
            "exported by this app, or it was edited."
        ),
        "BUNDLE_NOT_NUMBERS": (
            "The bundle {name} holds a {kind} run whose table {table} has {found} in column {column} (row {row}), "
            "where the Runs page and the report read numbers; it was not exported by this app, or it was edited."
        ),
        "BUNDLE_BAD_TABLES": (
            "The bundle {name} holds a {kind} run whose table {table} lacks the column(s) {missing} "
            "that the Runs page and the report read; it was not exported by this app, or it was edited."
        ),
    }
)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def bundle_from_record(record: RunRecord) -> dict[str, Any]:
    """The bundle of one run as a JSON-compatible dict (see the module docstring)."""
    tables = []
    for name, df in record.tables.items():
        data = table_parquet(df)
        tables.append(
            {"name": name, "encoding": "parquet+base64", "sha256": hashlib.sha256(data).hexdigest(), "data": _b64(data)}
        )
    artifacts = [
        {"name": name, "encoding": "base64", "sha256": hashlib.sha256(data).hexdigest(), "data": _b64(data)}
        for name, data in record.artifacts.items()
    ]
    return {
        "format": BUNDLE_FORMAT,
        "format_version": BUNDLE_VERSION,
        "run": {f: getattr(record, f) for f in _RUN_FIELDS},
        "tables": tables,
        "artifacts": artifacts,
    }


def export_bundle(record: RunRecord) -> bytes:
    """Serialise a run as a JSON bundle (UTF-8, sorted keys, deterministic).

    Parameters
    ----------
    record : RunRecord
        A loaded run (:meth:`audit_core.runs.registry.RunRegistry.load`).

    Returns
    -------
    bytes
    """
    return json.dumps(bundle_from_record(record), sort_keys=True, indent=1, allow_nan=False).encode("utf-8")


def _need(obj: Any, key: str, kind: type | tuple[type, ...], name: str, path: str) -> Any:
    if not isinstance(obj, dict) or key not in obj or not isinstance(obj[key], kind):
        raise fail("BUNDLE_MISSING_FIELD", name=name, field=path)
    return obj[key]


def _decode(entry: dict, what: str, name: str) -> tuple[str, bytes]:
    label = _need(entry, "name", str, name, f"a {what} name")
    data_text = _need(entry, "data", str, name, f"{what} {label!r} data")
    digest = _need(entry, "sha256", str, name, f"{what} {label!r} sha256")
    try:
        data = base64.b64decode(data_text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise fail("BUNDLE_BAD_ENTRY", name=name, what=what, entry=label, reason=f"not base64 ({exc})") from exc
    if hashlib.sha256(data).hexdigest() != digest:
        raise fail("BUNDLE_CHECKSUM", name=name, what=what, entry=label)
    return label, data


def read_bundle(data: bytes, *, name: str = "bundle.json") -> RunRecord:
    """Parse and check a JSON bundle.

    Parameters
    ----------
    data : bytes
        The file content.
    name : str
        File name for messages.

    Returns
    -------
    RunRecord
        The run, tables decoded; nothing is written.

    Raises
    ------
    AuditInputError
        ``BUNDLE_TOO_LARGE``, ``BUNDLE_NOT_JSON``, ``BUNDLE_WRONG_FORMAT``,
        ``BUNDLE_NEWER_VERSION``, ``BUNDLE_MISSING_FIELD``,
        ``BUNDLE_BAD_ENTRY``, ``BUNDLE_CHECKSUM``, ``BUNDLE_BAD_RUN_ID``, ``BUNDLE_BAD_DATE``,
        ``BUNDLE_DUPLICATE``, ``BUNDLE_EXPANDS``, ``BUNDLE_BAD_TABLES``,
        ``BUNDLE_NOT_NUMBERS`` and ``LIMIT_COUNT`` (tables, columns, cell length).
    """
    if len(data) > MAX_BUNDLE_BYTES:
        raise fail("BUNDLE_TOO_LARGE", name=name, size=len(data), limit=MAX_BUNDLE_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("BUNDLE_NOT_JSON", name=name, reason=f"not UTF-8 text, byte {exc.start:,}") from None
    obj = load_json(text, what=f"The bundle {name}", max_bytes=MAX_BUNDLE_BYTES,
                    syntax=lambda reason: fail("BUNDLE_NOT_JSON", name=name, reason=reason))
    if not isinstance(obj, dict) or obj.get("format") != BUNDLE_FORMAT:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise fail("BUNDLE_WRONG_FORMAT", name=name, found=excerpt(found))
    version = _need(obj, "format_version", int, name, "format_version")
    if version > BUNDLE_VERSION:
        raise fail("BUNDLE_NEWER_VERSION", name=name, found=version, supported=BUNDLE_VERSION)
    run = _need(obj, "run", dict, name, "run")
    fields: dict[str, Any] = {}
    for f in _RUN_FIELDS:
        kind: Any = dict if f in ("model_spec", "config", "manifest") else str
        if f in ("grouping_hash", "error"):
            kind = (str, type(None))
        fields[f] = _need(run, f, kind, name, f"run.{f}")
    if not RUN_ID_PATTERN.fullmatch(fields["run_id"]):
        raise fail("BUNDLE_BAD_RUN_ID", name=name, run_id=excerpt(fields["run_id"]))
    for stamp in ("created_at", "updated_at"):
        if not _is_timestamp(fields[stamp]):
            raise fail("BUNDLE_BAD_DATE", name=name, field=stamp, value=excerpt(fields[stamp]))
    if fields["status"] == "running":
        fields.update(status="interrupted", error=fields["error"] or RUNNING_NOTE)
    limits = Limits.from_env()
    entries = {}
    for what in ("table", "artifact"):
        listed = [e if isinstance(e, dict) else {} for e in _need(obj, what + "s", list, name, what + "s")]
        limits.check_count("bundle_tables", listed, where=f"The bundle {name}")
        labels = [_need(e, "name", str, name, f"a {what} name") for e in listed]
        for label, count in Counter(labels).items():
            if count > 1:
                raise fail("BUNDLE_DUPLICATE", name=name, what=what, entry=excerpt(label), count=count)
        entries[what] = listed
    blobs = [_decode(e, "table", name) for e in entries["table"]]
    packed_artifacts = sum(len(e["data"]) * 3 // 4 for e in entries["artifact"] if isinstance(e.get("data"), str))
    _check_expansion(blobs, name, packed=len(data), limits=limits, artifact_bytes=packed_artifacts)
    artifacts = dict(_decode(e, "artifact", name) for e in entries["artifact"])  # counted before decoding
    tables = {}
    for label, blob in blobs:
        try:
            tables[label] = pd.read_parquet(io.BytesIO(blob), engine="pyarrow")
        except Exception as exc:  # pyarrow raises many types
            raise fail("BUNDLE_BAD_ENTRY", name=name, what="table", entry=label, reason=excerpt(str(exc), 200)) from exc
        _check_cells(tables[label], where=f"The bundle {name}, table {excerpt(label)}", limits=limits)
    record = with_current_names(RunRecord(
        **fields, tables=types.MappingProxyType(tables), artifacts=types.MappingProxyType(artifacts)
    ))  # a bundle exported before a rename holds the old names
    check_run_tables(record, name=name)
    return record


def _is_timestamp(text: str) -> bool:
    """An ISO 8601 date and time with a time zone, as the registry writes them."""
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def _check_cells(df: pd.DataFrame, *, where: str, limits: Limits) -> None:
    """Refuse a text cell (or column name) longer than ``AUDIT_MAX_CELL_CHARS``."""
    longest = max((len(str(c)) for c in df.columns), default=0)
    for col in df.columns:
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col].dtype):
            lengths = [len(v) for v in df[col].to_numpy() if isinstance(v, (str, bytes))]
            longest = max(longest, max(lengths, default=0))
    limits.check_count("cell_chars", longest, where=where)


def _expanded_bytes(blob: bytes) -> tuple[int, int]:
    """Memory a Parquet table will take once read, from its metadata alone (a lower bound), and its column count.

    The declared uncompressed page sizes, but at least 8 bytes per cell:
    dictionary and run-length encodings declare far less than they expand to.
    """
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(io.BytesIO(blob)).metadata
    declared = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return max(declared, 8 * meta.num_rows * meta.num_columns), meta.num_columns


def _check_expansion(blobs: list[tuple[str, bytes]], name: str, *, packed: int, limits: Limits,
                     artifact_bytes: int) -> None:
    """Refuse tables wider than ``AUDIT_MAX_BUNDLE_COLUMNS``, and tables plus artifacts over the expansion cap."""
    cap = limits.max_expansion_bytes
    total, mb = artifact_bytes, 1024 * 1024
    if total > cap:
        raise fail("BUNDLE_EXPANDS", name=name, expanded_mb=total / mb, packed_mb=packed / mb, entry="its artifacts",
                   entry_mb=total / mb, cap_mb=cap / mb)
    for label, blob in blobs:
        try:
            size, n_columns = _expanded_bytes(blob)
        except Exception as exc:  # pyarrow raises many types for a damaged footer
            raise fail("BUNDLE_BAD_ENTRY", name=name, what="table", entry=label, reason=excerpt(str(exc), 200)) from exc
        limits.check_count("bundle_columns", n_columns, where=f"The bundle {name}, table {excerpt(label)},")
        total += size
        if total > cap:
            raise fail("BUNDLE_EXPANDS", name=name, expanded_mb=total / mb, packed_mb=packed / mb, entry=f"table {excerpt(label)}",
                       entry_mb=size / mb, cap_mb=cap / mb)


def check_run_tables(record: RunRecord, *, name: str = "bundle.json") -> None:
    """Refuse a run of a known audit kind whose tables lack the columns their readers use.

    Each audit plug-in declares them (:attr:`audit_core.runs.plugin.AuditRunner.tables`);
    a table that is absent is fine (its figure is skipped), one that is
    present must have its columns. Runs of unknown kinds are shown as tables
    and not checked.

    Raises
    ------
    AuditInputError
        ``BUNDLE_BAD_TABLES`` naming the table and the missing columns,
        ``BUNDLE_NOT_NUMBERS`` naming the table, column, row and value where
        the plug-in declares numbers (:attr:`~audit_core.runs.plugin.AuditRunner.numbers`).
    """
    load_builtin_audits()
    runner = AUDITS.get(record.audit_kind)
    if runner is None:  # an unknown kind: shown as tables, not checked
        return
    for table, columns in runner.tables.items():
        df = record.tables.get(table)
        if df is None:
            continue
        missing = [c for c in columns if c not in set(map(str, df.columns))]
        if missing:
            raise fail("BUNDLE_BAD_TABLES", name=name, kind=record.audit_kind, table=excerpt(table),
                       missing=excerpts(missing))
        for column in runner.numbers.get(table, ()):
            values = df[column]
            if pd.api.types.is_numeric_dtype(values.dtype):  # numbers and booleans (missing values are NaN)
                continue
            bad = [i for i, v in enumerate(values.to_numpy()) if not _is_number(v)]
            if bad:
                v = values.iloc[bad[0]]
                raise fail("BUNDLE_NOT_NUMBERS", name=name, kind=record.audit_kind, table=excerpt(table),
                           column=excerpt(column), row=bad[0] + 1, found=f"{type(v).__name__} {excerpt(v)}")


def _is_number(value: Any) -> bool:
    """A number, a boolean or a missing value (``None``, NaN), never text."""
    import numbers

    return value is None or isinstance(value, (numbers.Number, np.bool_))


def import_bundle(registry: RunRegistry, data: bytes, *, name: str = "bundle.json") -> str:
    """Check a bundle and restore its run into ``registry`` with the same id.

    Returns
    -------
    str
        The run id.

    Raises
    ------
    AuditInputError
        The :func:`read_bundle` errors, and ``RUN_EXISTS`` if the registry
        already holds a run with that id (nothing is changed).
    """
    return registry.restore(read_bundle(data, name=name))
