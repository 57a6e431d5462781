"""The shared steps of a text table, decided for every column at once on its stacked cells.

:func:`.read._finish` runs five steps one column after another (trim, missing
cells, proposals, typing, checks). On a table of many short columns the cost
of asking pandas and pyarrow about each column (about 20 µs a call) was most
of the read, and on a long table each step read every cell again. Here the
cells of a block of columns (about a million cells, at most 1,024 columns:
the memory bound) are one pyarrow sequence (:class:`.stacked_cells.StackedCells`),
and each question is asked once of all of them: one pass over the bytes for
each cell's length and end bytes and what each column is made of
(:func:`numpy.bincount` by column; redone only for the columns trimmed), one
``index_in`` for the blank cells, the declared codes and the candidate codes
(only the cells short enough, in columns holding a code's bytes), one cast for
all the number columns, one table of distinct values for the questions asked
of values (:class:`.stacked_types.Distinct`). A column these answers do not settle
goes to the step's own function for one column (:func:`.values.type_one`,
:func:`.checks.check_column`, in column order), so every decision, count,
message and their order is the one the steps give column by column
(``tests/test_intake_equivalence.py``; ``tests/test_intake_typing_paths.py``
switches this path off with the other fast paths and compares).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit_core.errors import fail

from . import values
from .bounded import release_freed_memory
from .checks import _LONGEST_CODE, _NUMBER_STARTS, check_column, check_header
from .options import ReadOptions
from .report import CANDIDATE_MISSING_CODES, MissingCodeProposal
from .stacked_cells import CellFacts, StackedCells
from .stacked_types import Distinct, cast_numbers, decide, decide_open, not_mostly_numbers, rest_plain, stays_text
from .textbytes import BYTES_DECIMAL, BYTES_MAYBE_NUMBER

__all__ = ["StackedResult", "finish_stacked"]

_DTYPE = pd.StringDtype("pyarrow", na_value=float("nan"))
_BLANKS = np.isin(np.arange(256), list(b"\t\n\f\r "))  # RE2's \s, as values._padded counts them
_CODES = frozenset(CANDIDATE_MISSING_CODES)
#: Cells read as one block (columns at a time, at least one): the per-cell facts' memory, about 20 bytes a cell.
_BLOCK_CELLS = 1 << 20
#: Columns read as one block at most: each column's byte counts take 2 KB (and as much again while counted).
_BLOCK_COLUMNS = 1024


@dataclass(frozen=True)
class StackedResult:
    """What :func:`finish_stacked` decided: the checked frame and each step's part of the report."""

    frame: pd.DataFrame
    stripped: tuple
    applied: tuple
    proposals: tuple
    conversions: tuple
    warnings: tuple
    dropped: tuple


def _trim(stack: StackedCells, names: list[str], facts: CellFacts) -> tuple:
    """:func:`.values.trim_cells`: a column with a cell opening or closing on a blank is stripped as pandas strips.

    ``facts`` are refreshed for the columns stripped.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    counts = stack.per_column((facts.n > 0) & (_BLANKS[facts.first] | _BLANKS[facts.last]))
    strip = counts > 0
    if not strip.any():
        return ()
    rows = stack.n_rows

    def trim(start: int, chunk):
        lo, hi = start // rows, (start + len(chunk) - 1) // rows
        pick = strip[lo: hi + 1]
        if not pick.any():
            return None
        trimmed = pc.utf8_trim_whitespace(chunk)
        if pick.all():
            return trimmed
        cells = np.repeat(pick, rows)[start - lo * rows: start - lo * rows + len(chunk)]
        return pc.if_else(pa.array(cells), trimmed, chunk)

    stack.map_chunks(trim)
    stack.refresh(facts, strip)
    return tuple((names[j], int(counts[j])) for j in np.flatnonzero(strip))


def _code_bytes(codes: list[str]) -> np.ndarray:
    """Each code's bytes, counted: shape (n_codes, 256)."""
    out = np.zeros((len(codes), 256), dtype=np.int64)
    for c, code in enumerate(codes):
        np.add.at(out[c], np.frombuffer(code.encode(), dtype=np.uint8), 1)
    return out


def _missing(stack: StackedCells, names: list[str], na_values: tuple[str, ...], facts: CellFacts
             ) -> tuple[tuple, tuple[np.ndarray, np.ndarray], list]:
    """:func:`.values.apply_missing` (codes common to every column) and the candidate codes left, in one ``index_in``.

    Only the cells as short as the longest code are looked up (an empty cell is ``""``). Returns the
    applied codes, the candidate codes left (their cells' stacked indices and their positions in
    the code list) and that list; ``facts`` are updated for the cells made missing.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    common = {""} | set(na_values)
    codes = sorted(common | _CODES)
    longest = max(len(c.encode()) for c in codes)
    # A column can hold a code only if it holds every byte of it: the others are not looked up.
    needs = _code_bytes(codes) > 0
    possible = ((needs.astype(np.int64) @ (facts.seen == 0).T.astype(np.int64)) == 0)[needs.any(axis=1)].any(axis=0)
    look = (facts.n <= longest) & (facts.n > 0)
    look.reshape(stack.n_columns, stack.n_rows)[~possible] = False
    empty = np.flatnonzero(facts.n == 0)
    looked = np.flatnonzero(look)
    maybe = np.concatenate([empty, looked])
    index = np.full(len(maybe), codes.index(""), dtype=np.int16 if len(codes) < 2**15 else np.int64)
    if len(looked):
        at = pc.index_in(stack.cells.filter(pa.array(look)), value_set=pa.array(codes, pa.large_string()))
        index[len(empty):] = pc.fill_null(at, -1).to_numpy()
    del look
    is_common = np.array([c in common for c in codes] + [False])
    is_candidate = np.array([c in _CODES and c not in common for c in codes] + [False])
    hit = is_common[index]
    cells, which = maybe[hit], index[hit]
    nc, k = stack.n_columns, len(codes)
    counts = np.bincount(stack.owner(cells) * k + which, minlength=nc * k).reshape(nc, k)
    applied = tuple((names[j], codes[c], int(counts[j, c])) for j, c in zip(*np.nonzero(counts), strict=True))
    if len(cells):
        dense = np.zeros(len(facts.n), dtype=bool)
        dense[cells] = True
        null = pa.scalar(None, pa.large_string())
        stack.map_chunks(lambda start, chunk: pc.if_else(pa.array(dense[start: start + len(chunk)]), null, chunk)
                         if dense[start: start + len(chunk)].any() else None)
        facts.n[cells] = 0
        facts.seen[:] -= counts @ _code_bytes(codes)
    left = is_candidate[index]
    return applied, (maybe[left], index[left]), codes


def _rest_questions(stack: StackedCells, facts: CellFacts, candidate: tuple[np.ndarray, np.ndarray], codes: list,
                    columns: list[int]) -> tuple[np.ndarray, np.ndarray, dict]:
    """The candidate codes set aside: per column the codes' cells, the other present cells' bytes, and which are plain decimals.

    The bytes of the cells left are each column's bytes less the codes' bytes (each code's
    bytes times its cells). Returns the code counts (n_columns, n_codes), the cells left per
    column and ``plain``: for each of ``columns`` whose cells left are all decimal bytes, whether
    :func:`.textbytes.float_cells` reads them.
    """
    nc, k = stack.n_columns, len(codes)
    cells, which = candidate
    counts = np.bincount(stack.owner(cells) * k + which, minlength=nc * k).reshape(nc, k)
    seen_rest = (facts.seen - counts @ _code_bytes(codes)) > 0
    rest = stack.per_column(facts.n > 0) - counts.sum(axis=1)
    only_decimal = ~(seen_rest & ~BYTES_DECIMAL).any(axis=1)
    decimal = [j for j in columns if rest[j] and only_decimal[j]]
    plain: set[int] = set()
    if decimal:
        left = facts.n > 0
        left[cells] = False
        plain = rest_plain(stack, decimal, left)
    return counts, rest, {"maybe": ~(seen_rest & ~BYTES_MAYBE_NUMBER).any(axis=1),
                          "plain": {j: j in plain for j in decimal}}


def _eligible(frame: pd.DataFrame, opts: ReadOptions) -> list | None:
    """The columns' pyarrow arrays when this path reads the table, else ``None``."""
    import pyarrow as pa

    n_rows, n_columns = frame.shape
    if n_rows == 0 or n_columns == 0 or opts.missing_codes or opts.decimal == "," or n_rows > opts.max_rows:
        return None
    if not frame.columns.is_unique or len({str(c) for c in frame.columns}) != n_columns:
        return None
    arrays = []
    for _, s in frame.items():  # one pass over the columns (a pandas column access costs about 10 µs)
        a = values.arrow_column(s) if s.dtype == _DTYPE else None
        if a is None or a.null_count or a.type != pa.large_string() or len(a) != n_rows:
            return None
        arrays.append(a)
    return arrays


def _text(cells: Any) -> pd.api.extensions.ExtensionArray:
    """A pyarrow text column as pandas' ``str`` array, without a copy (faster than ``pandas.array``)."""
    return pd.arrays.ArrowStringArray(cells, dtype=_DTYPE)  # type: ignore[call-arg]  # the stubs lack dtype


@dataclass
class _Column:
    """One column's outcome of the steps before typing and checks (see :func:`_read_block`).

    ``cells`` is the column's text after trimming and the missing codes (``None`` once it is numbers);
    ``passes``: a text column :func:`.checks.check_column` passes.
    """

    cells: Any
    stripped: int = 0
    applied: tuple = ()
    proposals: tuple = ()
    numbers: np.ndarray | None = None
    checked: bool = False
    key: tuple | None = None
    text: bool = False
    passes: bool = False


def _read_block(arrays: list, names: list[str], n_rows: int, opts: ReadOptions) -> list[_Column]:
    """Trim, missing codes, proposals, typing decisions and the checks' questions for a block of columns."""
    import pyarrow as pa

    stack = StackedCells(arrays, n_rows)
    del arrays
    facts = stack.facts()
    stripped = dict(_trim(stack, names, facts))
    applied, candidate, codes = _missing(stack, names, tuple(opts.na_values), facts)
    decided = decide(stack, names, facts)
    n_columns = stack.n_columns
    present = stack.per_column(facts.n > 0)
    maybe = stack.per_column((facts.n > 0) & _NUMBER_STARTS[facts.first])
    short = stack.per_column((facts.n > 0) & (facts.n <= _LONGEST_CODE))
    # Text columns pass the mixed-type check outright when too few cells start like a number.
    bound = present.astype(bool) & (maybe < 0.8 * (present - short))
    cast_numbers(stack, decided)
    # A column whose cast failed is left to values.type_one's general path, as one the bytes left open.
    failed = [j for j in decided.ints + decided.floats if j not in decided.numbers]
    decided.ints, decided.floats = [], []
    wanted = np.zeros(n_columns, dtype=bool)
    wanted[decided.open + decided.bools + failed] = True
    distinct = Distinct(stack, wanted) if wanted.any() else None
    if distinct is not None:
        decide_open(distinct, decided, names, facts.seen, present, stack)
        cast_numbers(stack, decided)
        failed += decided.floats
        # values._whole_numbers reads a column whose every value is a plain whole number: not one of these.
        whole = distinct.count(distinct.flags(values.PLAIN_WHOLE_PATTERN)) == distinct.total
        for j in decided.open + failed:
            if j in decided.numbers or j in decided.keys or j in decided.text or whole[j]:
                continue
            if stays_text(distinct, j, opts.decimal):
                decided.text.add(j)  # what values.type_one's general path decides, from the distinct values
                decided.general.add(j)
    kept = [j for j in sorted(decided.text | set(decided.keys)) if present[j]]
    with_code = np.bincount(stack.owner(candidate[0]), minlength=n_columns) > 0
    asked = sorted({j for j in kept if not bound[j]} | set(np.flatnonzero(with_code).tolist()))
    counts, rest, answers = _rest_questions(stack, facts, candidate, codes, asked)
    del facts, candidate
    candidates = pa.array(sorted(_CODES), pa.large_string())
    out = [_Column(cells=stack.column(j), stripped=stripped.get(names[j], 0)) for j in range(n_columns)]
    position = {col: j for j, col in enumerate(names)}
    for col, code, count in applied:
        out[position[col]].applied += ((col, code, count),)
    for j in np.flatnonzero(with_code).tolist():
        if rest[j] == 0 or not answers["maybe"][j]:
            numeric: bool | None = False  # no cell left, or one holds a character no number has
        else:
            numeric = True if answers["plain"].get(j) else None
        if numeric is None:
            out[j].proposals = tuple(values._arrow_proposals(names[j], stack.column(int(j)), candidates))
            continue
        found = sorted(np.flatnonzero(counts[j]), key=lambda c: (-int(counts[j, c]), codes[c]))
        out[j].proposals = tuple(MissingCodeProposal(column=names[j], code=codes[c], count=int(counts[j, c]),
                                                     makes_numeric=numeric) for c in found)
    for j, v in decided.numbers.items():
        out[j].cells, out[j].numbers = None, v
        # Integers and booleans of numpy pass the checks; floats do without an infinite value.
        out[j].checked = v.dtype.kind in "biu" or not np.isinf(v).any()
    for j, warning in decided.keys.items():
        out[j].key = warning
    for j in decided.text:
        out[j].text = True
    for j in kept:
        out[j].passes = bool(bound[j] or maybe[j] < 0.8 * rest[j] or rest[j] == 0 or answers["plain"].get(j)
                             or (distinct is not None and j in decided.general and not_mostly_numbers(distinct, j)))
    return out


def finish_stacked(owned: list[pd.DataFrame], *, name: str, opts: ReadOptions) -> StackedResult | None:
    """Trim, missing cells, proposals, typing and checks of a text table, as :func:`.read._finish` runs them.

    Parameters
    ----------
    owned : list holding one pandas.DataFrame of shape (n_rows, n_columns)
        Text cells as parsed (pyarrow strings, none missing). Taken out of the list when this path
        reads it (the parsed cells are then freed as their replacements are made), left there if not.
    name : str
    opts : ReadOptions

    Returns
    -------
    StackedResult or None
        ``None`` when the table is not one this path reads (another column type, a missing cell,
        per-column missing codes, a decimal comma): the caller runs the steps one column at a time.

    Raises
    ------
    AuditInputError
        The refusals of :func:`.checks.check_table`, in its order.
    """
    frame = owned[0]
    arrays = _eligible(frame, opts)
    if arrays is None:
        return None
    names = [str(c) for c in frame.columns]
    check_header(names, name, opts.max_columns)
    index = frame.index
    owned.pop()
    del frame
    n_rows = len(index)
    per_block = max(1, min(_BLOCK_CELLS // n_rows, _BLOCK_COLUMNS))
    done: list[_Column] = []
    for lo in range(0, len(names), per_block):
        block, arrays[lo: lo + per_block] = arrays[lo: lo + per_block], [None] * len(arrays[lo: lo + per_block])
        done += _read_block(block, names[lo: lo + per_block], n_rows, opts)
        del block
        if n_rows * len(names) > _BLOCK_CELLS:
            release_freed_memory()  # the block's parsed and replaced text
    del arrays

    def series(j: int) -> pd.Series:
        return pd.Series(_text(done[j].cells), index=index, name=names[j], copy=False)

    state = values.Typing(out={})
    for j, col in enumerate(names):
        c = done[j]
        if c.numbers is not None:
            state.out[col] = c.numbers
        elif c.key is not None:
            state.warnings.append(c.key)
        elif not c.text:
            values.type_one(state, col, series(j), opts.decimal)
    position = {col: j for j, col in enumerate(names)}
    state.settle(lambda col: series(position[col]))
    columns: dict[str, object] = {}
    dropped: list[str] = []
    for j, col in enumerate(names):
        c = done[j]
        typed = state.out.get(col)
        if typed is None and c.passes:
            columns[col] = _text(c.cells)
            continue
        if c.numbers is not None and c.checked:
            columns[col] = c.numbers
            continue
        if isinstance(typed, np.ndarray) and typed.dtype.kind in "biu":
            columns[col] = typed  # integers and booleans of numpy: never missing, never infinite
            continue
        s = series(j) if typed is None else pd.Series(typed, index=index, name=col, copy=False)
        verdict = check_column(col, s, opts, True)
        if verdict is None:
            dropped.append(col)
        else:
            columns[col] = verdict
    if not columns:
        raise fail("NO_COLUMNS", name=name)
    return StackedResult(frame=pd.DataFrame(columns, index=index, copy=False),
                         stripped=tuple((names[j], c.stripped) for j, c in enumerate(done) if c.stripped),
                         applied=tuple(a for c in done for a in c.applied),
                         proposals=tuple(p for c in done for p in c.proposals if p.column in columns),
                         conversions=tuple(state.conversions), warnings=tuple(state.warnings), dropped=tuple(dropped))
