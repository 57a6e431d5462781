"""Reading a table from bytes or a path: expand, detect the format, read, type, check, report.

Every format passes the same steps after parsing: text cells are trimmed at
both ends, blank cells and the accepted missing codes become missing, the
candidate codes still present are proposed, text columns are typed (for text
and Excel files) and the checks of :func:`check_table` run. What each step
did is the table's :class:`ReadReport`.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import pandas as pd

from audit_core.errors import fail

from .bounded import TextBudget, check_rows, expand, release_freed_memory
from .checks import check_table
from .delimited import TextCells, read_text_cells
from .excel import read_excel
from .options import MB, LoadedTable, ReadOptions, TableFormat
from .parquet import read_parquet
from .report import ReadReport, note
from .sniff import detect_format
from .stacked import finish_stacked
from .values import apply_missing, propose_missing, trim_cells, type_columns

__all__ = ["read_table", "read_tables", "read_path"]


def _size_checks(data: bytes, name: str, opts: ReadOptions) -> None:
    if len(data) == 0:
        raise fail("EMPTY_FILE", name=name)
    if len(data) > opts.max_bytes:
        raise fail("FILE_TOO_LARGE", name=name, size_mb=len(data) / MB, cap_mb=opts.max_bytes / MB)


def _inner_name(name: str, compression: str | None) -> str:
    """``x.csv.gz`` -> ``x.csv`` for format hints; other names unchanged."""
    if compression == "gzip" and name.lower().endswith(".gz"):
        return name[:-3]
    return name


def _check_codes_columns(frame: pd.DataFrame, name: str, opts: ReadOptions) -> None:
    columns = [str(c) for c in frame.columns]
    for col, code in opts.missing_codes:
        if col not in columns:
            shown = ", ".join(repr(c) for c in columns[:15]) + (" …" if len(columns) > 15 else "")
            raise fail("MISSING_CODE_UNKNOWN_COLUMN", value=code, column=col, name=name, columns=shown)


def _finish(
    owned: list[pd.DataFrame], *, name: str, fmt: TableFormat, opts: ReadOptions, base: dict
) -> tuple[pd.DataFrame, tuple[str, ...], ReadReport]:
    """The steps every format shares; ``base`` holds the format's own report fields.

    ``owned`` holds the parsed frame and is emptied: with the caller's
    reference gone, each step replaces the text columns it changes and the
    old ones are freed at once (part of the intake's memory bound). A text
    file's cells take :func:`.stacked.finish_stacked`, every step answered for
    all columns at once with the same decisions; a table that path does not
    read (per-column codes, a decimal comma, another format) takes the steps
    one column at a time.
    """
    _check_codes_columns(owned[0], name, opts)
    warnings: list = list(base.pop("warnings", ()))
    fast = finish_stacked(owned, name=name, opts=opts) if fmt == "csv" else None
    if fast is not None:
        report = ReadReport(missing_applied=fast.applied, missing_proposals=fast.proposals, stripped=fast.stripped,
                            conversions=fast.conversions, warnings=tuple(warnings) + fast.warnings, **base)
        return fast.frame, fast.dropped, report
    frame = owned.pop()
    frame, stripped = trim_cells(frame)
    frame, applied = apply_missing(frame, na_values=tuple(opts.na_values), missing_codes=tuple(opts.missing_codes))
    proposals = propose_missing(frame)
    release_freed_memory()
    conversions: tuple = ()
    if fmt in ("csv", "excel"):
        frame, conversions, typed_warnings = type_columns(frame, decimal=opts.decimal)
        warnings += typed_warnings
    if fmt == "excel":
        frame = frame.infer_objects()  # a number column whose codes became missing
    frame, dropped = check_table(frame, name=name, options=opts, codes_reported=True)
    report = ReadReport(
        missing_applied=applied,
        missing_proposals=tuple(p for p in proposals if p.column in frame.columns),
        stripped=stripped,
        conversions=conversions,
        warnings=tuple(warnings),
        **base,
    )
    return frame, dropped, report


def _text_base(cells: TextCells, name: str, compression: str | None) -> dict:
    warnings = []
    if cells.encoding_warning is not None:
        warnings.append(cells.encoding_warning)
    if cells.frame.shape[1] == 1 and cells.frame.shape[0] >= 1:
        warnings.append(note("READ_SINGLE_COLUMN", name=name))
    return dict(
        compression=compression,
        encoding_note=cells.encoding_note,
        delimiter_note=cells.delimiter_note,
        header=cells.has_header,
        header_note=cells.header_note,
        names=cells.names_source,
        warnings=tuple(warnings),
    )


def read_table(data: bytes, *, name: str, options: ReadOptions | None = None) -> LoadedTable:
    """Read an uploaded table (delimited text, Parquet or Excel, optionally gzipped) and check it.

    Parameters
    ----------
    data : bytes
        The raw file content.
    name : str
        The file name; only a hint (``.tsv`` means tab, ``.parquet``/``.xlsx``
        force those formats); text is recognised by content.
    options : ReadOptions, optional

    Returns
    -------
    LoadedTable
        With its :class:`ReadReport` (decisions and missing-code proposals).

    Raises
    ------
    AuditInputError
        With a declared code (``EMPTY_FILE``, ``FILE_TOO_LARGE``, ``NOT_A_TABLE``,
        ``DUPLICATE_COLUMNS``, ``ALL_MISSING_COLUMN``, ...).

    Examples
    --------
    >>> t = read_table(b"a;b\\n1;x\\n2;y\\n", name="t.csv")
    >>> t.delimiter, t.frame.shape
    (';', (2, 2))
    >>> t = read_table(b"39, State-gov, ?\\n50, Private, Sales\\n", name="adult.data")
    >>> list(t.frame.columns), t.report.header
    (['col_1', 'col_2', 'col_3'], False)
    >>> [(p.column, p.code, p.count) for p in t.report.missing_proposals]
    [('col_3', '?', 1)]
    """
    opts = options or ReadOptions()
    _size_checks(data, name, opts)
    raw = data
    data, compression = expand(data, name, opts)
    fmt = detect_format(data, _inner_name(name, compression))
    enc = delim = None
    if fmt == "csv":
        cells = read_text_cells(data, name, opts)
        enc, delim = cells.encoding, cells.delimiter
        owned, base = [cells.frame], _text_base(cells, name, compression)
        del cells
    elif fmt == "parquet":
        owned, base = [read_parquet(data, name, opts)], dict(compression=compression, names="file")
    else:
        book = read_excel(data, name, opts)
        owned = [book.frame]
        base = dict(compression=compression, header=book.has_header, header_note=book.header_note,
                    names=book.names_source, sheet=book.sheet, sheet_note=book.sheet_note, warnings=book.warnings,
                    sheets=tuple((s.name, s.n_rows, s.n_columns) for s in book.sheets))
        del book
    del data  # expanded text: not needed once parsed
    frame, dropped, report = _finish(owned, name=name, fmt=fmt, opts=opts, base=base)
    return LoadedTable(
        frame=frame,
        name=name,
        format=fmt,
        sha256=hashlib.sha256(raw).hexdigest(),
        n_bytes=len(raw),
        encoding=enc,
        delimiter=delim,
        dropped_columns=dropped,
        report=report,
    )


def _unique_column(columns: list[str], wanted: str) -> str:
    name, i = wanted, 2
    while name in columns:
        name, i = f"{wanted}_{i}", i + 1
    return name


def _same_columns(first: list[str], other: list[str], name: str, first_name: str) -> None:
    if other == first:
        return
    if len(other) != len(first):
        detail = f"it has {len(other)} columns, {first_name!r} has {len(first)}"
    else:
        missing = [c for c in first if c not in other]
        extra = [c for c in other if c not in first]
        if not missing and not extra:
            detail = "the same columns in another order"
        else:
            detail = f"columns {', '.join(map(repr, extra[:5]))} instead of {', '.join(map(repr, missing[:5]))}"
    raise fail("MULTI_FILE_COLUMNS", name=name, first=first_name, detail=detail)


def read_tables(
    files: Sequence[tuple[bytes, str]],
    *,
    options: ReadOptions | None = None,
    source_column: str = "source_file",
) -> LoadedTable:
    """Stack several delimited text files with the same columns into one table.

    Each file is read as text with the same options; the rows are stacked in
    the order given, and a column (``source_file``, or ``source_file_2`` if that
    name is taken) holds each row's file name, ready to be declared as a
    domain. Typing, missing codes and checks then run once on the stack, so
    a column is typed the same way in every file.

    Parameters
    ----------
    files : sequence of (bytes, str)
        ``(content, file name)`` pairs; one file gives :func:`read_table`'s result.
    options : ReadOptions, optional
    source_column : str

    Returns
    -------
    LoadedTable
        ``sha256`` covers every file's name and content, in order.

    Raises
    ------
    AuditInputError
        ``MULTI_FILE_COLUMNS`` naming the file whose columns differ from the
        first file's, ``MULTI_FILE_FORMAT`` for a file that is not text,
        ``MULTI_FILE_DUPLICATE``, and every :func:`read_table` refusal.
    """
    opts = options or ReadOptions()
    if len(files) == 1:
        return read_table(files[0][0], name=files[0][1], options=opts)
    if not files:
        raise fail("NO_COLUMNS", name="(no file)")
    seen: set[str] = set()
    parts: list[TextCells] = []
    digest = hashlib.sha256()
    total = 0
    budget = TextBudget(opts)
    for data, name in files:
        if name in seen:
            raise fail("MULTI_FILE_DUPLICATE", name=name)
        seen.add(name)
        _size_checks(data, name, opts)
        total += len(data)
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        expanded, compression = expand(data, name, opts)
        budget.take(len(expanded), name)
        fmt = detect_format(expanded, _inner_name(name, compression))
        if fmt != "csv":
            raise fail("MULTI_FILE_FORMAT", name=name, fmt={"parquet": "a Parquet file", "excel": "an Excel workbook"}[fmt])
        cells = read_text_cells(expanded, name, opts)
        if parts:
            _same_columns(list(parts[0].frame.columns), list(cells.frame.columns), name, files[0][1])
        parts.append(cells)
        check_rows(sum(len(p.frame) for p in parts), f"{files[0][1]} (+{len(parts) - 1} files)", opts)
    names = [n for _, n in files]
    column = _unique_column(list(parts[0].frame.columns), source_column)
    first = parts[0]
    base = _text_base(first, names[0], None)
    base["warnings"] += tuple(p.encoding_warning for p in parts[1:] if p.encoding_warning is not None)
    base.update(sources=tuple((n, len(p.frame)) for p, n in zip(parts, names, strict=True)), source_column=column)
    if any(p.has_header != first.has_header for p in parts):
        base["header_note"] = "First row: " + "; ".join(
            f"{n} {'header' if p.has_header else 'data'}" for p, n in zip(parts, names, strict=True)) + "."
    encodings = {p.encoding for p in parts}
    delimiters = {p.delimiter for p in parts}
    frames = [p.frame.assign(**{column: n}) for p, n in zip(parts, names, strict=True)]
    del parts, first, cells, expanded  # the stacked frame is then the only copy of the cells
    owned = [pd.concat(frames, ignore_index=True)]
    del frames
    label = f"{names[0]} (+{len(names) - 1} files)"
    frame, dropped, report = _finish(owned, name=label, fmt="csv", opts=opts, base=base)
    return LoadedTable(
        frame=frame,
        name=label,
        format="csv",
        sha256=digest.hexdigest(),
        n_bytes=total,
        encoding=encodings.pop() if len(encodings) == 1 else "mixed",
        delimiter=delimiters.pop() if len(delimiters) == 1 else "mixed",
        dropped_columns=dropped,
        report=report,
    )


def read_path(path: str | Path, *, options: ReadOptions | None = None) -> LoadedTable:
    """Read a table from disk; see :func:`read_table`."""
    p = Path(path)
    return read_table(p.read_bytes(), name=p.name, options=options)
