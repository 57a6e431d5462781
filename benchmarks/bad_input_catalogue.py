"""Print the declared message for each bad-input case of the foundation issue.

Run from the project root: .venv/bin/python -m benchmarks.bad_input_catalogue
"""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.intake import ReadOptions, read_table
from audit_core.errors import AuditInputError


def _xlsx_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("xl/worksheets/sheet1.xml", b"0" * 50_000_000)
    return buf.getvalue()


def _frame_csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


CASES = [
    ("empty file", lambda: read_table(b"", name="empty.csv")),
    ("unparseable Parquet", lambda: read_table(b"PAR1garbagePAR1", name="x.parquet")),
    ("unparseable Excel", lambda: read_table(b"PK\x03\x04garbage", name="x.xlsx")),
    ("duplicate column names", lambda: read_table(b"age,income,age\n1,2,3\n", name="dup.csv")),
    ("ragged row", lambda: read_table(b"a,b\n1,2\n3,4,5\n", name="ragged.csv")),
    ("all-missing column", lambda: read_table(b"a,b\n1,\n2,\n", name="blank.csv")),
    ("inf values", lambda: read_table(b"a,b\n1,inf\n2,3\n", name="inf.csv")),
    ("mixed types", lambda: read_table(
        b"income,z\n" + b"".join(f"{i},x\n".encode() for i in range(20)) + b"unknown,y\n", name="mixed.csv")),
    ("over the size cap", lambda: read_table(b"a\n" + b"1\n" * 600_000, name="big.csv",
                                             options=ReadOptions(max_bytes=1_000_000))),
    ("more than 10,000 columns", lambda: read_table(
        (",".join(f"c{i}" for i in range(10_001)) + "\n" + ",".join("1" * 10_001) + "\n").encode(), name="wide.csv")),
    ("decompression bomb (xlsx)", lambda: read_table(_xlsx_bomb(), name="bomb.xlsx",
                                                     options=ReadOptions(max_expansion_bytes=10_000_000))),
]

_toy = pd.DataFrame({"x": np.arange(30.0), "label": ["yes"] * 30, "inc": [np.nan] + list(range(29))})
DATASET_CASES = [
    ("target column does not exist", {"kind": "class", "name": "t", "column": "lable", "positive": "yes"}),
    ("single-class target", {"kind": "class", "name": "t", "column": "label", "positive": None}),
    ("target with missing values", {"kind": "threshold", "name": "rich", "column": "inc", "threshold": 10}),
    ("bad target expression", {"kind": "expression", "name": "e", "expression": "__import__('os')"}),
]


def main() -> None:
    for title, call in CASES:
        try:
            call()
            print(f"| {title} | (accepted) |")
        except AuditInputError as err:
            print(f"| {title} | `{err.code}`: {err.message} |")
    for title, target in DATASET_CASES:
        try:
            build_dataset(_toy, DatasetConfig(name="toy.csv", targets=(target,)))
            print(f"| {title} | (accepted) |")
        except AuditInputError as err:
            print(f"| {title} | `{err.code}`: {err.message} |")


if __name__ == "__main__":
    main()
