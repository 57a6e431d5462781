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

__all__ = ["VERDICT_TABLE", "OUTCOME_COLUMNS", "change_directions", "compare_runs_tables", "key_columns", "largest_changes",
           "runs_overview", "table_deltas", "verdict_changes"]

#: Name of the table whose ``verdict`` column is compared across runs.
VERDICT_TABLE = "verdicts"
#: Columns of a verdicts table that are outcomes like ``verdict`` (compared, never used as row keys).
OUTCOME_COLUMNS = ("direction",)
#: Numeric columns of a verdicts table that identify its row (a conformal α, a selection rate), used as keys.
NUMERIC_KEYS = ("alpha", "selection_rate")
#: How bad a verdict row is, by its ``direction`` when the table has one (an improvement is never bad),
#: else by its verdict; a change to a lower rank is "better", to a higher one "worse".
DIRECTION_RANK = {"better": 0, "within tolerance": 0, "undetermined": 1, "shifted": 1, "worse": 2}
VERDICT_RANK = {"transport-stable": 0, "stable": 0, "pass": 0, "release": 0, "ok": 0,
                "indeterminate": 1, "refer": 1, "transport-sensitive": 2, "sensitive": 2, "fail": 2, "block": 2}


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
        Keys, ``verdict_a``, ``verdict_b`` (missing where a row exists in only one run), and
        ``direction_a``, ``direction_b`` when both tables have a ``direction``
        column (:data:`OUTCOME_COLUMNS` are outcomes, never keys: a row whose
        verdict and direction both change is one change, not two one-sided rows).
    """
    outcomes = [c for c in OUTCOME_COLUMNS if c in a.columns and c in b.columns and c != column]
    keys = [k for k in key_columns(a) if k != column and k not in OUTCOME_COLUMNS and k in set(key_columns(b)) - {column}]
    keys += [k for k in NUMERIC_KEYS if k in a.columns and k in b.columns and k not in keys]
    left = a[keys + [column] + outcomes].astype({column: "string"})
    right = b[keys + [column] + outcomes].astype({column: "string"})
    if not keys:
        left, right = left.assign(row=range(len(left))), right.assign(row=range(len(right)))
        keys = ["row"]
    merged = left.merge(right, on=keys, how="outer", suffixes=("_a", "_b"))
    va, vb = merged[f"{column}_a"], merged[f"{column}_b"]
    changed = (va != vb).fillna(True) & ~(va.isna() & vb.isna())
    return merged.loc[changed.to_numpy(dtype=bool)].reset_index(drop=True)


def _rank(verdict, direction) -> float:
    if isinstance(direction, str) and direction in DIRECTION_RANK:
        return DIRECTION_RANK[direction]
    return VERDICT_RANK.get(verdict, float("nan")) if isinstance(verdict, str) else float("nan")


def change_directions(changes: pd.DataFrame) -> pd.Series:
    """Direction of each verdict change A → B: ``better``, ``worse``, ``changed`` (no order), ``only in A``/``only in B``.

    Parameters
    ----------
    changes : DataFrame
        :func:`verdict_changes` output (``verdict_a``, ``verdict_b``, optional ``direction_a``, ``direction_b``).

    Examples
    --------
    >>> ch = pd.DataFrame({"verdict_a": ["transport-sensitive", "transport-stable", None],
    ...                    "verdict_b": ["transport-stable", "indeterminate", "indeterminate"]})
    >>> list(change_directions(ch))
    ['better', 'worse', 'only in B']
    """
    out = []
    for _, row in changes.iterrows():
        va, vb = row.get("verdict_a"), row.get("verdict_b")
        if pd.isna(va) or pd.isna(vb):
            out.append("only in B" if pd.isna(va) else "only in A")
            continue
        ra, rb = _rank(va, row.get("direction_a")), _rank(vb, row.get("direction_b"))
        out.append("better" if rb < ra else "worse" if rb > ra else "changed")
    return pd.Series(out, index=changes.index, dtype="object")


def largest_changes(deltas: Mapping[str, pd.DataFrame], *, top: int = 5) -> pd.DataFrame:
    """The ``top`` largest absolute B − A differences over every compared table and value column.

    When the runs have a :data:`VERDICT_TABLE`, only its rows are ranked (the
    audited quantities; the other tables hold counts, bins and curves).
    Count-like columns (integers, names starting ``n_``) are left out, so a
    row count never outranks a metric.

    Returns
    -------
    DataFrame ``table, row, column, a, b, change`` sorted by ``|change|``, largest first.
    """
    rows = []
    if VERDICT_TABLE in deltas:  # the audited quantities themselves; other tables hold counts, bins and curves
        deltas = {VERDICT_TABLE: deltas[VERDICT_TABLE]}
    for name, df in deltas.items():
        if name == "verdict changes":
            continue
        keys = [c for c in df.columns if not str(c).endswith(("_a", "_b", "_delta"))]
        for col in (c for c in df.columns if str(c).endswith("_delta")):
            base = str(col)[: -len("_delta")]
            if base.startswith("n_") or pd.api.types.is_integer_dtype(df[f"{base}_a"]):
                continue
            best = df[col].abs().dropna().sort_values(ascending=False, kind="stable").index[:top]
            for _, r in df.loc[best].iterrows():  # each column's own top rows are enough for the overall top
                rows.append(dict(table=name, row=" · ".join(str(r[k]) for k in keys if pd.notna(r[k]) and str(r[k])),
                                 column=base, a=r[f"{base}_a"], b=r[f"{base}_b"], change=float(r[col])))
    out = pd.DataFrame(rows, columns=["table", "row", "column", "a", "b", "change"])
    if out.empty:
        return out
    return out.reindex(out["change"].abs().sort_values(ascending=False, kind="stable").index).head(top).reset_index(drop=True)


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
        ta, tb = a[name], b[name]
        if name == VERDICT_TABLE and "verdict" in ta.columns and "verdict" in tb.columns:
            out["verdict changes"] = verdict_changes(ta, tb)
            ta, tb = (t.drop(columns=[c for c in ("verdict", *OUTCOME_COLUMNS) if c in t.columns]) for t in (ta, tb))
            ta, tb = (t.astype({c: "string" for c in NUMERIC_KEYS if c in t.columns}) for t in (ta, tb))
        deltas = table_deltas(ta, tb)
        if deltas is not None:
            out[name] = deltas
    return out


def runs_overview(records: Sequence[RunRecord], *, confident: float = 0.8) -> pd.DataFrame:
    """Dataset × model summary over saved fragility runs (for the heatmap).

    Parameters
    ----------
    records : sequence of RunRecord
        Fragility runs with a ``certificates`` table.
    confident : float
        ``p̂`` threshold of the confident stratum.

    Returns
    -------
    DataFrame ``run_id, dataset, model, n_cases, mean_fds, mean_rcma, share_brittle_confident``.
    """
    rows = []
    for r in records:
        s = r.tables.get("certificates")
        if s is None or not len(s) or not {"p_hat", "fds", "rcma"} <= set(s.columns):
            continue  # no certificates, or a certificates table this version cannot read: left out of the overview
        conf = s[s["p_hat"] >= confident]
        share = float(conf["donor_any"].mean()) if "donor_any" in s and len(conf) else float("nan")
        rows.append(dict(run_id=r.run_id, dataset=r.dataset_name, model=str(r.model_spec.get("kind", "?")),
                         n_cases=int(len(s)), mean_fds=float(s["fds"].mean()), mean_rcma=float(s["rcma"].mean()),
                         share_brittle_confident=share))
    return pd.DataFrame(rows, columns=["run_id", "dataset", "model", "n_cases", "mean_fds", "mean_rcma", "share_brittle_confident"])
