"""Excel (.xlsx) through openpyxl: no macros or formulas run; the zip's expansion is capped first.

A workbook may hold several sheets: :func:`list_sheets` names them with
their sizes, and the reader takes the sheet chosen in the read options or,
by default, the first sheet that has data (saying which).
"""
from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

import pandas as pd

from audit_core.errors import fail

from .checks import check_expansion
from .delimited import column_names
from .header import decide_header
from .options import ReadOptions

__all__ = ["SheetInfo", "ExcelRead", "list_sheets", "read_excel"]


@dataclass(frozen=True)
class SheetInfo:
    """One sheet of a workbook: its name and the size of its used cells."""

    name: str
    n_rows: int
    n_columns: int

    @property
    def empty(self) -> bool:
        return self.n_rows == 0 or self.n_columns == 0


@dataclass(frozen=True)
class ExcelRead:
    """A sheet read with its header decision; ``frame`` cells keep their Excel types."""

    frame: pd.DataFrame
    sheet: str
    sheets: tuple[SheetInfo, ...]
    has_header: bool
    names_source: str
    header_note: str


def _all_sheets(data: bytes, name: str, opts: ReadOptions) -> dict[str, pd.DataFrame]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            expanded = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc)) from None
    check_expansion(expanded, len(data), name, opts)
    try:
        sheets = pd.read_excel(io.BytesIO(data), sheet_name=None, engine="openpyxl", header=None)
    except Exception as exc:  # openpyxl raises many unrelated types on bad files
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc).strip()[:200]) from None
    # Rows and columns with no value at all carry nothing (Excel keeps formatted empty cells).
    return {str(k): v.dropna(how="all").dropna(axis=1, how="all") for k, v in sheets.items()}


def list_sheets(data: bytes, *, name: str, options: ReadOptions | None = None) -> tuple[SheetInfo, ...]:
    """The sheets of an .xlsx workbook, in order, with their used sizes.

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
    sheets = _all_sheets(data, name, options or ReadOptions())
    return tuple(SheetInfo(k, int(v.shape[0]), int(v.shape[1])) for k, v in sheets.items())


def _shown(infos: list[SheetInfo]) -> str:
    return ", ".join(f"{s.name!r} ({s.n_rows:,} rows × {s.n_columns:,} columns)" for s in infos) or "none"


def _pick(sheets: dict[str, pd.DataFrame], infos: tuple[SheetInfo, ...], name: str, opts: ReadOptions) -> str:
    with_data = [s for s in infos if not s.empty]
    names = [s.name for s in infos]
    if opts.sheet is None:
        if not with_data:
            raise fail("EXCEL_ALL_EMPTY", name=name, sheets=", ".join(repr(n) for n in names))
        return with_data[0].name
    if isinstance(opts.sheet, int) and not isinstance(opts.sheet, bool):
        if not 0 <= opts.sheet < len(names):
            raise fail("EXCEL_NO_SHEET", name=name, sheet=opts.sheet, sheets=", ".join(repr(n) for n in names))
        chosen = names[opts.sheet]
    elif str(opts.sheet) in sheets:
        chosen = str(opts.sheet)
    else:
        raise fail("EXCEL_NO_SHEET", name=name, sheet=opts.sheet, sheets=", ".join(repr(n) for n in names))
    if infos[names.index(chosen)].empty:
        if not with_data:
            raise fail("EXCEL_ALL_EMPTY", name=name, sheets=", ".join(repr(n) for n in names))
        raise fail("EXCEL_SHEET_EMPTY", name=name, sheet=chosen, sheets=_shown(with_data))
    return chosen


def _cell_text(v: object) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def read_excel(data: bytes, name: str, opts: ReadOptions) -> ExcelRead:
    """Read one sheet: the chosen one, or the first with data."""
    sheets = _all_sheets(data, name, opts)
    infos = tuple(SheetInfo(k, int(v.shape[0]), int(v.shape[1])) for k, v in sheets.items())
    chosen = _pick(sheets, infos, name, opts)
    grid = sheets[chosen].reset_index(drop=True)
    rows = [[_cell_text(v) for v in row] for row in grid.head(200).itertuples(index=False)]
    has_header, header_note = decide_header(rows, opts.header)
    names, source = column_names(rows[0], has_header, opts, name)
    body = grid.iloc[1:] if has_header else grid
    body = body.reset_index(drop=True)
    body.columns = names
    # Re-infer dtypes the way a CSV would read, column by column.
    return ExcelRead(frame=body.infer_objects(), sheet=chosen, sheets=infos, has_header=has_header,
                     names_source=source, header_note=header_note)
