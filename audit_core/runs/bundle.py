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
SHA-256 of its bytes. The bundle holds result tables only, never the audited
data. Keys are sorted, so exporting the same run twice gives the same bytes.

Importing checks before anything is decoded into memory or written: the
JSON is read by :func:`audit_core.safe_text.load_json` (depth, duplicate
keys), the tables' declared uncompressed size (Parquet metadata) must fit
``AUDIT_MAX_EXPANSION_MB`` in total, as for uploaded xlsx and Parquet files,
and the tables of a known audit kind must have the columns its readers use
(:func:`check_run_tables`), so a damaged bundle is refused with the table
and column instead of failing later on the Runs page.

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

import pandas as pd

from audit_core.errors import excerpt, excerpts, fail, register_messages
from audit_core.limits import Limits
from audit_core.safe_text import load_json

from .export import table_parquet, write_file  # write_file re-exported for earlier importers
from .plugin import AUDITS, load_builtin_audits
from .registry import RunRecord, RunRegistry

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_VERSION",
    "MAX_BUNDLE_BYTES",
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
            "The bundle {name} would expand to {expanded_mb:,.1f} MB of tables in memory (from "
            "{packed_mb:,.1f} MB; table {entry} alone {entry_mb:,.1f} MB), more than the limit of "
            "{cap_mb:,.1f} MB. Raise the environment variable AUDIT_MAX_EXPANSION_MB to import it."
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
        ``BUNDLE_BAD_ENTRY``, ``BUNDLE_CHECKSUM``.
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
    blobs = [_decode(e if isinstance(e, dict) else {}, "table", name) for e in _need(obj, "tables", list, name, "tables")]
    _check_expansion(blobs, name, packed=len(data))
    tables = {}
    for label, blob in blobs:
        try:
            tables[label] = pd.read_parquet(io.BytesIO(blob), engine="pyarrow")
        except Exception as exc:  # pyarrow raises many types
            raise fail("BUNDLE_BAD_ENTRY", name=name, what="table", entry=label, reason=excerpt(str(exc), 200)) from exc
    artifacts = dict(
        _decode(e if isinstance(e, dict) else {}, "artifact", name) for e in _need(obj, "artifacts", list, name, "artifacts")
    )
    record = RunRecord(
        **fields, tables=types.MappingProxyType(tables), artifacts=types.MappingProxyType(artifacts)
    )
    check_run_tables(record, name=name)
    return record


def _expanded_bytes(blob: bytes) -> int:
    """Memory a Parquet table will take once read, from its metadata alone (a lower bound).

    The declared uncompressed page sizes, but at least 8 bytes per cell:
    dictionary and run-length encodings declare far less than they expand to.
    """
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(io.BytesIO(blob)).metadata
    declared = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return max(declared, 8 * meta.num_rows * meta.num_columns)


def _check_expansion(blobs: list[tuple[str, bytes]], name: str, *, packed: int) -> None:
    cap = Limits.from_env().max_expansion_bytes
    total, mb = 0, 1024 * 1024
    for label, blob in blobs:
        try:
            size = _expanded_bytes(blob)
        except Exception as exc:  # pyarrow raises many types for a damaged footer
            raise fail("BUNDLE_BAD_ENTRY", name=name, what="table", entry=label, reason=excerpt(str(exc), 200)) from exc
        total += size
        if total > cap:
            raise fail("BUNDLE_EXPANDS", name=name, expanded_mb=total / mb, packed_mb=packed / mb, entry=excerpt(label),
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
        ``BUNDLE_BAD_TABLES`` naming the table and the missing columns.
    """
    load_builtin_audits()
    runner = AUDITS.get(record.audit_kind)
    for table, columns in (runner.tables if runner is not None else {}).items():
        df = record.tables.get(table)
        if df is None:
            continue
        missing = [c for c in columns if c not in set(map(str, df.columns))]
        if missing:
            raise fail("BUNDLE_BAD_TABLES", name=name, kind=record.audit_kind, table=excerpt(table),
                       missing=excerpts(missing))


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
