"""The intake's decisions frozen as fingerprints, for ``tests/test_intake_equivalence.py``.

Each case (every file of ``../shared/datasets`` read as shipped, and a corpus of
generated fixtures covering every decision: delimiter, encoding, header,
missing codes, types, keys, leading zeros, decimal commas, stacks) is read
with several read options; the outcome is fingerprinted:

* a refusal: its code and message;
* a table: shape, column names, each column's dtype and a hash of its cells
  (``pandas.util.hash_pandas_object``, missing cells included), the
  delimiter, encoding, format, dropped columns, and the whole read report
  (every note, warning, missing code applied and proposal) as JSON.

``tests/intake_golden.json`` holds the fingerprints computed by the intake
before its rewrite (commit 1a79cd2); the equivalence test recomputes them with
today's code and compares. Regenerate (only for a new dataset file, or a
deliberate change of a decision, said in the commit)::

    python tests/intake_golden.py --write
"""
from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audit_core.data.intake import ReadOptions, read_table, read_tables  # noqa: E402
from audit_core.errors import AuditInputError  # noqa: E402
from tests.real_data import DATASETS  # noqa: E402

GOLDEN = Path(__file__).with_name("intake_golden.json")
#: Read options tried on every case (``accept`` = every proposed missing code accepted, as the page's one click).
VARIANTS: dict[str, dict] = {
    "default": {},
    "accept": {},
    "decimal_comma": {"decimal": ","},
    "decimal_dot": {"decimal": "."},
    "no_header": {"header": "none"},
}
#: Variants read for the dataset files (the others only for the fixtures, which are small).
DATASET_VARIANTS = ("default", "accept")


def dataset_files() -> list[Path]:
    """Every file under the datasets folder (documentation included: it is read, or refused, as shipped)."""
    return sorted(p for p in DATASETS.rglob("*") if p.is_file())


def _frame_fingerprint(frame: pd.DataFrame) -> dict:
    cells = []
    for col in frame.columns:
        s = frame[col]
        digest = hashlib.sha256(pd.util.hash_pandas_object(s, index=False).to_numpy().tobytes())
        # The Python types of object cells, and where the missing cells are, beside the values' hash.
        digest.update(s.isna().to_numpy().tobytes())
        if s.dtype == object:
            digest.update(",".join(sorted({type(v).__name__ for v in s.tolist()})).encode())
        cells.append(f"{s.dtype}|{digest.hexdigest()[:16]}")
    out: dict = {"shape": list(frame.shape), "index": f"{type(frame.index).__name__}{frame.index[:1].tolist()}"}
    if frame.shape[1] <= 60:
        out["columns"] = [str(c) for c in frame.columns]
        out["cells"] = cells
    else:
        out["columns"] = hashlib.sha256(json.dumps([str(c) for c in frame.columns]).encode()).hexdigest()[:16]
        out["cells"] = hashlib.sha256("\n".join(cells).encode()).hexdigest()[:16]
    return out


def _report(report) -> object:
    text = json.dumps(dataclasses.asdict(report), sort_keys=True, default=str)
    return json.loads(text) if len(text) <= 6000 else hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(read: Callable[[ReadOptions], object], variant: str) -> dict:
    """Read with ``variant``'s options and fingerprint the outcome."""
    kwargs = dict(VARIANTS[variant])
    try:
        if variant == "accept":
            first = read(ReadOptions())
            kwargs["missing_codes"] = tuple(p.key for p in first.report.missing_proposals)
            if not kwargs["missing_codes"]:
                return {"same_as": "default"}
        t = read(ReadOptions(**kwargs))
    except AuditInputError as exc:
        return {"refused": exc.code, "message": exc.message}
    out = {
        "format": t.format, "encoding": t.encoding, "delimiter": t.delimiter, "n_bytes": t.n_bytes,
        "sha256": t.sha256[:16], "dropped": list(t.dropped_columns), "frame": _frame_fingerprint(t.frame),
        "report": _report(t.report),
    }
    if t.format == "excel":  # a workbook written here holds the time it was written: its bytes vary
        del out["n_bytes"], out["sha256"]
    return out


# ---------------------------------------------------------------------------
# The fixture corpus: every decision of the intake, in small generated files
# ---------------------------------------------------------------------------
def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def _xlsx(frames: dict[str, pd.DataFrame], header: bool = True) -> bytes:
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as w:
        for sheet, frame in frames.items():
            frame.to_excel(w, sheet_name=sheet, index=False, header=header)
    return buf.getvalue()


def _mixed(n_rows: int, seed: int) -> bytes:
    from benchmarks.bench_intake import mixed_bytes

    return mixed_bytes(n_rows, seed=seed)


def _wide(n_columns: int) -> bytes:
    from benchmarks.bench_intake import wide_bytes

    return wide_bytes(n_columns)


CSV = "id,amount,label\n" + "".join(f"{i:05d},{i * 1.5},{'yes' if i % 3 else 'no'}\n" for i in range(1, 41))
ADULTISH = "".join(f"{20 + i % 50}, {'State-gov' if i % 4 else '?'}, {1000 + i}, {'<=50K' if i % 3 else '>50K'}\n"
                   for i in range(60))

#: name -> (file name, bytes maker). Stacks are named ``stack:`` and their maker returns several files.
FIXTURES: dict[str, tuple[str, Callable[[], object]]] = {
    "comma": ("t.csv", lambda: CSV.encode()),
    "semicolon": ("t.csv", lambda: CSV.replace(",", ";").encode()),
    "tab": ("t.txt", lambda: CSV.replace(",", "\t").encode()),
    "tsv_suffix": ("t.tsv", lambda: CSV.replace(",", "\t").encode()),
    "pipe": ("t.dat", lambda: CSV.replace(",", "|").encode()),
    "whitespace_runs": ("t.asc", lambda: CSV.replace(",", "   ").encode()),
    "whitespace_tabs_mixed": ("t.data", lambda: "".join(
        f"{i}\t {i * 2}  {'a' if i % 2 else 'b'}\n" for i in range(30)).encode()),
    "single_column": ("t.csv", lambda: ("word\n" + "".join(f"w{i}\n" for i in range(20))).encode()),
    "adult_like_headerless": ("adult.data", lambda: ADULTISH.encode()),
    "header_over_numbers": ("t.csv", lambda: ("laufzeit,hoehe\n" + "".join(
        f"{i},{i * 100}\n" for i in range(1, 30))).encode()),
    "text_only_header": ("t.csv", lambda: b"a,b\nx,y\nz,w\n"),
    "header_only": ("t.csv", lambda: b"a,b,c\n"),
    "first_row_numbers": ("t.csv", lambda: "".join(f"{i},{i * 3}\n" for i in range(10)).encode()),
    "decimal_comma": ("t.csv", lambda: ("a;b\n" + "".join(f"{i},5;{i}\n" for i in range(20))).encode()),
    "decimal_comma_thousands": ("t.csv", lambda: b"a;b\n1.234,5;x\n2.000,25;y\n-0,5;z\n"),
    "thousands": ("t.csv", lambda: b'a,b\n"12,345.6",x\n"1,000",y\n"7.5",z\n'),
    "ambiguous_comma": ("t.csv", lambda: b'a,b\n"1,234",x\n"5,678",y\n'),
    "ambiguous_settled": ("t.csv", lambda: b'a,b,c\n"1,234","1,5",x\n"5,678","2,25",y\n'),
    "ambiguous_settled_thousands": ("t.csv", lambda: b'a,b,c\n"1,234","12,345.5",x\n"5,678","1,000.25",y\n'),
    "leading_zeros": ("t.csv", lambda: b"zip,n\n00123,1\n04567,2\n12345,3\n"),
    "leading_zero_with_missing": ("t.csv", lambda: b"zip,n\n00123,1\n,2\n12345,3\n"),
    "long_digits": ("t.csv", lambda: b"card,n\n1234567890123456,1\n2234567890123456,2\n"),
    "signed_key": ("t.csv", lambda: b"k,n\n-0012,1\n+0034,2\n"),
    "booleans": ("t.csv", lambda: b"f,g\nTrue,true\nFalse,FALSE\nTRUE,\n"),
    "bool_with_code": ("t.csv", lambda: b"f,g\nTrue,1\nNA,2\nFalse,3\n"),
    "numbers_with_codes": ("t.csv", lambda: ("a,b,c\n" + "".join(
        f"{'?' if i % 7 == 0 else i},{'NA' if i % 5 == 0 else i / 4},{'-' if i % 3 == 0 else 'x'}\n"
        for i in range(40))).encode()),
    "text_with_NA_category": ("t.csv", lambda: b"country,n\nNA,1\nUS,2\nFR,3\nNA,4\n"),
    "all_codes": ("t.csv", lambda: ("c,n\n" + "".join(f"{code},{i}\n" for i, code in enumerate(
        ["?", "NA", "N/A", "n/a", "na", "-", ".", "NaN", "nan", "NULL", "null", "None", "#N/A", "x"]))).encode()),
    "padding": ("t.csv", lambda: b"a,b\n yes ,1\nyes,2\n  no,3\nno  , 4\n"),
    "blank_cells": ("t.csv", lambda: b"a,b,c\n1,,x\n,2,\n3,4,y\n"),
    "blank_lines": ("t.csv", lambda: b"a,b\n1,2\n\n3,4\n   \n5,6\n"),
    "whitespace_cells_missing": ("t.csv", lambda: b"a,b\n1,  \n2,x\n"),
    "mixed_refused": ("t.csv", lambda: ("a\n" + "".join(f"{i}\n" for i in range(20)) + "oops\n").encode()),
    "mostly_text_labels": ("t.csv", lambda: b"a\n1\n2\nother\nmore\nthing\n"),
    "quoted": ("t.csv", lambda: b'id,a,b\n1,"a, 1","x ""q"" 1"\n2,"b, 2","y"\n'),
    "quoted_newline": ("t.csv", lambda: b'id,a\n1,"two\nlines"\n2,"one"\n'),
    "crlf": ("t.csv", lambda: CSV.replace("\n", "\r\n").encode()),
    "old_mac_cr": ("t.csv", lambda: b"a,b\r1,2\r3,4\r"),
    "bom_utf8": ("t.csv", lambda: b"\xef\xbb\xbf" + "name,n\nMüller,1\nCafé,2\n".encode()),
    "utf16_bom": ("t.csv", lambda: "name,n\nMüller,1\nCafé,2\n".encode("utf-16")),
    "utf16le_no_bom": ("t.csv", lambda: CSV.replace("yes", "oui-é").encode("utf-16-le")),
    "latin1": ("t.csv", lambda: "name,score\nMüller,1\nSão Paulo,2\nCafé à la carte,3\n".encode("latin-1")),
    "cp1251": ("t.csv", lambda: "город,n\nМосква,1\nКиев,2\nМинск,3\n".encode("cp1251")),
    "gzip": ("t.csv.gz", lambda: gzip.compress(CSV.encode(), mtime=0)),
    "ragged": ("t.csv", lambda: b"a,b\n1,2\n3,4,5\n"),
    "ragged_short": ("t.csv", lambda: b"a,b,c\n1,2,3\n4,5\n"),
    "one_extra_everywhere": ("t.csv", lambda: b"a,b\n1,2,3\n4,5,6\n"),
    "unterminated_quote": ("t.csv", lambda: b'a,b\n1,"x\n2,y\n'),
    "duplicate_columns": ("t.csv", lambda: b"a,a\n1,2\n"),
    "duplicate_after_strip": ("t.csv", lambda: b"a, a\n1,2\n"),
    "blank_column_name": ("t.csv", lambda: b"a,,c\n1,2,3\n"),
    "all_missing_column": ("t.csv", lambda: b"a,b\n1,\n2,\n"),
    "inf_values": ("t.csv", lambda: b"a,b\n1,inf\n2,3\n"),
    "nan_spelling_numbers": ("t.csv", lambda: b"a,b\n1,nan\n2,3\n4,5\n"),
    "exponents": ("t.csv", lambda: b"a,b\n1e3,x\n-2.5E-2,y\n.5,z\n"),
    "big_ints": ("t.csv", lambda: b"a,b\n999999999999999,x\n-999999999999999,y\n"),
    "whole_and_missing": ("t.csv", lambda: b"a,b\n1,x\n,y\n3,z\n"),
    "empty": ("t.csv", lambda: b""),
    "whitespace_only": ("t.csv", lambda: b"  \n\n  \n"),
    "json": ("t.csv", lambda: b'[{"a": 1}]'),
    "pdf": ("t.csv", lambda: b"%PDF-1.4 ..."),
    "parquet": ("t.parquet", lambda: _parquet(pd.DataFrame({
        "a": [1, 2, 3], "b": [" x", "y ", "?"], "c": [1.5, np.nan, 3.0], "d": ["", "NA", "z"]}))),
    "parquet_inf": ("t.parquet", lambda: _parquet(pd.DataFrame({"a": [1.0, np.inf]}))),
    "xlsx": ("t.xlsx", lambda: _xlsx({"S": pd.DataFrame({
        "a": [1, 2, 3], "b": [" x", "y ", "?"], "c": ["1,5", "2,5", "3"], "d": ["00012", "00034", "5"]})})),
    "xlsx_codes_in_numbers": ("t.xlsx", lambda: _xlsx({"S": pd.DataFrame({"a": [1, "?", 3], "b": ["x", "y", "z"]})})),
    "xlsx_empty_first_sheet": ("t.xlsx", lambda: _xlsx({"E": pd.DataFrame(), "D": pd.DataFrame({"a": [1, 2]})})),
    "xlsx_headerless": ("t.xlsx", lambda: _xlsx({"S": pd.DataFrame({"a": [1, 2, 3], "b": [4, 5, 6]})},
                                                header=False)),
    "mixed_3000": ("mixed.csv", lambda: _mixed(3000, seed=1)),
    "mixed_3000_semicolon": ("mixed.csv", lambda: _mixed(3000, seed=2).replace(b",", b";")),
    "wide_2000": ("wide.csv", lambda: _wide(2000)),
    "stack:two": ("", lambda: [(CSV.encode(), "a.csv"), (CSV.replace("yes", "?").encode(), "b.csv")]),
    "stack:headers_differ": ("", lambda: [(CSV.encode(), "a.csv"),
                                          ("".join(CSV.splitlines(keepends=True)[1:]).encode(), "b.csv")]),
    "stack:columns_differ": ("", lambda: [(CSV.encode(), "a.csv"), (b"x,y\n1,2\n", "b.csv")]),
}


def fixture_reader(case: str) -> Callable[[ReadOptions], object]:
    name, make = FIXTURES[case]
    data = make()
    if case.startswith("stack:"):
        return lambda opts: read_tables(data, options=opts)  # type: ignore[arg-type]
    return lambda opts: read_table(data, name=name, options=opts)  # type: ignore[arg-type]


def dataset_reader(path: Path) -> Callable[[ReadOptions], object]:
    data = path.read_bytes()
    return lambda opts: read_table(data, name=path.name, options=opts)


def compute() -> dict:
    """Every fingerprint of the corpus, with the code in use."""
    out: dict = {"datasets": {}, "fixtures": {}}
    for path in dataset_files():
        read = dataset_reader(path)
        out["datasets"][path.relative_to(DATASETS).as_posix()] = {v: fingerprint(read, v) for v in DATASET_VARIANTS}
    for case in FIXTURES:
        read = fixture_reader(case)
        out["fixtures"][case] = {v: fingerprint(read, v) for v in VARIANTS}
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(__doc__)
    GOLDEN.write_text(json.dumps(compute(), indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {GOLDEN}")
