"""A bounded intake: gzip stopped at the cap, rows counted while read, peak memory within the declared multiple.

Before: the row cap was checked after the whole file was parsed, so a 0.26 MB
gzip upload expanding to 60 MB of rows peaked at 1,127 MB above the memory in
use before the read, and a 1.05 MB one expanding to 240 MB at 4,370 MB
(``benchmarks/intake_memory.py --root <old checkout>``); the expansion cap
(2,000 MB) let a 9 MB upload ask for 2 GB of text.

The memory cases run in fresh interpreters (``benchmarks/intake_memory.py``),
which report the resident high-water mark during the read.
"""
from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pytest

from audit_core.data.intake import ReadOptions, read_table, read_tables
from audit_core.errors import AuditInputError
from audit_core.limits import INTAKE_MEMORY_FLOOR_MB, INTAKE_MEMORY_PER_UPLOAD, table_cap
from toy_data import excel_bytes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from intake_memory import SHAPES, gzip_bomb, measure, shape_bytes  # noqa: E402

MB = 1024 * 1024


def refused(code: str, call) -> str:
    with pytest.raises(AuditInputError) as info:
        call()
    assert info.value.code == code, info.value.message
    return info.value.message


@pytest.mark.parametrize("expanded_mb, code", [(60, "TOO_MANY_ROWS"), (240, "GZIP_CAP")])
def test_issue_gzip_uploads_are_refused_quickly_in_bounded_memory(tmp_path, expanded_mb, code):
    path = tmp_path / "upload.csv"
    path.write_bytes(gzip_bomb(expanded_mb))
    assert path.stat().st_size < 1.1 * MB  # 0.26 MB and 1.05 MB packed
    r = measure([path], {"AUDIT_MAX_UPLOAD_MB": "200", "AUDIT_MAX_ROWS": "5000000"})
    assert r["outcome"] == code
    # At most the text up to the cap (200 MB) is held, once; before, 1,127 MB and 4,370 MB.
    assert r["extra_mib"] < 1.5 * 200
    assert r["cpu_s"] < 30  # before: minutes


def test_gzip_stops_at_the_upload_cap_and_says_which_cap():
    data = gzip.compress(b"a,b\n" + b"1,2\n" * (3 * MB // 4))  # 3 MB of text
    msg = refused("GZIP_CAP", lambda: read_table(data, name="g.csv", options=ReadOptions(max_bytes=MB)))
    assert "more than the 1.0 MB upload cap" in msg and "AUDIT_MAX_UPLOAD_MB" in msg
    # Under a smaller expansion cap, that cap binds and is named.
    msg = refused("GZIP_CAP", lambda: read_table(
        data, name="g.csv", options=ReadOptions(max_bytes=10 * MB, max_expansion_bytes=2 * MB)))
    assert "2.0 MB decompression cap" in msg and "AUDIT_MAX_EXPANSION_MB" in msg
    assert table_cap(10 * MB, 2 * MB) == (2 * MB, "AUDIT_MAX_EXPANSION_MB")
    # Within the cap it is read.
    assert read_table(data, name="g.csv", options=ReadOptions(max_bytes=4 * MB)).frame.shape == (3 * MB // 4, 2)


@pytest.mark.parametrize("make, name", [
    (lambda n: ("a,b\n" + "".join(f"{i},x\n" for i in range(n))).encode(), "r.csv"),
    (lambda n: ("a b\n" + "".join(f"{i} x\n" for i in range(n))).encode(), "r.txt"),
    (lambda n: excel_bytes([["a", "b"], *([i, "x"] for i in range(n))]), "r.xlsx"),
])
def test_rows_are_counted_while_reading(make, name):
    msg = refused("TOO_MANY_ROWS", lambda: read_table(make(1000), name=name, options=ReadOptions(max_rows=10)))
    # Reading stopped one row past the cap: the count is a lower bound, not the file's 1,000 rows.
    assert f"{name!r} has at least 11 rows, over the cap of 10." in msg
    assert read_table(make(10), name=name, options=ReadOptions(max_rows=10)).frame.shape == (10, 2)


def test_a_stack_of_files_holds_one_uploads_worth():
    part = b"a,b\n" + b"1,2\n" * (MB // 10)  # 0.4 MB each
    files = [(part, f"p{i}.csv") for i in range(3)]
    msg = refused("STACK_TOO_LARGE", lambda: read_tables(files, options=ReadOptions(max_bytes=MB)))
    assert "'p2.csv' brings the text to 1.2 MB, over the 1.0 MB upload cap" in msg


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_peak_memory_of_a_read_at_the_cap_is_within_the_declared_bound(tmp_path, shape):
    upload_mb = 8
    path = tmp_path / "table.csv"
    path.write_bytes(shape_bytes(shape, upload_mb * MB - 1024))
    r = measure([path], {"AUDIT_MAX_UPLOAD_MB": str(upload_mb)})
    assert not r["outcome"].startswith(("crashed", "MemoryError")), r
    assert r["extra_mib"] <= INTAKE_MEMORY_PER_UPLOAD * upload_mb + INTAKE_MEMORY_FLOOR_MB, r
