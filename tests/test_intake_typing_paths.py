"""The intake's fast decisions (from a column's bytes and pyarrow) equal its general path, on generated tables.

Each generated table is read twice: as shipped, and with the fast paths
switched off (``arrow_cells`` and ``arrow_column`` returning ``None`` send every column to the
general path: regular expressions, ``to_numeric`` and Python strings). The
frames, the read reports and the refusals must be the same.
"""
from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.data.intake import ReadOptions, checks, textbytes, values
from tests.intake_golden import fingerprint

TOKENS = ["1", "0", "007", "-0", "-5", "12", "1.5", "1e5", "-.5", "1.", ".", "-", "1,5", "1,234", "12,345.6",
          "True", "true", "FALSE", "false", "?", "NA", "n/a", "nan", "inf", "-inf", "+3", "abc", " x ", "x", "é",
          "00", "1234567890123456", "-123456789012345", "", "1 2", "٣", "1-2", "0.5e-3", "E5", "TRUE", "None", "-0.0", "-0e1"]


@st.composite
def tables(draw):
    n_cols = draw(st.integers(1, 3))
    n_rows = draw(st.integers(1, 10))
    pools = [draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=4)) for _ in range(n_cols)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL])))
    w.writerow([f"c{j}" for j in range(n_cols)])
    for _ in range(n_rows):
        w.writerow([draw(st.sampled_from(pool)) for pool in pools])
    decimal = draw(st.sampled_from(["auto", "auto", ".", ","]))
    return buf.getvalue().encode(), decimal


def _read(data: bytes, decimal: str):
    from audit_core.data.intake import read_table

    return lambda opts: read_table(data, name="t.csv", options=ReadOptions(
        decimal=decimal, header="first_row", missing_codes=opts.missing_codes))


@settings(max_examples=300, deadline=None)
@given(tables())
def test_fast_decisions_equal_the_general_path(case):
    data, decimal = case
    fast = {v: fingerprint(_read(data, decimal), v) for v in ("default", "accept")}
    with pytest.MonkeyPatch.context() as mp:
        for module in (values, checks):
            mp.setattr(module, "arrow_cells", lambda s: None)
            mp.setattr(module, "arrow_column", lambda s: None)
        general = {v: fingerprint(_read(data, decimal), v) for v in ("default", "accept")}
    assert fast == general, data.decode()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="0123456789.eE-", min_size=1, max_size=30), min_size=1, max_size=20))
def test_pyarrow_reads_plain_decimals_as_to_numeric_does(texts):
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    got = textbytes.float_cells(pa.array(texts, pa.large_string()))
    if got is None:
        return
    want = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    assert np.array_equal(got.view(np.int64), want.view(np.int64)), texts


@pytest.mark.parametrize("text", ["0.1000000000000000055511151231257827", "2.2250738585072011e-308", "1e-400",
                                  "1e400", "9007199254740993", "-0", "-0.0", "1.", ".5", "-.5", "4.9e-324",
                                  "0.30000000000000004", "123456789012345678901234567890"])
def test_hard_decimals_are_read_alike(text):
    test_pyarrow_reads_plain_decimals_as_to_numeric_does.hypothesis.inner_test([text])
