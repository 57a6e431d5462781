"""From text cells to typed columns: trimming, missing cells, numbers, booleans and keys.

A delimited file is first read with every cell as text, so nothing is
converted behind the user's back. Then, column by column:

1. surrounding spaces are removed from every cell (both ends alike);
2. blank cells are missing, and so are the missing codes the user accepted
   (all columns, or one column each); the candidate codes ``?``, ``NA``,
   ``n/a``, ``-``, ``.``, ... found in a column are only *proposed*;
3. a column whose values are all numbers becomes numeric — unless its
   values look like keys: a leading zero (``00017``) or more than 15 digits
   (beyond what a float holds exactly) keeps the column as text;
4. numbers written with a decimal comma (``1,5``) or thousands separators
   (``12,345.6``) are read as numbers when the column's values leave no doubt;
   ``1,234`` alone could be either, so such a column stays text with a warning
   unless another column of the file settles the convention or the user
   chooses the decimal mark;
5. ``True``/``False`` columns become booleans.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .bounded import release_freed_memory
from .options import DecimalChoice
from .report import CANDIDATE_MISSING_CODES, MissingCodeProposal, note
from .textbytes import (BYTES_DECIMAL, BYTES_DIGITS, BYTES_MAYBE_NUMBER, any_in, any_in_each, arrow_cells, arrow_column,
                        byte_set, float_cells, lengths_and_starts, only)

__all__ = ["trim_cells", "apply_missing", "propose_missing", "type_columns", "Typing", "type_one", "DECIMAL_PATTERN",
           "MAYBE_NUMBER_PATTERN", "PLAIN_WHOLE_PATTERN", "TRUE_SPELLINGS", "comma_convention", "looks_integer",
           "looks_key"]

_CODES = frozenset(CANDIDATE_MISSING_CODES)
_KEY = re.compile(r"[+-]?0\d+")
_LONG = re.compile(r"[+-]?\d{16,}")
# A comma decimal mark, with optional dot (or space) thousands groups: 1,5  1.234,5  -0,25
_DEC_COMMA = re.compile(r"[+-]?(\d{1,3}([. ]\d{3})+|\d+)(,\d+)?|[+-]?,\d+")
# Comma thousands groups, with optional dot decimals: 12,345  1,234,567.5
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?|[+-]?\d+(\.\d+)?")
#: Rows from which typing hands freed text columns back to the system as it goes.
_LARGE_ROWS = 100_000
#: A whole number in its plain form (see :func:`_whole_numbers`).
PLAIN_WHOLE_PATTERN = _PLAIN_WHOLE = r"^-?(0|[1-9][0-9]{0,14})$"
TRUE_SPELLINGS = _TRUE = frozenset({"True", "TRUE", "true"})
_FALSE = frozenset({"False", "FALSE", "false"})
_RE2_BLANKS = "\t\n\f\r "
_BLANK_BYTES = np.array([ord(c) for c in _RE2_BLANKS])
_ASCII = np.arange(256) < 128
_ZERO, _MINUS = ord("0"), ord("-")
_SIGNED_DIGITS = np.isin(np.arange(256), list(b"0123456789+-"))
_BOOL_BYTES = np.isin(np.arange(256), list(b"TrueFalseTRUEFALSEtruefalse"))


def trim_cells(frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[tuple[str, int], ...]]:
    """Strip leading and trailing whitespace from every text cell, in place.

    Returns the frame and, per column that changed, the number of cells
    changed. Like the other steps here, it replaces the columns of the frame
    it is given one at a time: a read owns its frame, and each text column is
    freed as soon as its replacement exists, so a step never holds two copies
    of the table.
    """
    changed: list[tuple[str, int]] = []
    for col in frame.columns:
        s = frame[col]
        arr = arrow_column(s)
        if arr is not None or isinstance(s.dtype, pd.StringDtype):
            if (arr.null_count == len(arr)) if arr is not None else not s.notna().any():
                continue
            n = _padded(s)
            trimmed = s.str.strip() if n else s
        else:
            text = _is_text(s)
            if not text.any():
                continue
            before = s[text].astype(str)
            after = before.str.strip()
            n = int((after != before).sum())
            trimmed = s.copy()
            trimmed[text] = after
        if n:
            frame[col] = trimmed
            changed.append((str(col), n))
    return frame, tuple(changed)


def _padded(s: pd.Series) -> int:
    """Cells of a string column with a blank at either end.

    Counted by pyarrow on the column's own buffers: pandas' regex search on
    such a column costs several copies of it (826 MB for 13 million short cells).
    """
    import pyarrow.compute as pc

    cells = arrow_cells(s)
    if cells is not None:
        # The cells whose length changes when RE2's blanks (\s: TAB LF FF CR SPACE) are cut from their ends.
        if not byte_set(cells)[_BLANK_BYTES].any():
            return 0
        trimmed = pc.ascii_trim(cells, characters=_RE2_BLANKS)
        return int(pc.sum(pc.not_equal(pc.binary_length(trimmed), pc.binary_length(cells))).as_py() or 0)
    flags = pc.match_substring_regex(s.array.__arrow_array__(), r"^\s|\s$")
    return int(pc.sum(flags).as_py() or 0)


def _all_text(s: pd.Series) -> bool:
    """Some cell is present and every present cell is text (a string column: without copying it)."""
    arr = arrow_column(s)
    if arr is not None:
        return arr.null_count < len(arr)
    if isinstance(s.dtype, pd.StringDtype):
        return bool(s.notna().any())
    present = s.dropna()
    return not present.empty and bool(_is_text(present).all())


def _is_text(s: pd.Series) -> pd.Series:
    """Cells holding text (for a string column: every present cell)."""
    if isinstance(s.dtype, pd.StringDtype):
        return s.notna()
    if s.dtype != object:
        return pd.Series(False, index=s.index)
    return s.map(lambda v: isinstance(v, str), na_action="ignore").fillna(False).astype(bool)


def apply_missing(
    frame: pd.DataFrame,
    *,
    na_values: tuple[str, ...],
    missing_codes: tuple[tuple[str, str], ...],
) -> tuple[pd.DataFrame, tuple[tuple[str, str, int], ...]]:
    """Blank text cells and the declared codes become missing, in place (see :func:`trim_cells`).

    ``na_values`` apply to every column, ``missing_codes`` pairs
    ``(column, code)`` to one column each. Returns the frame and
    ``(column, code, count)`` for every code applied (``""`` = blank).
    """
    per_column: dict[str, set[str]] = {}
    for col, code in missing_codes:
        per_column.setdefault(col, set()).add(code)
    applied: list[tuple[str, str, int]] = []
    import pyarrow as pa

    common = pa.array(sorted({""} | set(na_values)), pa.large_string())
    for col in frame.columns:
        s = frame[col]
        codes = {""} | set(na_values) | per_column.get(str(col), set())
        arr = arrow_column(s)
        if arr is not None and str(col) not in per_column and not any_in(arr, common):
            continue  # no cell to make missing (a column of missing cells has none either)
        text = _is_text(s)
        if not text.any():
            continue
        # A text column's cells are text or missing: no copy of it is needed to compare them.
        values = s if isinstance(s.dtype, pd.StringDtype) else s.where(text, None)
        hit = s.isin(codes) if isinstance(s.dtype, pd.StringDtype) else text & values.isin(codes)
        if hit.any():
            counts = values[hit].value_counts()
            applied += [(str(col), str(code), int(counts[code])) for code in sorted(counts.index, key=str)]
            del values
            frame[col] = s.mask(hit)
    return frame, tuple(applied)


def _numbers(values: pd.Series, decimal: str) -> pd.Series:
    """Text to float under one decimal convention; unparseable -> NaN."""
    v = values.astype(str)
    if decimal == ",":
        v = v.str.replace(r"[. ](?=\d{3}(\D|$))", "", regex=True).str.replace(",", ".", regex=False)
    elif decimal == "thousands":
        v = v.str.replace(",", "", regex=False)
    return pd.to_numeric(v, errors="coerce")


def _convention(uniques: list[str]) -> str | None:
    """``","``, ``"thousands"``, ``"ambiguous"`` or None for text values that hold a comma."""
    if not any("," in u for u in uniques):
        return None
    dec = all(_DEC_COMMA.fullmatch(u) for u in uniques)
    thou = all(_THOUSANDS.fullmatch(u) for u in uniques)
    if dec and thou:
        # every comma is followed by exactly three digits and no dot decimals: 1,234
        return "ambiguous"
    return "," if dec else "thousands" if thou else None


def _plain_numeric(s: pd.Series, uniques: list[str], codes: np.ndarray) -> pd.Series | None:
    """The column as numbers if every distinct value is a plain number (no NaN spellings).

    ``uniques`` and ``codes`` are the column's factorization (code -1 = missing):
    each distinct text is parsed once.
    """
    if not uniques:
        return None
    parsed = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce")
    if parsed.isna().any():
        return None
    values = parsed.to_numpy()
    if (codes < 0).any():
        values = np.append(values.astype(float), np.nan)  # code -1 takes the last entry
    return pd.Series(values[codes], index=s.index)


def _whole_numbers(s: pd.Series) -> pd.Series | None:
    """A pyarrow text column of plain whole numbers as numbers, parsed without a Python object per value.

    Plain: an optional minus, no leading zero and at most 15 digits, so the
    result is what :func:`_plain_numeric` gives (int64, or float64 with
    missing cells), while keys such as ``00042`` are left to the general path.
    ``None`` when some cell is not plain.
    """
    if not isinstance(s.dtype, pd.StringDtype) or s.dtype.storage != "pyarrow":
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = s.array.__arrow_array__()
    if not pc.all(pc.match_substring_regex(arr, _PLAIN_WHOLE)).as_py():
        return None
    return pd.Series(pc.cast(arr, pa.int64()).to_numpy(zero_copy_only=False), index=s.index)


#: The numbers ``pandas.to_numeric`` reads as pyarrow's cast does (no sign ``+``, no ``inf``/``nan``, no blanks).
DECIMAL_PATTERN = _DECIMAL = r"^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: Every text ``pandas.to_numeric`` might read as a number matches this (digits, signs, marks, inf, nan, blanks).
MAYBE_NUMBER_PATTERN = _MAYBE_NUMBER = r"^[0-9+\-.,eE_\s]*$|(?i)(inf|nan)"


def _arrow_decision(s: pd.Series) -> tuple[str, np.ndarray | tuple[str, str] | None] | None:
    """What :func:`type_columns` decides for a pyarrow text column, without a Python string per cell.

    First from the bytes the cells are made of (:mod:`.textbytes`): digits
    only (whole numbers, or keys from the cells' lengths and first bytes),
    plain decimals (pyarrow's cast), text (a byte no number holds, no comma,
    not booleans); then from the distinct values, with RE2 patterns that read
    ASCII as Python's ``re`` does.

    Returns
    -------
    tuple or None
        ``("numbers", values)`` (a numpy array in row order: assigned without building a Series, a
        noticeable share of a wide table's read), ``("key", warning)`` (integers with a leading
        zero or more than 15 digits, kept as text), ``("text", None)``, or
        ``None``: the general path decides (booleans, commas, other spellings
        of numbers, non-ASCII text, a negative zero). Whatever is returned is
        what the general path decides (``tests/test_intake_typing_paths.py``).
    """
    cells = arrow_cells(s)
    if cells is None or len(cells) == 0:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    seen = byte_set(cells)
    arr = s.array.__arrow_array__()
    has_lead = False
    if only(seen, BYTES_DIGITS):
        # Whole numbers as _whole_numbers reads them: no leading zero, at most 15 characters.
        lengths, first, second = lengths_and_starts(cells)
        lead = ((first == _ZERO) & (lengths > 1)) | ((first == _MINUS) & (second == _ZERO) & (lengths > 2))
        has_lead = bool(lead.any())
        if not seen[_MINUS]:
            # Digits only: every cell an integer, so keys decide (the first in row order is the example).
            keys = (lead | (lengths >= 16)).nonzero()[0]
            if len(keys):
                key = str(cells[int(keys[0])].as_py())
                why = "have a leading zero" if lead[keys[0]] else "have more than 15 digits"
                return "key", note("READ_KEY_TEXT", column=str(s.name), example=key, why=why)
        elif not has_lead and lengths.max() > 15:
            return None
    if only(seen, BYTES_DIGITS) and not has_lead:
        try:
            ints = pc.cast(arr, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        return "numbers", ints.to_numpy(zero_copy_only=False)
    if not only(seen, _ASCII) or only(seen, _BOOL_BYTES):
        return None
    if not has_lead and only(seen, BYTES_DECIMAL):
        values = float_cells(arr)
        return None if values is None else ("numbers", values)
    if not only(seen, _SIGNED_DIGITS) and not seen[ord(",")] and not only(seen, BYTES_MAYBE_NUMBER):
        return "text", None  # not integers (no key), not booleans, some cell no number: text
    uniques = pc.unique(arr).drop_null()
    if len(uniques) == 0 or not pc.all(pc.string_is_ascii(uniques)).as_py():
        return None

    def every(pattern: str) -> bool:
        return bool(pc.all(pc.match_substring_regex(uniques, pattern)).as_py())

    keys = pc.or_(pc.match_substring_regex(uniques, r"^[+-]?0[0-9]+$"),
                  pc.match_substring_regex(uniques, r"^[+-]?[0-9]{16,}$"))
    if pc.any(keys).as_py():
        if not every(r"^[+-]*[0-9]+$"):
            return None
        key = str(pc.filter(uniques, keys)[0].as_py())
        why = "have a leading zero" if _KEY.fullmatch(key) else "have more than 15 digits"
        return "key", note("READ_KEY_TEXT", column=str(s.name), example=key, why=why)
    if pc.any(pc.is_in(uniques, pa.array(sorted(_TRUE | _FALSE)))).as_py():
        return None
    if every(_DECIMAL):
        values = float_cells(arr)
        return None if values is None else ("numbers", values)
    if pc.any(pc.match_substring(uniques, ",")).as_py() or every(_MAYBE_NUMBER):
        return None
    return "text", None


def _finish_numbers(s: pd.Series) -> pd.Series:
    """int64 when every value is a whole number and none is missing, else float64 (as pandas reads CSV)."""
    if pd.api.types.is_integer_dtype(s.dtype):
        return s
    return s.astype(float)


def _all_numbers(s: pd.Series) -> bool | None:
    """Whether a pyarrow text column holds cells and all are numbers, from its bytes; ``None`` when they do not tell."""
    cells = arrow_cells(s)
    if cells is None:
        return None
    if len(cells) == 0:
        return False
    seen = byte_set(cells)
    if not only(seen, BYTES_MAYBE_NUMBER):
        return False  # a cell holds a character no number has
    if only(seen, BYTES_DECIMAL):
        return float_cells(cells) is not None or None
    return None


def _arrow_proposals(col: str, arr, candidates) -> list[MissingCodeProposal]:
    """:func:`propose_missing` for one pyarrow text column, in pyarrow: the cells holding a code are counted."""
    import pyarrow.compute as pc

    flags = pc.is_in(arr, value_set=candidates)  # a missing cell is no code
    if not pc.any(flags).as_py():
        return []
    found = pc.value_counts(pc.filter(arr, flags))
    counts = dict(zip(found.field("values").to_pylist(), found.field("counts").to_pylist(), strict=True))
    rest = pc.filter(arr, pc.invert(flags)).drop_null()
    numeric_rest = _all_numbers(pd.Series(pd.array(rest, dtype=pd.StringDtype("pyarrow", na_value=np.nan))))
    if numeric_rest is None:
        others = pc.unique(rest).to_pylist()
        numeric_rest = bool(others) and bool(
            pd.to_numeric(pd.Series(others, dtype=object), errors="coerce").notna().all())
    return [MissingCodeProposal(column=col, code=str(code), count=int(counts[code]), makes_numeric=bool(numeric_rest))
            for code in sorted(counts, key=lambda c: (-int(counts[c]), c))]


def propose_missing(frame: pd.DataFrame) -> tuple[MissingCodeProposal, ...]:
    """Candidate missing codes present in each text column, with their counts."""
    out: list[MissingCodeProposal] = []
    import pyarrow as pa

    candidates = pa.array(sorted(_CODES), pa.large_string())
    series = dict(frame.items()) if frame.columns.is_unique else None
    arrays = {} if series is None else {c: a for c, s in series.items() if (a := arrow_column(s)) is not None}
    hit = any_in_each(list(arrays.values()), candidates) if arrays else None
    with_code = set() if hit is None else {c for c, h in zip(arrays, hit, strict=True) if h}
    for col in frame.columns:
        s = frame[col] if series is None else series[col]
        arr = arrow_column(s)
        if arr is not None:
            if hit is None or col in with_code:  # a column with no code has no proposal
                out += _arrow_proposals(str(col), arr, candidates)
            continue
        text = _is_text(s)
        if not text.any():
            continue
        # Only the cells holding a code are counted: a column of a million distinct texts is not listed.
        coded = text & s.isin(_CODES)
        if not coded.any():
            continue
        counts = s[coded].astype(str).value_counts()
        found = list(counts.index)
        # Accepting the codes leaves numbers only: the other cells are numbers (or number-like text).
        numeric_rest = _all_numbers(s[text & ~coded])
        if numeric_rest is None:
            others = list(pd.unique(s[text & ~coded].astype(str)))
            n_other_cells = int((~text & s.notna()).sum())
            numeric_rest = bool(others or n_other_cells) and bool(
                not others or pd.to_numeric(pd.Series(others, dtype=object), errors="coerce").notna().all()
            )
        for code in sorted(found, key=lambda c: (-int(counts[c]), c)):
            out.append(MissingCodeProposal(column=str(col), code=str(code), count=int(counts[code]),
                                           makes_numeric=bool(numeric_rest)))
    return tuple(out)


def type_columns(
    frame: pd.DataFrame, *, decimal: DecimalChoice = "auto"
) -> tuple[pd.DataFrame, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """Type the all-text columns of a frame read as text (in place from 100,000 rows, see :func:`trim_cells`).

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
        Cells are text or missing.
    decimal : {"auto", ".", ","}

    Returns
    -------
    frame : pandas.DataFrame
        Numeric, boolean or text columns.
    conversions : tuple of (column, description)
    warnings : tuple of (code, message)
    """
    large = len(frame) >= _LARGE_ROWS
    # A large frame's columns are replaced in place, each text column freed at once (the memory bound); a
    # smaller one's replacements are gathered and the frame built once: on 10,000 columns, one replacement at
    # a time cost twice as much as building the frame.
    state = Typing(out=frame if large or not frame.columns.is_unique else {})
    for col in frame.columns:
        if large:
            release_freed_memory()  # the text column replaced last is garbage; its numbers are not pyarrow's
        type_one(state, col, frame[col], decimal)
    state.settle(lambda col: frame[col])
    out = state.out
    if isinstance(out, dict) and out:
        frame = pd.DataFrame({c: out[c] if c in out else s for c, s in frame.items()}, index=frame.index, copy=False)
    return frame, tuple(state.conversions), tuple(state.warnings)


@dataclass
class Typing:
    """What :func:`type_columns` has decided so far: replaced columns, conversions, warnings, open conventions.

    Attributes
    ----------
    out : pandas.DataFrame or dict
        Where a typed column is stored (``out[col] = values``).
    conversions, warnings : list of (str, str)
    pending : dict of str to list of str
        Columns whose commas are ambiguous (``1,234``), with their distinct values.
    decided : set of str
        The comma conventions other columns settled.
    """

    out: Any
    conversions: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    pending: dict = field(default_factory=dict)
    decided: set = field(default_factory=set)

    def settle(self, column: Callable[[str], pd.Series]) -> None:
        """The ambiguous columns, once every column was seen: converted if one convention was settled, else a warning."""
        for col, uniques in self.pending.items():
            if len(self.decided) == 1:
                _convert(self.out, self.conversions, col, column(col), next(iter(self.decided)))
            else:
                self.warnings.append(note("READ_AMBIGUOUS_NUMBER", column=str(col),
                                          example=next(u for u in uniques if "," in u)))


def type_one(state: Typing, col: str, s: pd.Series, decimal: DecimalChoice) -> None:
    """Type one column of :func:`type_columns` (``s``: its cells, text or missing) into ``state``."""
    out, warnings = state.out, state.warnings
    if not _all_text(s):
        return
    if decimal != ",":
        fast = _arrow_decision(s)
        if fast is not None:
            kind, value = fast
            if isinstance(value, np.ndarray):
                out[col] = value
            elif isinstance(value, tuple):
                warnings.append(value)
            return
        num = _whole_numbers(s)
        if num is not None:
            out[col] = num
            return
    codes, cats = pd.factorize(s)
    uniques = [str(u) for u in cats]
    key = next((u for u in uniques if _KEY.fullmatch(u) or _LONG.fullmatch(u)), None)
    if key is not None and all(looks_integer(u) for u in uniques):
        why = "have a leading zero" if _KEY.fullmatch(key) else "have more than 15 digits"
        warnings.append(note("READ_KEY_TEXT", column=str(col), example=key, why=why))
        return
    if set(uniques) <= _TRUE | _FALSE:
        if isinstance(s.dtype, pd.StringDtype) and not s.isna().any():
            out[col] = s.isin(_TRUE).to_numpy(dtype=bool)
            return
        out[col] = s.map(lambda v: v in _TRUE, na_action="ignore")
        if not s.isna().any():
            out[col] = out[col].astype(bool)
        return
    if decimal == "auto":
        num = _plain_numeric(s, uniques, codes)
        if num is not None:
            out[col] = _finish_numbers(num)
            return
        conv = _convention(uniques)
    elif decimal == ",":
        conv = "," if all(_DEC_COMMA.fullmatch(u) for u in uniques) else None
    else:  # "." explicitly: commas are thousands separators
        if not any("," in u for u in uniques):
            num = _plain_numeric(s, uniques, codes)
            if num is not None:
                out[col] = _finish_numbers(num)
            return
        conv = "thousands" if all(_THOUSANDS.fullmatch(u) for u in uniques) else None
    if conv is None:
        return
    if conv == "ambiguous":
        state.pending[col] = uniques
        return
    state.decided.add(conv)
    _convert(out, state.conversions, col, s, conv)


def looks_integer(text: str) -> bool:
    """Signs then digits only (``-012``, ``7``): an integer, or a key when it looks like one."""
    return text.lstrip("+-").isdigit()


def looks_key(text: str) -> bool:
    """A leading zero (``00017``) or more than 15 digits: a key, if the column holds integers only."""
    return bool(_KEY.fullmatch(text) or _LONG.fullmatch(text))


def comma_convention(uniques: list[str]) -> str | None:
    """The comma convention of a column's distinct texts (see :func:`_convention`)."""
    return _convention(uniques)


def _convert(out: pd.DataFrame | dict, conversions: list, col: str, s: pd.Series, conv: str) -> None:
    num = _numbers(s.dropna(), conv)
    if num.isna().any():
        return
    full: pd.Series = pd.Series(np.nan, index=s.index)
    full[s.notna()] = num.to_numpy(dtype=float)
    if not s.isna().any() and bool((full == full.round()).all()) and bool((full.abs() < 2**53).all()):
        full = full.astype(np.int64)
    out[col] = full
    what = "with a decimal comma (1,5 = 1.5)" if conv == "," else "with thousands separators (12,345 = 12345)"
    conversions.append((str(col), what))
