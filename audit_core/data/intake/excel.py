"""Excel (.xlsx) through openpyxl: no macros or formulas run; the zip's expansion is capped first."""
from __future__ import annotations

import io
import zipfile

import pandas as pd

from audit_core.errors import fail

from .checks import check_expansion, check_header
from .options import ReadOptions

__all__ = ["read_excel"]


def read_excel(data: bytes, name: str, opts: ReadOptions) -> pd.DataFrame:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            expanded = sum(info.file_size for info in zf.infolist())
    except zipfile.BadZipFile as exc:
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc)) from None
    check_expansion(expanded, len(data), name, opts)
    try:
        frame = pd.read_excel(io.BytesIO(data), sheet_name=opts.sheet, engine="openpyxl", header=None)
    except Exception as exc:  # openpyxl raises many unrelated types on bad files
        raise fail("UNPARSEABLE", name=name, fmt="Excel (.xlsx)", detail=str(exc).strip()[:200]) from None
    if frame.shape[0] == 0:
        raise fail("NO_COLUMNS", name=name)
    header = ["" if pd.isna(v) else str(v).strip() for v in frame.iloc[0].tolist()]
    check_header(header, name, opts.max_columns)
    body = frame.iloc[1:].reset_index(drop=True)
    body.columns = header
    # Re-infer dtypes the way a CSV would read, column by column.
    return body.infer_objects()
