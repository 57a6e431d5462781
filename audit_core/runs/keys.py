"""Keys into a saved run's tables: which table, which rows, which column, how the rows are pooled.

A :class:`TableKey` names one number (or one text) of a run exactly, e.g. the
mean over refits of the clean OOD ECE of the headline slice::

    TableKey.of("results", "value", how="refit_mean", analysis="metrics", condition="clean", domain="ood",
                metric="ece", model="logistic_regression", mapping="platt", ...)

:func:`read_key` reads it from a run's tables. The release gate reads its
grounds through it (:mod:`.grounds`) and every finding records the keys of the
numbers it states, so the findings checker re-reads them from the saved run
with the same reader (:func:`audit_core.findings.check.check_findings`).

Filters are ``(column, op, value)``: ``op`` is ``=`` (a float matches within
1e-9; ``None`` matches a missing value), ``!=``, ``>=``, ``<=``, ``>``, ``<``.
Pooling (``how``):

* ``one`` — exactly one row (two rows are *ambiguous*, never averaged);
* ``refit_mean`` — rows with ``refit ≥ 0``, one per refit (a repeated refit is
  ambiguous), averaged: the mean over refits;
* ``refit_min_mean`` — the minimum per refit, then the mean over refits;
* ``mean``, ``sum``, ``min``, ``max`` — over the rows; ``share`` — the mean of a
  0/1 (or boolean) column; ``count`` — the number of rows (0 is a value).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit_core.transport.headline import HeadlineSlice

import numpy as np
import pandas as pd

__all__ = ["TableKey", "read_key", "headline_key", "POOLING"]

POOLING = ("one", "refit_mean", "refit_min_mean", "mean", "sum", "min", "max", "share", "count")
_OPS = ("=", "!=", ">=", "<=", ">", "<")


@dataclass(frozen=True)
class TableKey:
    """Where one number of a run lives: ``table``, the row filters ``where``, the ``column`` and the pooling ``how``."""

    table: str
    column: str
    where: tuple[tuple[str, str, Any], ...] = ()
    how: str = "one"

    @classmethod
    def of(cls, table: str, column: str, *, how: str = "one", **equal: Any) -> "TableKey":
        """A key with equality filters, in the order given."""
        return cls(table, column, tuple((k, "=", v) for k, v in equal.items()), how)

    def and_(self, column: str, op: str, value: Any) -> "TableKey":
        """The same key with one more filter."""
        return TableKey(self.table, self.column, self.where + ((column, op, value),), self.how)

    def rows(self) -> str:
        """The filters in words: ``analysis=metrics, alpha=n/a, p_hat>=0.8``."""
        def one(col, op, v):
            text = "n/a" if v is None else (f"{v:g}" if isinstance(v, float) else str(v))
            return f"{col}{op}{text}"
        return ", ".join(one(*f) for f in self.where)

    def describe(self) -> str:
        """``results: analysis=metrics, …; column value, mean over refits``."""
        return f"{self.table}: {self.rows()}; column {self.column}, {self.how.replace('_', ' ')}"

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "column": self.column, "how": self.how,
                "where": [[c, op, v] for c, op, v in self.where]}


def _mask(df: pd.DataFrame, where) -> np.ndarray:
    keep = np.ones(len(df), dtype=bool)
    for col, op, want in where:
        s = df[col]
        if op == "=" and want is None:
            keep &= s.isna().to_numpy()
        elif isinstance(want, (bool, np.bool_)):  # a flag column, stored as bool or as 0/1
            x = pd.to_numeric(s.astype(float) if s.dtype == bool else s, errors="coerce").to_numpy(dtype=float)
            keep &= (x == float(want)) if op == "=" else (x != float(want))
        elif not isinstance(want, (int, float, np.integer, np.floating)):
            text = s.astype(str).to_numpy()
            keep &= (text == str(want)) if op == "=" else (text != str(want)) if op == "!=" else np.zeros(len(df), bool)
        else:
            x = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
            w = float(want)
            close = np.isclose(x, w, rtol=0, atol=1e-9)
            keep &= {"=": close, "!=": ~close, ">=": (x >= w) | close, "<=": (x <= w) | close,
                     ">": (x > w) & ~close, "<": (x < w) & ~close}[op]
    return keep


def _finite(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def read_key(tables: Mapping[str, pd.DataFrame], key: TableKey) -> tuple[float | str | None, str]:
    """Read one value of a run's tables.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        The run's tables (``RunRecord.tables``).
    key : TableKey

    Returns
    -------
    (value, detail)
        The value (a float; the text of a text cell read with ``how="one"``)
        and the slice read, or ``None`` and why not: ``no … table``, ``table …
        lacks column(s)``, ``no row for …``, ``ambiguous: …`` (more rows than
        the pooling allows) or ``… is not a finite number``.
    """
    if key.how not in POOLING or any(op not in _OPS for _, op, _ in key.where):
        raise ValueError(f"unknown pooling or filter in {key!r}")
    df = tables.get(key.table)
    if not isinstance(df, pd.DataFrame) or df.empty:
        return None, f"no {key.table!r} table"
    need = [c for c, _, _ in key.where] + [key.column] + (["refit"] if key.how.startswith("refit") else [])
    missing = [c for c in dict.fromkeys(need) if c not in df.columns]
    if missing:
        return None, f"table {key.table!r} lacks column(s) {missing}"
    rows = df[_mask(df, key.where)]
    what = f"{key.table}: {key.rows()}"
    if key.how == "count":
        return float(len(rows)), f"{what}; {len(rows)} row(s)"
    if key.how.startswith("refit"):
        rows = rows[pd.to_numeric(rows["refit"], errors="coerce") >= 0]
        vals = rows.assign(_v=pd.to_numeric(rows[key.column], errors="coerce"))
        if key.how == "refit_min_mean":
            vals = vals.groupby("refit", as_index=False)["_v"].min()  # type: ignore[assignment]  # as_index=False: a DataFrame (stubs: Series)
        elif vals["refit"].duplicated().any():
            n = int(vals["refit"].value_counts().max())
            return None, f"ambiguous: {n} rows for one refit of {what}"
        if vals.empty:
            return None, f"no row for {what}"
        v = _finite(vals["_v"].mean())
        pooled = "minimum per refit, mean" if key.how == "refit_min_mean" else "mean"
        detail = f"{what}; {pooled} over {len(vals)} refit(s)"
        return (v, detail) if v is not None else (None, f"{what} is not a finite number")
    if rows.empty:
        return None, f"no row for {what}"
    if key.how == "one":
        if len(rows) > 1:
            return None, f"ambiguous: {len(rows)} rows for {what}"
        cell = rows[key.column].iloc[0]
        if isinstance(cell, str):
            return cell, what
        v = _finite(cell)
        return (v, what) if v is not None else (None, f"{what} is not a finite number")
    col = rows[key.column]
    x = pd.to_numeric(col.astype(float) if col.dtype == bool else col, errors="coerce")
    v = _finite({"mean": x.mean, "share": x.mean, "sum": x.sum, "min": x.min, "max": x.max}[key.how]())
    detail = f"{what}; {key.how} of {key.column} over {len(rows)} row(s)"
    return (v, detail) if v is not None else (None, f"{what} is not a finite number")


def headline_key(h: HeadlineSlice, *, analysis: str, metric: str, domain: str, alpha: float | None = None,
                 selection_rate: float | None = None, condition: str = "clean") -> TableKey:
    """The key of one quantity of a headline slice in the ``results`` table: its mean over refits.

    The release gate, the findings, the model card and the figures read a headline number through this key, so
    they read one value.
    """
    f = h.filters()
    return TableKey.of("results", "value", how="refit_mean", analysis=analysis, condition=condition,
                       target_definition=f["target_definition"], domain=domain, model=f["model"],
                       mapping=f["mapping"], weighting=f["weighting"], metric=metric, alpha=alpha,
                       selection_rate=selection_rate)
