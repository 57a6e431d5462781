"""Compare saved runs: two runs table by table (metric deltas, verdict changes), fragility runs at a glance.

Generic, audit-independent rules:

* **Key columns** of a table are its non-numeric columns (text, category,
  bool, dates); **value columns** are its numeric ones. Two runs' tables with
  the same name are outer-joined on their shared key columns and every shared
  value column gets ``<col>_a``, ``<col>_b`` and ``<col>_delta = b - a``.
  A table without key columns is joined on row position.
* A table named ``verdicts`` with a ``verdict`` column is compared on its
  other non-numeric columns, listing the rows whose verdict changed
  (including rows present in only one run).

:func:`runs_overview` summarises many saved fragility runs as one
dataset × model table (the Fragility page's heatmap).

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from .registry import RunRecord

__all__ = ["VERDICT_TABLE", "compare_runs_tables", "key_columns", "runs_overview", "table_deltas", "verdict_changes"]

#: Name of the table whose ``verdict`` column is compared across runs.
VERDICT_TABLE = "verdicts"


def key_columns(df: pd.DataFrame) -> list[str]:
    """Non-numeric columns (bool counts as a key).

    Examples
    --------
    >>> key_columns(pd.DataFrame({"split": ["a"], "metric": ["m"], "value": [1.0]}))
    ['split', 'metric']
    """
    return [
        str(c)
        for c in df.columns
        if pd.api.types.is_bool_dtype(df[c]) or not pd.api.types.is_numeric_dtype(df[c])
    ]


def table_deltas(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame | None:
    """Join two versions of one table and compute ``b - a`` for numeric columns.

    Returns
    -------
    pandas.DataFrame or None
        Keys, then ``<col>_a``, ``<col>_b``, ``<col>_delta`` per shared numeric
        column; ``None`` if there is no shared numeric column.
    """
    keys = [k for k in key_columns(a) if k in set(key_columns(b))]
    values = [c for c in a.columns if c not in keys and c in b.columns and str(c) not in key_columns(a)
              and str(c) not in key_columns(b)]
    if not values:
        return None
    left, right = a.reset_index(drop=True), b.reset_index(drop=True)
    if not keys:
        left = left.assign(row=range(len(left)))
        right = right.assign(row=range(len(right)))
        keys = ["row"]
    left = left.drop_duplicates(keys)
    right = right.drop_duplicates(keys)
    merged = left[keys + values].merge(right[keys + values], on=keys, how="outer", suffixes=("_a", "_b"))
    out = merged[keys].copy()
    for c in values:
        out[f"{c}_a"] = merged[f"{c}_a"]
        out[f"{c}_b"] = merged[f"{c}_b"]
        out[f"{c}_delta"] = merged[f"{c}_b"].astype("float64") - merged[f"{c}_a"].astype("float64")
    return out


def verdict_changes(a: pd.DataFrame, b: pd.DataFrame, *, column: str = "verdict") -> pd.DataFrame:
    """Rows of a ``verdicts`` table whose verdict differs between two runs.

    Returns
    -------
    pandas.DataFrame
        Keys, ``verdict_a``, ``verdict_b`` (missing where a row exists in only one run).
    """
    keys = [k for k in key_columns(a) if k != column and k in set(key_columns(b)) - {column}]
    left = a[keys + [column]].astype({column: "string"})
    right = b[keys + [column]].astype({column: "string"})
    if not keys:
        left, right = left.assign(row=range(len(left))), right.assign(row=range(len(right)))
        keys = ["row"]
    merged = left.merge(right, on=keys, how="outer", suffixes=("_a", "_b"))
    va, vb = merged[f"{column}_a"], merged[f"{column}_b"]
    changed = (va != vb).fillna(True) & ~(va.isna() & vb.isna())
    return merged.loc[changed.to_numpy(dtype=bool)].reset_index(drop=True)


def compare_runs_tables(
    a: Mapping[str, pd.DataFrame], b: Mapping[str, pd.DataFrame]
) -> dict[str, pd.DataFrame]:
    """Deltas for every table both runs hold, plus ``verdict changes`` if any.

    Returns
    -------
    dict of str to pandas.DataFrame
        Table name -> :func:`table_deltas` (tables without numeric columns are
        left out); ``"verdict changes"`` -> :func:`verdict_changes` when both
        runs have a :data:`VERDICT_TABLE` table with a ``verdict`` column.
    """
    out: dict[str, pd.DataFrame] = {}
    for name in a:
        if name not in b:
            continue
        if name == VERDICT_TABLE and "verdict" in a[name].columns and "verdict" in b[name].columns:
            out["verdict changes"] = verdict_changes(a[name], b[name])
        deltas = table_deltas(a[name], b[name])
        if deltas is not None:
            out[name] = deltas
    return out


def runs_overview(records: Sequence[RunRecord], *, confident: float = 0.8) -> pd.DataFrame:
    """Dataset × model summary over saved fragility runs (for the heatmap).

    Parameters
    ----------
    records : sequence of RunRecord
        Fragility runs with a ``summary`` table.
    confident : float
        ``p̂`` threshold of the confident stratum.

    Returns
    -------
    DataFrame ``run_id, dataset, model, n_cases, mean_fds, mean_rcma, share_brittle_confident``.
    """
    rows = []
    for r in records:
        s = r.tables.get("summary")
        if s is None or not len(s) or not {"p_hat", "fds", "rcma"} <= set(s.columns):
            continue  # no certificates, or a summary this version cannot read: left out of the overview
        conf = s[s["p_hat"] >= confident]
        share = float(conf["donor_any"].mean()) if "donor_any" in s and len(conf) else float("nan")
        rows.append(dict(run_id=r.run_id, dataset=r.dataset_name, model=str(r.model_spec.get("kind", "?")),
                         n_cases=int(len(s)), mean_fds=float(s["fds"].mean()), mean_rcma=float(s["rcma"].mean()),
                         share_brittle_confident=share))
    return pd.DataFrame(rows, columns=["run_id", "dataset", "model", "n_cases", "mean_fds", "mean_rcma", "share_brittle_confident"])
