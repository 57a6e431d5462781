"""Every column's text cells stacked into one pyarrow sequence, with the per-cell facts the intake steps ask.

The columns of a parsed table all have ``n_rows`` cells: stacked one after
another, column ``j`` is cells ``j * n_rows`` to ``(j + 1) * n_rows`` and a
per-column count is a ``reshape(n_columns, n_rows)`` sum. Short columns'
chunks are joined (one chunk for a table of 10,000 two-row columns), a long
column's chunks are kept as parsed, so no step holds a second copy of a long
table's text.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CellFacts", "StackedCells"]

#: Cells joined into one chunk when columns are short; a chunk of at least ``_ALONE_CELLS`` stays as it is.
_GROUP_CELLS = 1 << 16
_ALONE_CELLS = 1 << 10


@dataclass(frozen=True)
class CellFacts:
    """What the bytes of each cell tell, in stacked order.

    Attributes
    ----------
    n : numpy.ndarray of int32, shape (n_columns * n_rows,)
        Length in bytes (0 for a missing cell: after the missing step a present cell is never empty).
    first, second, last : numpy.ndarray of uint8, shape (n_columns * n_rows,)
        The cell's first, second and last byte (meaningful where ``n`` is long enough).
    seen : numpy.ndarray of int64, shape (n_columns, 256)
        How many times each byte occurs in each column's present cells.
    """

    n: np.ndarray
    first: np.ndarray
    second: np.ndarray
    last: np.ndarray
    seen: np.ndarray


class StackedCells:
    """A table's text columns as one chunked pyarrow array of large strings, column after column.

    Parameters
    ----------
    arrays : list of pyarrow.ChunkedArray
        One per column, each of ``n_rows`` large strings.
    n_rows : int
    """

    def __init__(self, arrays: list, n_rows: int) -> None:
        import pyarrow as pa

        self.n_columns, self.n_rows = len(arrays), n_rows
        chunks: list = []
        group: list = []
        size = 0
        for arr in arrays:
            for chunk in arr.chunks:
                if len(chunk) == 0:
                    continue
                if len(chunk) >= _ALONE_CELLS:
                    if group:
                        chunks.append(pa.concat_arrays(group))
                        group, size = [], 0
                    chunks.append(chunk)
                    continue
                group.append(chunk)
                size += len(chunk)
                if size >= _GROUP_CELLS:
                    chunks.append(pa.concat_arrays(group))
                    group, size = [], 0
        if group:
            chunks.append(pa.concat_arrays(group))
        self.cells = pa.chunked_array(chunks, type=pa.large_string())

    def column(self, j: int):
        """Column ``j``'s cells (a zero-copy slice)."""
        return self.cells.slice(j * self.n_rows, self.n_rows)

    def per_column(self, flags: np.ndarray) -> np.ndarray:
        """Per column, the number of cells flagged (``flags``: one boolean per stacked cell)."""
        return flags.reshape(self.n_columns, self.n_rows).sum(axis=1)

    def owner(self, cells: np.ndarray) -> np.ndarray:
        """The column of each stacked cell index."""
        return cells // self.n_rows

    def spans(self):
        """``(start, chunk)`` of every chunk, ``start`` its first cell's stacked index."""
        start = 0
        for chunk in self.cells.chunks:
            yield start, chunk
            start += len(chunk)

    def map_chunks(self, fn) -> None:
        """Replace each chunk by ``fn(start, chunk)`` (``None`` keeps it)."""
        import pyarrow as pa

        out = []
        for start, chunk in self.spans():
            new = fn(start, chunk)
            out.append(chunk if new is None else new)
        self.cells = pa.chunked_array(out, type=pa.large_string())

    def facts(self) -> CellFacts:
        """Lengths, first, second and last bytes of every cell, and each column's bytes."""
        total = self.n_columns * self.n_rows
        facts = CellFacts(n=np.zeros(total, dtype=np.int32), first=np.zeros(total, dtype=np.uint8),
                          second=np.zeros(total, dtype=np.uint8), last=np.zeros(total, dtype=np.uint8),
                          seen=np.zeros((self.n_columns, 256), dtype=np.int64))
        self.refresh(facts, np.ones(self.n_columns, dtype=bool))
        return facts

    def refresh(self, facts: CellFacts, columns: np.ndarray) -> None:
        """Recompute ``facts`` for the flagged ``columns`` (and any other column sharing a chunk with them)."""
        spans = list(self.spans())
        rows = self.n_rows
        while True:  # the chunks holding a flagged column; their other columns are flagged in turn
            picked = [(a, c) for a, c in spans if columns[a // rows: (a + len(c) - 1) // rows + 1].any()]
            more = columns.copy()
            for a, c in picked:
                more[a // rows: (a + len(c) - 1) // rows + 1] = True
            if (more == columns).all():
                break
            columns = more
        n, first, second, last, seen = facts.n, facts.first, facts.second, facts.last, facts.seen
        assert seen is not None
        seen[columns] = 0
        for a, chunk in picked:
            b = a + len(chunk)
            _, offsets, data = chunk.buffers()
            off = np.frombuffer(offsets, dtype=np.int64)[chunk.offset: chunk.offset + len(chunk) + 1]
            buf = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
            store = buf if len(buf) else np.zeros(1, np.uint8)
            top = len(store) - 1
            starts = off[:-1]
            lengths = np.diff(off)
            if chunk.null_count:
                lengths[~chunk.is_valid().to_numpy(zero_copy_only=False)] = 0
            n[a:b] = lengths
            first[a:b] = store[np.minimum(starts, top)]
            second[a:b] = store[np.minimum(starts + 1, top)]
            last[a:b] = store[np.minimum(off[1:], top + 1) - 1]  # -1: an empty cell's, unused
            body = buf[off[0]: off[-1]]
            if int(lengths.sum()) != len(body):  # a missing cell holds bytes: only the present cells' are read
                where = np.repeat(starts - off[0], lengths) + (
                    np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths))
                body = body[where]
            lo, hi = a // rows, (b - 1) // rows
            if lo == hi:
                seen[lo] += np.bincount(body, minlength=256)
            else:  # short columns: each byte's column, the cells' columns repeated by their lengths
                by_byte = np.repeat(self.owner(np.arange(a, b)), lengths)
                seen += np.bincount(by_byte * 256 + body, minlength=self.n_columns * 256).reshape(-1, 256)

    def distinct(self, columns: np.ndarray):
        """The present cells of the flagged ``columns`` as distinct values.

        Returns
        -------
        owner : numpy.ndarray of int64
            Each cell's column (cells in stacked order).
        index : numpy.ndarray
            Each cell's position in ``uniques``.
        uniques : pyarrow.LargeStringArray
            In order of first occurrence.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        keep = np.repeat(columns, self.n_rows)
        if self.cells.null_count:
            keep &= pc.is_valid(self.cells).to_numpy(zero_copy_only=False).astype(bool)
        picked = self.cells.filter(pa.array(keep))
        uniques = pc.unique(picked)
        if isinstance(uniques, pa.ChunkedArray):
            uniques = uniques.combine_chunks()
        index = pc.index_in(picked, value_set=uniques).to_numpy(zero_copy_only=False)
        return self.owner(np.flatnonzero(keep)), index, uniques
