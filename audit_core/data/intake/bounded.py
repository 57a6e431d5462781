"""A bounded intake: how much a table may expand to and how many rows it may have, checked while it is read.

The rules (declared in :mod:`audit_core.limits`):

* **Expansion.** A compressed table (gzip text, an xlsx workbook, a Parquet
  file) may expand to at most :func:`~audit_core.limits.table_cap` bytes:
  ``EXPANSION_PER_UPLOAD`` times the upload cap, and never past the
  expansion cap. Gzip is expanded in 1 MB steps and stopped as soon as it
  passes the cap, so the rest is never expanded; xlsx and Parquet declare
  their sizes, which are checked before anything is expanded.
* **Rows.** A parser is asked for at most :func:`row_limit` rows (one past
  the cap) and the count is checked as the rows are read (:func:`check_rows`),
  so a file with too many rows is refused where the cap is passed, not after
  it has been parsed whole.
* **Stacks.** Several text files stacked into one table share one budget
  (:class:`TextBudget`): together they may hold at most one upload's worth.

With these, one read holds at most the cap's worth of text, and its peak
memory is bounded by ``INTAKE_MEMORY_PER_UPLOAD`` times the upload cap
(``tests/test_intake_bounded.py``). Whatever parses the text, it reads its
bytes through :func:`expand` and its rows through :func:`row_limit` /
:func:`check_rows`: these are the only places the caps are applied.
"""
from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass

from audit_core.errors import fail
from audit_core.limits import table_cap

from .options import MB, ReadOptions

__all__ = ["TableCap", "TextBudget", "cap_of", "check_expansion", "check_rows", "expand", "release_freed_memory",
           "row_limit"]

#: Bytes expanded per step: the most a gzip file is expanded past the cap before it is stopped.
_CHUNK = 1 * MB


@dataclass(frozen=True)
class TableCap:
    """The most bytes a table may hold once expanded, and the variable that sets it.

    Attributes
    ----------
    bytes : int
    variable : {"AUDIT_MAX_UPLOAD_MB", "AUDIT_MAX_EXPANSION_MB"}
    label : str
        How a message names it ("upload cap" or "decompression cap").
    """

    bytes: int
    variable: str

    @property
    def label(self) -> str:
        return "upload cap" if self.variable == "AUDIT_MAX_UPLOAD_MB" else "decompression cap"

    def fields(self) -> dict[str, object]:
        """The message fields naming this cap: ``cap_mb``, ``cap_name`` and ``var``."""
        return dict(cap_mb=self.bytes / MB, cap_name=self.label, var=self.variable)


def cap_of(opts: ReadOptions) -> TableCap:
    """The expansion cap in force for ``opts`` (:func:`audit_core.limits.table_cap`)."""
    return TableCap(*table_cap(opts.max_bytes, opts.max_expansion_bytes))


def expand(data: bytes, name: str, opts: ReadOptions) -> tuple[bytes, str | None]:
    """Expand a gzip upload in steps, stopping at the cap; other bytes pass unchanged.

    Returns
    -------
    data : bytes
    compression : "gzip" or None

    Raises
    ------
    AuditInputError
        ``GZIP_CAP`` as soon as the expanded bytes pass :func:`cap_of`,
        ``UNPARSEABLE`` for a damaged gzip stream, ``EMPTY_FILE``, and
        ``NOT_A_TABLE`` for a file compressed twice.
    """
    if data[:2] != b"\x1f\x8b":
        return data, None
    cap = cap_of(opts)
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
            while chunk := g.read(_CHUNK):
                out.write(chunk)
                if out.tell() > cap.bytes:  # stop here: the rest is never expanded
                    raise fail("GZIP_CAP", name=name, packed_mb=len(data) / MB, **cap.fields())
    except (OSError, EOFError, zlib.error) as exc:  # AuditInputError is not among these
        raise fail("UNPARSEABLE", name=name, fmt="gzip", detail=str(exc).strip()[:200] or "truncated") from None
    expanded = out.getvalue()
    if not expanded:
        raise fail("EMPTY_FILE", name=name)
    if expanded[:2] == b"\x1f\x8b":
        raise fail("NOT_A_TABLE", name=name, what="gzip-compressed twice", hint="Decompress it once and upload the result.")
    return expanded, "gzip"


def check_expansion(expanded: int, packed: int, name: str, opts: ReadOptions) -> None:
    """Refuse a file (xlsx, Parquet) whose declared expanded size passes :func:`cap_of`, before expanding it."""
    cap = cap_of(opts)
    if expanded > cap.bytes:
        raise fail("DECOMPRESSION_CAP", name=name, size_mb=expanded / MB, ratio=expanded / max(packed, 1),
                   **cap.fields())


def row_limit(opts: ReadOptions) -> int:
    """Data rows to ask a parser for: one past the cap, so that passing it is seen without reading further."""
    return opts.max_rows + 1


def check_rows(n_rows: int, name: str, opts: ReadOptions, *, complete: bool = False) -> None:
    """Refuse ``n_rows`` data rows past the row cap.

    Parameters
    ----------
    n_rows : int
        Rows read so far (or in all, when ``complete``).
    complete : bool
        True when ``n_rows`` is the table's whole count (Parquet metadata);
        otherwise reading stopped there and the message says "at least".
    """
    if n_rows > opts.max_rows:
        raise fail("TOO_MANY_ROWS", name=name, n_rows=f"{n_rows:,}" if complete else f"at least {n_rows:,}",
                   cap=opts.max_rows)


class TextBudget:
    """Bytes of text that several stacked files may hold together: one table's worth (:func:`cap_of`).

    Examples
    --------
    >>> budget = TextBudget(ReadOptions(max_bytes=10))
    >>> budget.take(6, "a.csv"); budget.used
    6
    >>> budget.take(6, "b.csv")
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: Stacked with the files before it, 'b.csv' brings the text to 0.0 MB, \
over the 0.0 MB upload cap: a stack of files may hold at most one table's worth. Stack fewer files, \
or raise the cap (environment variable AUDIT_MAX_UPLOAD_MB).
    """

    def __init__(self, opts: ReadOptions) -> None:
        self.cap = cap_of(opts)
        self.used = 0

    def take(self, n_bytes: int, name: str) -> None:
        """Count one more file's text; refuse it (``STACK_TOO_LARGE``) when the stack passes the cap."""
        self.used += n_bytes
        if self.used > self.cap.bytes:
            raise fail("STACK_TOO_LARGE", name=name, size_mb=self.used / MB, **self.cap.fields())


def release_freed_memory() -> None:
    """Hand the memory pyarrow has freed back to the system.

    Text columns live in pyarrow's allocator, which keeps freed blocks for
    its own later use; the numbers that replace them are numpy's. Without
    this, a column typed as numbers would count twice in the peak.
    """
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
