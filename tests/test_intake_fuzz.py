"""Property: intake never fails with an undeclared exception.

Every generated file or frame must give either a ``LoadedTable`` or an
``AuditInputError`` whose code is declared in ``audit_core.errors.MESSAGES``.
Any other exception type fails the test. Tables that load are also pushed
through ``build_dataset`` with a simple class target: that must likewise give
a dataset or a declared error.

Example budget (all ``derandomize=True``, so the run is deterministic):
random bytes 60 + CSV text 105 + frames→CSV 45 + frames→Parquet 45 +
frames→Excel 25 + check_table on raw frames 35 + stacked text files 15 +
frames→CSV→training 15 = 345 generated cases.

The text cases cover the classes of the real-data and hardening issues:
gzip-wrapped text, UTF-16 without a byte-order mark, runs of whitespace as
delimiter, decimal commas, thousands separators, ``NA``/``?``/``-`` cells,
leading-zero keys, padded labels, explicit header choices, given column
names and accepted missing codes (including codes for absent columns).
Training on loaded tables covers classes absent from the training rows,
tiny classes and the one-hot matrix cap.
"""
from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_core.data.intake import LoadedTable, ReadOptions, check_table, read_table, read_tables
from audit_core.errors import MESSAGES, AuditInputError

N_BYTES, N_CSV, N_FRAME_CSV, N_FRAME_PARQUET, N_FRAME_EXCEL, N_CHECK = 60, 105, 45, 45, 25, 35
N_STACK, N_TRAIN = 15, 15
TOTAL_CASES = N_BYTES + N_CSV + N_FRAME_CSV + N_FRAME_PARQUET + N_FRAME_EXCEL + N_CHECK + N_STACK + N_TRAIN

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
    st.sampled_from(["", "NA", "nan", "inf", "-inf", "1e999", "?", '"', "a\x00b", "\ufeff", "1,5", "<i>x</i>",
                     "12,345.6", "1.234,5", "1,234", "00017", " yes ", "yes ", "n/a", "-", ".", "True", "false",
                     "1234567890123456789", "0", "0,25"]),
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
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "latin-1", "cp1252"]))
    data = text.encode(encoding, errors="replace")
    if draw(st.booleans()):
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(max_size=4)) + data[pos:]
    if draw(st.integers(0, 4)) == 0:  # a gzip file, sometimes cut short
        import gzip

        data = gzip.compress(data)
        if draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))]
    return data


@st.composite
def read_options(draw, **fixed) -> ReadOptions:
    """Random header, decimal, names and accepted codes (some for columns that do not exist)."""
    names = tuple(f"n{i}" for i in range(draw(st.integers(1, 6)))) if draw(st.integers(0, 3)) == 0 else ()
    codes = tuple(draw(st.lists(st.tuples(st.sampled_from(["c0", "c1", "n0", "col_1", "nope"]),
                                          st.sampled_from(["?", "NA", "-", "x"])), max_size=2)))
    return ReadOptions(
        header=draw(st.sampled_from(["auto", "auto", "first_row", "none"])),
        decimal=draw(st.sampled_from(["auto", "auto", ".", ","])),
        column_names=names,
        missing_codes=codes,
        **fixed,
    )


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
@given(data=csv_texts(), explicit=st.booleans(), more=st.data())
def test_random_csv_text(data, explicit, more):
    opts = more.draw(read_options(
        max_bytes=OPTIONS.max_bytes,
        max_columns=OPTIONS.max_columns,
        delimiter=";" if explicit else None,
        encoding="cp1252" if explicit else None,
        na_values=("?",) if explicit else (),
    ))
    _check_read(data, "fuzz.csv", opts)


@settings(max_examples=N_STACK, **FUZZ)
@given(files=st.lists(csv_texts(), min_size=2, max_size=3), more=st.data())
def test_stacked_text_files(files, more):
    opts = more.draw(read_options(max_bytes=OPTIONS.max_bytes, max_columns=OPTIONS.max_columns))
    named = [(d, f"part{i}.csv") for i, d in enumerate(files)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = read_tables(named, options=opts)
        except AuditInputError as exc:
            assert exc.code in MESSAGES, exc.code
            return
    assert table.frame.columns.is_unique and table.report.source_column in table.frame.columns
    assert sum(n for _, n in table.report.sources) == len(table.frame)


@st.composite
def training_frames(draw) -> pd.DataFrame:
    """20-80 rows: numbers, integer codes, text labels (some rare, padded or "NA"), missing cells, a label."""
    n = draw(st.integers(20, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    out = {}
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["num", "code", "text", "many", "key", "comma"]))
        if kind == "num":
            v = rng.normal(size=n).round(3).astype(object)
        elif kind == "code":
            v = rng.integers(1, 5, n).astype(object)
        elif kind == "text":
            v = rng.choice(["a", "b ", " c", "NA", "?"], n).astype(object)
        elif kind == "many":
            v = np.array([f"L{j}" for j in rng.integers(0, n, n)], dtype=object)
        elif kind == "key":
            v = np.array([f"{j:05d}" for j in range(n)], dtype=object)
        else:
            v = np.array([f"{x:.2f}".replace(".", ",") for x in rng.normal(size=n)], dtype=object)
        if draw(st.booleans()):
            v[rng.random(n) < 0.1] = None
        out[f"f{i}"] = v
    weights = draw(st.sampled_from([[0.5, 0.5], [0.9, 0.1], [0.97, 0.03], [0.4, 0.4, 0.2], [0.6, 0.38, 0.02]]))
    out["label"] = rng.choice(["yes", "no", "maybe"][: len(weights)], n, p=weights)
    return pd.DataFrame(out)


@settings(max_examples=N_TRAIN, **FUZZ)
@given(frame=training_frames(), more=st.data())
def test_loaded_frames_through_training(frame, more):
    """Read as CSV, declare a class target on a random column, train: a workspace or a declared error."""
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.models.training import train_workspace
    from audit_core.models.zoo import ModelSpec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = read_table(frame.to_csv(index=False).encode(), name="t.csv", options=OPTIONS)
            col = more.draw(st.sampled_from(["label", "label", *table.frame.columns]))
            multi = more.draw(st.booleans())
            values = table.frame[col].dropna()
            positive = None if multi or values.empty else values.iloc[0]
            positive = positive.item() if isinstance(positive, np.generic) else positive
            ds = build_dataset(table.frame, DatasetConfig(
                name="t", targets=({"kind": "class", "name": "t", "column": str(col), "positive": positive},)))
            ws = train_workspace(ds, spec=ModelSpec(kind="logistic_regression"))
        except AuditInputError as exc:
            assert exc.code in MESSAGES, exc.code
            return
    assert ws.grouping.to_frame()["feature"].is_unique
    assert set(np.unique(ds.primary.y[ws.train_index])) == set(range(len(ds.primary.classes)))


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
