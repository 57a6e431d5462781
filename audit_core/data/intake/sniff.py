"""Telling a file's format and a text's delimiter apart, by content.

The file name's extension is only a hint: UCI's ``adult.data`` or
``SouthGermanCredit.asc`` are delimited text whatever they are called (a gzip
file named ``.csv`` is expanded first, by :mod:`.bounded`). The text encoding
is decided in :mod:`.encoding`.
"""
from __future__ import annotations

import csv
import io
import zipfile
from collections import Counter
from pathlib import Path

from audit_core.errors import fail

from .options import TableFormat
from .report import DELIMITER_NAMES

__all__ = ["detect_format", "sniff_delimiter", "split_line", "utf16_without_bom", "WHITESPACE"]

#: The delimiter value meaning "runs of spaces or tabs".
WHITESPACE = " "

# magic bytes -> (what it is, what to do)
_BINARY = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy Excel 97-2003 (.xls) workbook or another OLE document",
     "Open it and save it as .xlsx or CSV."),
    (b"%PDF", "a PDF document", "Export the table from its source as CSV, Parquet or .xlsx."),
    (b"\x89PNG", "a PNG image", "Upload the table itself."),
    (b"\xff\xd8\xff", "a JPEG image", "Upload the table itself."),
    (b"GIF8", "a GIF image", "Upload the table itself."),
    (b"BZh", "a bzip2-compressed file", "Decompress it first (gzip files are read directly)."),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "Decompress it first (gzip files are read directly)."),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "Extract the table and upload it."),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", "Decompress it first (gzip files are read directly)."),
    (b"SQLite format 3\x00", "an SQLite database", "Export the table as CSV or Parquet."),
)


def utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"`` / ``"utf-16-be"`` when zero bytes sit at every other position."""
    sample = data[:4096]
    sample = sample[: len(sample) - len(sample) % 2]
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    zeros_even, zeros_odd = even.count(0) / len(even), odd.count(0) / len(odd)
    for enc, hi, lo in (("utf-16-le", zeros_odd, zeros_even), ("utf-16-be", zeros_even, zeros_odd)):
        if hi >= 0.2 and lo <= 0.02:
            try:
                data.decode(enc)
            except UnicodeDecodeError:
                return None
            text = sample.decode(enc, errors="replace")
            # Text, not binary data that happens to have zeros at every other byte.
            if sum(ch.isprintable() or ch in "\t\r\n" for ch in text) < 0.95 * len(text):
                return None
            return enc
    return None


def _zip_members(data: bytes) -> list[str] | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return None


def detect_format(data: bytes, name: str) -> TableFormat:
    """Parquet, Excel or delimited text, from the content first and the extension second.

    Raises
    ------
    AuditInputError
        ``NOT_A_TABLE`` for a recognised non-table file (an ``.xls``, a PDF,
        an image, another archive), ``UNKNOWN_FORMAT`` for binary data, JSON
        or HTML/XML.
    """
    suffix = Path(name).suffix.lower()
    # Magic bytes: Parquet starts and ends with "PAR1"; an xlsx is a zip whose
    # first record is a local file header. A bare "PK" is not enough: a CSV
    # whose first column is called "PK" (primary key) must stay a CSV.
    if (len(data) >= 8 and data[:4] == b"PAR1" and data[-4:] == b"PAR1") or suffix in {".parquet", ".pq"}:
        return "parquet"
    if suffix in {".xlsx", ".xlsm"}:
        return "excel"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        members = _zip_members(data)
        if members is None or any(m.startswith("xl/") for m in members) or "[Content_Types].xml" in members:
            return "excel"
        shown = ", ".join(members[:5]) + (f" and {len(members) - 5} more" if len(members) > 5 else "")
        raise fail("NOT_A_TABLE", name=name, what=f"a zip archive (holding {shown or 'nothing'})",
                   hint="Extract the table and upload it.")
    for magic, what, hint in _BINARY:
        if data.startswith(magic):
            raise fail("NOT_A_TABLE", name=name, what=what, hint=hint)
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        raise fail("NOT_A_TABLE", name=name, what="a Python pickle (never opened here)",
                   hint="Export the table as CSV or Parquet.")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or utf16_without_bom(data):
        return "csv"
    head = data[:65536]
    if b"\x00" in head:
        raise fail("UNKNOWN_FORMAT", name=name, what="binary data (it holds zero bytes)")
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:64].lower()
    if start.startswith((b"{", b"[{", b"[[", b'["')):
        raise fail("UNKNOWN_FORMAT", name=name, what="JSON")
    if start.startswith((b"<?xml", b"<!doctype", b"<html")):
        raise fail("UNKNOWN_FORMAT", name=name, what="an HTML or XML document")
    return "csv"


# ---------------------------------------------------------------------------
# Delimiters
# ---------------------------------------------------------------------------
_SINGLE = (",", "\t", ";", "|")


def split_line(line: str, delim: str) -> list[str]:
    """One line's fields (quotes respected); for :data:`WHITESPACE`, split on runs of blanks."""
    if delim == WHITESPACE:
        line = line.replace("\t", " ").strip()
        if not line:
            return []
        return next(csv.reader([line], delimiter=" ", skipinitialspace=True), [])
    return next(csv.reader([line], delimiter=delim, skipinitialspace=True), [])


def _counts(lines: list[str], delim: str) -> list[int]:
    if delim == WHITESPACE:
        return [len(split_line(line, delim)) for line in lines]
    try:
        return [len(row) for row in csv.reader(lines, delimiter=delim, skipinitialspace=True) if row]
    except csv.Error:
        return []


def _score(counts: list[int]) -> tuple[float, int]:
    """(share of lines with the modal field count, that count); (0, 0) when unusable."""
    if not counts:
        return 0.0, 0
    k, n = Counter(counts).most_common(1)[0]
    if k < 2:
        return 0.0, k
    # The header line must agree: the ragged check compares every row with it.
    return (n / len(counts) if counts[0] == k else 0.5 * n / len(counts)), k


def sniff_delimiter(text: str, name: str) -> tuple[str, str]:
    """The delimiter of delimited text, and why.

    Each candidate (``,`` TAB ``;`` ``|``, then runs of whitespace) splits the
    first 200 lines; the one giving the most consistent field count above one
    wins, ties going to the order above. Runs of whitespace are only chosen when
    no single character splits the lines consistently and whitespace gives the
    first line's field count on at least 90% of the lines (as in
    ``SouthGermanCredit.asc``). A file that no candidate splits is one column.
    """
    if Path(name).suffix.lower() in {".tsv", ".tab"}:
        return "\t", "Delimiter: tab (from the .tsv extension)."
    lines = [line for line in text[: 256 * 1024].splitlines()[:200] if line.strip()]
    if len(text) > 256 * 1024 and len(lines) > 1:
        lines = lines[:-1]  # the last sampled line may be cut
    scored = {d: _score(_counts(lines, d)) for d in _SINGLE}
    best = max(_SINGLE, key=lambda d: scored[d])  # max keeps the first of equal scores
    if scored[best][0] >= 0.9:
        return best, _delim_note(best, scored[best][1])
    ws = _score(_counts(lines, WHITESPACE))
    # Prose splits on spaces too, but not into a steady count agreeing with the first line.
    if ws[0] >= 0.9 and ws[0] > scored[best][0]:
        return WHITESPACE, _delim_note(WHITESPACE, ws[1])
    if scored[best][1] >= 2:
        return best, _delim_note(best, scored[best][1])
    return ",", "Delimiter: none found (one column)."


def _delim_note(delim: str, k: int) -> str:
    return f"Delimiter: {DELIMITER_NAMES[delim]} (detected; {k} fields per line)."
