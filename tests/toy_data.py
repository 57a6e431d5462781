"""Shared toy data whose transformed values, baselines etc. are computed by hand.

Nothing here imports the code under test's outputs: every expected number is
written out with its arithmetic.
"""
from __future__ import annotations

import io
import math
import zipfile

import numpy as np
import pandas as pd

SQRT2 = math.sqrt(2.0)

# ---------------------------------------------------------------------------
# Preprocessing toy: one numeric column with a NaN, one 3-level categorical.
# ---------------------------------------------------------------------------
#: x = [1, NaN, 3, 5]; c = [b, a, c, a]
PRE_TOY = pd.DataFrame({"x": [1.0, np.nan, 3.0, 5.0], "c": ["b", "a", "c", "a"]})

# Hand computation, numeric part:
#   median of the observed x {1, 3, 5} = 3  ->  imputed x = [1, 3, 3, 5]
#   mean = (1 + 3 + 3 + 5) / 4 = 12 / 4 = 3
#   deviations = [-2, 0, 0, 2]; population variance = (4 + 0 + 0 + 4) / 4 = 2
#   std = sqrt(2)  ->  standardised x = [-2/sqrt2, 0, 0, 2/sqrt2] = [-sqrt2, 0, 0, sqrt2]
# Categorical part (levels sorted a, b, c):
#   b -> [0, 1, 0]; a -> [1, 0, 0]; c -> [0, 0, 1]; a -> [1, 0, 0]
# Missing indicator: only x has a missing value in training -> x__missing = [0, 1, 0, 0]
PRE_TOY_FEATURES = ("x", "c=a", "c=b", "c=c", "x__missing")
PRE_TOY_RAW = ("x", "c", "c", "c", "x")
PRE_TOY_EXPECTED = np.array(
    [
        [-SQRT2, 0.0, 1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 1.0, 0.0],
        [SQRT2, 1.0, 0.0, 0.0, 0.0],
    ]
)

# ---------------------------------------------------------------------------
# Baseline toy: group "c" has 3 one-hot columns, group "v" one continuous column
# with 25 distinct values (> 20, so it is continuous), group "d" one code column.
# ---------------------------------------------------------------------------


def baseline_toy() -> tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """X (25 rows) with columns [c=a, c=b, c=c, v, w]; features and groups.

    Rows 0..11 have pattern a=(1,0,0), rows 12..21 pattern b=(0,1,0),
    rows 22..24 pattern c=(0,0,1). v = row index (0..24), w = v * 10.
    Group "cv" = {c=a, c=b, c=c, v}; group "w" = {w}.
    """
    rows = []
    for i in range(25):
        if i < 12:
            pat = (1.0, 0.0, 0.0)
        elif i < 22:
            pat = (0.0, 1.0, 0.0)
        else:
            pat = (0.0, 0.0, 1.0)
        rows.append([*pat, float(i), 10.0 * i])
    X = np.array(rows)
    features = ("c=a", "c=b", "c=c", "v", "w")
    groups = ("cv", "cv", "cv", "cv", "w")
    return X, features, groups


# Hand computation for baseline_toy:
#   mean: c=a 12/25 = 0.48; c=b 10/25 = 0.4; c=c 3/25 = 0.12;
#         v = (0+...+24)/25 = 300/25 = 12; w = 120.
#   median: c=a: 13 zeros, 12 ones sorted -> 13th value (index 12) = 0;
#           c=b: 15 zeros -> 0; c=c: 0; v: 12; w: 120.
#   mode, group "cv": discrete coords are the three one-hots (2 distinct values each);
#         v has 25 distinct values -> continuous. Pattern counts: (1,0,0) x12,
#         (0,1,0) x10, (0,0,1) x3 -> modal (1,0,0). v = median of rows 0..11
#         = (5 + 6) / 2 = 5.5.
#   mode, group "w": only continuous -> median over all rows = 120.
BASELINE_TOY_MEAN = np.array([0.48, 0.4, 0.12, 12.0, 120.0])
BASELINE_TOY_MEDIAN = np.array([0.0, 0.0, 0.0, 12.0, 120.0])
BASELINE_TOY_MODE = np.array([1.0, 0.0, 0.0, 5.5, 120.0])


# ---------------------------------------------------------------------------
# Dataset toy: 8 rows, class + threshold targets and special columns.
# ---------------------------------------------------------------------------


def dataset_toy() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rid": [101, 102, 103, 104, 105, 106, 107, 108],
            "age": [25.0, 32.0, 47.0, 51.0, 62.0, 23.0, 36.0, 44.0],
            "colour": ["red", "blue", "red", "green", "blue", "red", "green", "blue"],
            "outcome": ["yes", "no", "no", "yes", "no", "yes", "no", "yes"],
            "income": [10.0, 55.0, 60.0, 20.0, 80.0, 5.0, 49.0, 50.0],
            "w": [1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 3.0],
            "year": [2019, 2019, 2019, 2019, 2023, 2023, 2023, 2023],
            "branch": ["A", "A", "B", "B", "A", "B", "A", "B"],
        }
    )


# ---------------------------------------------------------------------------
# Byte builders for intake tests
# ---------------------------------------------------------------------------


def parquet_bytes(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def excel_bytes(rows: list[list]) -> bytes:
    """An .xlsx whose first sheet holds ``rows`` verbatim (first row = header)."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def zip_bomb_bytes(member_size: int) -> bytes:
    """A small zip with one highly compressible member of ``member_size`` bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("xl/worksheets/sheet1.xml", b"0" * member_size)
    return buf.getvalue()
