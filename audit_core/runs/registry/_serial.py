"""Validation and serialisation of run fields: JSON dicts, Parquet tables, artifacts, dates."""
from __future__ import annotations

import datetime as _dt
import io
import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from audit_core.errors import fail

from ._records import _iso

__all__: list[str] = []


def _check_json(value: Any, field_name: str, key: str) -> None:
    """Raise a declared error unless ``value`` round-trips through JSON."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if math.isfinite(value):
            return
        raise fail(
            "REGISTRY_NOT_JSON",
            field=field_name,
            key=key,
            type_name=f"float ({value!r})",
            hint="NaN and infinity are not valid JSON; store null or a string.",
        )
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, field_name, f"{key}[{i}]")
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise fail(
                    "REGISTRY_NOT_JSON",
                    field=field_name,
                    key=f"{key}[{k!r}]",
                    type_name=f"a dict key of type {type(k).__name__}",
                    hint="Dictionary keys must be strings.",
                )
            _check_json(item, field_name, f"{key}[{k!r}]")
        return
    hint = "Use plain Python str, int, float, bool, None, list or dict values"
    if isinstance(value, tuple):
        hint += " (a tuple would be loaded back as a list; pass a list)"
    elif type(value).__module__ == "numpy":
        hint += " (convert numpy values with .item() or .tolist())"
    raise fail(
        "REGISTRY_NOT_JSON",
        field=field_name,
        key=key,
        type_name=type(value).__name__,
        hint=hint + ".",
    )


def _dump_json(value: Any, field_name: str) -> str:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise fail(
            "REGISTRY_BAD_FIELD",
            name=field_name,
            expected="a dict",
            got=type(value).__name__,
        )
    _check_json(value, field_name, field_name)
    return json.dumps(value, sort_keys=True, allow_nan=False)


def _check_text(value: Any, name: str, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str) or not value.strip():
        raise fail(
            "REGISTRY_BAD_FIELD",
            name=name,
            expected="a non-empty string" + (" or None" if optional else ""),
            got=value,
        )


def _serialise_tables(tables: Mapping[str, pd.DataFrame]) -> list[tuple[str, bytes]]:
    if not isinstance(tables, Mapping):
        raise fail(
            "REGISTRY_BAD_FIELD",
            name="tables",
            expected="a mapping of table name to DataFrame",
            got=type(tables).__name__,
        )
    out: list[tuple[str, bytes]] = []
    for name, df in tables.items():
        if not isinstance(name, str) or not name:
            raise fail(
                "REGISTRY_BAD_TABLE", name=name, reason="table names must be non-empty strings"
            )
        if not isinstance(df, pd.DataFrame):
            raise fail(
                "REGISTRY_BAD_TABLE",
                name=name,
                reason=f"expected a pandas DataFrame, got {type(df).__name__}",
            )
        buf = io.BytesIO()
        try:
            df.to_parquet(buf, engine="pyarrow")
        except Exception as exc:  # pyarrow raises many exception types
            raise fail("REGISTRY_BAD_TABLE", name=name, reason=str(exc)) from exc
        out.append((name, buf.getvalue()))
    return out


def _deserialise_table(blob: bytes) -> pd.DataFrame:
    return pd.read_parquet(io.BytesIO(blob), engine="pyarrow")


def _check_artifacts(artifacts: Mapping[str, bytes] | None) -> list[tuple[str, bytes]]:
    if artifacts is None:
        return []
    if not isinstance(artifacts, Mapping):
        raise fail(
            "REGISTRY_BAD_FIELD",
            name="artifacts",
            expected="a mapping of artifact name to bytes",
            got=type(artifacts).__name__,
        )
    out = []
    for name, data in artifacts.items():
        if not isinstance(name, str) or not name:
            raise fail(
                "REGISTRY_BAD_FIELD",
                name="artifact name",
                expected="a non-empty string",
                got=name,
            )
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise fail("REGISTRY_BAD_ARTIFACT", name=name, type_name=type(data).__name__)
        out.append((name, bytes(data)))
    return out


def _parse_bound(value: Any, name: str) -> str | None:
    """Normalise a ``since``/``until`` bound to the stored ISO format."""
    if value is None:
        return None
    date_only = isinstance(value, _dt.date) and not isinstance(value, _dt.datetime)
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as exc:
        raise fail("REGISTRY_BAD_DATE", name=name, value=value) from exc
    if ts is pd.NaT or pd.isna(ts):
        raise fail("REGISTRY_BAD_DATE", name=name, value=value)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    if date_only and name == "until":
        # A calendar day as upper bound includes the whole day.
        ts = ts + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)
    return _iso(ts.to_pydatetime())

