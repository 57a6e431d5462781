"""The table columns an imported model reads by name: each present, and numeric where the model reads numbers.

One check for every importer that names its inputs (skops, LightGBM text,
XGBoost), so a missing or text column is refused with the same words
whichever format the model came in.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = ["require_columns", "require_numeric"]

register_messages(
    {
        "IMPORT_MISSING_COLUMNS": "The model in {name!r} reads column(s) {columns} that the table does not have.",
        "IMPORT_NON_NUMERIC": (
            "The {fmt} model reads column {column!r} as a number, but the table holds text in it."
        ),
    }
)


def require_columns(columns: Sequence[str], table_columns: Collection[str], *, name: str) -> None:
    """Refuse a model whose named input columns the table lacks.

    Parameters
    ----------
    columns : sequence of str, length n_inputs
        The column names the model reads, in its order.
    table_columns : collection of str
        The columns of the table the model will score.
    name : str
        The model file's name, quoted in the refusal.

    Raises
    ------
    AuditInputError
        ``IMPORT_MISSING_COLUMNS`` naming up to ten absent columns.
    """
    missing = [c for c in columns if c not in table_columns]
    if missing:
        raise fail("IMPORT_MISSING_COLUMNS", name=name, columns=", ".join(repr(c) for c in missing[:10]))


def require_numeric(columns: Sequence[str], table: pd.DataFrame, *, name: str, fmt: str) -> None:
    """Refuse a model that reads numbers from a column the table holds as text (or lacks).

    Parameters
    ----------
    columns : sequence of str, length n_inputs
        The column names the model reads as numbers.
    table : DataFrame, shape (n_rows, n_columns)
        The table the model will score.
    name : str
        The model file's name, quoted in the refusal.
    fmt : str
        The model format's name (``"XGBoost"``), quoted in the refusal.

    Raises
    ------
    AuditInputError
        ``IMPORT_MISSING_COLUMNS`` (see :func:`require_columns`), or
        ``IMPORT_NON_NUMERIC`` naming the first text column.
    """
    require_columns(columns, table.columns, name=name)
    for c in columns:
        if not pd.api.types.is_numeric_dtype(table[c].dtype):
            raise fail("IMPORT_NON_NUMERIC", column=c, fmt=fmt)
