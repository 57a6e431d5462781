"""Delimited text (CSV, TSV, semicolon, pipe or whitespace separated) read as text cells.

Every cell is read as text first (no type guessing, no NA list), so that
leading zeros survive and nothing becomes missing unless it is blank or
declared; :mod:`.values` types the columns afterwards.

The text is never held as one decoded string: the encoding, delimiter and
header are decided on the start of the file, the ragged-row check streams the
records (counting them against the row cap, :mod:`.bounded`), and the parser
reads the bytes itself, asked for no more rows than the cap allows.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from audit_core.errors import fail

from .bounded import check_rows, release_freed_memory, row_limit
from .checks import check_header
from .encoding import decide_encoding
from .header import decide_header, generated_names
from .options import ReadOptions
from .report import DELIMITER_NAMES
from .sniff import WHITESPACE, sniff_delimiter, split_line

__all__ = ["TextCells", "read_text_cells", "column_names"]

_SAMPLE_ROWS = 200
#: Text parsed at a time (bytes, estimated from the sample's line length).
_PARSE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class TextCells:
    """A delimited file as text cells, with the decisions taken to read it.

    Attributes
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
        Every cell is text exactly as in the file (not yet trimmed).
    encoding, delimiter : str
    has_header : bool
    names_source : {"file", "generated", "given"}
    encoding_note, delimiter_note, header_note : str
    encoding_warning : tuple of (code, message) or None
        ``READ_ENCODING`` when a non-UTF-8 encoding was decided (see :mod:`.encoding`).
    """

    frame: pd.DataFrame
    encoding: str
    delimiter: str
    has_header: bool
    names_source: str
    encoding_note: str
    delimiter_note: str
    header_note: str
    encoding_warning: tuple[str, str] | None = None


def column_names(first_row: list[str], has_header: bool, opts: ReadOptions, name: str) -> tuple[list[str], str]:
    """The column names and where they came from: the file, the options, or generated."""
    n = len(first_row)
    if opts.column_names:
        names = [str(c).strip() for c in opts.column_names]
        if len(names) != n:
            raise fail("COLUMN_NAMES_COUNT", name=name, count=len(names), n_columns=n)
        source = "given"
    elif has_header:
        names, source = [str(c).strip() for c in first_row], "file"
    else:
        names, source = generated_names(n), "generated"
    check_header(names, name, opts.max_columns)
    return names, source


def _sample_rows(sample: str, delim: str, name: str) -> list[list[str]]:
    try:
        if delim == WHITESPACE:
            rows: Iterable[list[str]] = (split_line(line, delim) for line in sample.splitlines())
        else:
            # newline="": let csv see "\r" line ends (old Mac files) instead of raising.
            rows = csv.reader(io.StringIO(sample, newline=""), delimiter=delim, skipinitialspace=True)
        out: list[list[str]] = []
        for row in rows:
            if not row or (len(row) == 1 and row[0].strip() == ""):
                continue
            out.append([c.strip() for c in row])
            if len(out) >= _SAMPLE_ROWS:
                break
        return out
    except (csv.Error, TypeError) as exc:  # e.g. a multi-character delimiter, a huge field
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None


def read_text_cells(data: bytes, name: str, opts: ReadOptions) -> TextCells:
    """Decode, sniff, decide the header and parse every cell as text.

    Raises
    ------
    AuditInputError
        ``BAD_ENCODING``, ``NO_COLUMNS``, ``UNPARSEABLE``, ``CSV_RAGGED``,
        ``COLUMN_NAMES_COUNT`` and the header checks.
    """
    enc = decide_encoding(data, name, opts.encoding)
    sample = enc.sample
    if sample.strip() == "":
        raise fail("NO_COLUMNS", name=name)
    if opts.delimiter:
        delim = opts.delimiter
        delim_note = f"Delimiter: {DELIMITER_NAMES.get(delim, repr(delim))}, as chosen in Read options."
    else:
        delim, delim_note = sniff_delimiter(sample, name)
    # A single long text cell is legitimate up to the upload cap (the csv
    # module's default field limit is 128 KiB).
    csv.field_size_limit(max(csv.field_size_limit(), min(opts.max_bytes, 2**31 - 1)))
    rows = _sample_rows(sample, delim, name)
    if not rows:
        raise fail("NO_COLUMNS", name=name)
    has_header, header_note = decide_header(rows, opts.header)
    names, source = column_names(rows[0], has_header, opts, name)
    if source == "generated":
        header_note += f" Columns named col_1 … col_{len(names)}."
    elif source == "given":
        header_note += " Column names as given in Read options."
    # pyarrow's reader costs about 60 µs a column before its first row: pandas' is cheaper for a few rows.
    lines = sample.count("\n") * max(1.0, len(data) / max(len(sample), 1))
    frame = _parse_arrow(data, enc.codec, delim, len(names), has_header, opts) if lines >= _ARROW_MIN_ROWS else None
    if frame is None:
        _check_records(data, enc.codec, name, delim, len(names), has_header, opts)
        frame = _parse(data, enc.codec, name, delim, has_header, sample, opts)
    if frame.shape[1] != len(names):
        raise fail("CSV_RAGGED", name=name, detail=f"{frame.shape[1]} field(s) per row, the first line has {len(names)}")
    if has_header:
        frame = frame.iloc[1:].reset_index(drop=True)
    frame.columns = names
    return TextCells(frame=frame, encoding=enc.codec, delimiter=delim, has_header=has_header, names_source=source,
                     encoding_note=enc.note, delimiter_note=delim_note, header_note=header_note,
                     encoding_warning=enc.warning)


#: Bytes parsed at a time by pyarrow's streaming reader (:func:`_parse_arrow`): its working memory beside the
#: cells (18 MB for a 20 MB file at 1 MB, 55 MB at 4 MB).
_ARROW_BLOCK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"
#: Lines (estimated from the sample) from which pyarrow parses the text.
_ARROW_MIN_ROWS = 100


def _parse_arrow(data: bytes, codec: str, delim: str, n_columns: int, has_header: bool,
                 opts: ReadOptions) -> pd.DataFrame | None:
    """Every cell as text, parsed by pyarrow's CSV reader: the cells :func:`_parse` gives, at a fraction of its cost.

    Only for the files on which the two parsers cannot differ: UTF-8 text, one
    delimiter character, at least two columns, no quote character, no zero
    byte and no carriage return outside CRLF (old Mac line ends, on which
    pandas' tokenizer has its own rules). pandas' options are reproduced: blank lines are skipped, and the
    spaces opening a field (``skipinitialspace``; spaces only, not tabs) are
    removed. A line of blanks, a row with another field count or a file past
    the row cap makes pyarrow stop; ``None`` then sends the file to the
    pandas path, which gives its exact refusal (or reads it, for a line of blanks).
    """
    if (codec not in ("utf-8", "utf-8-sig") or delim == WHITESPACE or len(delim) != 1 or n_columns < 2
            or b'"' in data or b"\x00" in data or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n"))):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    buffer = pa.py_buffer(data)
    if data.startswith(_BOM):
        buffer = buffer[len(_BOM):]
    fields = [f"f{i}" for i in range(n_columns)]
    try:
        reader = pa_csv.open_csv(
            pa.BufferReader(buffer),
            read_options=pa_csv.ReadOptions(column_names=fields, block_size=_ARROW_BLOCK, use_threads=False),
            parse_options=pa_csv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False,
                                              escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(column_types={f: pa.large_string() for f in fields},
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        batches, n_rows = [], -1 if has_header else 0
        for batch in reader:
            n_rows += batch.num_rows
            if n_rows > opts.max_rows:
                return None
            batches.append(batch)
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    parsed: list = pa.Table.from_batches(batches, schema=reader.schema).columns
    del batches, reader
    release_freed_memory()  # the parser's working buffers
    dtype = pd.StringDtype("pyarrow", na_value=float("nan"))
    columns = {}
    for i in range(n_columns):
        cells, parsed[i] = parsed[i], None  # each parsed column freed once trimmed
        if pc.any(pc.starts_with(cells, " ")).as_py():
            cells = pc.utf8_ltrim(cells, characters=" ")
        columns[i] = pd.Series(pd.array(cells, dtype=dtype), copy=False)
    return pd.DataFrame(columns, copy=False)


def _parse(data: bytes, codec: str, name: str, delim: str, has_header: bool, sample: str,
           opts: ReadOptions) -> pd.DataFrame:
    """Every cell as text, parsed in chunks of about :data:`_PARSE_BYTES` of text and counted against the row cap.

    pandas builds each chunk's cells as Python strings before storing them
    compactly; in chunks, those intermediates stay the size of one chunk.
    """
    lines = sample.count("\n") or 1
    per_chunk = max(1_000, int(_PARSE_BYTES * lines / max(len(sample), 1)))
    chunks: list[pd.DataFrame] = []
    n_rows = -1 if has_header else 0
    try:
        with pd.read_csv(
            io.BytesIO(data),
            encoding=codec,
            sep=r"\s+" if delim == WHITESPACE else delim,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skipinitialspace=True,
            skip_blank_lines=True,
            nrows=row_limit(opts) + has_header,
            chunksize=per_chunk,
        ) as reader:
            for chunk in reader:
                chunks.append(chunk)
                n_rows += len(chunk)
                check_rows(n_rows, name, opts)
    except pd.errors.ParserError as exc:
        raise fail("CSV_RAGGED", name=name, detail=str(exc).strip()[:200]) from None
    except (pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
    if len(chunks) == 1:
        return chunks[0]
    # Column by column, each chunk's column freed once joined: the text is held about once, not twice.
    columns = {col: pd.concat([chunk.pop(col) for chunk in chunks], ignore_index=True)
               for col in list(chunks[0].columns)}
    return pd.DataFrame(columns, copy=False)


def _check_records(data: bytes, codec: str, name: str, delim: str, n_header: int, has_header: bool,
                   opts: ReadOptions) -> None:
    """Stream the records: refuse a ragged row, and stop at the row cap (:func:`.bounded.check_rows`).

    pandas alone would silently pad short rows with missing values and, when
    every data row has one extra field, silently turn the first column into
    the index. Blank and whitespace-only lines are skipped, as pandas does.
    """
    text = io.TextIOWrapper(io.BytesIO(data), encoding=codec, newline=None if delim == WHITESPACE else "")
    n_rows = -1 if has_header else 0  # the header line is not a row
    if delim == WHITESPACE:
        for i, line in enumerate(text, start=1):
            n = len(split_line(line, delim))
            if n == 0:
                continue
            if n != n_header:
                raise fail("CSV_RAGGED", name=name,
                           detail=f"line {i} has {n} field(s), the first line has {n_header}")
            n_rows += 1
            if n_rows > opts.max_rows:
                check_rows(n_rows, name, opts)
        return
    reader = csv.reader(text, delimiter=delim)
    try:
        first = True
        for row in reader:
            n = len(row)
            if n == 0 or (n == 1 and row[0].strip() == ""):
                continue
            if first:
                first = False
            elif n != n_header:
                raise fail(
                    "CSV_RAGGED",
                    name=name,
                    detail=f"line {reader.line_num} has {n} field(s), the first line has {n_header}",
                )
            n_rows += 1
            if n_rows > opts.max_rows:
                check_rows(n_rows, name, opts)
    except csv.Error as exc:
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
