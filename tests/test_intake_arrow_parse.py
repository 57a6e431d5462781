"""pyarrow's parse of delimited text gives pandas' cells, or declines: a differential test on generated text.

:func:`audit_core.data.intake.delimited._parse_arrow` must return exactly the
frame of the pandas path (``_check_records`` then ``_parse``) whenever it
returns one, and decline (``None``) whenever the pandas path refuses the file.
"""
from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.data.intake import ReadOptions
from audit_core.data.intake.delimited import _check_records, _parse, _parse_arrow
from audit_core.errors import AuditInputError

CELL = st.text(alphabet=["a", "1", "0", " ", "\t", ".", ",", "-", "?", "é", "y"], max_size=6)
ENDS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def delimited(draw):
    delim = draw(st.sampled_from([",", ";", "\t", "|"]))
    n = draw(st.integers(2, 4))
    rows = draw(st.lists(st.lists(CELL, min_size=n - 1, max_size=n + 1), min_size=1, max_size=8))
    end = draw(ENDS)
    lines = []
    for row in rows:
        lines.append(delim.join(c.replace(delim, "") for c in row))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "  ", " \t "])))
    text = end.join(lines) + draw(st.sampled_from(["", end]))
    bom = draw(st.booleans())
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode(), delim, n, draw(st.booleans())


def _pandas_path(data: bytes, codec: str, delim: str, n: int, header: bool) -> pd.DataFrame | None:
    opts = ReadOptions()
    try:
        _check_records(data, codec, "t.csv", delim, n, header, opts)
        return _parse(data, codec, "t.csv", delim, header, data.decode(codec), opts)
    except AuditInputError:
        return None


@settings(max_examples=400, deadline=None)
@given(delimited())
def test_arrow_parse_is_the_pandas_parse(case):
    data, delim, n, header = case
    codec = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    if not data.decode(codec).strip():
        return  # refused before parsing (NO_COLUMNS)
    first = next(line for line in data.decode(codec).splitlines() if line.strip())
    n = len(first.split(delim))
    fast = _parse_arrow(data, codec, delim, n, header, ReadOptions())
    if fast is None:
        return
    slow = _pandas_path(data, codec, delim, n, header)
    assert slow is not None, "pyarrow read a file the pandas path refuses"
    if slow.shape[1] != n:
        pytest.fail("pandas found another field count")
    pd.testing.assert_frame_equal(fast, slow.set_axis(range(slow.shape[1]), axis=1), check_dtype=True)


@pytest.mark.parametrize("data", [b'a,b\n"x",1\n', b"a,b\n1,2\x00\n", "a;b\nü;1\n".encode("latin-1")])
def test_quotes_zero_bytes_and_other_encodings_take_the_pandas_path(data):
    codec = "utf-8" if b"\xfc" not in data else "cp1252"
    assert _parse_arrow(data, codec, "," if b"," in data else ";", 2, True, ReadOptions()) is None


def test_row_cap_takes_the_pandas_path():
    assert _parse_arrow(b"a,b\n1,2\n3,4\n", "utf-8", ",", 2, True, ReadOptions(max_rows=1)) is None
    assert _parse_arrow(b"a,b\n1,2\n3,4\n", "utf-8", ",", 2, True, ReadOptions(max_rows=2)) is not None
