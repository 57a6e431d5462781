"""Typing and the mixed-type check of stacked text columns (:mod:`.stacked`), for all columns at once.

:func:`decide` asks :func:`.values._arrow_decision`'s questions of every column
from its bytes, lengths and first bytes (:class:`.stacked_cells.CellFacts`),
then of the distinct values of the columns those leave open; :func:`rest_plain`
and :func:`rest_plain` help answer :func:`.checks.check_column`'s and
:func:`.values.propose_missing`'s questions of the text columns. Each returns
only what it settles: any other column goes to the step's own function.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from . import values
from .report import CANDIDATE_MISSING_CODES, note
from .stacked_cells import CellFacts, StackedCells
from .textbytes import BYTES_DECIMAL, BYTES_DIGITS, BYTES_MAYBE_NUMBER, float_cells

__all__ = ["CANDIDATE_CODES", "Decisions", "Distinct", "cast_columns", "cast_numbers", "decide", "decide_open",
           "not_mostly_numbers", "rest_plain", "stays_text"]

_ASCII = np.arange(256) < 128
_SIGNED_DIGITS = np.isin(np.arange(256), list(b"0123456789+-"))
_BOOL_BYTES = np.isin(np.arange(256), list(b"TrueFalseTRUEFALSEtruefalse"))
_ZERO, _MINUS, _COMMA = ord("0"), ord("-"), ord(",")
_TRUE_FALSE = sorted({"True", "TRUE", "true", "False", "FALSE", "false"})
_KEY = re.compile(r"[+-]?0\d+")
CANDIDATE_CODES = frozenset(CANDIDATE_MISSING_CODES)


class Distinct:
    """The distinct values of some columns' present cells, each question asked once per value.

    Parameters
    ----------
    stack : StackedCells
    columns : numpy.ndarray of bool, shape (n_columns,)
    """

    def __init__(self, stack: StackedCells, columns: np.ndarray) -> None:
        self.n_columns = stack.n_columns
        self.owner, self.index, self.uniques = stack.distinct(columns)
        self.total = np.bincount(self.owner, minlength=self.n_columns)
        self._cache: dict = {}

    def flags(self, question: str) -> np.ndarray:
        """One boolean per distinct value: a regular expression (RE2, on ASCII as Python's) or ``bools``."""
        if question not in self._cache:
            import pyarrow as pa
            import pyarrow.compute as pc

            if question == "bools":
                got = pc.is_in(self.uniques, value_set=pa.array(_TRUE_FALSE, pa.large_string()))
            else:
                got = pc.match_substring_regex(self.uniques, question)
            self._cache[question] = got.to_numpy(zero_copy_only=False).astype(bool)
        return self._cache[question]

    def count(self, flags: np.ndarray) -> np.ndarray:
        """Per column, the cells whose value is flagged."""
        return np.bincount(self.owner[flags[self.index]], minlength=self.n_columns)


@dataclass
class Decisions:
    """What :func:`decide` settled, by column index.

    Attributes
    ----------
    numbers : dict of int to numpy.ndarray of shape (n_rows,)
    keys : dict of int to (code, message)
        Integers kept as text, with their ``READ_KEY_TEXT`` warning.
    text : set of int
    ints, floats : list of int
        Columns to be cast (:func:`cast_numbers`).
    open, bools : list of int
        Columns for :func:`decide_open`: the open questions, and the columns of the letters of ``True``/``False``.
    general : set of int
        Text columns decided as :func:`.values.type_one`'s general path decides (:func:`stays_text`).
    """

    numbers: dict = field(default_factory=dict)
    keys: dict = field(default_factory=dict)
    text: set = field(default_factory=set)
    ints: list = field(default_factory=list)
    floats: list = field(default_factory=list)
    open: list = field(default_factory=list)
    bools: list = field(default_factory=list)
    general: set = field(default_factory=set)


def cast_columns(stack: StackedCells, columns: list[int], kind: str) -> dict[int, np.ndarray | None]:
    """Columns cast to int64 or float64 in one call (column by column when a cell fails); ``None``: a cell failed.

    A column with missing cells comes back as float64 with NaN, as pyarrow's ``to_numpy`` gives it.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not columns:
        return {}
    target = pa.int64() if kind == "int" else pa.float64()
    parts = [stack.column(j) for j in columns]
    out: dict[int, np.ndarray | None] = {}
    try:
        cast = pc.cast(pa.chunked_array([c for p in parts for c in p.chunks], type=pa.large_string()), target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        for j, p in zip(columns, parts, strict=True):
            try:
                out[j] = pc.cast(p, target).to_numpy(zero_copy_only=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                out[j] = None
        return out
    valid = pc.is_valid(cast).to_numpy(zero_copy_only=False).astype(bool) if cast.null_count else None
    filled = (pc.fill_null(cast, 0) if cast.null_count else cast).to_numpy()
    n = stack.n_rows
    for i, j in enumerate(columns):
        part = filled[i * n: (i + 1) * n]
        if valid is not None and not valid[i * n: (i + 1) * n].all():
            part = part.astype(float)
            part[~valid[i * n: (i + 1) * n]] = np.nan
        out[j] = part
    return out


def decide(stack: StackedCells, names: list[str], facts: CellFacts) -> Decisions:
    """:func:`.values._arrow_decision`'s questions of every column's bytes, lengths and first bytes.

    The columns these leave open are in ``Decisions.open`` (for :func:`decide_open`); the numbers
    are still text in ``ints``/``floats`` (for :func:`cast_numbers`).
    """
    assert facts.seen is not None
    n, first, second, seen = facts.n, facts.first, facts.second, facts.seen > 0
    nc, rows = stack.n_columns, stack.n_rows
    present = stack.per_column(n > 0)
    lead = ((first == _ZERO) & (n > 1)) | ((first == _MINUS) & (second == _ZERO) & (n > 2))
    has_lead = stack.per_column(lead) > 0
    longest = n.reshape(nc, rows).max(axis=1)
    key_cell = (lead | (n >= 16)).reshape(nc, rows)

    def every(allowed: np.ndarray) -> list[bool]:  # per column: only these bytes (textbytes.only, all at once)
        return (~(seen & ~allowed).any(axis=1)).tolist()

    digits, ascii_, bools, decimal = every(BYTES_DIGITS), every(_ASCII), every(_BOOL_BYTES), every(BYTES_DECIMAL)
    signed, maybe = every(_SIGNED_DIGITS), every(BYTES_MAYBE_NUMBER)
    minus, comma = seen[:, _MINUS].tolist(), seen[:, _COMMA].tolist()
    out = Decisions()
    for j in np.flatnonzero(present).tolist():
        lead_j = False
        if digits[j]:
            lead_j = bool(has_lead[j])
            if not minus[j]:
                row = int(key_cell[j].argmax())
                if key_cell[j, row]:
                    why = "have a leading zero" if lead[j * rows + row] else "have more than 15 digits"
                    out.keys[j] = note("READ_KEY_TEXT", column=names[j], example=str(stack.column(j)[row].as_py()),
                                       why=why)
                    continue
            elif not lead_j and longest[j] > 15:
                continue
            if not lead_j:
                out.ints.append(j)
                continue
        if not ascii_[j]:
            continue
        if bools[j]:
            out.bools.append(j)
        elif not lead_j and decimal[j]:
            out.floats.append(j)
        elif not signed[j] and not comma[j] and not maybe[j]:
            out.text.add(j)
        else:
            out.open.append(j)
    return out


def decide_open(d: Distinct, out: Decisions, names: list[str], seen: np.ndarray, present: np.ndarray,
                stack: StackedCells) -> None:
    """The distinct-value questions of :func:`.values._arrow_decision` for the columns :func:`decide` left open.

    A column of ``True``/``False`` spellings with no missing cell becomes booleans, as
    :func:`.values.type_one` makes it (with a missing cell, that function decides).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if out.open:
        more, keys, text = _decide_distinct(d, out.open, seen)
        out.floats += more
        out.text |= text
        for j, example in keys.items():
            why = "have a leading zero" if _KEY.fullmatch(example) else "have more than 15 digits"
            out.keys[j] = note("READ_KEY_TEXT", column=names[j], example=example, why=why)
    if out.bools:
        n_bool = d.count(d.flags("bools"))
        true = pa.array(sorted(values.TRUE_SPELLINGS), pa.large_string())
        for j in out.bools:
            if n_bool[j] == present[j] == stack.n_rows:
                out.numbers[j] = pc.is_in(stack.column(j), value_set=true).to_numpy().astype(bool)


def cast_numbers(stack: StackedCells, out: Decisions) -> None:
    """The number columns' values (a column whose cast fails, or holds a negative zero, is left open)."""
    out.numbers.update({j: v for j, v in cast_columns(stack, out.ints, "int").items() if v is not None})
    for j, v in cast_columns(stack, out.floats, "float").items():
        if v is not None and not np.signbit(v[v == 0]).any():
            out.numbers[j] = v


def _decide_distinct(d: Distinct, columns: list[int], seen: np.ndarray) -> tuple[list[int], dict, set]:
    """The distinct-value questions of :func:`.values._arrow_decision` for ASCII columns the bytes left open."""
    is_key = d.flags(r"^[+-]?0[0-9]+$") | d.flags(r"^[+-]?[0-9]{16,}$")
    n_key = d.count(is_key)
    n_integer = d.count(d.flags(r"^[+-]*[0-9]+$"))
    n_bool = d.count(d.flags("bools"))
    n_decimal = d.count(d.flags(values.DECIMAL_PATTERN))
    n_maybe = d.count(d.flags(values.MAYBE_NUMBER_PATTERN))
    key_cells = is_key[d.index]
    key_cols, first = np.unique(d.owner[key_cells], return_index=True)
    first_key = dict(zip(key_cols.tolist(), d.index[np.flatnonzero(key_cells)[first]].tolist(), strict=True))
    floats, keys, text = [], {}, set()
    for j in columns:
        total = d.total[j]
        if n_key[j]:
            if n_integer[j] == total:
                keys[j] = str(d.uniques[first_key[j]].as_py())
        elif n_bool[j]:
            continue
        elif n_decimal[j] == total:
            floats.append(j)
        elif not (seen[j, _COMMA] or n_maybe[j] == total):
            text.add(j)
    return floats, keys, text


def rest_plain(stack: StackedCells, columns: list[int], rest: np.ndarray) -> set[int]:
    """The ``columns`` whose ``rest`` cells (flagged per stacked cell) are all plain decimals, as :func:`.textbytes.float_cells` reads them.

    One cast for all the columns; when it fails, one per column. A column holding a negative zero
    is not among them (``float_cells`` gives ``None``).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not columns:
        return set()
    wanted = np.zeros(stack.n_columns, dtype=bool)
    wanted[columns] = True
    keep = np.repeat(wanted, stack.n_rows) & rest
    try:
        parsed = pc.cast(stack.cells.filter(pa.array(keep)), pa.float64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        out = set()
        for j in columns:
            cells = stack.column(j).filter(pa.array(keep[j * stack.n_rows: (j + 1) * stack.n_rows]))
            if float_cells(cells) is not None:
                out.add(j)
        return out
    negative_zero = np.bincount(stack.owner(np.flatnonzero(keep))[(parsed == 0) & np.signbit(parsed)],
                                minlength=stack.n_columns)
    return {j for j in columns if not negative_zero[j]}


def _values_of(d: Distinct, j: int) -> tuple[list[str], np.ndarray]:
    """Column ``j``'s distinct present values and their cells (the column must be among ``d``'s)."""
    lo, hi = np.searchsorted(d.owner, [j, j + 1])
    which, counts = np.unique(d.index[lo:hi], return_counts=True)
    return [str(v) for v in d.uniques.take(which).to_pylist()], counts


def stays_text(d: Distinct, j: int, decimal: str) -> bool:
    """Whether :func:`.values.type_one`'s general path keeps an open column as text (``False``: it may not).

    Asked of a column :func:`decide_open` left undecided, whose bytes are not digits only (so
    ``_whole_numbers`` reads none of them): not keys, not booleans, not all numbers, and no comma
    convention that reads it.
    """
    import pandas as pd

    uniques, _ = _values_of(d, j)
    if not uniques or set(uniques) <= set(_TRUE_FALSE):
        return False
    if any(values.looks_key(u) for u in uniques) and all(values.looks_integer(u) for u in uniques):
        return False
    if decimal == "." and any("," in u for u in uniques):
        return False
    if decimal == "auto" and values.comma_convention(uniques) is not None:
        return False
    return bool(pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce").isna().any())


def not_mostly_numbers(d: Distinct, j: int) -> bool:
    """Whether :func:`.checks.check_column` passes text column ``j`` on its value counts (``False``: it may refuse it).

    The candidate codes aside, a column is refused when some cells are numbers, some are not,
    and the numbers are at least 80% of the cells.
    """
    import pandas as pd

    uniques, counts = _values_of(d, j)
    keep = np.array([u not in CANDIDATE_CODES for u in uniques], dtype=bool)
    if not keep.any():
        return True
    parsed = pd.to_numeric(pd.Series([u for u, k in zip(uniques, keep, strict=True) if k], dtype=object),
                           errors="coerce").to_numpy()
    counts = counts[keep]
    is_num = ~pd.isna(parsed)
    total = int(counts.sum())
    n_num = int(counts[is_num].sum())
    return not (n_num > 0 and total - n_num > 0 and n_num >= 0.8 * total)
