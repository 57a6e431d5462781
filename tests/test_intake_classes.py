"""One test (or a few) per class of misleading or damaging input found in the real-data and hardening issues.

Each file is generated here; every expected value is written out by hand.
Before these fixes: gzip and UTF-16 files were "ragged rows", a multi-sheet
workbook with an empty first sheet had "no columns", decimal commas and
thousands separators stayed text, "NA" became missing, trailing spaces split
labels, "00001" became 1, and a numeric column ``c=a`` duplicated a one-hot name.
"""
from __future__ import annotations

import gzip
import io
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.data.intake import ReadOptions, list_sheets, read_table, read_tables
from audit_core.errors import MESSAGES, AuditInputError

NEW_CODES = {"NOT_A_TABLE", "GZIP_CAP", "EXCEL_SHEET_EMPTY", "EXCEL_NO_SHEET", "EXCEL_ALL_EMPTY", "COLUMN_NAMES_COUNT",
             "MULTI_FILE_COLUMNS", "MULTI_FILE_FORMAT", "MULTI_FILE_DUPLICATE", "MISSING_CODE_UNKNOWN_COLUMN",
             "READ_SINGLE_COLUMN", "READ_AMBIGUOUS_NUMBER", "READ_KEY_TEXT"}

CSV = "id,amount,label\n" + "".join(f"{i:05d},{i * 1.5},{'yes' if i % 3 else 'no'}\n" for i in range(1, 41))


def refused(code: str, data: bytes, name: str, **opts) -> str:
    with pytest.raises(AuditInputError) as info:
        read_table(data, name=name, options=ReadOptions(**opts))
    assert info.value.code == code, info.value.message
    return info.value.message


def test_new_codes_are_registered():
    assert NEW_CODES <= set(MESSAGES)


# ---------------------------------------------------------------------------
# What the file is: gzip, UTF-16 without BOM, other binaries, any extension
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["data.csv", "data.csv.gz", "data"])
def test_gzip_named_csv_is_expanded_and_read(name):
    t = read_table(gzip.compress(CSV.encode()), name=name)
    assert t.frame.shape == (40, 3) and t.report.compression == "gzip"
    assert "gzip-compressed" in " ".join(t.report.lines())
    assert t.frame["amount"].iloc[:2].tolist() == [1.5, 3.0]


def test_gzip_bomb_refused_at_the_expansion_cap():
    data = gzip.compress(b"a,b\n" + b"1,2\n" * 1_000_000)  # 4 MB of text packs into a few kB
    assert len(data) < 100_000
    msg = refused("GZIP_CAP", data, "bomb.csv", max_expansion_bytes=1_000_000)
    # cap 1,000,000 / 1,048,576 = 0.95 -> "1.0 MB"
    assert "'bomb.csv'" in msg and "more than the 1.0 MB" in msg and "AUDIT_MAX_EXPANSION_MB" in msg


def test_truncated_gzip_is_declared():
    msg = refused("UNPARSEABLE", gzip.compress(CSV.encode())[:40], "cut.csv")
    assert "gzip" in msg


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_detected(encoding):
    data = CSV.replace("yes", "oui-é").encode(encoding)
    assert not data.startswith((b"\xff\xfe", b"\xfe\xff"))
    t = read_table(data, name="u.csv")
    assert t.encoding == encoding and "without a byte-order mark" in t.report.encoding_note
    assert t.frame.shape == (40, 3) and t.frame["label"].iloc[0] == "oui-é"


@pytest.mark.parametrize(
    "data, what",
    [
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "legacy Excel"),
        (b"%PDF-1.7\n...", "PDF"),
        (pickle.dumps({"a": 1}), "pickle"),
        (b"BZh91AY&SY" + b"\x00" * 20, "bzip2"),
    ],
)
def test_known_binary_files_say_what_they_are(data, what):
    msg = refused("NOT_A_TABLE", data, "table.csv")
    assert what in msg and "'table.csv'" in msg


def test_zip_archive_names_its_members():
    buf = io.BytesIO()
    import zipfile

    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("inner.csv", CSV)
    msg = refused("NOT_A_TABLE", buf.getvalue(), "bundle.csv")
    assert "zip archive" in msg and "inner.csv" in msg


@pytest.mark.parametrize("data, what", [(b'{"a": 1}', "JSON"), (b"<!DOCTYPE html><html>", "HTML"),
                                        (b"\x00\x01\x02\x03" * 30, "binary")])
def test_non_tables_are_named(data, what):
    assert what in refused("UNKNOWN_FORMAT", data, "x.dat")


@pytest.mark.parametrize("name", ["adult.data", "SouthGermanCredit.asc", "table.xyz", "noext"])
def test_text_is_read_whatever_the_extension(name):
    t = read_table(b"a b c\n1 2 x\n3 4 y\n", name=name)
    assert list(t.frame.columns) == ["a", "b", "c"] and t.delimiter == " "


def test_a_html_like_header_stays_a_csv():
    t = read_table(b"<script>alert(1)</script>,y\n1,2\n3,4\n", name="h.csv")
    assert list(t.frame.columns) == ["<script>alert(1)</script>", "y"]


# ---------------------------------------------------------------------------
# Delimiters and header decision
# ---------------------------------------------------------------------------


def test_runs_of_spaces_and_tabs_are_one_delimiter():
    t = read_table(b"a   b\tc\n1  2   3\n 4 5\t6\n", name="w.txt")
    assert t.delimiter == " " and t.frame.to_numpy().tolist() == [[1, 2, 3], [4, 5, 6]]


def test_comma_plus_space_gives_clean_values():
    t = read_table(b"x, y\n1, Private\n2, State-gov\n", name="c.csv")
    assert list(t.frame.columns) == ["x", "y"] and t.frame["y"].tolist() == ["Private", "State-gov"]


def test_single_column_warns():
    t = read_table(b"a b;c\nthis is one column\nand another line here\n", name="one.csv")
    assert t.frame.shape[1] == 1 and t.report.warning_codes == ("READ_SINGLE_COLUMN",)
    assert "'one.csv' was read as a single column" in t.report.warnings[0][1]


@pytest.mark.parametrize(
    "text, header",
    [
        ("39,State-gov,77516\n50,Private,83311\n38,Private,215646\n", False),  # numbers in the first row
        ("A11,6,A34\nA12,48,A32\nA11,12,A34\n", False),  # first value repeats below
        ("age,work,w\n39,Private,77516\n50,Private,83311\n", True),  # names over numbers
        ("name,city\nAnn,Paris\nBob,Lyon\n", True),  # no evidence either way: a header
        ("?,x,1\n1,y,2\n2,z,3\n", False),  # a missing code cannot be a name
    ],
)
def test_header_decision(text, header):
    t = read_table(text.encode(), name="h.csv")
    assert t.report.header is header
    assert t.frame.shape[0] == (2 if header else 3)
    assert (list(t.frame.columns) == ["col_1", "col_2", "col_3"]) is (not header)


def test_explicit_header_choices_win():
    t = read_table(b"name,city\nAnn,Paris\nBob,Lyon\n", name="h.csv", options=ReadOptions(header="none"))
    assert t.frame.shape == (3, 2) and list(t.frame.columns) == ["col_1", "col_2"]
    t = read_table(b"1,2\n3,4\n", name="h.csv", options=ReadOptions(header="first_row"))
    assert list(t.frame.columns) == ["1", "2"] and t.frame.shape == (1, 2)


def test_given_names_and_their_count():
    t = read_table(b"1,2\n3,4\n", name="n.csv", options=ReadOptions(column_names=("a", "b")))
    assert list(t.frame.columns) == ["a", "b"] and t.frame.shape == (2, 2)
    msg = refused("COLUMN_NAMES_COUNT", b"1,2\n3,4\n", "n.csv", column_names=("a", "b", "c"))
    assert "3 column name(s)" in msg and "2 column(s)" in msg


# ---------------------------------------------------------------------------
# Excel: several sheets
# ---------------------------------------------------------------------------


def _workbook(sheets: dict[str, pd.DataFrame]) -> bytes:
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as w:
        for name, frame in sheets.items():
            frame.to_excel(w, sheet_name=name, index=False)
    return buf.getvalue()


BOOK = _workbook({"Cover": pd.DataFrame(), "Data": pd.DataFrame({"a": range(30), "b": ["x", "y"] * 15}),
                  "Notes": pd.DataFrame({"note": ["n"]})})


def test_sheets_are_listed_with_their_sizes():
    assert [(s.name, s.n_rows, s.n_columns) for s in list_sheets(BOOK, name="b.xlsx")] == [
        ("Cover", 0, 0), ("Data", 31, 2), ("Notes", 2, 1)]


def test_empty_first_sheet_reads_the_first_with_data():
    t = read_table(BOOK, name="b.xlsx")
    assert t.report.sheet == "Data" and t.frame.shape == (30, 2)
    assert "other sheets" in " ".join(t.report.lines())


def test_a_chosen_sheet_is_read():
    t = read_table(BOOK, name="b.xlsx", options=ReadOptions(sheet="Notes"))
    assert t.frame["note"].tolist() == ["n"]


def test_an_empty_chosen_sheet_names_the_sheets_with_data():
    msg = refused("EXCEL_SHEET_EMPTY", BOOK, "b.xlsx", sheet=0)
    assert "'Cover'" in msg and "'Data' (31 rows × 2 columns)" in msg and "'Notes'" in msg


def test_unknown_sheet_and_empty_book():
    assert "'Cover', 'Data', 'Notes'" in refused("EXCEL_NO_SHEET", BOOK, "b.xlsx", sheet="Summary")
    refused("EXCEL_ALL_EMPTY", _workbook({"A": pd.DataFrame(), "B": pd.DataFrame()}), "e.xlsx")


# ---------------------------------------------------------------------------
# Numbers written as text: decimal commas, thousands separators
# ---------------------------------------------------------------------------


def test_european_csv_reads_decimal_commas_as_numbers():
    text = "name;price;qty\n" + "".join(f"n{i};{i},{i % 10}5;{i}\n" for i in range(1, 30))
    t = read_table(text.encode(), name="eu.csv")
    assert t.delimiter == ";" and t.frame["price"].iloc[:3].tolist() == [1.15, 2.25, 3.35]
    assert t.report.conversions == (("price", "with a decimal comma (1,5 = 1.5)"),)
    assert pd.api.types.is_integer_dtype(t.frame["qty"].dtype)


def test_thousands_separators_are_read_as_numbers():
    text = 'name,income\n' + "".join(f'n{i},"{i * 12345:,}.5"\n' for i in range(1, 30))
    t = read_table(text.encode(), name="th.csv")
    assert t.frame["income"].iloc[:2].tolist() == [12345.5, 24690.5]
    assert t.report.conversions[0][0] == "income"


def test_dot_thousands_with_decimal_comma():
    t = read_table("a;b\n1.234,5;x\n12,25;y\n".encode(), name="d.csv")
    assert t.frame["a"].tolist() == [1234.5, 12.25]


def test_ambiguous_commas_stay_text_with_a_warning():
    # "1,234": 1234 with a thousands separator, or 1.234 with a decimal comma?
    t = read_table(b'a,b\n"1,234",x\n"12,500",y\n', name="amb.csv")
    assert t.frame["a"].tolist() == ["1,234", "12,500"]
    assert t.report.warning_codes == ("READ_AMBIGUOUS_NUMBER",)
    assert "'a'" in t.report.warnings[0][1] and "decimal mark" in t.report.warnings[0][1]


def test_ambiguous_commas_settled_by_another_column_or_the_option():
    t = read_table("a;b\n1,234;0,5\n12,500;2,25\n".encode(), name="eu.csv")
    assert t.frame["a"].tolist() == [1.234, 12.5]  # column b shows the comma is a decimal mark
    t = read_table(b'a,b\n"1,234",x\n"12,500",y\n', name="amb.csv", options=ReadOptions(decimal="."))
    assert t.frame["a"].tolist() == [1234, 12500]
    t = read_table(b'a,b\n"1,234",x\n"12,500",y\n', name="amb.csv", options=ReadOptions(decimal=","))
    assert t.frame["a"].tolist() == [1.234, 12.5]


# ---------------------------------------------------------------------------
# Missing codes are proposed, never applied silently
# ---------------------------------------------------------------------------


NA_TEXT = "region,x,income\n" + "".join(
    f"{['EU', 'NA', 'AS'][i % 3]},{i},{'?' if i % 5 == 0 else i * 10}\n" for i in range(30))


def test_na_category_stays_a_category_and_is_proposed():
    t = read_table(NA_TEXT.encode(), name="na.csv")
    assert t.frame["region"].tolist()[:3] == ["EU", "NA", "AS"] and t.frame["region"].isna().sum() == 0
    props = {(p.column, p.code): (p.count, p.makes_numeric) for p in t.report.missing_proposals}
    # i % 3 == 1 for 10 of 30 rows; "?" at i = 0, 5, ..., 25: 6 rows.
    assert props == {("region", "NA"): (10, False), ("income", "?"): (6, True)}
    assert t.frame["income"].isna().sum() == 0  # not applied


def test_accepted_codes_apply_to_their_column_only():
    t = read_table(NA_TEXT.encode(), name="na.csv", options=ReadOptions(missing_codes=(("income", "?"),)))
    assert t.frame["income"].isna().sum() == 6 and pd.api.types.is_float_dtype(t.frame["income"].dtype)
    assert t.frame["region"].isna().sum() == 0
    assert t.report.missing_applied == (("income", "?", 6),)
    assert [p.key for p in t.report.missing_proposals] == [("region", "NA")]


def test_a_code_for_an_unknown_column_is_refused():
    msg = refused("MISSING_CODE_UNKNOWN_COLUMN", NA_TEXT.encode(), "na.csv", missing_codes=(("incme", "?"),))
    assert "'incme'" in msg and "'income'" in msg


def test_nan_spelled_out_is_proposed_not_silently_missing():
    t = read_table(b"v\n1\nnan\n3\n", name="n.csv")
    assert t.frame["v"].tolist() == ["1", "nan", "3"]
    assert [(p.code, p.makes_numeric) for p in t.report.missing_proposals] == [("nan", True)]


# ---------------------------------------------------------------------------
# Spaces, keys, booleans
# ---------------------------------------------------------------------------


def test_both_ends_are_trimmed_the_same_way():
    t = read_table(b'label,x\nyes ,1\n" yes",2\nyes,3\n no ,4\n', name="s.csv")
    assert t.frame["label"].tolist() == ["yes", "yes", "yes", "no"]
    assert t.report.stripped == (("label", 3),)  # "yes ", the quoted " yes" and " no "
    assert "both read 'yes'" in " ".join(t.report.lines())


def test_leading_zero_keys_stay_text():
    t = read_table(b"key,v\n00001,1\n00002,2\n00010,3\n", name="k.csv")
    assert t.frame["key"].tolist() == ["00001", "00002", "00010"]
    assert t.report.warning_codes == ("READ_KEY_TEXT",)


def test_long_digit_strings_stay_text():
    t = read_table(b"acct,v\n1234567890123456789,1\n2234567890123456789,2\n", name="k.csv")
    assert t.frame["acct"].tolist() == ["1234567890123456789", "2234567890123456789"]


def test_zero_alone_and_decimals_are_numbers():
    t = read_table(b"v,w\n0,0.5\n10,0.25\n", name="z.csv")
    assert t.frame["v"].tolist() == [0, 10] and t.frame["w"].tolist() == [0.5, 0.25]


# ---------------------------------------------------------------------------
# Several files stacked
# ---------------------------------------------------------------------------


def test_stacked_files_must_have_the_same_columns():
    a, b = b"x,y\n1,2\n", b"x,z\n3,4\n"
    with pytest.raises(AuditInputError) as info:
        read_tables([(a, "a.csv"), (b, "b.csv")])
    assert info.value.code == "MULTI_FILE_COLUMNS"
    assert "'b.csv'" in info.value.message and "'z'" in info.value.message and "'y'" in info.value.message
    with pytest.raises(AuditInputError) as info:
        read_tables([(a, "a.csv"), (b"x\n1\n", "c.csv")])
    assert "it has 1 columns, 'a.csv' has 2" in info.value.message


def test_stacking_names_each_row_file_and_types_once():
    t = read_tables([(b"x,s\n1,a\n", "one.csv"), (b"x,s\n2.5,?\n", "two.csv")])
    assert t.frame["source_file"].tolist() == ["one.csv", "two.csv"]
    assert t.frame["x"].tolist() == [1.0, 2.5] and [p.key for p in t.report.missing_proposals] == [("s", "?")]
    t = read_tables([(b"source_file,v\nq,1\n", "a.csv"), (b"source_file,v\nr,2\n", "b.csv")])
    assert t.report.source_column == "source_file_2" and t.frame["source_file_2"].tolist() == ["a.csv", "b.csv"]


def test_stacking_refuses_non_text_and_repeats():
    with pytest.raises(AuditInputError) as info:
        read_tables([(b"x\n1\n", "a.csv"), (BOOK, "b.xlsx")])
    assert info.value.code == "MULTI_FILE_FORMAT" and "'b.xlsx'" in info.value.message
    with pytest.raises(AuditInputError) as info:
        read_tables([(b"x\n1\n", "a.csv"), (b"x\n2\n", "a.csv")])
    assert info.value.code == "MULTI_FILE_DUPLICATE"


# ---------------------------------------------------------------------------
# Transformed names are unique by construction (c=a)
# ---------------------------------------------------------------------------


def test_numeric_column_named_like_a_one_hot_feature():
    from audit_core.data.preprocess import feature_origins, make_preprocessor

    X = pd.DataFrame({"c": ["a", "b", "a"], "c=a": [1.0, 2.0, np.nan], "x__missing": [1.0, 2.0, 3.0]})
    pre = make_preprocessor(["c=a", "x__missing"], ["c"], missing_indicators=True).fit(X)
    o = feature_origins(pre)
    assert list(o["feature"]) == ["c\\=a", "x\\__missing", "c=a", "c=b", "c\\=a__missing"]
    assert list(o["raw_column"]) == ["c=a", "x__missing", "c", "c", "c=a"]


NAME = st.lists(st.sampled_from(list("ab=_\\") + ["__missing", "=a"]), max_size=6).map("".join)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(names=st.lists(NAME, min_size=1, max_size=5, unique=True), levels=st.lists(NAME, min_size=1, max_size=3, unique=True))
def test_transformed_names_never_collide(names, levels):
    """Every raw column as numeric, as categorical with the given levels, and with an indicator."""
    from audit_core.data.preprocess import feature_name_part

    feats = []
    for n in names:
        part = feature_name_part(n)
        feats += [part, part + "__missing"] + [f"{part}={lv}" for lv in levels]
    assert len(feats) == len(set(feats))
