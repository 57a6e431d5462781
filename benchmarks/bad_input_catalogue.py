"""Print the declared message (or the read report) for each bad-input case.

Run from the project root: .venv/bin/python -m benchmarks.bad_input_catalogue
"""
from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pandas as pd

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.intake import LoadedTable, ReadOptions, read_table, read_tables
from audit_core.errors import AuditInputError
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ModelSpec


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
    ("gzip file named .csv", lambda: read_table(gzip.compress(b"a,b\n1,x\n2,y\n"), name="g.csv")),
    ("gzip bomb named .csv", lambda: read_table(gzip.compress(b"a\n" + b"1\n" * 5_000_000), name="gb.csv",
                                                options=ReadOptions(max_expansion_bytes=1_000_000))),
    ("UTF-16 without a BOM", lambda: read_table("a,b\n1,é\n2,ü\n".encode("utf-16-le"), name="u.csv")),
    ("legacy .xls named .csv", lambda: read_table(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(64), name="x.csv")),
    ("headerless file (adult.data style)", lambda: read_table(
        b"39, State-gov, 77516, ?\n50, Private, 83311, Sales\n38, ?, 215646, Sales\n", name="adult.data")),
    ("empty first sheet, sheet 0 chosen", lambda: read_table(_two_sheets(), name="book.xlsx",
                                                             options=ReadOptions(sheet=0))),
    ("European CSV (decimal commas)", lambda: read_table(b"n;price\na;1,5\nb;2,25\n", name="eu.csv")),
    ("ambiguous '1,234'", lambda: read_table(b'a,b\n"1,234",x\n"12,500",y\n', name="amb.csv")),
    ("'NA' among categories", lambda: read_table(b"region,x\nEU,1\nNA,2\nAS,3\n", name="na.csv")),
    ("leading-zero keys", lambda: read_table(b"key,v\n00001,1\n00002,2\n", name="k.csv")),
    ("stacked files with other columns", lambda: read_tables([(b"x,y\n1,2\n", "a.csv"), (b"x,z\n1,2\n", "b.csv")])),
    ("column names: wrong count", lambda: read_table(b"1,2\n3,4\n", name="n.csv",
                                                      options=ReadOptions(column_names=("a", "b", "c")))),
]


def _two_sheets() -> bytes:
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as w:
        pd.DataFrame().to_excel(w, sheet_name="Cover", index=False)
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="Data", index=False)
    return buf.getvalue()


def _train(frame: pd.DataFrame, **cfg):
    return train_workspace(build_dataset(frame, DatasetConfig(name="t.csv", **cfg)),
                           spec=ModelSpec(kind="logistic_regression"))


_YES = ({"kind": "class", "name": "t", "column": "label", "positive": "yes"},)
_rng = np.random.default_rng(0)


def _one_positive() -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(300.0), "label": ["yes" if i == 7 else "no" for i in range(300)]})


def _sites() -> pd.DataFrame:
    site = np.where(np.arange(400) < 200, "A", "B")
    y = _rng.choice(["lo", "mid", "hi"], 400)
    y[(site == "A") & (y == "mid")] = "lo"
    return pd.DataFrame({"x": _rng.normal(size=400), "site": site, "y": y})


def _zero_weights() -> pd.DataFrame:
    label = _rng.choice(["yes", "no"], 400)
    return pd.DataFrame({"x": _rng.normal(size=400), "label": label, "w": np.where(label == "yes", 0.0, 1.0)})


def _levels() -> pd.DataFrame:
    zips = np.array([f"Z{i}" for i in range(50_000)])[_rng.integers(0, 50_000, 200_000)]
    return pd.DataFrame({"zip": zips, "x": _rng.normal(size=200_000), "label": _rng.choice(["yes", "no"], 200_000)})


def _rare() -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(2_000) % 97.0, "label": ["yes" if i % 100 == 0 else "no" for i in range(2_000)]})


TRAINING_CASES = [
    ("one positive among 300 rows", lambda: _train(_one_positive(), targets=_YES)),
    ("3-class target, middle class absent from the source", lambda: _train(
        _sites(), targets=({"kind": "class", "name": "grade", "column": "y"},), domain_column="site",
        source_domain="A", target_domain="B")),
    ("zero weight on every positive", lambda: _train(_zero_weights(), targets=_YES, weight_column="w")),
    ("categorical with 50,000 levels", lambda: _train(_levels(), targets=_YES, roles={"zip": "categorical"})),
    ("5 held-out positives", lambda: _train(_rare(), targets=_YES)),
]

_toy = pd.DataFrame({"x": np.arange(30.0), "label": ["yes"] * 30, "inc": [np.nan] + list(range(29))})
DATASET_CASES = [
    ("target column does not exist", {"kind": "class", "name": "t", "column": "lable", "positive": "yes"}),
    ("single-class target", {"kind": "class", "name": "t", "column": "label", "positive": None}),
    ("target with missing values", {"kind": "threshold", "name": "rich", "column": "inc", "threshold": 10}),
    ("bad target expression", {"kind": "expression", "name": "e", "expression": "__import__('os')"}),
]


def _accepted(result) -> str:
    if isinstance(result, LoadedTable):
        notes = [line for line in result.report.lines() if not line.startswith(("Encoding utf-8.", "Delimiter: comma"))]
        notes += [f"`{code}`: {text}" for code, text in result.report.warnings]
        return "read: " + " ".join(notes)
    warnings = getattr(result, "warnings", ())
    return "trained" + "".join(f"; `{code}`: {text}" for code, text in warnings)


def main() -> None:
    for title, call in CASES + TRAINING_CASES:
        try:
            print(f"| {title} | {_accepted(call())} |")
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
