"""Telling a file's format, its text encoding and its CSV delimiter apart."""
from __future__ import annotations

import csv
from pathlib import Path

from audit_core.errors import fail

from .options import MB, TableFormat

__all__ = ["detect_format", "decode_text", "sniff_delimiter"]


def detect_format(data: bytes, name: str) -> TableFormat:
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


def decode_text(data: bytes, name: str, encoding: str | None) -> tuple[str, str]:
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
                enc = "cp1252"
    try:
        return data.decode(enc), enc
    except (UnicodeDecodeError, LookupError):
        return data.decode("latin-1"), "latin-1"


def sniff_delimiter(text: str, name: str) -> str:
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
