"""Property: intake never fails with an undeclared exception.

Every generated file or frame must give either a ``LoadedTable`` or an
``AuditInputError`` whose code is declared in ``audit_core.errors.MESSAGES``.
Any other exception type fails the test. Tables that load are also pushed
through ``build_dataset`` with a simple class target: that must likewise give
a dataset or a declared error.

Example budget (all ``derandomize=True``, so the run is deterministic):
random bytes 60 + CSV text 120 + frames→CSV 50 + frames→Parquet 50 +
frames→Excel 25 + check_table on raw frames 40 = 345 generated cases.
"""
from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_core.data.intake import LoadedTable, ReadOptions, check_table, read_table
from audit_core.errors import MESSAGES, AuditInputError

N_BYTES, N_CSV, N_FRAME_CSV, N_FRAME_PARQUET, N_FRAME_EXCEL, N_CHECK = 60, 120, 50, 50, 25, 40
TOTAL_CASES = N_BYTES + N_CSV + N_FRAME_CSV + N_FRAME_PARQUET + N_FRAME_EXCEL + N_CHECK

FUZZ = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Small caps so that the cap paths are exercised too, and nothing gets big.
OPTIONS = ReadOptions(max_bytes=200_000, max_columns=40, max_rows=5_000, max_expansion_bytes=5_000_000)


def test_budget_is_at_least_300():
    assert TOTAL_CASES >= 300


def _dataset_property(table: LoadedTable) -> None:
    """A loaded table through build_dataset with a class target on its first column."""
    from audit_core.data.dataset import AuditDataset, DatasetConfig, build_dataset

    frame = table.frame
    col = frame.columns[0]
    nonnull = frame[col].dropna()
    positive = nonnull.iloc[0] if len(nonnull) else "x"
    if isinstance(positive, np.generic):
        positive = positive.item()
    cfg = DatasetConfig(
        name=table.name,
        targets=({"kind": "class", "name": "t", "column": str(col), "positive": positive},),
    )
    try:
        ds = build_dataset(frame, cfg)
    except AuditInputError as exc:
        assert exc.code in MESSAGES, exc.code
        return
    assert isinstance(ds, AuditDataset)
    assert str(col) not in ds.features  # the target's source column is never a feature
    assert len(ds.primary.y) == len(ds.frame)


def _check_read(data: bytes, name: str, options: ReadOptions = OPTIONS) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = read_table(data, name=name, options=options)
        except AuditInputError as exc:
            assert exc.code in MESSAGES, exc.code
            assert exc.message == str(exc) and exc.message
            return
        assert isinstance(table, LoadedTable)
        assert table.frame.shape[0] >= 1 and table.frame.shape[1] >= 1
        assert table.frame.columns.is_unique
        _dataset_property(table)


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------

ODD_NAMES = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "<b>bold</b>",
        "Ünïcödé ✓",
        "名前",
        "x" * 300,
        " padded ",
        "a,b",
        'quo"te',
        "new\nline",
        "tab\tname",
        "NaN",
        "",
        "   ",
        "0",
        "=cmd|' /C calc'!A0",
    ]
)
NAMES = st.one_of(st.text(min_size=0, max_size=12), ODD_NAMES)


@st.composite
def column_names(draw, n: int) -> list[str]:
    """Half the time plain unique names (so tables load), else odd/duplicate/blank ones."""
    if draw(st.booleans()):
        plain = [f"c{i}" for i in range(n)]
        if n and draw(st.booleans()):
            plain[draw(st.integers(0, n - 1))] = draw(ODD_NAMES.filter(lambda t: t.strip() != ""))
        return plain
    return [draw(NAMES) for _ in range(n)]

CELL_TEXT = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", "NA", "nan", "inf", "-inf", "1e999", "?", '"', "a\x00b", "\ufeff", "1,5", "<i>x</i>"]),
)


@st.composite
def csv_texts(draw) -> bytes:
    delim = draw(st.sampled_from([",", ";", "\t", "|", " ", ":", '"']))
    n_cols = draw(st.integers(1, 6))
    header = draw(column_names(n_cols))
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        ragged = draw(st.integers(-1, 1)) if draw(st.booleans()) and draw(st.booleans()) else 0
        width = max(0, n_cols + ragged)
        cells = [
            draw(st.one_of(CELL_TEXT, st.integers(-5, 5).map(str), st.floats(allow_nan=True).map(repr)))
            for _ in range(width)
        ]
        if draw(st.booleans()) and cells:
            cells[0] = '"' + cells[0]  # unbalanced quote
        rows.append(delim.join(cells))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = eol.join([delim.join(header)] + rows)
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252"]))
    data = text.encode(encoding, errors="replace")
    if draw(st.booleans()):
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(max_size=4)) + data[pos:]
    return data


@st.composite
def frames(draw, *, excel: bool = False) -> pd.DataFrame:
    n_rows = draw(st.integers(0, 6))
    n_cols = draw(st.integers(1, 4))
    names = draw(column_names(n_cols))
    cols = []
    for _ in range(n_cols):
        kind = draw(st.sampled_from(["int", "float", "text", "mixed", "bool", "allnan", "date"]))
        if kind == "int":
            values = draw(st.lists(st.integers(-(2**40), 2**40), min_size=n_rows, max_size=n_rows))
        elif kind == "float":
            values = draw(
                st.lists(
                    st.one_of(st.floats(allow_nan=True, allow_infinity=not excel, width=64)),
                    min_size=n_rows,
                    max_size=n_rows,
                )
            )
        elif kind == "text":
            values = draw(st.lists(st.one_of(CELL_TEXT, st.none()), min_size=n_rows, max_size=n_rows))
        elif kind == "mixed":
            values = draw(
                st.lists(
                    st.one_of(st.integers(-9, 9), st.floats(-9, 9), st.text(max_size=4), st.none()),
                    min_size=n_rows,
                    max_size=n_rows,
                )
            )
        elif kind == "bool":
            values = draw(st.lists(st.one_of(st.booleans(), st.none()), min_size=n_rows, max_size=n_rows))
        elif kind == "date":
            values = list(pd.date_range("2020-01-01", periods=n_rows, freq="D"))
        else:
            values = [np.nan] * n_rows
        cols.append(values)
    frame = pd.DataFrame({i: pd.Series(v, dtype=object) for i, v in enumerate(cols)})
    frame.columns = names  # may be duplicated, blank, odd
    if excel:
        # openpyxl refuses control characters in cells; they are not an intake concern.
        frame = frame.map(lambda v: _excel_safe(v) if isinstance(v, str) else v)
        frame.columns = [_excel_safe(c) for c in frame.columns]
    return frame


def _excel_safe(text: str) -> str:
    return "".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 32)[:200]


def _to_parquet(frame: pd.DataFrame) -> bytes | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = []
    for i in range(frame.shape[1]):
        try:
            arrays.append(pa.array(frame.iloc[:, i].tolist()))
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            arrays.append(pa.array([None if v is None else str(v) for v in frame.iloc[:, i].tolist()]))
    table = pa.Table.from_arrays(arrays, names=[str(c) for c in frame.columns])
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _to_excel(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    # Header written as a data row so duplicate/blank names survive unchanged.
    body = pd.concat([pd.DataFrame([list(frame.columns)]), pd.DataFrame(frame.to_numpy())], ignore_index=True)
    body.to_excel(buf, index=False, header=False, engine="openpyxl")
    return buf.getvalue()


# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


@settings(max_examples=N_BYTES, **FUZZ)
@given(data=st.binary(min_size=0, max_size=600), name=st.sampled_from(["f.csv", "f.parquet", "f.xlsx", "f", "f.tsv"]))
def test_random_bytes(data, name):
    _check_read(data, name)


@settings(max_examples=N_CSV, **FUZZ)
@given(data=csv_texts(), explicit=st.booleans())
def test_random_csv_text(data, explicit):
    opts = ReadOptions(
        max_bytes=OPTIONS.max_bytes,
        max_columns=OPTIONS.max_columns,
        delimiter=";" if explicit else None,
        encoding="cp1252" if explicit else None,
        na_values=("?",),
    )
    _check_read(data, "fuzz.csv", opts)


@settings(max_examples=N_FRAME_CSV, **FUZZ)
@given(frame=frames(), inf_missing=st.booleans(), drop=st.booleans())
def test_frames_as_csv(frame, inf_missing, drop):
    data = frame.to_csv(index=False).encode("utf-8")
    opts = ReadOptions(inf_as_missing=inf_missing, drop_all_missing=drop, max_columns=40)
    _check_read(data, "frame.csv", opts)


@settings(max_examples=N_FRAME_PARQUET, **FUZZ)
@given(frame=frames(), inf_missing=st.booleans())
def test_frames_as_parquet(frame, inf_missing):
    data = _to_parquet(frame)
    _check_read(data, "frame.parquet", ReadOptions(inf_as_missing=inf_missing))


@settings(max_examples=N_FRAME_EXCEL, **FUZZ)
@given(frame=frames(excel=True))
def test_frames_as_excel(frame):
    _check_read(_to_excel(frame), "frame.xlsx")


@settings(max_examples=N_CHECK, **FUZZ)
@given(frame=frames(), inf_missing=st.booleans(), drop=st.booleans())
def test_check_table_on_raw_frames(frame, inf_missing, drop):
    before = list(frame.columns)
    try:
        checked, dropped = check_table(
            frame, name="raw", options=ReadOptions(inf_as_missing=inf_missing, drop_all_missing=drop)
        )
    except AuditInputError as exc:
        assert exc.code in MESSAGES, exc.code
        return
    assert list(frame.columns) == before  # the caller's frame is not relabelled
    assert set(dropped).isdisjoint(checked.columns)
    if inf_missing:
        numeric = checked.select_dtypes("number")
        assert not np.isinf(numeric.to_numpy(dtype=float, na_value=np.nan)).any()


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x00\x00",  # NULs only
        b"\xef\xbb\xbf",  # a BOM and nothing else
        b"\xff\xfe",  # UTF-16 BOM and nothing else
        b"a,b\r1,2\r3,4\r",  # old Mac line ends
        b'a,b\n"1,2\n',  # unterminated quote
        b"PK,name\n1,x\n2,y\n",  # a CSV whose first column is called PK
    ],
)
def test_hand_picked_malformed(data):
    _check_read(data, "hand.csv")
