"""Telling a file's format, compression, text encoding and delimiter apart, by content.

The file name's extension is only a hint: UCI's ``adult.data`` or
``SouthGermanCredit.asc`` are delimited text whatever they are called, and a
gzip file named ``.csv`` is recognised by its magic bytes and expanded (under
the decompression cap) instead of being parsed as ragged text.
"""
from __future__ import annotations

import csv
import gzip
import io
import zipfile
import zlib
from collections import Counter
from pathlib import Path

from audit_core.errors import fail

from .options import MB, ReadOptions, TableFormat
from .report import DELIMITER_NAMES

__all__ = ["expand", "detect_format", "decode_text", "sniff_delimiter", "split_line", "WHITESPACE"]

#: The delimiter value meaning "runs of spaces or tabs".
WHITESPACE = " "

_CHUNK = 1 * MB

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


def expand(data: bytes, name: str, opts: ReadOptions) -> tuple[bytes, str | None]:
    """Expand a gzip upload under the decompression cap; other bytes pass unchanged.

    Returns
    -------
    data : bytes
    compression : "gzip" or None
    """
    if data[:2] != b"\x1f\x8b":
        return data, None
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
            while chunk := g.read(_CHUNK):
                out.write(chunk)
                if out.tell() > opts.max_expansion_bytes:  # stop here: the rest is never expanded
                    raise fail("GZIP_CAP", name=name, packed_mb=len(data) / MB, cap_mb=opts.max_expansion_bytes / MB)
    except (OSError, EOFError, zlib.error) as exc:  # AuditInputError is not among these
        raise fail("UNPARSEABLE", name=name, fmt="gzip", detail=str(exc).strip()[:200] or "truncated") from None
    expanded = out.getvalue()
    if not expanded:
        raise fail("EMPTY_FILE", name=name)
    if expanded[:2] == b"\x1f\x8b":
        raise fail("NOT_A_TABLE", name=name, what="gzip-compressed twice", hint="Decompress it once and upload the result.")
    return expanded, "gzip"


def _utf16_without_bom(data: bytes) -> str | None:
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
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or _utf16_without_bom(data):
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


_MULTIBYTE_GUESSES = frozenset(
    {"big5", "big5hkscs", "cp932", "cp949", "cp950", "gb2312", "gb18030", "gbk", "hz", "johab",
     "euc_jp", "euc_kr", "euc_jis_2004", "euc_jisx0213", "shift_jis", "shift_jis_2004", "shift_jisx0213",
     "iso2022_jp", "iso2022_kr"}
)


def decode_text(data: bytes, name: str, encoding: str | None) -> tuple[str, str, str]:
    """Decode text bytes.

    Returns
    -------
    text : str
    encoding : str
    note : str
        How the encoding was chosen, in words.
    """
    if encoding is not None:
        try:
            return data.decode(encoding), encoding, f"Encoding {encoding}, as chosen in Read options."
        except (UnicodeDecodeError, LookupError) as exc:
            raise fail("BAD_ENCODING", name=name, encoding=encoding, detail=str(exc)[:200]) from None
    for bom, enc in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(enc), enc, f"Encoding {enc} (from its byte-order mark)."
            except UnicodeDecodeError as exc:
                raise fail("BAD_ENCODING", name=name, encoding=enc, detail=str(exc)[:200]) from None
    utf16 = _utf16_without_bom(data)
    if utf16 is not None:
        return (data.decode(utf16), utf16,
                f"Encoding {utf16.upper()} without a byte-order mark (detected from the zero bytes "
                "at every other position).")
    try:
        return data.decode("utf-8"), "utf-8", "Encoding utf-8."
    except UnicodeDecodeError:
        pass
    enc = _guess_single_byte(data)
    try:
        text = data.decode(enc)
    except (UnicodeDecodeError, LookupError):
        enc, text = "latin-1", data.decode("latin-1")
    return text, enc, f"Encoding {enc} (not valid UTF-8; a guess — choose another in Read options if letters look wrong)."


def _guess_single_byte(data: bytes) -> str:
    from charset_normalizer import from_bytes

    matches = from_bytes(data[: 4 * MB])
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
            return "cp1252"
        try:
            western = data.decode("cp1252")
            same = western == data.decode(enc)
        except (UnicodeDecodeError, LookupError):
            western, same = None, False
        # Same text either way: report the common name. And a multi-byte CJK
        # guess for mostly-ASCII text (e.g. "São Paulo" guessed as big5) whose
        # few non-ASCII bytes cp1252 reads as letters is almost surely cp1252.
        sample = data[: 4 * MB]
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
            return "cp1252"
    return enc


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
