"""Excel (.xlsx) through openpyxl: no macros or formulas run; the zip's expansion is capped first.

A workbook may hold several sheets: :func:`list_sheets` names them with
their sizes, and the reader takes the sheet chosen in the read options or,
by default, the first sheet that holds a table (saying which): a header and
at least one row, in at least two columns when any sheet has them, so that a
cover sheet with a one-cell note is passed over.

Cells are read as openpyxl stores them (numbers, text, dates, booleans; a
formula's cached value), and nothing else: no list of NA spellings turns
``"NA"`` into a missing value here (the common steps propose such codes).
Merged cells are filled from their top-left value, which is what Excel
shows across the range; the read report names every filled range
(``EXCEL_MERGED``). Rows are counted against the row cap while the sheet is
read (:mod:`.bounded`).
"""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field

import pandas as pd

from audit_core.errors import excerpt, fail, register_messages

from .bounded import check_expansion, check_rows, row_limit
from .delimited import column_names
from .header import decide_header
from .options import ReadOptions
from .report import note

__all__ = ["SheetInfo", "ExcelRead", "list_sheets", "read_excel"]

register_messages(
    {
        "EXCEL_MERGED": (
            "Sheet {sheet!r}: {n_ranges} merged range(s) were filled from their top-left value, as Excel shows "
            "them: {ranges}. Before, only the top-left cell had a value and the rest were missing. If a range "
            "should not repeat its value, unmerge it in Excel."
        ),
    }
)

#: Merged ranges named in one warning.
_SHOWN_RANGES = 10


@dataclass(frozen=True)
class SheetInfo:
    """One sheet of a workbook: its name and the size of its used cells."""

    name: str
    n_rows: int
    n_columns: int

    @property
    def empty(self) -> bool:
        return self.n_rows == 0 or self.n_columns == 0

    @property
    def table(self) -> bool:
        """A header and at least one row."""
        return self.n_rows >= 2 and self.n_columns >= 1


@dataclass(frozen=True)
class ExcelRead:
    """A sheet read with its header decision; ``frame`` cells keep their Excel types."""

    frame: pd.DataFrame
    sheet: str
    sheets: tuple[SheetInfo, ...]
    has_header: bool
    names_source: str
    header_note: str
    sheet_note: str = ""
    warnings: tuple[tuple[str, str], ...] = field(default=())


@dataclass
class _Sheet:
    """One sheet parsed: its used cells (empty rows and columns dropped) and the merged ranges filled."""

    info: SheetInfo
    grid: pd.DataFrame
    filled: list[tuple[str, object]]
    complete: bool  # False when reading stopped past the row cap


def _open(data: bytes, name: str, opts: ReadOptions):
    from openpyxl import load_workbook

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            expanded = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc)) from None
    check_expansion(expanded, len(data), name, opts)
    try:
        return load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises many unrelated types on bad files
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc).strip()[:200]) from None


def _value(cell: dict) -> object:
    value = cell["value"]
    if cell.get("data_type") == "e" or value == "":  # an error (#DIV/0!, #N/A) or an empty text has no value
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # Excel stores every number as a float
    return value


def _fill_merged(rows: dict[int, dict[int, object]], refs: list[str]) -> list[tuple[str, object]]:
    """Give every cell of a merged range its top-left value; the ranges filled and their values."""
    from openpyxl.utils.cell import range_boundaries

    filled = []
    for ref in refs:
        min_col, min_row, max_col, max_row = range_boundaries(ref)
        top_left = rows.get(min_row, {}).get(min_col)
        if top_left is None:
            continue
        for r in range(min_row, max_row + 1):
            target = rows.setdefault(r, {})
            for c in range(min_col, max_col + 1):
                target.setdefault(c, top_left)
        filled.append((ref, top_left))
    return filled


def _parse(book, ws, name: str, opts: ReadOptions) -> _Sheet:
    """Read one worksheet in one pass: its cells, its merged ranges (filled) and its used size.

    openpyxl's read-only sheets do not expose merged ranges, so the sheet's
    XML is walked with openpyxl's own parser, as its read-only sheet does;
    the parser records the ranges after the cells. Reading stops one row past
    the row cap (the header aside).
    """
    from openpyxl.worksheet._reader import WorkSheetParser

    rows: dict[int, dict[int, object]] = {}
    refs: list[str] = []
    complete = True
    try:
        with ws._get_source() as src:
            parser = WorkSheetParser(src, ws._shared_strings, data_only=True, epoch=book.epoch,
                                     date_formats=book._date_formats, timedelta_formats=book._timedelta_formats)
            for idx, cells in parser.parse():
                values = {c["column"]: v for c in cells if (v := _value(c)) is not None}
                if values:
                    rows[idx] = values
                    if len(rows) > row_limit(opts):  # the header and one row past the cap
                        complete = False
                        break
            if complete and parser.merged_cells is not None:
                refs = [str(m.ref) for m in parser.merged_cells.mergeCell]
    except Exception as exc:  # noqa: BLE001 - a damaged sheet
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc).strip()[:200]) from None
    filled = _fill_merged(rows, refs)
    columns = sorted({c for values in rows.values() for c in values})
    grid = pd.DataFrame([[values.get(c) for c in columns] for _, values in sorted(rows.items())],
                        columns=range(len(columns)), dtype=object)
    return _Sheet(SheetInfo(str(ws.title), len(grid), len(columns)), grid, filled, complete)


def _sheets(data: bytes, name: str, opts: ReadOptions) -> list[_Sheet]:
    """Every worksheet of the workbook, parsed, in order."""
    book = _open(data, name, opts)
    try:
        return [_parse(book, ws, name, opts) for ws in book.worksheets]
    finally:
        book.close()


def list_sheets(data: bytes, *, name: str, options: ReadOptions | None = None) -> tuple[SheetInfo, ...]:
    """The sheets of an .xlsx workbook, in order, with their used sizes (merged ranges filled).

    Examples
    --------
    >>> import io, pandas as pd
    >>> buf = io.BytesIO()
    >>> with pd.ExcelWriter(buf, engine="openpyxl") as w:
    ...     pd.DataFrame().to_excel(w, sheet_name="Cover", index=False)
    ...     pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="Data", index=False)
    >>> [(s.name, s.n_rows, s.n_columns) for s in list_sheets(buf.getvalue(), name="b.xlsx")]
    [('Cover', 0, 0), ('Data', 3, 1)]
    """
    return tuple(s.info for s in _sheets(data, name, options or ReadOptions()))


def _shown(infos: list[SheetInfo]) -> str:
    return ", ".join(f"{s.name!r} ({s.n_rows:,} rows × {s.n_columns:,} columns)" for s in infos) or "none"


def _first_table(infos: list[SheetInfo], name: str) -> tuple[str, str]:
    """The sheet read by default, and why: the first with a table, preferring tables of two columns or more."""
    names = [s.name for s in infos]
    tables = [s for s in infos if s.table]
    wide = [s for s in tables if s.n_columns >= 2]
    if wide:
        chosen, why = wide[0], "the first sheet with a table (a header and rows, in two columns or more)"
    elif tables:
        chosen, why = tables[0], "the first sheet with a table (a header and rows)"
    else:
        with_data = [s for s in infos if not s.empty]
        if not with_data:
            raise fail("EXCEL_ALL_EMPTY", name=name, sheets=", ".join(repr(n) for n in names))
        chosen, why = with_data[0], "the first sheet with data; no sheet has a header and rows"
    skipped = [s for s in infos[: names.index(chosen.name)] if not s.empty]
    if skipped:
        why += "; passed over: " + ", ".join(f"{s.name!r} ({s.n_rows:,} × {s.n_columns:,})" for s in skipped)
    return chosen.name, why


def _pick(infos: list[SheetInfo], name: str, opts: ReadOptions) -> tuple[str, str]:
    names = [s.name for s in infos]
    if opts.sheet is None:
        return _first_table(infos, name)
    if isinstance(opts.sheet, int) and not isinstance(opts.sheet, bool):
        if not 0 <= opts.sheet < len(names):
            raise fail("EXCEL_NO_SHEET", name=name, sheet=opts.sheet, sheets=", ".join(repr(n) for n in names))
        chosen = names[opts.sheet]
    elif str(opts.sheet) in names:
        chosen = str(opts.sheet)
    else:
        raise fail("EXCEL_NO_SHEET", name=name, sheet=opts.sheet, sheets=", ".join(repr(n) for n in names))
    if infos[names.index(chosen)].empty:
        with_data = [s for s in infos if not s.empty]
        if not with_data:
            raise fail("EXCEL_ALL_EMPTY", name=name, sheets=", ".join(repr(n) for n in names))
        raise fail("EXCEL_SHEET_EMPTY", name=name, sheet=chosen, sheets=_shown(with_data))
    return chosen, "as chosen in Read options"


def _cell_text(v: object) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return ""
    return str(v).strip()


def _merged_warning(sheet: _Sheet) -> tuple[str, str]:
    shown = [f"{ref} ({excerpt(value)})" for ref, value in sheet.filled[:_SHOWN_RANGES]]
    more = len(sheet.filled) - _SHOWN_RANGES
    ranges = ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")
    return note("EXCEL_MERGED", sheet=sheet.info.name, n_ranges=f"{len(sheet.filled):,}", ranges=ranges)


def read_excel(data: bytes, name: str, opts: ReadOptions) -> ExcelRead:
    """Read one sheet: the chosen one, or the first with a table."""
    sheets = _sheets(data, name, opts)
    infos = [s.info for s in sheets]
    chosen, why = _pick(infos, name, opts)
    sheet = sheets[[s.name for s in infos].index(chosen)]
    del sheets
    if not sheet.complete:
        check_rows(sheet.info.n_rows - 1, name, opts)
    grid = sheet.grid
    rows = [[_cell_text(v) for v in row] for row in grid.head(200).itertuples(index=False)]
    has_header, header_note = decide_header(rows, opts.header)
    names, source = column_names(rows[0], has_header, opts, name)
    body = grid.iloc[1:] if has_header else grid
    body = body.reset_index(drop=True)
    body.columns = names
    # Re-infer dtypes the way a CSV would read, column by column.
    return ExcelRead(frame=body.infer_objects(), sheet=chosen, sheets=tuple(infos), has_header=has_header,
                     names_source=source, header_note=header_note, sheet_note=why,
                     warnings=(_merged_warning(sheet),) if sheet.filled else ())
