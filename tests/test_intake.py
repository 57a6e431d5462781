"""Tests for audit_core.data.intake: formats, detection, and every declared refusal."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from audit_core.data.intake import LoadedTable, ReadOptions, check_table, read_path, read_table
from audit_core.errors import MESSAGES, AuditInputError
from toy_data import excel_bytes, parquet_bytes, zip_bomb_bytes

INTAKE_CODES = {
    "EMPTY_FILE",
    "FILE_TOO_LARGE",
    "UNKNOWN_FORMAT",
    "UNPARSEABLE",
    "BAD_ENCODING",
    "CSV_RAGGED",
    "NO_ROWS",
    "NO_COLUMNS",
    "DUPLICATE_COLUMNS",
    "BLANK_COLUMN_NAME",
    "TOO_MANY_COLUMNS",
    "TOO_MANY_ROWS",
    "DECOMPRESSION_CAP",
    "ALL_MISSING_COLUMN",
    "INF_VALUES",
    "MIXED_TYPES",
    "UNSUPPORTED_DTYPE",
}


def refused(code: str, data: bytes, name: str, **opts) -> str:
    with pytest.raises(AuditInputError) as info:
        read_table(data, name=name, options=ReadOptions(**opts))
    assert info.value.code == code, info.value.message
    assert str(info.value) == info.value.message
    return info.value.message


def test_all_intake_codes_are_registered():
    assert INTAKE_CODES <= set(MESSAGES)


# ---------------------------------------------------------------------------
# CSV: delimiters and encodings
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("delim", [",", ";", "\t", "|"])
def test_csv_delimiter_detection(delim):
    text = delim.join(["id", "amount", "city"]) + "\n"
    text += delim.join(["1", "2.5", "Paris"]) + "\n" + delim.join(["2", "3.5", "Lyon"]) + "\n"
    t = read_table(text.encode(), name="d.csv")
    assert t.delimiter == delim
    assert list(t.frame.columns) == ["id", "amount", "city"]
    assert t.frame["amount"].tolist() == [2.5, 3.5]
    assert t.frame["city"].tolist() == ["Paris", "Lyon"]
    assert t.format == "csv"


def test_tsv_suffix_forces_tab():
    t = read_table(b"a\tb\n1,5\t2\n3,5\t4\n", name="x.tsv")
    assert t.delimiter == "\t"
    # "1,5" has one digit after the comma: a decimal comma, never a thousands separator.
    assert t.frame["a"].tolist() == [1.5, 3.5]
    assert t.report.conversions == (("a", "with a decimal comma (1,5 = 1.5)"),)


def test_explicit_delimiter_overrides_sniffing():
    # Sniffing would see ";" in every line; the caller says ",": the ";" stay in the values.
    data = b"a,b\n1;2,x;y\n3;4,z;w\n"
    t = read_table(data, name="e.csv", options=ReadOptions(delimiter=","))
    assert t.delimiter == ","
    assert t.frame["a"].tolist() == ["1;2", "3;4"]


def test_sha256_and_size_recorded():
    import hashlib

    data = b"a,b\n1,2\n"
    t = read_table(data, name="h.csv")
    assert t.sha256 == hashlib.sha256(data).hexdigest()
    assert t.n_bytes == 8  # "a,b\n" 4 + "1,2\n" 4


TEXT = "name,score\nMüller,1\nSão Paulo,2\nCafé à la carte,3\n"


@pytest.mark.parametrize(
    "raw, expected_encoding",
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (TEXT.encode("utf-8-sig"), "utf-8-sig"),
        (TEXT.encode("utf-16"), "utf-16"),  # Python writes a BOM for "utf-16"
        (TEXT.encode("cp1252"), "cp1252"),
    ],
)
def test_encoding_detection(raw, expected_encoding):
    t = read_table(raw, name="enc.csv")
    assert t.encoding == expected_encoding
    assert list(t.frame.columns) == ["name", "score"]  # no BOM left in the first name
    assert t.frame["name"].tolist() == ["Müller", "São Paulo", "Café à la carte"]


@pytest.mark.parametrize("word", ["São Paulo", "Café à la carte", "Mañana"])
def test_short_cp1252_text_is_not_read_as_cp1250(word):
    # On short text cp1250 and cp1252 tie; cp1250 would turn "ã" into "ă" and "à" into "ŕ".
    t = read_table(f"name,v\n{word},1\n".encode("cp1252"), name="short.csv")
    assert t.frame["name"].tolist() == [word]


def test_latin1_single_word():
    t = read_table("name,v\nMüller,1\nMüller,2\n".encode("latin-1"), name="l.csv")
    assert t.frame["name"].tolist() == ["Müller", "Müller"]


def test_explicit_encoding():
    raw = "name,v\nÀ,1\nÉ,2\n".encode("cp1252")
    t = read_table(raw, name="x.csv", options=ReadOptions(encoding="latin-1"))
    assert t.encoding == "latin-1"
    assert t.frame["name"].tolist() == ["À", "É"]


def test_old_mac_line_endings():
    t = read_table(b"a,b\r1,2\r3,4\r", name="mac.csv")
    assert t.frame.to_numpy().tolist() == [[1, 2], [3, 4]]


def test_csv_whose_first_column_is_called_pk_is_a_csv():
    t = read_table(b"PK,name\n1,x\n2,y\n", name="keys.csv")
    assert t.format == "csv"
    assert list(t.frame.columns) == ["PK", "name"]


def test_na_values_option():
    t = read_table(b"a,b\n1,?\n2,x\n3,y\n", name="n.csv", options=ReadOptions(na_values=("?",)))
    assert t.frame["b"].isna().tolist() == [True, False, False]


def test_read_path(tmp_path):
    p = tmp_path / "disk.csv"
    p.write_bytes(b"a;b\n1;2\n")
    t = read_path(p)
    assert t.name == "disk.csv" and t.delimiter == ";"
    assert t.frame.to_numpy().tolist() == [[1, 2]]


# ---------------------------------------------------------------------------
# Parquet and Excel round trips
# ---------------------------------------------------------------------------


def test_parquet_round_trip():
    table = pa.table({"n": [1, 2, 3], "f": [0.5, None, 2.5], "s": ["a", "b", None]})
    t = read_table(parquet_bytes(table), name="p.parquet")
    assert t.format == "parquet" and t.encoding is None and t.delimiter is None
    assert t.frame["n"].tolist() == [1, 2, 3]
    assert t.frame["f"].iloc[[0, 2]].tolist() == [0.5, 2.5] and np.isnan(t.frame["f"].iloc[1])
    assert t.frame["s"].iloc[:2].tolist() == ["a", "b"] and pd.isna(t.frame["s"].iloc[2])


def test_parquet_detected_by_magic_bytes_whatever_the_name():
    t = read_table(parquet_bytes(pa.table({"n": [1, 2]})), name="upload.bin.csv")
    assert t.format == "parquet"


def test_excel_round_trip():
    data = excel_bytes([["id", "amount", "city"], [1, 2.5, "Paris"], [2, 3.5, "Lyon"]])
    t = read_table(data, name="e.xlsx")
    assert t.format == "excel"
    assert list(t.frame.columns) == ["id", "amount", "city"]
    assert t.frame["id"].tolist() == [1, 2]
    assert pd.api.types.is_integer_dtype(t.frame["id"].dtype)
    assert t.frame["amount"].tolist() == [2.5, 3.5]
    assert t.frame["city"].tolist() == ["Paris", "Lyon"]


def test_excel_written_by_pandas():
    buf = io.BytesIO()
    pd.DataFrame({"a": [1.5, 2.5], "b": ["x", "y"]}).to_excel(buf, index=False)
    t = read_table(buf.getvalue(), name="p.xlsx")
    assert t.frame.to_dict("list") == {"a": [1.5, 2.5], "b": ["x", "y"]}


# ---------------------------------------------------------------------------
# Refusals: file level
# ---------------------------------------------------------------------------


def test_empty_file():
    msg = refused("EMPTY_FILE", b"", "nothing.csv")
    assert "'nothing.csv'" in msg and "empty" in msg


def test_file_over_byte_cap():
    # 21 bytes against a cap of 20 bytes.
    msg = refused("FILE_TOO_LARGE", b"a,b\n1,2\n3,4\n5,6\n7,8\n9", "big.csv", max_bytes=20)
    assert "'big.csv'" in msg and "upload cap" in msg


def test_unknown_format():
    msg = refused("UNKNOWN_FORMAT", b'{"a": 1}', "data.json")
    assert "'data.json'" in msg


def test_random_bytes_named_parquet_are_unparseable():
    data = np.random.default_rng(0).bytes(256)
    msg = refused("UNPARSEABLE", data, "junk.parquet")
    assert "'junk.parquet'" in msg and "Parquet" in msg


def test_corrupt_xlsx_is_unparseable():
    good = excel_bytes([["a"], [1]])
    corrupt = good[: len(good) // 2]  # truncated zip: no central directory
    msg = refused("UNPARSEABLE", corrupt, "broken.xlsx")
    assert "'broken.xlsx'" in msg and "Excel" in msg


def test_zip_without_workbook_is_unparseable():
    msg = refused("UNPARSEABLE", zip_bomb_bytes(1000), "notabook.xlsx")
    assert "'notabook.xlsx'" in msg


def test_bad_explicit_encoding():
    msg = refused("BAD_ENCODING", "a\né\n".encode("latin-1"), "x.csv", encoding="utf-8")
    assert "'x.csv'" in msg and "'utf-8'" in msg


def test_unknown_encoding_name():
    msg = refused("BAD_ENCODING", b"a\n1\n", "x.csv", encoding="no-such-codec")
    assert "'no-such-codec'" in msg


def test_bad_explicit_delimiter_is_declared():
    msg = refused("UNPARSEABLE", b"a::b\n1::2\n", "x.csv", delimiter="::")
    assert "'x.csv'" in msg and "CSV" in msg


def test_ragged_row_too_long():
    msg = refused("CSV_RAGGED", b"a,b\n1,2\n3,4,5\n", "rag.csv")
    assert "'rag.csv'" in msg and "line 3" in msg


def test_ragged_row_too_short():
    # pandas would pad the short row with NaN silently.
    msg = refused("CSV_RAGGED", b"a,b\n1,2\n3\n4,5\n", "rag.csv")
    assert "line 3" in msg and "1 field" in msg


def test_every_row_one_field_too_many_is_ragged_not_an_index():
    # pandas would silently take the first column as the index.
    msg = refused("CSV_RAGGED", b"a,b\n1,2,3\n4,5,6\n", "idx.csv")
    assert "line 2" in msg


def test_unterminated_quote_is_declared():
    with pytest.raises(AuditInputError) as info:
        read_table(b'a,b\n"1,2\n3,4\n', name="q.csv")
    assert info.value.code in {"CSV_RAGGED", "UNPARSEABLE"}
    assert "'q.csv'" in info.value.message


def test_header_only_has_no_rows():
    msg = refused("NO_ROWS", b"a,b\n", "head.csv")
    assert "'head.csv'" in msg


def test_whitespace_only_has_no_columns():
    msg = refused("NO_COLUMNS", b"  \n \n", "blank.csv")
    assert "'blank.csv'" in msg


def test_duplicate_columns_csv():
    msg = refused("DUPLICATE_COLUMNS", b"a,b,a\n1,2,3\n", "dup.csv")
    assert "'a'" in msg and "'dup.csv'" in msg


def test_duplicate_columns_after_stripping_spaces():
    msg = refused("DUPLICATE_COLUMNS", b"a, a\n1,2\n", "dup.csv")
    assert "'a'" in msg


def test_duplicate_columns_parquet():
    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"])
    msg = refused("DUPLICATE_COLUMNS", parquet_bytes(table), "dup.parquet")
    assert "'x'" in msg and "'dup.parquet'" in msg


def test_duplicate_columns_excel():
    msg = refused("DUPLICATE_COLUMNS", excel_bytes([["k", "k"], [1, 2]]), "dup.xlsx")
    assert "'k'" in msg and "'dup.xlsx'" in msg


def test_blank_column_name_csv():
    msg = refused("BLANK_COLUMN_NAME", b"a,,c\n1,2,3\n", "blank.csv")
    assert "position 2" in msg and "'blank.csv'" in msg


def test_blank_column_name_excel():
    msg = refused("BLANK_COLUMN_NAME", excel_bytes([["a", None, "c"], [1, 2, 3]]), "blank.xlsx")
    assert "position 2" in msg


def test_too_many_columns_small_cap():
    msg = refused("TOO_MANY_COLUMNS", b"a,b,c,d\n1,2,3,4\n", "wide.csv", max_columns=3)
    assert "4 columns" in msg and "cap of 3" in msg


def test_too_many_columns_parquet_small_cap():
    table = pa.table({f"c{i}": [i] for i in range(5)})
    msg = refused("TOO_MANY_COLUMNS", parquet_bytes(table), "wide.parquet", max_columns=4)
    assert "5 columns" in msg


def test_10001_columns_against_the_default_cap():
    header = ",".join(f"c{i}" for i in range(10_001))
    row = ",".join("1" for _ in range(10_001))
    msg = refused("TOO_MANY_COLUMNS", f"{header}\n{row}\n".encode(), "wide.csv")
    assert "10,001 columns" in msg and "cap of 10,000" in msg


def test_10000_columns_are_accepted_by_the_default_cap():
    header = ",".join(f"c{i}" for i in range(10_000))
    row = ",".join(str(i % 7) for i in range(10_000))
    row2 = ",".join(str(i % 5) for i in range(10_000))
    t = read_table(f"{header}\n{row}\n{row2}\n".encode(), name="wide.csv")
    assert t.frame.shape == (2, 10_000)


def test_too_many_rows():
    msg = refused("TOO_MANY_ROWS", b"a\n1\n2\n3\n", "long.csv", max_rows=2)
    assert "3 rows" in msg and "cap of 2" in msg


def test_too_many_rows_parquet():
    msg = refused("TOO_MANY_ROWS", parquet_bytes(pa.table({"a": [1, 2, 3]})), "long.parquet", max_rows=2)
    assert "3 rows" in msg


def test_zip_bomb_refused_before_expansion():
    data = zip_bomb_bytes(5_000_000)  # 5 MB of "0" deflates to a few KB
    assert len(data) < 50_000
    msg = refused("DECOMPRESSION_CAP", data, "bomb.xlsx", max_expansion_bytes=1_000_000)
    assert "'bomb.xlsx'" in msg and "decompression" in msg
    # 5,000,000 bytes / 1,048,576 = 4.77 -> "4.8 MB"; cap 1,000,000 / 1,048,576 = 0.95 -> "1.0 MB"
    assert "4.8 MB" in msg and "1.0 MB" in msg


def test_parquet_expansion_cap():
    # 50,000 float64 zeros: the file is < 1 kB (dictionary + RLE) and declares ~256 bytes of
    # pages, but loads as 50,000 x 8 = 400,000 bytes > the 100,000-byte cap.
    data = parquet_bytes(pa.table({"a": np.zeros(50_000)}))
    assert len(data) < 2_000
    msg = refused("DECOMPRESSION_CAP", data, "z.parquet", max_expansion_bytes=100_000)
    assert "'z.parquet'" in msg


def test_parquet_under_expansion_cap_loads():
    # 100 rows x 1 column x 8 bytes = 800 bytes <= 1,000
    t = read_table(parquet_bytes(pa.table({"a": np.arange(100.0)})), name="s.parquet",
                   options=ReadOptions(max_expansion_bytes=1_000))
    assert t.frame["a"].sum() == 4950.0  # 0 + 1 + ... + 99 = 99 * 100 / 2


# ---------------------------------------------------------------------------
# Refusals: column content
# ---------------------------------------------------------------------------


def test_all_missing_column_refused():
    msg = refused("ALL_MISSING_COLUMN", b"a,b\n1,\n2,\n", "m.csv")
    assert "'b'" in msg


def test_all_missing_column_dropped_on_request():
    t = read_table(b"a,b,c\n1,,x\n2,,y\n", name="m.csv", options=ReadOptions(drop_all_missing=True))
    assert list(t.frame.columns) == ["a", "c"]
    assert t.dropped_columns == ("b",)


def test_only_all_missing_columns_dropped_leaves_no_columns():
    msg = refused("NO_COLUMNS", b"a,b\n,\n,\n", "m.csv", drop_all_missing=True)
    assert "'m.csv'" in msg


def test_inf_values_refused():
    msg = refused("INF_VALUES", b"a,b\n1,2.5\n2,inf\n3,-inf\n", "inf.csv")
    # two infinite values, the first on data row 2
    assert "'b'" in msg and "2 infinite" in msg and "row 2" in msg


def test_inf_as_missing():
    t = read_table(b"a,b\n1,2.5\n2,inf\n3,-inf\n", name="inf.csv", options=ReadOptions(inf_as_missing=True))
    assert t.frame["b"].iloc[0] == 2.5
    assert t.frame["b"].isna().tolist() == [False, True, True]


def test_inf_as_missing_column_left_empty():
    msg = refused("ALL_MISSING_COLUMN", b"a,b\n1,inf\n2,-inf\n", "inf.csv", inf_as_missing=True)
    assert "'b'" in msg


def test_inf_values_parquet():
    msg = refused("INF_VALUES", parquet_bytes(pa.table({"z": [1.0, np.inf]})), "inf.parquet")
    assert "'z'" in msg and "row 2" in msg


def test_mixed_types_numeric_with_stray_text():
    # 5 numbers and one "unknown": 5/6 = 83% numeric >= 80% -> a numeric column with a stray code
    data = b"a,b\n1,10\n2,11\n3,12\n4,13\n5,14\n6,unknown\n"
    msg = refused("MIXED_TYPES", data, "mix.csv")
    assert "'b'" in msg and "5 rows" in msg and "1 rows" in msg and "'unknown'" in msg


def test_stray_text_declared_missing_is_accepted():
    data = b"a,b\n1,10\n2,11\n3,12\n4,13\n5,14\n6,unknown\n"
    t = read_table(data, name="mix.csv", options=ReadOptions(na_values=("unknown",)))
    assert t.frame["b"].iloc[:5].tolist() == [10, 11, 12, 13, 14] and pd.isna(t.frame["b"].iloc[5])


def test_mostly_text_with_numeric_labels_is_categorical():
    # 1 number-looking value out of 4: 25% < 80% -> an honest text column
    t = read_table(b"a,b\n1,x\n2,y\n3,z\n4,7\n", name="ok.csv")
    assert t.frame["b"].tolist() == ["x", "y", "z", "7"]


def test_mixed_types_excel_ints_and_strings():
    data = excel_bytes([["k", "v"], [1, 1], [2, "two"], [3, 3]])
    msg = refused("MIXED_TYPES", data, "mix.xlsx")
    # numbers 1 and 3 (2 rows), text "two" (1 row)
    assert "'v'" in msg and "2 rows" in msg and "1 rows" in msg and "'two'" in msg


def test_unsupported_dtype_parquet_list_column():
    table = pa.table({"a": [1, 2], "lst": pa.array([[1, 2], [3]])})
    msg = refused("UNSUPPORTED_DTYPE", parquet_bytes(table), "nested.parquet")
    assert "'lst'" in msg


def test_unsupported_dtype_bytes_column():
    table = pa.table({"a": [1, 2], "raw": pa.array([b"\x00", b"\x01"])})
    msg = refused("UNSUPPORTED_DTYPE", parquet_bytes(table), "bytes.parquet")
    assert "'raw'" in msg and "bytes" in msg


# ---------------------------------------------------------------------------
# check_table on frames
# ---------------------------------------------------------------------------


def test_check_table_does_not_relabel_the_callers_frame():
    frame = pd.DataFrame({0: [1, 2], 1: ["a", "b"]})
    checked, dropped = check_table(frame, name="f")
    assert list(checked.columns) == ["0", "1"]
    assert list(frame.columns) == [0, 1]
    assert dropped == ()


def test_check_table_no_columns_and_no_rows():
    with pytest.raises(AuditInputError) as info:
        check_table(pd.DataFrame(index=[0, 1]), name="nocols")
    assert info.value.code == "NO_COLUMNS" and "'nocols'" in info.value.message
    with pytest.raises(AuditInputError) as info:
        check_table(pd.DataFrame({"a": []}), name="norows")
    assert info.value.code == "NO_ROWS" and "'norows'" in info.value.message


def test_check_table_accepts_bool_datetime_and_category():
    frame = pd.DataFrame(
        {
            "b": [True, False],
            "d": pd.to_datetime(["2020-01-01", "2021-01-01"]),
            "c": pd.Categorical(["x", "y"]),
        }
    )
    checked, _ = check_table(frame)
    assert checked.shape == (2, 3)


def test_loaded_table_is_a_loaded_table():
    assert isinstance(read_table(b"a\n1\n2\n", name="t.csv"), LoadedTable)


def test_cyrillic_cp1251_is_not_forced_to_cp1252():
    t = read_table("n\nПривет мир как дела\n".encode("cp1251"), name="ru.csv")
    assert t.frame["n"].tolist() == ["Привет мир как дела"]
