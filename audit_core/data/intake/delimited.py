"""CSV (and TSV, pipe- or semicolon-separated) text: decoded, sniffed, refused when ragged."""
from __future__ import annotations

import csv
import io

import pandas as pd

from audit_core.errors import fail

from .checks import check_header
from .options import MB, ReadOptions
from .sniff import decode_text, sniff_delimiter

__all__ = ["read_delimited"]


def read_delimited(data: bytes, name: str, opts: ReadOptions) -> tuple[pd.DataFrame, str, str]:
    text, enc = decode_text(data, name, opts.encoding)
    if text.strip() == "":
        raise fail("NO_COLUMNS", name=name)
    delim = opts.delimiter or sniff_delimiter(text, name)
    # A single long text cell is legitimate up to the upload cap (the csv
    # module's default field limit is 128 KiB).
    csv.field_size_limit(max(csv.field_size_limit(), min(opts.max_bytes, 2**31 - 1)))
    try:
        # newline="": let csv see "\r" line ends (old Mac files) instead of raising.
        first_line = next(csv.reader(io.StringIO(text[: 4 * MB], newline=""), delimiter=delim), [])
    except (csv.Error, TypeError) as exc:  # e.g. a multi-character delimiter, a huge field
        raise fail("UNPARSEABLE", name=name, fmt="CSV", detail=str(exc).strip()[:200]) from None
    check_header([c.strip() for c in first_line], name, opts.max_columns)
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
