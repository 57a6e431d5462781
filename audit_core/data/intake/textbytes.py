"""Which bytes a pyarrow text column holds: a cheap first look that settles most typing questions.

Every question :mod:`.values` and :mod:`.checks` ask of a text column (are
all its values whole numbers, keys, decimals, booleans? does some cell carry
blanks at its ends? could most cells be numbers?) has an answer that only
depends on the column's values; many are settled by the set of bytes the
present cells are made of, which one pass of :func:`numpy.bincount` over the
column's character buffer gives (about a millisecond for 100,000 cells).
Where the bytes do not settle a question, the caller takes its general path.
Text is UTF-8: an ASCII byte in the buffer is that character, never part of
another one.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["BYTES_DECIMAL", "BYTES_DIGITS", "BYTES_MAYBE_NUMBER", "any_in", "any_in_each", "arrow_cells", "arrow_column", "byte_set",
           "float_cells", "lengths_and_starts", "only"]


def _set(chars: str) -> np.ndarray:
    out = np.zeros(256, dtype=bool)
    out[list(chars.encode())] = True
    return out


#: Digits and the minus sign: whole numbers.
BYTES_DIGITS = _set("0123456789-")
#: Plain decimals: digits, the decimal point, an exponent, the minus sign.
BYTES_DECIMAL = _set("0123456789.eE-")
#: What a number ``pandas.to_numeric`` reads may be made of (digits, signs, marks, exponent, blanks, inf).
BYTES_MAYBE_NUMBER = _set("0123456789+-.,eE_ \t\n\r\f\vinfatyINFATY")


def arrow_column(s: pd.Series):
    """A pyarrow text column's cells, missing ones included, as a pyarrow array (``None`` for another column).

    The steps ask their first question of a column here, without building a
    pandas mask: on a table of 10,000 short columns, pandas' own cost per
    column was most of the read.
    """
    if not isinstance(s.dtype, pd.StringDtype) or s.dtype.storage != "pyarrow":
        return None
    return s.array.__arrow_array__()


def any_in(arr, values) -> bool:
    """Some cell of ``arr`` is one of ``values`` (a pyarrow array)."""
    import pyarrow.compute as pc

    return bool(pc.any(pc.is_in(arr, value_set=values)).as_py())


def any_in_each(arrays: list, values) -> np.ndarray | None:
    """For each pyarrow text array, whether some cell is one of ``values``: one ``is_in`` over all of them.

    On a table of many short columns one call per column was most of the cost; here every column's chunks
    are looked at as one chunked array and the hits summed per column. ``None`` when the arrays do not share
    one type (the caller asks column by column).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks, owner = [], []
    for i, arr in enumerate(arrays):
        for chunk in (arr.chunks if hasattr(arr, "chunks") else [arr]):
            if len(chunk):
                chunks.append(chunk)
                owner.append(i)
    out = np.zeros(len(arrays), dtype=bool)
    if not chunks:
        return out
    if any(c.type != chunks[0].type for c in chunks):
        return None
    hits = pc.is_in(pa.chunked_array(chunks), value_set=values).to_numpy(zero_copy_only=False).astype(bool)
    sizes = np.array([len(c) for c in chunks])
    per_chunk = np.add.reduceat(hits.astype(np.int64), np.concatenate(([0], np.cumsum(sizes)[:-1])))
    np.logical_or.at(out, np.array(owner), per_chunk > 0)
    return out


def arrow_cells(s: pd.Series):
    """The present cells of a pyarrow text column as a pyarrow array (``None`` for another column)."""
    if not isinstance(s.dtype, pd.StringDtype) or s.dtype.storage != "pyarrow":
        return None
    arr = s.array.__arrow_array__()
    return arr.drop_null() if arr.null_count else arr


def _buffers(cells):
    """``(offsets, data)`` of every chunk, as numpy views."""
    chunks = cells.chunks if hasattr(cells, "chunks") else [cells]
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        _, offsets, data = chunk.buffers()
        width = np.int64 if str(chunk.type) == "large_string" else np.int32
        off = np.frombuffer(offsets, dtype=width)[chunk.offset: chunk.offset + len(chunk) + 1]
        yield off, (np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8))


def byte_set(cells) -> np.ndarray:
    """256 booleans: the bytes the cells (no missing cell among them) are made of."""
    seen = np.zeros(256, dtype=np.int64)
    for off, data in _buffers(cells):
        seen += np.bincount(data[off[0]: off[-1]], minlength=256)
    return seen > 0


def only(seen: np.ndarray, allowed: np.ndarray) -> bool:
    """Every byte seen is allowed."""
    return not bool((seen & ~allowed).any())


def lengths_and_starts(cells) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every cell's length in bytes, first byte and second byte (0 where the cell is shorter)."""
    lengths, firsts, seconds = [], [], []
    for off, data in _buffers(cells):
        n = np.diff(off)
        starts = off[:-1]
        # Indices clipped into the buffer instead of a padded copy of it (a copy of the column per call):
        # where a cell is long enough its index is in bounds and unchanged.
        last = max(len(data) - 1, 0)
        store = data if len(data) else np.zeros(1, np.uint8)
        firsts.append(np.where(n > 0, store[np.minimum(starts, last)], 0))
        seconds.append(np.where(n > 1, store[np.minimum(starts + 1, last)], 0))
        lengths.append(n)
    if not lengths:
        return np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.uint8)
    return np.concatenate(lengths), np.concatenate(firsts), np.concatenate(seconds)


def float_cells(cells) -> np.ndarray | None:
    """Cells of digits, ``.``, ``e``/``E`` and ``-`` as doubles, or ``None`` if one is not a number.

    Over these characters pyarrow's cast accepts exactly the plain decimals
    (``values._DECIMAL``), and reads each as ``pandas.to_numeric`` does: the correctly
    rounded double (``tests/test_intake_typing_paths.py`` checks both). A
    negative zero is left to the general path.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        out = pc.cast(cells, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if np.signbit(out[out == 0]).any():
        return None  # "-0" is 0 to to_numeric beside integers, -0.0 to pyarrow: the general path decides
    return out
