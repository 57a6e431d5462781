"""Read options, the loaded table, and the declared messages of every intake refusal."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from audit_core.errors import register_messages
from audit_core.limits import Limits

__all__ = ["MB", "TableFormat", "ReadOptions", "LoadedTable"]

TableFormat = Literal["csv", "parquet", "excel"]

register_messages(
    {
        "EMPTY_FILE": "The file {name!r} is empty (0 bytes). Choose a file with a header row and data.",
        "FILE_TOO_LARGE": (
            "The file {name!r} is {size_mb:.1f} MB, over the {cap_mb:.1f} MB upload cap. "
            "Raise the cap (environment variable AUDIT_MAX_UPLOAD_MB and server.maxUploadSize) or sample the file first."
        ),
        "UNKNOWN_FORMAT": (
            "Cannot tell the format of {name!r}. Use a .csv, .tsv, .txt, .parquet or .xlsx file."
        ),
        "UNPARSEABLE": "Could not read {name!r} as {fmt}: {detail}",
        "BAD_ENCODING": (
            "Could not decode {name!r} with encoding {encoding!r}: {detail}. "
            "Choose another encoding (for example 'latin-1' or 'cp1252')."
        ),
        "CSV_RAGGED": "{name!r} has a ragged row: {detail}. Every row must have as many fields as the header.",
        "NO_ROWS": "{name!r} has a header but no data rows.",
        "NO_COLUMNS": "{name!r} has no columns.",
        "DUPLICATE_COLUMNS": (
            "{name!r} has duplicate column names: {columns}. Rename them so every column name is unique."
        ),
        "BLANK_COLUMN_NAME": (
            "{name!r} has a column with a blank name at position {position} (1-based). Give every column a name."
        ),
        "TOO_MANY_COLUMNS": (
            "{name!r} has {n_columns:,} columns, over the cap of {cap:,}. Select fewer columns before uploading, "
            "or raise the cap (environment variable AUDIT_MAX_COLUMNS)."
        ),
        "TOO_MANY_ROWS": (
            "{name!r} has {n_rows:,} rows, over the cap of {cap:,}. Sample the file, "
            "or raise the cap (environment variable AUDIT_MAX_ROWS)."
        ),
        "DECOMPRESSION_CAP": (
            "{name!r} would expand to {size_mb:.1f} MB, over the {cap_mb:.1f} MB decompression cap "
            "(ratio {ratio:.0f}:1). Refused as a possible decompression bomb; "
            "raise the cap (environment variable AUDIT_MAX_EXPANSION_MB) only for a file you trust."
        ),
        "ALL_MISSING_COLUMN": (
            "Column {column!r} is entirely missing. Drop it (tick 'drop all-missing columns') or fix the file."
        ),
        "INF_VALUES": (
            "Column {column!r} holds {count} infinite value(s) (first at row {row}). "
            "Replace them, or tick 'treat inf as missing'."
        ),
        "MIXED_TYPES": (
            "Column {column!r} mixes numbers ({n_numeric} rows) with text ({n_text} rows, e.g. {example!r}). "
            "Declare the text values as missing codes, or convert the column."
        ),
        "UNSUPPORTED_DTYPE": "Column {column!r} has an unsupported type {dtype}. Convert it to numbers or text.",
    }
)

MB = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ReadOptions:
    """How to read an uploaded table.

    Parameters
    ----------
    delimiter : str or None
        CSV delimiter; ``None`` sniffs it.
    encoding : str or None
        CSV text encoding; ``None`` detects it.
    sheet : str or int
        Excel sheet name or 0-based index.
    na_values : tuple of str
        Extra text values read as missing (for example ``("unknown", "?")``).
    max_bytes : int
        Upload size cap in bytes.
    max_columns, max_rows : int
        Shape caps.
    max_expansion_bytes : int
        Cap on the uncompressed size of an xlsx or Parquet file.
    drop_all_missing : bool
        Drop entirely-missing columns instead of refusing them.
    inf_as_missing : bool
        Read ``±inf`` as missing instead of refusing them.
    """

    delimiter: str | None = None
    encoding: str | None = None
    sheet: str | int = 0
    na_values: tuple[str, ...] = ()
    max_bytes: int = 200 * MB
    max_columns: int = 10_000
    max_rows: int = 5_000_000
    max_expansion_bytes: int = 2_000 * MB
    drop_all_missing: bool = False
    inf_as_missing: bool = False

    @classmethod
    def from_limits(cls, limits: Limits, **kwargs) -> "ReadOptions":
        """Read options with the caps of ``limits`` (:class:`~audit_core.limits.Limits`); ``kwargs`` set the other fields.

        Examples
        --------
        >>> opts = ReadOptions.from_limits(Limits.from_env({"AUDIT_MAX_ROWS": "3"}), delimiter=";")
        >>> opts.max_rows, opts.delimiter
        (3, ';')
        """
        return cls(
            max_bytes=limits.max_upload_bytes,
            max_rows=limits.max_rows,
            max_columns=limits.max_columns,
            max_expansion_bytes=limits.max_expansion_bytes,
            **kwargs,
        )


@dataclass(frozen=True)
class LoadedTable:
    """A table read and checked.

    Attributes
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
    name : str
        The file name it came from.
    format : {"csv", "parquet", "excel"}
    sha256 : str
        SHA-256 of the raw bytes: the dataset fingerprint.
    encoding, delimiter : str or None
        What was used for CSV.
    dropped_columns : tuple of str
        Columns dropped because they were entirely missing.
    """

    frame: pd.DataFrame
    name: str
    format: TableFormat
    sha256: str
    n_bytes: int
    encoding: str | None = None
    delimiter: str | None = None
    dropped_columns: tuple[str, ...] = field(default=())
