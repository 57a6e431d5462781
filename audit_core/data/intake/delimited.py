"""Delimited text (CSV, TSV, semicolon, pipe or whitespace separated) read as text cells.

Every cell is read as text first (no type guessing, no NA list), so that
leading zeros survive and nothing becomes missing unless it is blank or
declared; :mod:`.values` types the columns afterwards.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import pandas as pd

from audit_core.errors import fail

from .checks import check_header
from .header import decide_header, generated_names
from .options import MB, ReadOptions
from .report import DELIMITER_NAMES
from .sniff import WHITESPACE, decode_text, sniff_delimiter, split_line

__all__ = ["TextCells", "read_text_cells", "column_names"]

_SAMPLE_ROWS = 200


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
    """

    frame: pd.DataFrame
    encoding: str
    delimiter: str
    has_header: bool
    names_source: str
    encoding_note: str
    delimiter_note: str
    header_note: str


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


def _sample_rows(text: str, delim: str, name: str) -> list[list[str]]:
    sample = text[: 4 * MB]
    try:
        if delim == WHITESPACE:
            rows = (split_line(line, delim) for line in sample.splitlines())
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
    text, enc, enc_note = decode_text(data, name, opts.encoding)
    if text.strip() == "":
        raise fail("NO_COLUMNS", name=name)
    if opts.delimiter:
        delim = opts.delimiter
        delim_note = f"Delimiter: {DELIMITER_NAMES.get(delim, repr(delim))}, as chosen in Read options."
    else:
        delim, delim_note = sniff_delimiter(text, name)
    # A single long text cell is legitimate up to the upload cap (the csv
    # module's default field limit is 128 KiB).
    csv.field_size_limit(max(csv.field_size_limit(), min(opts.max_bytes, 2**31 - 1)))
    rows = _sample_rows(text, delim, name)
    if not rows:
        raise fail("NO_COLUMNS", name=name)
    has_header, header_note = decide_header(rows, opts.header)
    names, source = column_names(rows[0], has_header, opts, name)
    if source == "generated":
        header_note += f" Columns named col_1 … col_{len(names)}."
    elif source == "given":
        header_note += " Column names as given in Read options."
    _check_ragged(text, name, delim, len(names))
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=r"\s+" if delim == WHITESPACE else delim,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skipinitialspace=True,
            skip_blank_lines=True,
            low_memory=False,
        )
    except pd.errors.ParserError as exc:
        raise fail("CSV_RAGGED", name=name, detail=str(exc).strip()[:200]) from None
    except (pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
    if frame.shape[1] != len(names):
        raise fail("CSV_RAGGED", name=name, detail=f"{frame.shape[1]} field(s) per row, the first line has {len(names)}")
    if has_header:
        frame = frame.iloc[1:].reset_index(drop=True)
    frame.columns = names
    return TextCells(frame=frame, encoding=enc, delimiter=delim, has_header=has_header, names_source=source,
                     encoding_note=enc_note, delimiter_note=delim_note, header_note=header_note)


def _check_ragged(text: str, name: str, delim: str, n_header: int) -> None:
    """Refuse rows whose field count differs from the first line's.

    pandas alone would silently pad short rows with missing values and, when
    every data row has one extra field, silently turn the first column into
    the index. Blank and whitespace-only lines are skipped, as pandas does.
    """
    if delim == WHITESPACE:
        for i, line in enumerate(text.splitlines(), start=1):
            n = len(split_line(line, delim))
            if n not in (0, n_header):
                raise fail("CSV_RAGGED", name=name,
                           detail=f"line {i} has {n} field(s), the first line has {n_header}")
        return
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        first = True
        for row in reader:
            if first:
                first = False
                continue
            n = len(row)
            if n == n_header or n == 0 or (n == 1 and row[0].strip() == ""):
                continue
            raise fail(
                "CSV_RAGGED",
                name=name,
                detail=f"line {reader.line_num} has {n} field(s), the first line has {n_header}",
            )
    except csv.Error as exc:
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
