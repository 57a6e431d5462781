"""Tests of the expression language: hand-computed answers on toy data."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_core.errors import AuditInputError
from audit_core.expr import (
    FUNCTIONS,
    UNKNOWN,
    Binary,
    BoolOp,
    Call,
    Compare,
    Expr,
    ListLiteral,
    Literal,
    Membership,
    Name,
    Unary,
    evaluate_frame,
    evaluate_mask,
    evaluate_record,
    parse_expression,
    referenced_names,
    to_text,
)

P = parse_expression
NA = pd.NA


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [10, 20, 30, 40],
            "income": [1000.0, np.nan, 5000.0, 0.0],
            "city": ["Oslo", "Rome", None, "Bern"],
            "flag": pd.array([True, False, None, True], dtype="boolean"),
            "opened": pd.to_datetime(["2024-01-01", "2024-02-29 13:45", None, "2023-12-31"], format="ISO8601"),
            "monthly pay": [1, 2, 3, 4],
            "odd`name": [5, 6, 7, 8],
        }
    )


def ev(text: str, frame: pd.DataFrame) -> list:
    return evaluate_frame(P(text), frame).tolist()


def err(fn, code: str) -> AuditInputError:
    with pytest.raises(AuditInputError) as info:
        fn()
    assert info.value.code == code, info.value.message
    return info.value


# --------------------------------------------------------------------------
# Parsing: structure and precedence
# --------------------------------------------------------------------------
def test_precedence_tree():
    a, b, c = Name("a"), Name("b"), Name("c")
    assert P("a or b and c") == BoolOp("or", (a, BoolOp("and", (b, c))))
    assert P("not a and b") == BoolOp("and", (Unary("not", a), b))
    assert P("not a == b") == Unary("not", Compare("==", a, b))
    assert P("a + b * c") == Binary("+", a, Binary("*", b, c))
    assert P("a - b - c") == Binary("-", Binary("-", a, b), c)
    assert P("-a * b") == Binary("*", Unary("-", a), b)
    assert P("a or b or c") == BoolOp("or", (a, b, c))
    assert P("(a or b) or c") == BoolOp("or", (BoolOp("or", (a, b)), c))
    assert P("a not in [1, -2]") == Membership(a, ListLiteral((Literal(1), Literal(-2))), True)
    assert P("-3") == Literal(-3)
    assert P("- 2.5e1") == Literal(-25.0)


def test_literals():
    assert P("42") == Literal(42)
    assert P("1e-3") == Literal(0.001)
    assert P(".5") == Literal(0.5)
    assert P("'it\\'s'") == Literal("it's")
    assert P('"a\\"b\\\\c\\n"') == Literal('a"b\\c\n')
    assert P("true") == Literal(True) and P("false") == Literal(False)
    assert P('date("2024-01-31")') == Literal(dt.date(2024, 1, 31))
    # literals are typed: 1, 1.0 and true are different
    assert Literal(1) != Literal(1.0) and Literal(1) != Literal(True)
    assert P("`monthly pay`") == Name("monthly pay")
    assert P("`odd\\`name`") == Name("odd`name")


def test_referenced_names():
    e = P("a + `b c` > 3 and is_missing(d) or a in [1]")
    assert referenced_names(e) == frozenset({"a", "b c", "d"})
    assert referenced_names(P("1 + 2")) == frozenset()


def test_to_text_canonical():
    assert to_text(P("a-(b-c)")) == "a - (b - c)"
    assert to_text(P("(a-b)-c")) == "a - b - c"
    assert to_text(P("not(a and b)")) == "not (a and b)"
    assert to_text(P("`and` == 'x'")) == '`and` == "x"'
    assert to_text(P("x in [1,'a',true,date('2020-02-02')]")) == (
        'x in [1, "a", true, date("2020-02-02")]'
    )
    assert to_text(P("a * -2")) == "a * -2"


# --------------------------------------------------------------------------
# Frame evaluation, hand-computed
# --------------------------------------------------------------------------
def test_arithmetic_precedence(frame):
    assert ev("age + 2 * 3", frame) == [16, 26, 36, 46]
    assert ev("(age + 2) * 3", frame) == [36, 66, 96, 126]
    assert ev("age - 4 - 3", frame) == [3, 13, 23, 33]
    assert ev("age / 5 / 2", frame) == [1.0, 2.0, 3.0, 4.0]
    assert ev("-age * 2 + 1", frame) == [-19, -39, -59, -79]
    assert ev("age / 0", frame) == [NA, NA, NA, NA]  # division by zero is missing
    assert ev("income / 1000 + 1", frame) == [2.0, NA, 6.0, 1.0]
    assert evaluate_frame(P("age * 2"), frame).dtype == "Int64"


def test_comparisons_and_missing(frame):
    assert ev("age >= 20", frame) == [False, True, True, True]
    assert ev("income > 500", frame) == [True, NA, True, False]
    assert ev("city == 'Rome'", frame) == [False, True, NA, False]
    assert ev("city < 'P'", frame) == [True, False, NA, True]
    assert ev("is_missing(income)", frame) == [False, True, False, False]
    assert ev("not is_missing(city)", frame) == [True, True, False, True]
    assert list(evaluate_mask(P("income > 500"), frame)) == [True, False, True, False]


def test_membership(frame):
    assert ev("city in ['Oslo', 'Bern']", frame) == [True, False, NA, True]
    assert ev("city not in ['Oslo', 'Bern']", frame) == [False, True, NA, False]
    assert ev("age in [10, 40.0]", frame) == [True, False, False, True]
    assert ev("age not in []", frame) == [True, True, True, True]
    assert ev("not age in [20]", frame) == [True, False, True, True]


def test_kleene_logic(frame):
    # flag = [T, F, NA, T]; income > 500 = [T, NA, T, F]
    assert ev("flag and income > 500", frame) == [True, False, NA, False]
    assert ev("flag or income > 500", frame) == [True, NA, True, True]
    assert ev("not flag", frame) == [False, True, NA, False]
    assert ev("flag and false", frame) == [False, False, False, False]
    assert ev("flag or true", frame) == [True, True, True, True]
    assert ev("age > 15 and age < 35 or age == 40", frame) == [False, True, True, True]
    assert ev("age > 15 and (age < 35 or age == 10)", frame) == [False, True, True, False]


def test_dates(frame):
    # times are truncated to the day
    assert ev("opened == date('2024-02-29')", frame) == [False, True, NA, False]
    assert ev("opened - date('2024-01-01')", frame) == [0, 59, NA, -1]
    assert ev("year(opened)", frame) == [2024, 2024, NA, 2023]
    shifted = evaluate_frame(P("opened + 1"), frame)
    assert shifted.iloc[1] == pd.Timestamp("2024-03-01") and pd.isna(shifted.iloc[2])
    assert ev("year(opened - 1)", frame) == [2023, 2024, NA, 2023]
    assert ev("year(30 + opened)", frame) == [2024, 2024, NA, 2024]
    assert ev("opened < date('2024-01-01')", frame) == [False, False, NA, True]
    assert ev("opened in [date('2023-12-31')]", frame) == [False, False, NA, True]
    texts = pd.DataFrame({"d": ["2024-03-01", None]})
    assert evaluate_frame(P("date(d) - date('2024-02-01')"), texts).tolist() == [29, NA]


def test_backquoted_names(frame):
    assert ev("`monthly pay` * 2", frame) == [2, 4, 6, 8]
    assert ev("`odd\\`name` > 6", frame) == [False, False, True, True]


def test_functions(frame):
    assert ev("abs(age - 25)", frame) == [15, 5, 5, 15]
    assert ev("log(income)", frame)[:2] == [pytest.approx(math.log(1000)), NA]
    assert ev("log(income)", frame)[3] is NA  # log(0) is missing
    assert ev("min(age, 25)", frame) == [10, 20, 25, 25]
    assert ev("max(age, 25)", frame) == [25, 25, 30, 40]
    assert ev("max(income, 2000)", frame) == [2000.0, NA, 5000.0, 2000.0]
    assert ev("min(city, 'P')", frame) == ["Oslo", "P", NA, "Bern"]
    assert ev("max(opened, date('2024-01-15')) == date('2024-01-15')", frame) == [
        True, False, NA, True]
    assert ev("is_missing(flag)", frame) == [False, False, True, False]
    assert ev("year(date('1999-12-31'))", frame) == [1999] * 4


def test_object_and_categorical_columns():
    f = pd.DataFrame({
        "o": pd.Series([1, None, 3], dtype=object),
        "b": pd.Series([True, None, False], dtype=object),
        "c": pd.Categorical(["x", "y", "x"]),
        "n": pd.Series([None, None, None], dtype=object),
        "d": pd.Series([dt.date(2024, 1, 1), None, dt.date(2024, 1, 3)], dtype=object),
    })
    assert ev("o + 1", f) == [2, NA, 4]
    assert ev("not b", f) == [False, NA, True]
    assert ev("c == 'x'", f) == [True, False, True]
    assert ev("n == 1 or true", f) == [True, True, True]
    assert ev("n > 1", f) == [NA, NA, NA]
    assert ev("d - date('2024-01-01')", f) == [0, NA, 2]


def test_long_flat_chains_are_fine():
    f = pd.DataFrame({"x": [3, 500]})
    text = " or ".join(f"x == {i}" for i in range(300))
    assert evaluate_frame(P(text, max_length=10_000), f).tolist() == [True, False]
    text = "x in [" + ", ".join(str(i) for i in range(400)) + "]"
    assert evaluate_frame(P(text), f).tolist() == [True, False]


def _nest(depth: int, frames_left: int):
    """Run at reduced stack headroom to prove parsing needs few frames."""
    import inspect
    import sys

    used = len(inspect.stack(0))
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(used + frames_left)
    try:
        return P("abs(" * depth + "(x)" + ")" * depth, max_depth=64)
    finally:
        sys.setrecursionlimit(old)


def test_max_depth_64_is_safe():
    text = "(" * 63 + "x" + ")" * 63
    assert P(text, max_depth=64) == Name("x")
    e = P("not " * 63 + "x", max_depth=64)
    assert evaluate_record(e, {"x": True}) is False  # 63 nots
    assert to_text(e) == "not " * 63 + "x"
    err(lambda: P("(" * 64 + "x" + ")" * 64, max_depth=64), "EXPR_TOO_DEEP")
    # depth 64 = 62 calls + parentheses + name; needs < 650 frames
    assert isinstance(_nest(62, 650), Call)
    with pytest.raises(ValueError):
        P("x", max_depth=65)


# --------------------------------------------------------------------------
# Record evaluation
# --------------------------------------------------------------------------
def test_record_basic():
    r = {"age": 30, "city": "Oslo", "since": dt.date(2024, 1, 31), "x": None}
    assert evaluate_record(P("age * 2 + 1"), r) == 61
    assert evaluate_record(P("city in ['Oslo', 'Rome'] and age >= 18"), r) is True
    assert evaluate_record(P("since - date('2024-01-01')"), r) == 30
    assert evaluate_record(P("since + 1"), r) == dt.date(2024, 2, 1)
    assert evaluate_record(P("since - 31"), r) == dt.date(2023, 12, 31)
    assert evaluate_record(P("year(since)"), r) == 2024
    assert evaluate_record(P("x > 1"), r) is UNKNOWN  # None is missing
    assert evaluate_record(P("is_missing(x)"), r) is True
    assert evaluate_record(P("age / 0"), r) is UNKNOWN
    assert evaluate_record(P("abs(-4) + min(2, 3) + max(2, 3)"), r) == 9
    assert evaluate_record(P("log(1)"), r) == 0.0
    assert evaluate_record(P("date(city)"), {"city": "2020-05-06"}) == dt.date(2020, 5, 6)
    ts = {"t": pd.Timestamp("2024-03-01 10:00"), "n": np.int64(3), "f": np.float64(np.nan)}
    assert evaluate_record(P("t == date('2024-03-01') and n == 3 and is_missing(f)"), ts) is True


def test_record_kleene():
    U = {"unknown": "unknown"}
    assert evaluate_record(P("u and false"), {}, **U) is False
    assert evaluate_record(P("false and u"), {}, **U) is False
    assert evaluate_record(P("u or true"), {}, **U) is True
    assert evaluate_record(P("u and true"), {}, **U) is UNKNOWN
    assert evaluate_record(P("u or false"), {}, **U) is UNKNOWN
    assert evaluate_record(P("not u"), {}, **U) is UNKNOWN
    assert evaluate_record(P("u + 1 > 3"), {}, **U) is UNKNOWN
    assert evaluate_record(P("u in [1, 2]"), {}, **U) is UNKNOWN
    assert evaluate_record(P("is_missing(u)"), {}, **U) is True
    assert evaluate_record(P("a > 1 or u"), {"a": 2}, **U) is True
    with pytest.raises(TypeError):
        bool(UNKNOWN)
    assert repr(UNKNOWN) == "UNKNOWN"


def test_record_matches_frame_rowwise(frame):
    exprs = [
        "age + 2 * 3", "income / 1000", "flag and income > 500", "flag or income > 500",
        "not flag", "city in ['Oslo']", "city not in ['Oslo']", "is_missing(city)",
        "opened - date('2024-01-01')", "year(opened)", "min(age, 25)", "log(income)",
        "max(city, 'P')", "`monthly pay` - age",
    ]
    records = frame.to_dict("records")
    for text in exprs:
        e = P(text)
        col = evaluate_frame(e, frame)
        for i, rec in enumerate(records):
            got = evaluate_record(e, rec)
            want = col.iloc[i]
            if pd.isna(want):
                assert got is UNKNOWN, (text, i, got)
            elif isinstance(got, dt.date):
                assert pd.Timestamp(got) == want, (text, i)
            else:
                assert got == pytest.approx(want), (text, i, got, want)


# --------------------------------------------------------------------------
# Every error code, with its message
# --------------------------------------------------------------------------
def test_error_empty_and_limits():
    e = err(lambda: P("   "), "EXPR_EMPTY")
    assert "empty" in e.message
    e = err(lambda: P("a" * 2001), "EXPR_TOO_LONG")
    assert "2001 characters" in e.message and "2000" in e.message
    e = err(lambda: P("(" * 10_000 + "x" + ")" * 10_000), "EXPR_TOO_LONG")
    e = err(lambda: P("(" * 10_000 + "x" + ")" * 10_000, max_length=30_000), "EXPR_TOO_DEEP")
    assert "50 levels" in e.message and "character 51" in e.message
    err(lambda: P("not " * 5000 + "x", max_length=30_000), "EXPR_TOO_DEEP")
    err(lambda: P("-" * 5000 + "1", max_length=30_000), "EXPR_TOO_DEEP")
    err(lambda: P(" + ".join(["x"] * 200)), "EXPR_TOO_DEEP")  # tree depth counts too
    err(lambda: P("abs(" * 60 + "x" + ")" * 60), "EXPR_TOO_DEEP")


@pytest.mark.parametrize(
    "text, position, fragments",
    [
        ("a < b < c", 7, ["chained", "found '<'"]),
        ("age >", 6, ["expected a value", "found the end of the expression"]),
        ("a.__class__", 2, ["attribute access", "found '.'"]),
        ("x[0]", 2, ["subscripts", "found '['"]),
        ("lambda x: x", 1, ["lambda expressions are not allowed"]),
        ("a = 1", 3, ["use == to test equality"]),
        ("a && b", 3, ["use `and`"]),
        ("(a + 1", 7, ["')' to close the '(' at character 1"]),
        ("a + 1)", 6, ["never opened"]),
        ("'abc", 5, ["a closing ' for the text started at character 1"]),
        ("'a\\qb'", 3, ["escapes", "found '\\q'"]),
        ("x in y", 6, ["a list such as", "found the name `y`"]),
        ("x in [y]", 7, ["list items must be literal values"]),
        ("a b", 3, ["expected an operator or the end of the expression", "found the name `b`"]),
        ("2 ** 3", 3, ["powers are not supported"]),
        ("None == x", 1, ["is_missing"]),
        ("``", 1, ["a column name between the backquotes"]),
        ("(a)(b)", 4, ["only the functions"]),
        ("99999999999999999999", 1, ["an integer of at most"]),
        ("1e999", 1, ["a finite number"]),
        ("größe > 1", 3, ["found 'ö'", "backquoted"]),
    ],
)
def test_syntax_errors(text, position, fragments):
    e = err(lambda: P(text), "EXPR_SYNTAX")
    assert f"character {position}:" in e.message
    assert e.position == position
    for frag in fragments:
        assert frag in e.message, e.message


def test_unknown_function_and_arity():
    e = err(lambda: P("__import__('os')"), "EXPR_UNKNOWN_FUNCTION")
    assert "`__import__` at character 1" in e.message and "abs()" in e.message
    e = err(lambda: P("x + eval('1')"), "EXPR_UNKNOWN_FUNCTION")
    assert "`eval` at character 5" in e.message
    e = err(lambda: P("min(a)"), "EXPR_ARITY")
    assert e.message == "Function `min` at character 1 takes 2 arguments, but 1 was given."
    e = err(lambda: P("abs()"), "EXPR_ARITY")
    assert "takes 1 argument, but 0 were given" in e.message


def test_bad_date():
    e = err(lambda: P("d > date('2024-02-30')"), "EXPR_BAD_DATE")
    assert '"2024-02-30"' in e.message and "character 10" in e.message
    err(lambda: P("d in [date('31.01.2024')]"), "EXPR_BAD_DATE")
    f = pd.DataFrame({"d": ["2024-01-01", "01/02/2024"]}, index=["r1", "r2"])
    e = err(lambda: evaluate_frame(P("date(d) > date('2020-01-01')"), f), "EXPR_BAD_DATE")
    assert '"01/02/2024"' in e.message and "column `d`" in e.message and "'r2'" in e.message


def test_unknown_name(frame):
    e = err(lambda: evaluate_frame(P("agee > 3"), frame), "EXPR_UNKNOWN_NAME")
    assert "`agee`" in e.message and "Did you mean `age`?" in e.message
    e = err(lambda: evaluate_frame(P("zzz > 3"), frame), "EXPR_UNKNOWN_NAME")
    assert "Available: `age`, `income`" in e.message
    e = err(lambda: evaluate_record(P("cty == 'x'"), {"city": "x"}), "EXPR_UNKNOWN_NAME")
    assert "`cty`" in e.message and "field of the record" in e.message and "`city`" in e.message


def test_ambiguous_column():
    f = pd.DataFrame([[1, 2]], columns=["a", "a"])
    e = err(lambda: evaluate_frame(P("a > 1"), f), "EXPR_AMBIGUOUS_COLUMN")
    assert "`a` appears 2 times" in e.message


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("city > 3", ["cannot compare column `city` (text) with 3 (a number)"]),
        ("city + 1", ["'+' cannot be applied to column `city` (text)"]),
        ("age and flag", ["`and` needs conditions", "column `age` (a number)"]),
        ("not age", ["`not` needs conditions", "column `age`"]),
        ("-city", ["'-' needs a number", "column `city`"]),
        ("city in [1, 2]", ["column `city` (text)", "containing 1 (a number)"]),
        ("flag < true", ["only be compared with == or !="]),
        ("opened * 2", ["'*' cannot combine column `opened` (a date)"]),
        ("opened + 1.5", ["whole days"]),
        ("abs(city)", ["abs() needs a number", "column `city`"]),
        ("year(age)", ["year() needs a date", "column `age`"]),
        ("date(age)", ["date() needs text", "column `age`"]),
        ("min(age, city)", ["two values of the same type"]),
        ("max(flag, flag)", ["numbers, dates or text"]),
    ],
)
def test_type_errors_frame(frame, text, fragments):
    e = err(lambda: evaluate_frame(P(text), frame), "EXPR_TYPE")
    for frag in fragments:
        assert frag in e.message, e.message


def test_type_errors_other(frame):
    e = err(lambda: evaluate_mask(P("age + 1"), frame), "EXPR_TYPE")
    assert "a condition (true/false) is needed" in e.message
    mixed = pd.DataFrame({"m": pd.Series([1, "a"], dtype=object)})
    e = err(lambda: evaluate_frame(P("m > 0"), mixed), "EXPR_TYPE")
    assert "column `m` mixes values of different types" in e.message
    e = err(lambda: evaluate_record(P("x > 1"), {"x": "a"}), "EXPR_TYPE")
    assert "field `x` (text)" in e.message
    e = err(lambda: evaluate_record(P("x > 1"), {"x": [1]}), "EXPR_TYPE")
    assert "`x` has the unsupported type list" in e.message


# --------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------
_names = st.text(min_size=1, max_size=8)
_literals = st.one_of(
    st.integers(-(2**63) + 1, 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.booleans(),
    st.dates(),
).map(Literal)
_leaves = st.one_of(_literals, _names.map(Name))


def _is_number_literal(e: Expr) -> bool:
    return isinstance(e, Literal) and type(e.value) in (int, float)


def _extend(children):
    return st.one_of(
        st.builds(Unary, st.sampled_from(["-", "not"]), children).filter(
            lambda u: not (u.op == "-" and _is_number_literal(u.operand))
        ),
        st.builds(Binary, st.sampled_from(["+", "-", "*", "/"]), children, children),
        st.builds(Compare, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), children, children),
        st.builds(BoolOp, st.sampled_from(["and", "or"]),
                  st.lists(children, min_size=2, max_size=3).map(tuple)),
        st.builds(Membership, children,
                  st.lists(_literals, max_size=3).map(lambda xs: ListLiteral(tuple(xs))),
                  st.booleans()),
        st.builds(Call, st.sampled_from(["abs", "log", "is_missing", "year"]),
                  children.map(lambda c: (c,))),
        st.builds(Call, st.sampled_from(["min", "max"]), st.tuples(children, children)),
        st.builds(Call, st.just("date"), children.map(lambda c: (c,))).filter(
            lambda c: not (isinstance(c.args[0], Literal) and isinstance(c.args[0].value, str))
        ),
    )


trees = st.recursive(_leaves, _extend, max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_round_trip(tree):
    text = to_text(tree)
    parsed = P(text, max_length=100_000, max_depth=64)
    assert parsed == tree, text  # generated trees are canonical
    assert P(to_text(parsed), max_length=100_000, max_depth=64) == parsed


_GRAMMAR_CHARS = list("abxy_019.e+-*/<>=!()[],'\"`\\ ") + [
    "and ", "or ", "not ", " in ", "true", "date(", "abs(", "min(", "`a b`", "'2024-01-01'",
]
fuzz_texts = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("utf-8", errors="replace")),
    st.lists(st.sampled_from(_GRAMMAR_CHARS), max_size=60).map("".join),
    st.sampled_from([
        "__import__('os')", "__import__('os').system('ls')", "a.__class__",
        "().__class__.__bases__[0]", "lambda: 1", "x[0]", "open('f')", "eval('1')",
        "(" * 10_000, "(" * 10_000 + "x" + ")" * 10_000, "x" * 100_000, "'" + "a" * 5000,
        "not " * 3000, "-" * 3000 + "1", "[" * 3000, "abs(" * 3000, "\x00", "`", "\\",
    ]),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_texts)
def test_fuzz_parse_never_crashes(text):
    try:
        result = P(text)
    except AuditInputError as e:
        assert e.code.startswith("EXPR_") and e.message
    else:
        assert isinstance(result, Expr)
        assert P(to_text(result), max_length=100_000, max_depth=64) == result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_texts, st.dictionaries(st.sampled_from(["a", "b", "x", "y"]),
                                   st.one_of(st.none(), st.integers(-5, 5), st.booleans(),
                                             st.text(max_size=3), st.dates()), max_size=4))
def test_fuzz_record_evaluation_only_declared_errors(text, record):
    try:
        e = P(text)
        evaluate_record(e, record, unknown="unknown")
    except AuditInputError:
        pass


def test_functions_whitelist_is_small():
    assert set(FUNCTIONS) == {"abs", "log", "min", "max", "is_missing", "date", "year"}
