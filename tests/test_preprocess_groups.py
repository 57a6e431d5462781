"""Tests for audit_core.data.preprocess and audit_core.data.groups on hand-computed toys."""
from __future__ import annotations

import numpy as np
import pandas as pd
from pathlib import Path

import pytest

from audit_core.data.groups import (
    GroupRule,
    Grouping,
    apply_group_rules,
    grouping_from_raw_map,
    parse_group_csv,
    raw_origin_grouping,
)
from audit_core.data.preprocess import ORIGIN_COLUMNS, feature_origins, make_preprocessor
from audit_core.errors import MESSAGES, AuditInputError
from toy_data import PRE_TOY, PRE_TOY_EXPECTED, PRE_TOY_FEATURES, PRE_TOY_RAW, SQRT2


@pytest.fixture(scope="module")
def fitted():
    pre = make_preprocessor(["x"], ["c"], missing_indicators=True)
    Xt = pre.fit_transform(PRE_TOY)
    return pre, Xt


def test_group_codes_registered():
    assert {
        "GROUP_UNKNOWN_COLUMN",
        "GROUP_BLANK_NAME",
        "GROUP_CSV_HEADER",
        "GROUP_CSV_DUPLICATE",
        "GROUP_CSV_UNPARSEABLE",
        "GROUP_BAD_REGEX",
        "GROUP_REGEX_TOO_LONG",
        "GROUP_NO_FEATURES",
    } <= set(MESSAGES)


# ---------------------------------------------------------------------------
# Preprocessing
# ---------------------------------------------------------------------------


def test_transformed_matrix_by_hand(fitted):
    _, Xt = fitted
    # see toy_data.PRE_TOY_EXPECTED for the arithmetic
    np.testing.assert_allclose(Xt, PRE_TOY_EXPECTED, atol=1e-12)


def test_feature_origins(fitted):
    pre, _ = fitted
    origins = feature_origins(pre)
    assert tuple(origins.columns) == ORIGIN_COLUMNS
    assert tuple(origins["feature"]) == PRE_TOY_FEATURES
    assert tuple(origins["raw_column"]) == PRE_TOY_RAW
    assert tuple(origins["kind"]) == ("numeric", "onehot", "onehot", "onehot", "missing_indicator")
    assert tuple(origins["category"]) == ("", "a", "b", "c", "")


def test_unknown_category_is_an_all_zero_row(fitted):
    pre, _ = fitted
    out = pre.transform(pd.DataFrame({"x": [5.0], "c": ["zebra"]}))
    # x = 5 -> (5 - 3) / sqrt2 = sqrt2; c unknown -> 0, 0, 0; x present -> indicator 0
    np.testing.assert_allclose(out, [[SQRT2, 0.0, 0.0, 0.0, 0.0]], atol=1e-12)


def test_missing_at_transform_time_uses_training_median(fitted):
    pre, _ = fitted
    out = pre.transform(pd.DataFrame({"x": [np.nan], "c": ["c"]}))
    # x missing -> median 3 -> (3 - 3) / sqrt2 = 0; c -> [0, 0, 1]; indicator 1
    np.testing.assert_allclose(out, [[0.0, 0.0, 0.0, 1.0, 1.0]], atol=1e-12)


def test_categorical_missing_gets_mode_and_indicator():
    frame = pd.DataFrame({"c": ["u", None, "v", "u"]})
    pre = make_preprocessor([], ["c"], missing_indicators=True)
    Xt = pre.fit_transform(frame)
    # mode of {u, v, u} = u -> row 1 becomes u; levels u, v; indicator only for row 1
    np.testing.assert_array_equal(Xt, [[1, 0, 0], [1, 0, 1], [0, 1, 0], [1, 0, 0]])
    origins = feature_origins(pre)
    assert list(origins["feature"]) == ["c=u", "c=v", "c__missing"]
    assert set(origins["raw_column"]) == {"c"}


def test_no_missing_indicators_by_default():
    pre = make_preprocessor(["x"], ["c"])
    Xt = pre.fit_transform(PRE_TOY)
    np.testing.assert_allclose(Xt, PRE_TOY_EXPECTED[:, :4], atol=1e-12)
    assert list(feature_origins(pre)["feature"]) == list(PRE_TOY_FEATURES[:4])


def test_new_missing_values_at_transform_time_are_not_an_error():
    # x had no missing value in training: it has no indicator, and a missing x later
    # (say in the target domain) is imputed with the median instead of raising.
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0], "c": ["a", None, "a"]})
    pre = make_preprocessor(["x"], ["c"], missing_indicators=True)
    pre.fit(train)
    out = pre.transform(pd.DataFrame({"x": [np.nan], "c": ["a"]}))
    # median 2, mean 2 -> 0; c=a -> [1]; c__missing = 0
    np.testing.assert_allclose(out, [[0.0, 1.0, 0.0]], atol=1e-12)


def test_column_entirely_missing_in_training_keeps_its_output_column():
    train = pd.DataFrame({"x": [1.0, 3.0], "e": [np.nan, np.nan]})
    pre = make_preprocessor(["x", "e"], [], missing_indicators=False)
    Xt = pre.fit_transform(train)
    origins = feature_origins(pre)
    assert Xt.shape[1] == len(origins) == 2


def test_integer_codes_match_when_read_as_float_later():
    # Training reads the code column as int; later a missing value makes it float.
    train = pd.DataFrame({"k": [1, 2, 1, 2]})
    pre = make_preprocessor([], ["k"])
    pre.fit(train)
    assert list(feature_origins(pre)["feature"]) == ["k=1", "k=2"]
    out = pre.transform(pd.DataFrame({"k": [2.0, 1.0]}))
    np.testing.assert_array_equal(out, [[0, 1], [1, 0]])
    out2 = pre.transform(pd.DataFrame({"k": ["1"]}))  # "1" as text agrees too
    np.testing.assert_array_equal(out2, [[1, 0]])


# ---------------------------------------------------------------------------
# Groupings
# ---------------------------------------------------------------------------


def test_raw_origin_grouping(fitted):
    g = raw_origin_grouping(feature_origins(fitted[0]))
    assert g.names == ("x", "c")
    assert g.group_of == ("x", "c", "c", "c", "x")
    assert g.n_groups == 2
    assert [list(i) for i in g.index] == [[0, 4], [1, 2, 3]]
    np.testing.assert_array_equal(g.membership, [[1, 0, 0, 0, 1], [0, 1, 1, 1, 0]])
    assert g.raw_map() == {"x": "x", "c": "c"}
    sizes = g.group_sizes()
    assert sizes.to_dict("list") == {"group": ["x", "c"], "raw_columns": ["x", "c"], "n_features": [2, 3]}


def test_grouping_from_raw_map(fitted):
    origins = feature_origins(fitted[0])
    g = grouping_from_raw_map(origins, {"x": "all", "c": "all"})
    assert g.names == ("all",) and g.group_of == ("all",) * 5
    assert list(g.to_frame()["raw_column"]) == list(PRE_TOY_RAW)


def test_grouping_unknown_column(fitted):
    with pytest.raises(AuditInputError) as info:
        grouping_from_raw_map(feature_origins(fitted[0]), {"nope": "g"})
    assert info.value.code == "GROUP_UNKNOWN_COLUMN"
    assert "'nope'" in info.value.message and "x, c" in info.value.message


@pytest.mark.parametrize("blank", ["", "   ", None, float("nan")])
def test_grouping_blank_name(fitted, blank):
    with pytest.raises(AuditInputError) as info:
        grouping_from_raw_map(feature_origins(fitted[0]), {"c": blank})
    assert info.value.code == "GROUP_BLANK_NAME"
    assert "'c'" in info.value.message


def test_grouping_no_features():
    with pytest.raises(AuditInputError) as info:
        raw_origin_grouping(pd.DataFrame(columns=list(ORIGIN_COLUMNS)))
    assert info.value.code == "GROUP_NO_FEATURES"
    assert "no feature columns" in info.value.message


def test_hash_is_stable_and_sensitive(fitted):
    origins = feature_origins(fitted[0])
    a = grouping_from_raw_map(origins, {"x": "g1", "c": "g2"})
    b = grouping_from_raw_map(origins, {"x": "g1", "c": "g2"})
    c = grouping_from_raw_map(origins, {"x": "g1", "c": "g1"})
    assert a.hash == b.hash == a.hash
    assert len(a.hash) == 64 and int(a.hash, 16) >= 0
    assert a.hash != c.hash
    # the hash covers the features too, not only the group names
    d = Grouping(("x", "y"), ("x", "y"), ("g", "g"), ("g",))
    e = Grouping(("x", "z"), ("x", "z"), ("g", "g"), ("g",))
    assert d.hash != e.hash


def test_group_rules_prefix_regex_and_order():
    cols = ["bureau_score", "bureau_n", "age", "income_m", "income_y", "region"]
    rules = [
        GroupRule(pattern="bureau_", group="bureau"),
        GroupRule(pattern=r"^income_[my]$", group="income", kind="regex"),
        GroupRule(pattern="b", group="late"),  # never reached for bureau_*: earlier rule wins
        GroupRule(pattern="g", group="has_g", kind="regex"),  # re.search: anywhere in the name
    ]
    assert apply_group_rules(cols, rules) == {
        "bureau_score": "bureau",
        "bureau_n": "bureau",
        "income_m": "income",
        "income_y": "income",
        "age": "has_g",
        "region": "has_g",
    }


def test_group_rules_earlier_wins_over_later_overlap():
    out = apply_group_rules(["ab"], [GroupRule(pattern="a", group="first"), GroupRule(pattern="ab", group="second")])
    assert out == {"ab": "first"}


def test_prefix_rule_is_not_a_regex():
    assert apply_group_rules(["a.b", "axb"], [GroupRule(pattern="a.", group="g")]) == {"a.b": "g"}


def test_group_rules_bad_regex():
    with pytest.raises(AuditInputError) as info:
        apply_group_rules(["a"], [GroupRule(pattern="(unclosed", group="g", kind="regex")])
    assert info.value.code == "GROUP_BAD_REGEX"
    assert "'(unclosed'" in info.value.message


def test_regex_rules_have_no_catastrophic_backtracking():
    """Known answers for nested quantifiers on long names (RE2, linear time).

    Python's ``re`` needs about 2**n steps for ``^(a+)+$`` against ``"a" * n + "!"`` while holding the
    interpreter lock, which freezes every session of the app: n = 5000 would never end. The work runs in a subprocess, so a
    regression fails the test instead of hanging the suite; the time limit is only a hang guard.
    """
    import subprocess
    import sys

    code = (
        "from audit_core.data.groups import GroupRule, apply_group_rules\n"
        "cols = ['a' * 5000 + '!', 'a' * 5000, 'x' * 3000 + 'y']\n"
        "rules = [GroupRule(pattern=r'^(a+)+$', group='nested', kind='regex'),\n"
        "         GroupRule(pattern=r'(x|x)*y$', group='alternation', kind='regex')]\n"
        "print(sorted(apply_group_rules(cols, rules).items(), key=lambda kv: len(kv[0])))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str([("x" * 3000 + "y", "alternation"), ("a" * 5000, "nested")])


@pytest.mark.parametrize("pattern, part", [(r"(a)\1", "backreferences"), (r"(?=a)b", "lookahead"),
                                           ("x" * 1001, "1000")])
def test_regex_rules_outside_re2_are_refused_by_name(pattern, part):
    with pytest.raises(AuditInputError) as info:
        apply_group_rules(["a"], [GroupRule(pattern=pattern, group="g", kind="regex")])
    assert info.value.code in {"GROUP_BAD_REGEX", "GROUP_REGEX_TOO_LONG"} and part in info.value.message


RAW = ["age", "income", "region"]


def test_parse_group_csv_valid():
    data = "\ufeffcolumn,group\nage, person\nincome,money\n\n".encode("utf-8")
    assert parse_group_csv(data, RAW) == {"age": "person", "income": "money"}
    assert parse_group_csv("Column,Group\nregion,place\n", RAW) == {"region": "place"}


@pytest.mark.parametrize("text", ["col,grp\nage,a\n", "column,group,extra\nage,a,b\n", ""])
def test_parse_group_csv_bad_header(text):
    with pytest.raises(AuditInputError) as info:
        parse_group_csv(text, RAW)
    assert info.value.code == "GROUP_CSV_HEADER"
    assert "'column,group'" in info.value.message


def test_parse_group_csv_duplicate():
    with pytest.raises(AuditInputError) as info:
        parse_group_csv("column,group\nage,a\nincome,b\nage,c\n", RAW)
    assert info.value.code == "GROUP_CSV_DUPLICATE"
    assert "'age'" in info.value.message and "rows 2 and 4" in info.value.message


def test_parse_group_csv_unknown_column():
    with pytest.raises(AuditInputError) as info:
        parse_group_csv("column,group\nheight,a\n", RAW)
    assert info.value.code == "GROUP_UNKNOWN_COLUMN"
    assert "'height'" in info.value.message and "age, income, region" in info.value.message


def test_parse_group_csv_blank_group():
    with pytest.raises(AuditInputError) as info:
        parse_group_csv("column,group\nage,  \n", RAW)
    assert info.value.code == "GROUP_BLANK_NAME"
    assert "'age'" in info.value.message


def test_parse_group_csv_unparseable():
    with pytest.raises(AuditInputError) as info:
        parse_group_csv(b"column,group\nage,\xff\xfe\n", RAW)
    assert info.value.code == "GROUP_CSV_UNPARSEABLE"
    with pytest.raises(AuditInputError) as info:
        parse_group_csv("column,group\nage,a,b\n", RAW)
    assert info.value.code == "GROUP_CSV_UNPARSEABLE"
    assert "row 2 has 3 fields" in info.value.message
