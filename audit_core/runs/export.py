"""Files written from a saved run: atomic writes, Parquet bytes per table, and one file name per table.

A table's name is free text (plug-ins and imported bundles choose it), a
file name is not: :func:`parquet_file_names` turns every name into a
portable file name (ASCII letters, digits, ``-``, ``_``, ``.``; at most
:data:`MAX_STEM` characters) and keeps them distinct. A name that is already
portable keeps its name; any other gets the first 8 hex digits of the
SHA-256 of its original text appended (``a/b`` -> ``a_b-<8 hex>.parquet``),
so its file name depends on that name alone, never on the other tables or
their order, and ``a/b`` cannot overwrite ``a_b``. Names are compared
ignoring case, as the file systems of macOS and Windows do: two portable
names that differ only in case (``A``, ``a``) both get the hash. A clash that
remains (a table named like another's hashed file) is refused rather than
losing a table.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from audit_core.errors import excerpt, fail, register_messages

from .registry import RunRecord

__all__ = ["MAX_STEM", "parquet_file_names", "parquet_zip", "table_parquet", "write_file", "write_parquet_tables"]

#: Longest file-name stem kept from a table name (before the hash and ``.parquet``).
MAX_STEM = 100

register_messages(
    {
        "OUTPUT_DISK_FULL": (
            "Cannot write {path}: no space left on the disk holding {folder}. Nothing partial was left "
            "behind; free space there (or write to another folder) and try again."
        ),
        "OUTPUT_UNWRITABLE": (
            "Cannot write {path} ({reason}). Check that its folder is a folder and is writable, "
            "or choose another path."
        ),
        "EXPORT_NAME_CLASH": (
            "Cannot export the tables {first} and {second} of this run: both would be written as {file}. "
            "Nothing was written; rename one of them (re-import the bundle with a different table name)."
        ),
    }
)


def write_file(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, synced, then renamed.

    A reader never sees a partial file, and a failed write (a full disk)
    leaves neither a partial nor a 0-byte file behind.

    Raises
    ------
    AuditInputError
        ``OUTPUT_DISK_FULL`` (no space, or over quota) saying where to free
        space, ``OUTPUT_UNWRITABLE`` for any other write error.
    """
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, p)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise fail("OUTPUT_DISK_FULL", path=p, folder=p.parent) from exc
        raise fail("OUTPUT_UNWRITABLE", path=p, reason=exc.strerror or str(exc)) from exc
    return p


def table_parquet(df: pd.DataFrame) -> bytes:
    """Parquet bytes of one table (pyarrow), as the registry stores it."""
    buf = io.BytesIO()
    df.to_parquet(buf, engine="pyarrow")
    return buf.getvalue()


def parquet_file_names(names: Iterable[str]) -> dict[str, str]:
    """One distinct, portable ``<stem>.parquet`` file name per table name (see the module docstring).

    Parameters
    ----------
    names : iterable of str
        Table names, distinct.

    Returns
    -------
    dict
        Table name -> file name, in the order given.

    Raises
    ------
    AuditInputError
        ``EXPORT_NAME_CLASH`` naming both tables, if two names still share a file name (ignoring case).
    """
    names = list(names)
    portable = [name.casefold() for name in names if _portable(name) == name]
    out: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name in names:
        stem = _portable(name)
        if stem != name or portable.count(name.casefold()) > 1:
            stem = f"{stem}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
        file = f"{stem}.parquet"
        if file.casefold() in owner:
            raise fail("EXPORT_NAME_CLASH", first=excerpt(owner[file.casefold()]), second=excerpt(name),
                       file=excerpt(file))
        owner[file.casefold()] = name
        out[name] = file
    return out


def _portable(name: str) -> str:
    stem = "".join(c if (c.isascii() and c.isalnum()) or c in "-_." else "_" for c in name[:MAX_STEM])
    return stem if stem.strip(".") else "table"


def write_parquet_tables(record: RunRecord, directory: str | Path) -> list[Path]:
    """Write each result table as ``<directory>/<file name>.parquet`` (:func:`parquet_file_names`, atomically).

    Every name is checked before the first file is written, so a clash writes nothing.

    Returns
    -------
    list of Path
    """
    out = Path(directory)
    files = parquet_file_names(record.tables)
    return [write_file(out / files[name], table_parquet(df)) for name, df in record.tables.items()]


def parquet_zip(record: RunRecord) -> bytes:
    """A zip archive of one Parquet file per table (:func:`parquet_file_names`; fixed timestamps: deterministic)."""
    files = parquet_file_names(record.tables)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, df in record.tables.items():
            info = zipfile.ZipInfo(files[name], date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, table_parquet(df))
    return buf.getvalue()
