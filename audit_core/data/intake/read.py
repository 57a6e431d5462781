"""Reading a table from bytes or a path: detect the format, read it, check it."""
from __future__ import annotations

import hashlib
from pathlib import Path

from audit_core.errors import fail

from .checks import check_table
from .delimited import read_delimited
from .excel import read_excel
from .options import MB, LoadedTable, ReadOptions
from .parquet import read_parquet
from .sniff import detect_format

__all__ = ["read_table", "read_path"]


def read_table(data: bytes, *, name: str, options: ReadOptions | None = None) -> LoadedTable:
    """Read an uploaded CSV, Parquet or Excel file and check it.

    Parameters
    ----------
    data : bytes
        The raw file content.
    name : str
        The file name; its suffix helps detect the format.
    options : ReadOptions, optional

    Returns
    -------
    LoadedTable

    Raises
    ------
    AuditInputError
        With a declared code (``EMPTY_FILE``, ``FILE_TOO_LARGE``,
        ``DUPLICATE_COLUMNS``, ``ALL_MISSING_COLUMN``, ...).

    Examples
    --------
    >>> t = read_table(b"a;b\\n1;x\\n2;y\\n", name="t.csv")
    >>> t.delimiter, t.frame.shape
    (';', (2, 2))
    """
    opts = options or ReadOptions()
    if len(data) == 0:
        raise fail("EMPTY_FILE", name=name)
    if len(data) > opts.max_bytes:
        raise fail("FILE_TOO_LARGE", name=name, size_mb=len(data) / MB, cap_mb=opts.max_bytes / MB)
    fmt = detect_format(data, name)
    enc = delim = None
    if fmt == "csv":
        frame, enc, delim = read_delimited(data, name, opts)
    elif fmt == "parquet":
        frame = read_parquet(data, name, opts)
    else:
        frame = read_excel(data, name, opts)
    frame, dropped = check_table(frame, name=name, options=opts)
    return LoadedTable(
        frame=frame,
        name=name,
        format=fmt,
        sha256=hashlib.sha256(data).hexdigest(),
        n_bytes=len(data),
        encoding=enc,
        delimiter=delim,
        dropped_columns=dropped,
    )


def read_path(path: str | Path, *, options: ReadOptions | None = None) -> LoadedTable:
    """Read a table from disk; see :func:`read_table`."""
    p = Path(path)
    return read_table(p.read_bytes(), name=p.name, options=options)
