"""The read report: every decision the reader took, and its proposals, in plain words.

A reader never changes a value silently. What it decided (encoding,
delimiter, header, decimal mark, which cells became missing) and what it
only *proposes* (missing codes such as ``?`` or ``NA``) are recorded here,
so the page can show them and the user can accept or change them.
"""
from __future__ import annotations

from dataclasses import dataclass

from audit_core.errors import MESSAGES, register_messages

__all__ = ["MissingCodeProposal", "ReadReport", "note", "DELIMITER_NAMES", "CANDIDATE_MISSING_CODES"]

#: Text values proposed as missing codes when a column holds them (blank cells are always missing).
CANDIDATE_MISSING_CODES: tuple[str, ...] = (
    "?", "NA", "N/A", "n/a", "na", "-", ".", "NaN", "nan", "NULL", "null", "None", "#N/A",
)

DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", " ": "runs of spaces"}

register_messages(
    {
        "READ_SINGLE_COLUMN": (
            "{name!r} was read as a single column. If the file has several columns, choose its delimiter "
            "in Read options (tried: comma, tab, semicolon, pipe and runs of spaces)."
        ),
        "READ_AMBIGUOUS_NUMBER": (
            "Column {column!r} looks numeric but was kept as text: values such as {example!r} could mean "
            "a thousands separator or a decimal comma. Choose the decimal mark in Read options."
        ),
        "READ_NUMERIC_TEXT": (
            "Column {column!r} is mostly numbers but was kept as text because of {codes}; "
            "accept the proposed missing code(s) to read it as numbers."
        ),
        "READ_KEY_TEXT": (
            "Column {column!r} was kept as text: values such as {example!r} {why}, so they are "
            "read as labels (keys), not as numbers."
        ),
    }
)


def note(code: str, **fields: object) -> tuple[str, str]:
    """A declared warning: ``(code, message)`` with its template filled in."""
    return code, MESSAGES[code].format(**fields)


@dataclass(frozen=True)
class MissingCodeProposal:
    """A text value that probably means "missing" in one column.

    Attributes
    ----------
    column : str
    code : str
        The value as it appears in the file (after trimming spaces), e.g. ``"?"``.
    count : int
        Cells of ``column`` holding it.
    makes_numeric : bool
        True when the column's other values are all numbers, so accepting the
        code turns the column numeric; False when the code sits among text
        categories (for example ``"NA"`` among country codes: perhaps a real
        category).
    """

    column: str
    code: str
    count: int
    makes_numeric: bool

    @property
    def key(self) -> tuple[str, str]:
        """``(column, code)``, the form accepted by :attr:`ReadOptions.missing_codes`."""
        return (self.column, self.code)


def _names(values: tuple[str, ...] | list[str], limit: int = 8) -> str:
    shown = ", ".join(repr(v) for v in list(values)[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


@dataclass(frozen=True, kw_only=True)
class ReadReport:
    """What a read decided and proposes.

    Attributes
    ----------
    compression : str or None
        ``"gzip"`` when the upload was gzip-compressed (and expanded under the cap).
    encoding_note, delimiter_note, header_note : str
        Why the encoding, delimiter and header decision were taken.
    header : bool
        True when the first row held the column names.
    names : {"file", "generated", "given"}
        Where the column names came from.
    sheet : str or None
        The Excel sheet read; ``sheets`` lists every sheet with its shape.
    sheet_note : str
        Why that sheet (the first with a table, and the sheets passed over; or the user's choice).
    sources : tuple of (str, int)
        For stacked uploads: each file and its number of rows.
    source_column : str or None
        The column naming each row's file in a stacked upload.
    missing_applied : tuple of (column, code, count)
        Cells read as missing; code ``""`` is a blank cell.
    missing_proposals : tuple of MissingCodeProposal
        Codes found but *not* applied: the user accepts them.
    stripped : tuple of (column, count)
        Text cells whose leading or trailing spaces were removed.
    conversions : tuple of (column, description)
        Text read as numbers in a non-default way (decimal comma, thousands separators).
    warnings : tuple of (code, message)
        Declared warnings (a non-UTF-8 encoding and the characters it decoded, merged Excel ranges
        filled, single column, ambiguous numbers, keys kept as text).
    """

    compression: str | None = None
    encoding_note: str = ""
    delimiter_note: str = ""
    header: bool = True
    header_note: str = ""
    names: str = "file"
    sheet: str | None = None
    sheet_note: str = ""
    sheets: tuple[tuple[str, int, int], ...] = ()
    sources: tuple[tuple[str, int], ...] = ()
    source_column: str | None = None
    missing_applied: tuple[tuple[str, str, int], ...] = ()
    missing_proposals: tuple[MissingCodeProposal, ...] = ()
    stripped: tuple[tuple[str, int], ...] = ()
    conversions: tuple[tuple[str, str], ...] = ()
    warnings: tuple[tuple[str, str], ...] = ()

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(code for code, _ in self.warnings)

    def lines(self) -> tuple[str, ...]:
        """The decisions as short plain sentences, in reading order."""
        out: list[str] = []
        if self.sources:
            files = ", ".join(f"{n} ({r:,} rows)" for n, r in self.sources)
            out.append(f"Stacked {len(self.sources)} files: {files}; column {self.source_column!r} names each row's file.")
        if self.compression:
            out.append(f"The file is {self.compression}-compressed; it was expanded before reading.")
        if self.sheet is not None:
            others = [f"{n!r} ({r:,} × {c:,})" for n, r, c in self.sheets if n != self.sheet]
            why = f" ({self.sheet_note})" if self.sheet_note else ""
            out.append(f"Read sheet {self.sheet!r}{why}" + (f"; other sheets: {', '.join(others)}." if others else "."))
        for text in (self.encoding_note, self.delimiter_note, self.header_note):
            if text:
                out.append(text)
        if self.stripped:
            total = sum(n for _, n in self.stripped)
            cols = _names([c for c, _ in self.stripped], 5)
            out.append(
                f"Removed leading/trailing spaces from {total:,} text value(s) (in {cols}): "
                "'yes ' and ' yes' both read 'yes'."
            )
        for col, what in self.conversions:
            out.append(f"Column {col!r}: read as numbers {what}.")
        blanks = [(c, n) for c, code, n in self.missing_applied if code == ""]
        if blanks:
            out.append("Blank cells read as missing: " + ", ".join(f"{c} {n:,}" for c, n in blanks) + ".")
        codes = [(c, code, n) for c, code, n in self.missing_applied if code != ""]
        if codes:
            out.append(
                "Missing codes applied: " + ", ".join(f"{code!r} in {c} ({n:,})" for c, code, n in codes) + "."
            )
        if self.missing_proposals:
            out.append(
                "Proposed missing codes (not applied yet): "
                + ", ".join(f"{p.code!r} in {p.column} ({p.count:,})" for p in self.missing_proposals)
                + "."
            )
        return tuple(out)
