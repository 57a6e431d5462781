"""Read options, the loaded table, and the declared messages of every intake refusal."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Sequence

import pandas as pd

from audit_core.errors import register_messages
from audit_core.limits import Limits

from .report import ReadReport

__all__ = ["MB", "TableFormat", "HeaderChoice", "DecimalChoice", "HEADER_CHOICES", "DECIMAL_CHOICES", "ReadOptions",
           "LoadedTable", "user_read_options"]

TableFormat = Literal["csv", "parquet", "excel"]
#: ``auto`` decides from the content; ``first_row`` / ``none`` are the user's explicit choice.
HeaderChoice = Literal["auto", "first_row", "none"]
#: ``auto`` decides per column; ``.`` or ``,`` fixes the decimal mark of every text number.
DecimalChoice = Literal["auto", ".", ","]
HEADER_CHOICES: tuple[HeaderChoice, ...] = ("auto", "first_row", "none")
DECIMAL_CHOICES: tuple[DecimalChoice, ...] = ("auto", ".", ",")

register_messages(
    {
        "EMPTY_FILE": "The file {name!r} is empty (0 bytes). Choose a file with a header row and data.",
        "FILE_TOO_LARGE": (
            "The file {name!r} is {size_mb:.1f} MB, over the {cap_mb:.1f} MB upload cap. "
            "Raise the cap (environment variable AUDIT_MAX_UPLOAD_MB and server.maxUploadSize) or sample the file first."
        ),
        "UNKNOWN_FORMAT": (
            "{name!r} looks like {what}, not a table. Upload delimited text (CSV, TSV, semicolon-, "
            "pipe- or space-separated, any file extension), Parquet or Excel (.xlsx)."
        ),
        "NOT_A_TABLE": "{name!r} is {what}, not a table. {hint}",
        "GZIP_CAP": (
            "{name!r} is gzip-compressed ({packed_mb:.2f} MB) and expands to more than the {cap_mb:.1f} MB "
            "{cap_name} (a compressed table may expand to at most the upload cap, and at most the decompression "
            "cap); it was stopped there. Refused as a possible decompression bomb; raise the cap (environment "
            "variable {var}) only for a file you trust."
        ),
        "EXCEL_SHEET_EMPTY": (
            "Sheet {sheet!r} of {name!r} is empty. Sheets with data: {sheets}. Choose one of them as the sheet."
        ),
        "EXCEL_NO_SHEET": "{name!r} has no sheet {sheet!r}. Its sheets are: {sheets}.",
        "EXCEL_ALL_EMPTY": "Every sheet of {name!r} is empty ({sheets}).",
        "COLUMN_NAMES_COUNT": (
            "{count} column name(s) were given for {name!r}, but the file has {n_columns} column(s). "
            "Give exactly one name per column, separated by commas."
        ),
        "MULTI_FILE_COLUMNS": (
            "{name!r} does not have the same columns as {first!r}: {detail}. Files stacked together must have "
            "the same columns in the same order; upload them separately or fix the file."
        ),
        "MULTI_FILE_FORMAT": (
            "{name!r} is {fmt}; only delimited text files can be stacked. Upload it on its own."
        ),
        "MULTI_FILE_DUPLICATE": "{name!r} was given twice; each file can be stacked once.",
        "UNPARSEABLE": "Could not read {name!r} as {fmt}: {detail}",
        "BAD_ENCODING": (
            "Could not decode {name!r} with encoding {encoding!r}: {detail}. "
            "Choose another encoding (for example 'latin-1' or 'cp1252')."
        ),
        "CSV_RAGGED": (
            "{name!r} has a ragged row: {detail}. Every row must have as many fields as the first line "
            "(check the delimiter in Read options, or fix the row)."
        ),
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
            "{name!r} has {n_rows} rows, over the cap of {cap:,}. Sample the file, "
            "or raise the cap (environment variable AUDIT_MAX_ROWS)."
        ),
        "DECOMPRESSION_CAP": (
            "{name!r} would expand to {size_mb:.1f} MB, over the {cap_mb:.1f} MB {cap_name} "
            "(ratio {ratio:.0f}:1). Refused as a possible decompression bomb; "
            "raise the cap (environment variable {var}) only for a file you trust."
        ),
        "STACK_TOO_LARGE": (
            "Stacked with the files before it, {name!r} brings the text to {size_mb:.1f} MB, over the "
            "{cap_mb:.1f} MB {cap_name}: a stack of files may hold at most one table's worth. Stack fewer files, "
            "or raise the cap (environment variable {var})."
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
        "MISSING_CODE_UNKNOWN_COLUMN": (
            "The missing code {value!r} is declared for column {column!r}, which is not in {name!r}. "
            "Columns: {columns}."
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
        CSV delimiter; ``None`` sniffs it among ``, TAB ; |`` and runs of
        whitespace; ``" "`` means runs of whitespace.
    encoding : str or None
        CSV text encoding; ``None`` detects it.
    sheet : str, int or None
        Excel sheet name or 0-based index; ``None`` reads the first sheet that
        has data (and says so in the read report).
    na_values : tuple of str
        Text values read as missing in every column (for example ``("unknown", "?")``).
        Blank cells are always missing; nothing else is unless declared here
        or in ``missing_codes`` (pandas' default list of NA spellings is not used).
    missing_codes : tuple of (column, code) pairs
        Missing codes accepted for one column each, usually the read report's
        proposals (:attr:`ReadReport.missing_proposals`).
    header : {"auto", "first_row", "none"}
        Whether the first row of a text or Excel file holds the column names.
    column_names : tuple of str
        Names for a file without a header row (one per column); without them
        the columns are called ``col_1``, ``col_2``, ...
    decimal : {"auto", ".", ","}
        Decimal mark of numbers written as text; ``auto`` decides per column
        (a comma followed by other than three digits is a decimal comma).
    max_bytes : int
        Upload size cap in bytes.
    max_columns, max_rows : int
        Shape caps; rows are counted while they are read.
    max_expansion_bytes : int
        Cap on the uncompressed size of a gzip, xlsx or Parquet file; the cap in force is the
        smaller of this and the upload cap (:func:`audit_core.limits.table_cap`).
    drop_all_missing : bool
        Drop entirely-missing columns instead of refusing them.
    inf_as_missing : bool
        Read ``±inf`` as missing instead of refusing them.
    """

    delimiter: str | None = None
    encoding: str | None = None
    sheet: str | int | None = None
    na_values: tuple[str, ...] = ()
    missing_codes: tuple[tuple[str, str], ...] = ()
    header: HeaderChoice = "auto"
    column_names: tuple[str, ...] = ()
    decimal: DecimalChoice = "auto"
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


def _texts(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (values or ()) if v and v.strip())


def user_read_options(
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    header: HeaderChoice = "auto",
    decimal: DecimalChoice = "auto",
    column_names: Sequence[str] | None = None,
    na_values: Sequence[str] | None = None,
    sheet: str | int | None = None,
    missing_codes: Sequence[tuple[str, str]] = (),
    drop_all_missing: bool = False,
    inf_as_missing: bool = False,
    limits: Limits | None = None,
) -> ReadOptions:
    """The read options for what a user gave: the app's Read options and a run config's ``data`` both come here.

    Only what was given is fixed; everything left out (``None``, blank, ``"auto"``) is decided from
    the file: encoding, delimiter, header row, decimal mark, sheet. Each option fixes its own
    decision and nothing else: column names only name the columns, so a headerless space-separated
    file with names given is still sniffed as space-separated, and its first row is still checked
    for a header (a header found there is replaced by the names; ``header="none"`` keeps it as data).

    Parameters
    ----------
    delimiter, encoding : str or None
        Blank means detect.
    header : {"auto", "first_row", "none"}
    decimal : {"auto", ".", ","}
    column_names, na_values : sequence of str or None
        Trimmed; blank entries are dropped.
    sheet : str, int or None
    missing_codes : sequence of (column, code)
    drop_all_missing, inf_as_missing : bool
    limits : Limits, optional
        Caps; default :meth:`Limits.from_env` (``AUDIT_MAX_*``).

    Returns
    -------
    ReadOptions

    Examples
    --------
    >>> opts = user_read_options(delimiter="", column_names=[" a", "b ", ""], na_values=["?"])
    >>> opts.delimiter, opts.header, opts.column_names, opts.na_values
    (None, 'auto', ('a', 'b'), ('?',))
    """
    return ReadOptions.from_limits(
        limits or Limits.from_env(),
        delimiter=delimiter or None,
        encoding=encoding or None,
        header=header,
        decimal=decimal,
        column_names=_texts(column_names),
        na_values=_texts(na_values),
        sheet=sheet,
        missing_codes=tuple(missing_codes),
        drop_all_missing=drop_all_missing,
        inf_as_missing=inf_as_missing,
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
        What was used for CSV (``" "`` is runs of whitespace).
    dropped_columns : tuple of str
        Columns dropped because they were entirely missing.
    report : ReadReport
        Every decision of the read and its proposals (missing codes), in plain words.
    """

    frame: pd.DataFrame
    name: str
    format: TableFormat
    sha256: str
    n_bytes: int
    encoding: str | None = None
    delimiter: str | None = None
    dropped_columns: tuple[str, ...] = field(default=())
    report: ReadReport = field(default_factory=ReadReport)
