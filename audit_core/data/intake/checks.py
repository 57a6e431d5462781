"""The checks every table passes, whatever its format: header, shape, missing, inf, mixed types."""
from __future__ import annotations

import functools
import numpy as np
import pandas as pd

from audit_core.errors import fail

from .options import ReadOptions
from .report import CANDIDATE_MISSING_CODES
from .textbytes import BYTES_DECIMAL, arrow_cells, arrow_column, byte_set, float_cells, lengths_and_starts, only

_CODES = frozenset(CANDIDATE_MISSING_CODES)
#: The first character of any text ``pandas.to_numeric`` reads as a number (digit, sign, mark, blank, inf).
_LONGEST_CODE = max(len(c.encode()) for c in CANDIDATE_MISSING_CODES)
_NUMBER_STARTS = np.isin(np.arange(256), list(b"0123456789+-.,_ \t\n\r\f\viInN"))

__all__ = ["check_header", "check_column", "check_table"]


def check_header(header: list[str], name: str, max_columns: int) -> None:
    if len(header) > max_columns:
        raise fail("TOO_MANY_COLUMNS", name=name, n_columns=len(header), cap=max_columns)
    for i, col in enumerate(header, start=1):
        if str(col).strip() == "":
            raise fail("BLANK_COLUMN_NAME", name=name, position=i)
    seen: dict[str, int] = {}
    for col in header:
        key = str(col).strip()
        seen[key] = seen.get(key, 0) + 1
    dupes = [c for c, n in seen.items() if n > 1]
    if dupes:
        raise fail("DUPLICATE_COLUMNS", name=name, columns=", ".join(repr(c) for c in dupes[:10]))


@functools.cache
def _codes_array():
    """The candidate codes as a pyarrow array, built once (it was about a tenth of a wide table's check)."""
    import pyarrow as pa

    return pa.array(sorted(_CODES), pa.large_string())


def _mixed_type_problem(col: str, s: pd.Series, codes_reported: bool) -> None:
    if isinstance(s.dtype, pd.StringDtype):
        cells = arrow_cells(s)
        if cells is not None:
            # At most the cells starting like a number are numbers: too few, and the column cannot be refused.
            # The codes (at most 4 characters) are not counted: first bound them by the short cells.
            lengths, first, _ = lengths_and_starts(cells)
            maybe = int(_NUMBER_STARTS[first[lengths > 0]].sum())
            if maybe < 0.8 * (len(cells) - int((lengths <= _LONGEST_CODE).sum() if codes_reported else 0)):
                return
            import pyarrow.compute as pc

            codes = pc.is_in(cells, value_set=_codes_array()) if codes_reported else None
            if codes is not None and maybe < 0.8 * (len(cells) - int(pc.sum(codes).as_py() or 0)):
                return
            rest = cells if codes is None else pc.filter(cells, pc.invert(codes))
            if codes is not None and len(rest) == 0:
                return  # every present cell a candidate code: no value is left to count below
            if len(rest) and only(byte_set(rest), BYTES_DECIMAL) and float_cells(rest) is not None:
                return  # every cell but the codes a number: none is text
        # Distinct values and their counts, without a copy of the column.
        counts = s.value_counts(sort=False)
        if codes_reported:  # candidate missing codes among numbers are proposed, not refused
            counts = counts[~counts.index.isin(_CODES)]
        if not counts.empty:
            _mostly_numbers(col, counts, s)
        return
    nonnull = s.dropna()
    if codes_reported:
        # Candidate missing codes among numbers are proposed in the read report, not refused.
        if isinstance(nonnull.dtype, pd.StringDtype):
            nonnull = nonnull[~nonnull.isin(_CODES)]
        else:
            nonnull = nonnull[~nonnull.map(lambda v: isinstance(v, str) and v in _CODES)]
    if nonnull.empty:
        return
    if s.dtype == object:
        kinds = {type(v) for v in nonnull.tolist()}
        numeric_kinds = {int, float, np.int64, np.float64, np.int32, np.float32}
        has_num = bool(kinds & numeric_kinds)
        text = [v for v in nonnull.tolist() if isinstance(v, str)]
        if has_num and text:
            raise fail(
                "MIXED_TYPES",
                column=col,
                n_numeric=len(nonnull) - len(text),
                n_text=len(text),
                example=text[0][:40],
            )
        if not (kinds <= numeric_kinds | {str, bool, np.bool_}):
            raise fail("UNSUPPORTED_DTYPE", column=col, dtype=", ".join(sorted(k.__name__ for k in kinds))[:80])
    if pd.api.types.is_string_dtype(s.dtype) or s.dtype == object:
        nonnull = nonnull.astype(str)
        _mostly_numbers(col, nonnull.value_counts(sort=False), nonnull)


def _mostly_numbers(col: str, counts: pd.Series, s: pd.Series) -> None:
    """Refuse a column of text cells that are mostly numbers (``counts``: distinct value -> cells)."""
    # Parse each distinct value once: a text column repeats its values.
    parsed = pd.to_numeric(pd.Series(counts.index, dtype=object), errors="coerce").to_numpy()
    is_num = ~pd.isna(parsed)
    total = int(counts.sum())
    n_num = int(counts.to_numpy()[is_num].sum())
    n_text = total - n_num
    # A column that is mostly numbers with a few text cells is a typed
    # column with stray codes; mostly text with some numeric-looking
    # labels (e.g. "1", "2", "other") is an honest categorical column.
    if n_num > 0 and n_text > 0 and n_num >= 0.8 * total:
        first_text = s[s.isin(set(counts.index[~is_num]))]
        raise fail("MIXED_TYPES", column=col, n_numeric=n_num, n_text=n_text, example=str(first_text.iloc[0])[:40])


def check_column(col: str, s: pd.Series, opts: ReadOptions, codes_reported: bool) -> pd.Series | None:
    """Check one column of :func:`check_table`: ``s`` itself when it passes, ``None`` when it is dropped (all missing).

    A column whose infinite values become missing (``inf_as_missing``) is returned replaced.

    Raises
    ------
    AuditInputError
        ``ALL_MISSING_COLUMN``, ``INF_VALUES``, ``MIXED_TYPES``, ``UNSUPPORTED_DTYPE``.
    """
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "biu":
        return s  # integers and booleans of numpy: never missing, never infinite
    arr = arrow_column(s)
    if isinstance(s.dtype, np.dtype) and s.dtype.kind == "f":
        values = s.to_numpy(copy=False)
        missing = bool(np.isnan(values).all())
    else:
        missing = (arr.null_count == len(arr)) if arr is not None else bool(s.isna().all())
    if missing:
        if opts.drop_all_missing:
            return None
        raise fail("ALL_MISSING_COLUMN", column=col)
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        inf = np.isinf(values)
        if inf.any():
            if not opts.inf_as_missing:
                raise fail("INF_VALUES", column=col, count=int(inf.sum()), row=int(np.argmax(inf)) + 1)
            s = s.where(~inf)
            if s.isna().all():
                raise fail("ALL_MISSING_COLUMN", column=col)
    elif pd.api.types.is_datetime64_any_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        pass
    elif isinstance(s.dtype, pd.CategoricalDtype):
        pass
    else:
        _mixed_type_problem(col, s, codes_reported)
    return s


def check_table(
    frame: pd.DataFrame, *, name: str = "table", options: ReadOptions | None = None, codes_reported: bool = False
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Check a frame for the declared problems.

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
    name : str
        Used in messages.
    options : ReadOptions, optional
    codes_reported : bool, default False
        The caller reports candidate missing codes (``?``, ``NA``, ...) as
        proposals, so a numeric column holding them is not refused as mixed.

    Returns
    -------
    frame : pandas.DataFrame
        The checked frame (a copy when columns were dropped or inf replaced).
    dropped : tuple of str
        Entirely-missing columns dropped under ``drop_all_missing``.
    """
    opts = options or ReadOptions()
    if frame.shape[1] == 0:
        raise fail("NO_COLUMNS", name=name)
    check_header([str(c) for c in frame.columns], name, opts.max_columns)
    if frame.shape[0] == 0:
        raise fail("NO_ROWS", name=name)
    if frame.shape[0] > opts.max_rows:  # a frame handed in whole (the readers stop at the cap themselves)
        raise fail("TOO_MANY_ROWS", name=name, n_rows=f"{frame.shape[0]:,}", cap=opts.max_rows)
    # set_axis returns a new frame: the caller's frame keeps its column labels.
    frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
    dropped: list[str] = []
    for col in frame.columns:
        s = frame[col]
        verdict = check_column(col, s, opts, codes_reported)
        if verdict is None:
            dropped.append(col)
        elif verdict is not s:
            frame = frame.copy() if not dropped else frame
            frame[col] = verdict
    if dropped:
        frame = frame.drop(columns=dropped)
        if frame.shape[1] == 0:
            raise fail("NO_COLUMNS", name=name)
    return frame, tuple(dropped)
