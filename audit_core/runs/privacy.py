"""What a saved run may hold about individual cases: record keys and true labels only on request.

A Fragility audit certifies held-out cases one by one, and its tables name
each case by its record key (``key``) and carry its true label (``y_true``).
In a registry shared by several users those are the audited data, so by
default a run is saved without them: :func:`without_case_data` replaces every
record key by a case number (``#1``, ``#2``, ... in the order of the
``summary`` table, the same number in every table, so the tables still join)
and drops the true-label columns. The user opts in with the Fragility page's
checkbox or the CLI config key ``store_case_data: true``; the run's manifest
records the choice under :data:`CASE_DATA`, and :func:`case_data_held` is
what the report's footer reads.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["CASE_DATA", "LABEL_COLUMNS", "case_data_held", "store_case_data_choice", "without_case_data"]

#: Manifest key: ``True`` when the run stores record keys and true labels of its cases, ``False`` when not.
CASE_DATA = "case_data"
#: Columns that hold a case's true label.
LABEL_COLUMNS: tuple[str, ...] = ("y_true",)


def without_case_data(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tables with record keys replaced by case numbers and true labels dropped.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        A run's tables; those with a ``key`` column are renumbered by the
        keys' first appearance (``certificates`` first, then the other tables).

    Returns
    -------
    dict of str to DataFrame
        New frames; the input is not changed.
    """
    numbers: dict[str, str] = {}
    names = sorted(tables, key=lambda n: n != "certificates")  # the certificates' order numbers the cases
    for name in names:
        if "key" in tables[name].columns:
            for k in tables[name]["key"].astype(str):
                numbers.setdefault(k, f"#{len(numbers) + 1}")
    out = {}
    for name, df in tables.items():
        df = df.drop(columns=[c for c in LABEL_COLUMNS if c in df.columns])
        if "key" in df.columns:
            df = df.assign(key=df["key"].astype(str).map(numbers))
        out[name] = df
    return out


def case_data_held(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]) -> bool:
    """Whether a run holds record keys or true labels of its cases.

    Runs saved before the choice existed have no :data:`CASE_DATA` entry; a
    Fragility run among them holds both, which a ``y_true`` column shows.
    """
    if CASE_DATA in manifest:
        return bool(manifest[CASE_DATA])
    return any(c in df.columns for df in tables.values() for c in LABEL_COLUMNS)


def store_case_data_choice(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any], *,
                           store: bool) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """The tables and manifest to save: case data kept only when ``store``, the choice recorded in the manifest."""
    kept = dict(tables) if store else without_case_data(tables)
    return kept, {**manifest, CASE_DATA: bool(store)}
