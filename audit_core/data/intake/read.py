"""Reading user tables: CSV, Parquet and Excel into pandas.

Every refusal is a declared :class:`~audit_core.errors.AuditInputError` that
names the file, column or line at fault. Nothing here unpickles anything:
CSV is parsed as text, Parquet through pyarrow, Excel through openpyxl.

Choices
-------
* CSV encoding: a byte-order mark wins; otherwise strict UTF-8; otherwise the
  best guess of ``charset_normalizer``. CSV delimiter: sniffed among
  ``, ; TAB |`` on the first 64 KiB. Both can be fixed by the caller.
* Size caps are checked before parsing: bytes for every format, and for the
  zipped (xlsx) and Parquet formats the declared uncompressed size too, so a
  small decompression bomb is refused before it expands.
"""
from __future__ import annotations

import csv
import hashlib
import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from audit_core.errors import AuditInputError, fail, register_messages
from audit_core.limits import Limits

__all__ = ["ReadOptions", "LoadedTable", "read_table", "read_path", "check_table"]

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

_MB = 1024 * 1024


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
    max_bytes: int = 200 * _MB
    max_columns: int = 10_000
    max_rows: int = 5_000_000
    max_expansion_bytes: int = 2_000 * _MB
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


def _detect_format(data: bytes, name: str) -> TableFormat:
    suffix = Path(name).suffix.lower()
    # Magic bytes: Parquet starts and ends with "PAR1"; an xlsx is a zip whose
    # first record is a local file header. A bare "PK" is not enough: a CSV
    # whose first column is called "PK" (primary key) must stay a CSV.
    if (len(data) >= 8 and data[:4] == b"PAR1" and data[-4:] == b"PAR1") or suffix in {".parquet", ".pq"}:
        return "parquet"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06") or suffix in {".xlsx", ".xlsm"}:
        return "excel"
    if suffix in {".csv", ".tsv", ".txt", ".tab", ".dat", ""}:
        return "csv"
    raise fail("UNKNOWN_FORMAT", name=name)


_MULTIBYTE_GUESSES = frozenset(
    {"big5", "big5hkscs", "cp932", "cp949", "cp950", "gb2312", "gb18030", "gbk", "hz", "johab",
     "euc_jp", "euc_kr", "euc_jis_2004", "euc_jisx0213", "shift_jis", "shift_jis_2004", "shift_jisx0213",
     "iso2022_jp", "iso2022_kr"}
)


def _decode(data: bytes, name: str, encoding: str | None) -> tuple[str, str]:
    if encoding is not None:
        try:
            return data.decode(encoding), encoding
        except (UnicodeDecodeError, LookupError) as exc:
            raise fail("BAD_ENCODING", name=name, encoding=encoding, detail=str(exc)[:200]) from None
    for bom, enc in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError as exc:
                raise fail("BAD_ENCODING", name=name, encoding=enc, detail=str(exc)[:200]) from None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = from_bytes(data[: 4 * _MB])
    best = matches.best()
    enc = best.encoding if best is not None else "latin-1"
    # On short or mostly-ASCII text several code pages decode with the same
    # (zero) chaos and charset_normalizer returns the first, often cp1250,
    # which turns Western accents into Central-European letters ("à" -> "ŕ",
    # "ã" -> "ă"). Among equally good guesses prefer cp1252, the common
    # Western single-byte encoding (a superset of printable latin-1).
    if best is not None and enc != "cp1252":
        tied = [m.encoding for m in matches if m.chaos <= best.chaos and m.coherence >= best.coherence]
        if "cp1252" in tied:
            enc = "cp1252"
        else:
            try:
                western = data.decode("cp1252")
                same = western == data.decode(enc)
            except (UnicodeDecodeError, LookupError):
                western, same = None, False
            # Same text either way: report the common name. And a multi-byte CJK
            # guess for mostly-ASCII text (e.g. "São Paulo" guessed as big5) whose
            # few non-ASCII bytes cp1252 reads as letters is almost surely cp1252.
            sample = data[: 4 * _MB]
            high = sum(b > 127 for b in sample)
            # With fewer than 8 non-ASCII bytes there is too little evidence to
            # tell a script apart (a 2-letter "é,ü" file was guessed as cp1006,
            # Urdu): letters in cp1252 win then too.
            if same or (
                western is not None
                and ((enc.replace("-", "_").lower() in _MULTIBYTE_GUESSES and high < 0.1 * len(sample))
                     or high < 8)
                and all(ch.isalpha() for ch in western if ord(ch) > 127)
            ):
                enc = "cp1252"
    try:
        return data.decode(enc), enc
    except (UnicodeDecodeError, LookupError):
        return data.decode("latin-1"), "latin-1"


def _sniff_delimiter(text: str, name: str) -> str:
    sample = text[: 64 * 1024]
    if Path(name).suffix.lower() in {".tsv", ".tab"}:
        return "\t"
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        first = sample.splitlines()[0] if sample else ""
        counts = {d: first.count(d) for d in ",;\t|"}
        best = max(counts, key=counts.get)
        return best if counts[best] > 0 else ","


def _check_header(header: list[str], name: str, max_columns: int) -> None:
    if len(header) > max_columns:
        raise fail("TOO_MANY_COLUMNS", name=name, n_columns=len(header), cap=max_columns)
    for i, col in enumerate(header, start=1):
        if str(col).strip() == "":
            raise fail("BLANK_COLUMN_NAME", name=name, position=i)
    seen: dict[str, int] = {}
    for col in header:
        key = str(col).strip()
        seen[key] = seen.get(key, 0) + 1
    dupes = [c for c, n in seen.items() if n > 1]
    if dupes:
        raise fail("DUPLICATE_COLUMNS", name=name, columns=", ".join(repr(c) for c in dupes[:10]))


def _read_csv(data: bytes, name: str, opts: ReadOptions) -> tuple[pd.DataFrame, str, str]:
    text, enc = _decode(data, name, opts.encoding)
    if text.strip() == "":
        raise fail("NO_COLUMNS", name=name)
    delim = opts.delimiter or _sniff_delimiter(text, name)
    # A single long text cell is legitimate up to the upload cap (the csv
    # module's default field limit is 128 KiB).
    csv.field_size_limit(max(csv.field_size_limit(), min(opts.max_bytes, 2**31 - 1)))
    try:
        # newline="": let csv see "\r" line ends (old Mac files) instead of raising.
        first_line = next(csv.reader(io.StringIO(text[: 4 * _MB], newline=""), delimiter=delim), [])
    except (csv.Error, TypeError) as exc:  # e.g. a multi-character delimiter, a huge field
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
    _check_header([c.strip() for c in first_line], name, opts.max_columns)
    _check_ragged(text, name, delim, len(first_line))
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=delim,
            na_values=list(opts.na_values) or None,
            skipinitialspace=True,
            low_memory=False,
        )
    except pd.errors.ParserError as exc:
        raise fail("CSV_RAGGED", name=name, detail=str(exc).strip()[:200]) from None
    except (pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, enc, delim


def _check_ragged(text: str, name: str, delim: str, n_header: int) -> None:
    """Refuse rows whose field count differs from the header's.

    pandas alone would silently pad short rows with missing values and, when
    every data row has one extra field, silently turn the first column into
    the index. Blank and whitespace-only lines are skipped, as pandas does.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        next(reader, None)
        for row in reader:
            n = len(row)
            if n == n_header or n == 0 or (n == 1 and row[0].strip() == ""):
                continue
            raise fail(
                "CSV_RAGGED",
                name=name,
                detail=f"line {reader.line_num} has {n} field(s), the header has {n_header}",
            )
    except csv.Error as exc:
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None


def _read_parquet(data: bytes, name: str, opts: ReadOptions) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        if meta.num_columns > opts.max_columns:
            raise fail("TOO_MANY_COLUMNS", name=name, n_columns=meta.num_columns, cap=opts.max_columns)
        if meta.num_rows > opts.max_rows:
            raise fail("TOO_MANY_ROWS", name=name, n_rows=meta.num_rows, cap=opts.max_rows)
        # The declared page sizes understate the memory of dictionary/RLE
        # encoded columns (50,000 zeros declare ~256 bytes), so also count at
        # least 8 bytes per cell once loaded: a lower bound for every dtype.
        expanded = max(
            sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)),
            meta.num_rows * meta.num_columns * 8,
        )
        _check_expansion(expanded, len(data), name, opts)
        table = pf.read()
        _check_header([str(c) for c in table.column_names], name, opts.max_columns)
        # Conversion can fail too (e.g. out-of-range timestamps, odd extension types).
        return table.to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, AuditInputError):
            raise
        raise fail("UNPARSEABLE", name=name, fmt="Parquet", detail=str(exc).strip()[:200]) from None


def _check_expansion(expanded: int, packed: int, name: str, opts: ReadOptions) -> None:
    if expanded > opts.max_expansion_bytes:
        raise fail(
            "DECOMPRESSION_CAP",
            name=name,
            size_mb=expanded / _MB,
            cap_mb=opts.max_expansion_bytes / _MB,
            ratio=expanded / max(packed, 1),
        )


def _read_excel(data: bytes, name: str, opts: ReadOptions) -> pd.DataFrame:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            expanded = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc)) from None
    _check_expansion(expanded, len(data), name, opts)
    try:
        frame = pd.read_excel(io.BytesIO(data), sheet_name=opts.sheet, engine="openpyxl", header=None)
    except Exception as exc:  # openpyxl raises many unrelated types on bad files
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc).strip()[:200]) from None
    if frame.shape[0] == 0:
        raise fail("NO_COLUMNS", name=name)
    header = ["" if pd.isna(v) else str(v).strip() for v in frame.iloc[0].tolist()]
    _check_header(header, name, opts.max_columns)
    body = frame.iloc[1:].reset_index(drop=True)
    body.columns = header
    # Re-infer dtypes the way a CSV would read, column by column.
    return body.infer_objects()


def read_table(data: bytes, *, name: str, options: ReadOptions | None = None) -> LoadedTable:
    """Read an uploaded CSV, Parquet or Excel file and check it.

    Parameters
    ----------
    data : bytes
        The raw file content.
    name : str
        The file name; its suffix helps detect the format.
    options : ReadOptions, optional

    Returns
    -------
    LoadedTable

    Raises
    ------
    AuditInputError
        With a declared code (``EMPTY_FILE``, ``FILE_TOO_LARGE``,
        ``DUPLICATE_COLUMNS``, ``ALL_MISSING_COLUMN``, ...).

    Examples
    --------
    >>> t = read_table(b"a;b\\n1;x\\n2;y\\n", name="t.csv")
    >>> t.delimiter, t.frame.shape
    (';', (2, 2))
    """
    opts = options or ReadOptions()
    if len(data) == 0:
        raise fail("EMPTY_FILE", name=name)
    if len(data) > opts.max_bytes:
        raise fail("FILE_TOO_LARGE", name=name, size_mb=len(data) / _MB, cap_mb=opts.max_bytes / _MB)
    fmt = _detect_format(data, name)
    enc = delim = None
    if fmt == "csv":
        frame, enc, delim = _read_csv(data, name, opts)
    elif fmt == "parquet":
        frame = _read_parquet(data, name, opts)
    else:
        frame = _read_excel(data, name, opts)
    frame, dropped = check_table(frame, name=name, options=opts)
    return LoadedTable(
        frame=frame,
        name=name,
        format=fmt,
        sha256=hashlib.sha256(data).hexdigest(),
        n_bytes=len(data),
        encoding=enc,
        delimiter=delim,
        dropped_columns=dropped,
    )


def read_path(path: str | Path, *, options: ReadOptions | None = None) -> LoadedTable:
    """Read a table from disk; see :func:`read_table`."""
    p = Path(path)
    return read_table(p.read_bytes(), name=p.name, options=options)


def _mixed_type_problem(col: str, s: pd.Series) -> None:
    nonnull = s.dropna()
    if nonnull.empty:
        return
    if s.dtype == object:
        kinds = {type(v) for v in nonnull.tolist()}
        numeric_kinds = {int, float, np.int64, np.float64, np.int32, np.float32}
        has_num = bool(kinds & numeric_kinds)
        text = [v for v in nonnull.tolist() if isinstance(v, str)]
        if has_num and text:
            raise fail(
                "MIXED_TYPES",
                column=col,
                n_numeric=len(nonnull) - len(text),
                n_text=len(text),
                example=text[0][:40],
            )
        if not (kinds <= numeric_kinds | {str, bool, np.bool_}):
            raise fail("UNSUPPORTED_DTYPE", column=col, dtype=", ".join(sorted(k.__name__ for k in kinds))[:80])
    if pd.api.types.is_string_dtype(s.dtype) or s.dtype == object:
        as_text = nonnull.astype(str)
        parsed = pd.to_numeric(as_text, errors="coerce")
        n_num = int(parsed.notna().sum())
        n_text = len(as_text) - n_num
        # A column that is mostly numbers with a few text cells is a typed
        # column with stray codes; mostly text with some numeric-looking
        # labels (e.g. "1", "2", "other") is an honest categorical column.
        if n_num > 0 and n_text > 0 and n_num >= 0.8 * len(as_text):
            example = as_text[parsed.isna()].iloc[0]
            raise fail("MIXED_TYPES", column=col, n_numeric=n_num, n_text=n_text, example=example[:40])


def check_table(
    frame: pd.DataFrame, *, name: str = "table", options: ReadOptions | None = None
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Check a frame for the declared problems.

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
    name : str
        Used in messages.
    options : ReadOptions, optional

    Returns
    -------
    frame : pandas.DataFrame
        The checked frame (a copy when columns were dropped or inf replaced).
    dropped : tuple of str
        Entirely-missing columns dropped under ``drop_all_missing``.
    """
    opts = options or ReadOptions()
    if frame.shape[1] == 0:
        raise fail("NO_COLUMNS", name=name)
    _check_header([str(c) for c in frame.columns], name, opts.max_columns)
    if frame.shape[0] == 0:
        raise fail("NO_ROWS", name=name)
    if frame.shape[0] > opts.max_rows:
        raise fail("TOO_MANY_ROWS", name=name, n_rows=frame.shape[0], cap=opts.max_rows)
    # set_axis returns a new frame: the caller's frame keeps its column labels.
    frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
    dropped: list[str] = []
    for col in frame.columns:
        s = frame[col]
        if s.isna().all():
            if opts.drop_all_missing:
                dropped.append(col)
                continue
            raise fail("ALL_MISSING_COLUMN", column=col)
        if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            values = s.to_numpy(dtype=float, na_value=np.nan)
            inf = np.isinf(values)
            if inf.any():
                if opts.inf_as_missing:
                    frame = frame.copy() if not dropped else frame
                    frame[col] = s.where(~inf)
                    if frame[col].isna().all():
                        raise fail("ALL_MISSING_COLUMN", column=col)
                else:
                    raise fail("INF_VALUES", column=col, count=int(inf.sum()), row=int(np.argmax(inf)) + 1)
        elif pd.api.types.is_datetime64_any_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            pass
        elif isinstance(s.dtype, pd.CategoricalDtype):
            pass
        else:
            _mixed_type_problem(col, s)
    if dropped:
        frame = frame.drop(columns=dropped)
        if frame.shape[1] == 0:
            raise fail("NO_COLUMNS", name=name)
    return frame, tuple(dropped)
