"""The glossary on screen: help texts on column headers and boxes, and a "what these symbols mean" list.

The texts live in :mod:`audit_core.findings.glossary` (one glossary for
every page and the report); this module only attaches them to Streamlit
elements. :func:`table` is ``st.dataframe`` with every known column header
explained and missing values shown as "–" (never "None").
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import pandas as pd
import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from audit_core.findings.glossary import explain
from audit_core.safe_text import map_text, reveal

__all__ = ["MISSING", "MAX_STYLED_CELLS", "Width", "column_help", "display", "table", "symbols_expander"]

#: How a missing value is shown in a table.
MISSING = "–"
#: Above this many cells a table is shown as it is: a pandas Styler renders every cell (slow on big tables).
MAX_STYLED_CELLS = 20_000
#: A column width :func:`table` accepts: a named width or pixels.
Width = Literal["small", "medium", "large"] | int


def column_help(columns: Iterable) -> dict[str, ColumnConfig]:
    """``column_config`` giving each column with a glossary entry its help text (shown on hovering the header)."""
    return {str(c): st.column_config.Column(help=text) for c in columns if (text := explain(c))}


def display(df):
    """The table as shown: missing values as :data:`MISSING` in the columns that have any (a Styler then), and
    invisible or text-moving characters in text cells and headers shown as ``<U+XXXX>`` (:func:`reveal`).

    Tables over :data:`MAX_STYLED_CELLS` cells are returned unchanged.
    """
    if isinstance(df, pd.DataFrame):
        if df.size > MAX_STYLED_CELLS or not (df.columns.is_unique and df.index.is_unique):
            return df
        df = map_text(df, reveal)
        if not (df.columns.is_unique and df.index.is_unique):  # two names that differed only invisibly
            return df
        holes = [c for c in df.columns if df[c].isna().any()]
        if holes:
            return df.style.format(na_rep=MISSING, precision=4, subset=holes)
    elif hasattr(df, "format") and hasattr(df, "data"):  # a Styler: keep its formats, add the missing mark
        return df.format(na_rep=MISSING, precision=4, subset=[c for c in df.data.columns if df.data[c].isna().any()])
    return df


def table(df, *, key: str, widths: Mapping[str, Width] | None = None, **kwargs) -> None:
    """``st.dataframe`` with the glossary's help on every known header and no "None" cells.

    ``widths`` maps column names to ``"small"``, ``"medium"``, ``"large"`` or pixels (a long reason gets room to be
    read).
    """
    columns = df.data.columns if hasattr(df, "data") and not isinstance(df, pd.DataFrame) else df.columns
    config: dict[str, ColumnConfig] = column_help(columns)
    for c, w in (widths or {}).items():
        if c in {str(x) for x in columns}:
            config[c] = st.column_config.Column(help=explain(c) or None, width=w)
    st.dataframe(display(df), column_config={**config, **kwargs.pop("column_config", {})}, key=key, **kwargs)


def symbols_expander(names: Iterable, *, key: str, title: str = "What these symbols mean") -> None:
    """An expander listing the glossary entries of ``names`` (e.g. the metric names a table lists as rows)."""
    seen = list(dict.fromkeys(str(n) for n in names))
    rows = [{"symbol": n, "meaning": text} for n in seen if (text := explain(n))]
    if rows:
        with st.expander(title):
            st.dataframe(pd.DataFrame(rows), hide_index=True, key=key)
