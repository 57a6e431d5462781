"""Tests for audit_core.data.roles: hand-checked inference and overrides."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.data.roles import FEATURE_ROLES, ROLES, apply_role_overrides, infer_role, infer_roles
from audit_core.errors import MESSAGES, AuditInputError

N = 30  # > 20 rows, so "one value per row" can mean identifier


def test_role_codes_registered():
    assert {"ROLE_UNKNOWN_COLUMN", "ROLE_INVALID", "ROLE_NOT_NUMERIC"} <= set(MESSAGES)
    assert FEATURE_ROLES == {"numeric", "categorical"}
    assert set(ROLES) == {"numeric", "categorical", "identifier", "constant", "ignore"}


def test_docstring_example_by_hand():
    # x has 3 distinct floats -> numeric; c has 2 distinct strings out of 3 -> categorical;
    # k has one distinct value -> constant
    frame = pd.DataFrame({"x": [1.5, 2.0, 3.1], "c": ["a", "b", "a"], "k": [7, 7, 7]})
    assert infer_roles(frame) == {"x": "numeric", "c": "categorical", "k": "constant"}


def test_numeric():
    assert infer_role(pd.Series([0.5, 1.5, 2.5, np.nan], name="income")) == "numeric"
    # integers with repeats are counts, not keys
    assert infer_role(pd.Series([1, 2, 2, 3] * 8, name="children")) == "numeric"


def test_unique_integers_named_like_a_key_are_identifiers():
    ids = pd.Series(np.arange(1000, 1000 + N), name="customer_id")
    assert infer_role(ids) == "identifier"
    for name in ("id", "ID", "record", "row_key", "id_number", "uuid"):
        assert infer_role(ids.rename(name)) == "identifier", name


def test_unique_integers_with_a_plain_name_stay_numeric():
    assert infer_role(pd.Series(np.arange(N), name="amount")) == "numeric"
    # "paid" contains "id" but is not an id-like name
    assert infer_role(pd.Series(np.arange(N), name="paid")) == "numeric"


def test_few_unique_integers_named_id_stay_numeric():
    # 20 rows is not > 20: too few to call it a key
    assert infer_role(pd.Series(np.arange(20), name="id")) == "numeric"


def test_unique_floats_named_id_stay_numeric():
    assert infer_role(pd.Series(np.arange(N) + 0.5, name="score_id")) == "numeric"


def test_unique_text_is_an_identifier():
    s = pd.Series([f"name {i}" for i in range(N)], name="full_name")
    assert infer_role(s) == "identifier"


def test_high_cardinality_text_is_an_identifier():
    # 300 rows, 150 distinct values twice each: 150 > max(100, 300 // 2 = 150)? no -> categorical
    s = pd.Series([f"v{i % 150}" for i in range(300)], name="t")
    assert infer_role(s) == "categorical"
    # 151 distinct values: 151 > 150 -> identifier
    s2 = pd.Series([f"v{i % 151}" for i in range(300)], name="t")
    assert infer_role(s2) == "identifier"


def test_low_cardinality_text_is_categorical():
    s = pd.Series(["red", "green", "blue"] * 10 + [None], name="colour")
    assert infer_role(s) == "categorical"


def test_constant_ignores_missing():
    assert infer_role(pd.Series([5.0, np.nan, 5.0], name="c")) == "constant"
    assert infer_role(pd.Series([np.nan, np.nan], name="c")) == "constant"
    assert infer_role(pd.Series(["x"] * 40, name="id")) == "constant"


def test_bool_is_categorical():
    assert infer_role(pd.Series([True, False, True], name="flag")) == "categorical"
    assert infer_role(pd.Series([True, True], name="flag")) == "constant"


def test_datetime_is_identifier():
    s = pd.Series(pd.to_datetime(["2020-01-01", "2020-02-01", "2020-01-01"]), name="when")
    assert infer_role(s) == "identifier"


def test_infer_roles_keeps_column_order():
    frame = pd.DataFrame({"b": [1.0, 2.0], "a": ["x", "y"], "c": [0, 0]})
    assert list(infer_roles(frame)) == ["b", "a", "c"]


# ---------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------

FRAME = pd.DataFrame(
    {
        "num": [1.0, 2.0, 3.0],
        "txt": ["a", "b", "c"],
        "codes": ["1", "2", "3"],
        "when": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-03"]),
    }
)


def test_overrides_apply():
    roles = infer_roles(FRAME)
    out = apply_role_overrides(FRAME, roles, {"num": "categorical", "txt": "ignore", "codes": "numeric"})
    assert out["num"] == "categorical"
    assert out["txt"] == "ignore"
    assert out["codes"] == "numeric"  # text that is all numbers may be numeric
    assert out["when"] == roles["when"]
    assert roles["num"] == "numeric"  # input dict untouched


def test_override_unknown_column():
    with pytest.raises(AuditInputError) as info:
        apply_role_overrides(FRAME, infer_roles(FRAME), {"nope": "numeric"})
    assert info.value.code == "ROLE_UNKNOWN_COLUMN"
    assert info.value.message == "Role override names column 'nope', which is not in the table."


def test_override_invalid_role():
    with pytest.raises(AuditInputError) as info:
        apply_role_overrides(FRAME, infer_roles(FRAME), {"num": "target"})
    assert info.value.code == "ROLE_INVALID"
    assert "'target'" in info.value.message and "'num'" in info.value.message
    assert "numeric, categorical, identifier, constant, ignore" in info.value.message


def test_override_numeric_refused_for_text():
    with pytest.raises(AuditInputError) as info:
        apply_role_overrides(FRAME, infer_roles(FRAME), {"txt": "numeric"})
    assert info.value.code == "ROLE_NOT_NUMERIC"
    assert "'txt'" in info.value.message and "'a'" in info.value.message


def test_override_numeric_refused_for_mostly_numeric_text_names_the_bad_value():
    frame = pd.DataFrame({"v": ["1", "2", "three", None]})
    with pytest.raises(AuditInputError) as info:
        apply_role_overrides(frame, {"v": "categorical"}, {"v": "numeric"})
    assert info.value.code == "ROLE_NOT_NUMERIC"
    assert "'three'" in info.value.message


def test_override_numeric_refused_for_datetime():
    with pytest.raises(AuditInputError) as info:
        apply_role_overrides(FRAME, infer_roles(FRAME), {"when": "numeric"})
    assert info.value.code == "ROLE_NOT_NUMERIC"
    assert "'when'" in info.value.message
