"""Tests of target definitions and the eligibility filter (hand-checked labels)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from audit_core.data.eligibility import EligibilityFilter
from audit_core.data.targets import (
    MAX_CLASSES,
    ClassTarget,
    ExpressionTarget,
    ThresholdTarget,
    apply_targets,
    target_from_dict,
)
from audit_core.errors import AuditInputError


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "status": ["default", "ok", "ok", "late", "ok"],
            "income": [20000.0, 60000.0, 50000.0, 49999.0, 80000.0],
            "age": [25, 40, 33, 58, 19],
            "debt ratio": [0.9, 0.1, 0.3, 0.5, 0.2],
            "bonus": [1.0, None, 3.0, None, 5.0],
        }
    )


def err(fn, code: str) -> AuditInputError:
    with pytest.raises(AuditInputError) as info:
        fn()
    assert info.value.code == code, info.value.message
    return info.value


def test_class_target_binary(frame):
    t = ClassTarget(name="default", column="status", positive="default")
    lab = t.apply(frame)
    assert lab.y.tolist() == [1, 0, 0, 0, 0]
    assert lab.classes == (0, 1) and lab.binary
    assert lab.class_names == ("not default", "default")
    assert lab.counts == (4, 1) and lab.positive_share == pytest.approx(0.2)
    assert lab.y.dtype == np.int64 and lab.y.shape == (5,)
    assert not lab.y.flags.writeable
    assert t.columns == ("status",)


def test_class_target_multiclass(frame):
    lab = ClassTarget(name="status", column="status").apply(frame)
    assert lab.classes == ("default", "late", "ok")  # sorted
    assert lab.y.tolist() == [0, 2, 2, 1, 2]
    assert lab.counts == (1, 1, 3) and lab.positive_share is None and not lab.binary
    nums = pd.DataFrame({"grade": [3, 1, 2, 1]})
    lab = ClassTarget(name="g", column="grade").apply(nums)
    assert lab.classes == (1, 2, 3) and lab.y.tolist() == [2, 0, 1, 0]
    assert lab.class_names == ("1", "2", "3")


def test_threshold_target(frame):
    lab = ThresholdTarget(name="rich", column="income", threshold=50000).apply(frame)
    assert lab.y.tolist() == [0, 1, 1, 0, 1]
    assert lab.class_names == ("< 50000", ">= 50000")
    lab = ThresholdTarget(name="rich", column="income", threshold=50000, op=">").apply(frame)
    assert lab.y.tolist() == [0, 1, 0, 0, 1]
    assert lab.class_names == ("<= 50000", "> 50000")


def test_expression_target(frame):
    t = ExpressionTarget(name="risky", expression="`debt ratio` >= 0.5 or age < 20")
    lab = t.apply(frame)
    assert lab.y.tolist() == [1, 0, 0, 1, 1]
    assert lab.class_names == ("not risky", "risky")
    assert t.columns == ("age", "debt ratio")


def test_apply_targets_same_records(frame):
    defs = [
        {"kind": "class", "name": "default", "column": "status", "positive": "default"},
        {"kind": "threshold", "name": "rich", "column": "income", "threshold": 50000.0, "op": ">="},
        ExpressionTarget(name="young", expression="age < 30"),
    ]
    out = apply_targets(defs, frame)
    assert list(out) == ["default", "rich", "young"]
    assert out["young"].y.tolist() == [1, 0, 0, 0, 1]
    assert all(lab.y.shape == (5,) for lab in out.values())


def test_dict_round_trip():
    for d in [
        {"kind": "class", "name": "a", "column": "status", "positive": None},
        {"kind": "class", "name": "b", "column": "status", "positive": "ok"},
        {"kind": "threshold", "name": "c", "column": "income", "threshold": 1.5, "op": ">"},
        {"kind": "expression", "name": "d", "expression": "age > 3"},
    ]:
        t = target_from_dict(d)
        assert t.to_dict() == d
        assert target_from_dict(t.to_dict()) == t
    t = ClassTarget(name="a", column="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ClassTarget("a", "x")  # keyword-only


@pytest.mark.parametrize(
    "d, fragment",
    [
        ({"kind": "class", "name": "a", "column": "x", "colour": 1}, "unknown key(s) 'colour'"),
        ({"kind": "klass", "name": "a", "column": "x"}, "'kind' must be one of"),
        ({"kind": "threshold", "name": "a", "column": "x"}, "missing key(s) 'threshold'"),
        ({"kind": "threshold", "name": "a", "column": "x", "threshold": "5"},
         "'threshold' must be a finite number"),
        ({"kind": "threshold", "name": "a", "column": "x", "threshold": 5, "op": "<"},
         "'op' must be"),
        ({"kind": "class", "name": "", "column": "x"}, "'name' must be a non-empty text"),
        ({"kind": "class", "name": "a", "column": 3}, "'column' must be"),
        ({"kind": "class", "name": "a", "column": "x", "positive": [1]}, "'positive' must be"),
        ({"kind": "expression", "name": "a", "expression": 5}, "'expression' must be a text"),
    ],
)
def test_bad_definitions(d, fragment):
    e = err(lambda: target_from_dict(d), "TARGET_BAD_DEFINITION")
    assert fragment in e.message


def test_expression_syntax_error_at_construction():
    e = err(lambda: ExpressionTarget(name="x", expression="age >"), "EXPR_SYNTAX")
    assert "character 6" in e.message


def test_unknown_column(frame):
    e = err(lambda: ClassTarget(name="t", column="statu").apply(frame), "TARGET_UNKNOWN_COLUMN")
    assert e.message == "Target `t` uses column `statu`, which is not in the data. Did you mean `status`?"
    e = err(lambda: ExpressionTarget(name="e", expression="incme > 1").apply(frame),
            "TARGET_UNKNOWN_COLUMN")
    assert "`incme`" in e.message and "`income`" in e.message


def test_missing_values(frame):
    e = err(lambda: ThresholdTarget(name="b", column="bonus", threshold=2).apply(frame),
            "TARGET_MISSING_VALUES")
    assert "2 of 5 rows" in e.message and "column `bonus`" in e.message
    assert "not is_missing(bonus)" in e.message
    e = err(lambda: ExpressionTarget(name="b", expression="bonus > 2 or age > 50").apply(frame),
            "TARGET_MISSING_VALUES")
    # row 1 (bonus missing, age 40) is missing; row 3 (age 58) is true
    assert "1 of 5 rows" in e.message and "not is_missing(bonus)" in e.message
    f = pd.DataFrame({"a b": ["x", None, "y"]})
    e = err(lambda: ClassTarget(name="c", column="a b").apply(f), "TARGET_MISSING_VALUES")
    assert "not is_missing(`a b`)" in e.message


def test_single_class(frame):
    e = err(lambda: ExpressionTarget(name="old", expression="age > 100").apply(frame),
            "TARGET_SINGLE_CLASS")
    assert "`old` (`age > 100`)" in e.message and "all 5 rows are 'not old'" in e.message
    e = err(lambda: ClassTarget(name="s", column="status").apply(frame.iloc[[1, 2]]),
            "TARGET_SINGLE_CLASS")
    assert "all 2 rows are 'ok'" in e.message
    e = err(lambda: ThresholdTarget(name="r", column="income", threshold=0).apply(frame),
            "TARGET_SINGLE_CLASS")
    assert "`income` >= 0" in e.message and "'>= 0'" in e.message


def test_unknown_class(frame):
    e = err(lambda: ClassTarget(name="t", column="status", positive="paid").apply(frame),
            "TARGET_UNKNOWN_CLASS")
    assert e.message == (
        "Target `t`: the positive class 'paid' does not occur in column `status`. "
        "Values present: 'default', 'late', 'ok'."
    )


def test_not_numeric(frame):
    e = err(lambda: ThresholdTarget(name="t", column="status", threshold=1).apply(frame),
            "TARGET_NOT_NUMERIC")
    assert "column `status` holds text values (e.g. 'default')" in e.message


def test_not_condition(frame):
    e = err(lambda: ExpressionTarget(name="t", expression="age * 2").apply(frame),
            "TARGET_NOT_CONDITION")
    assert "`age * 2` gives numbers" in e.message


def test_duplicate_name(frame):
    defs = [ClassTarget(name="x", column="status"), ExpressionTarget(name="x", expression="age > 30")]
    e = err(lambda: apply_targets(defs, frame), "TARGET_DUPLICATE_NAME")
    assert "named `x`" in e.message


def test_too_many_classes():
    f = pd.DataFrame({"id": [f"c{i}" for i in range(MAX_CLASSES + 1)]})
    e = err(lambda: ClassTarget(name="t", column="id").apply(f), "TARGET_TOO_MANY_CLASSES")
    assert "`id` has 51 distinct values" in e.message and "50" in e.message


def test_no_rows(frame):
    e = err(lambda: ClassTarget(name="t", column="status").apply(frame.iloc[:0]), "TARGET_NO_ROWS")
    assert "`t`" in e.message


def test_eligibility_filter(frame):
    f = EligibilityFilter("not is_missing(bonus) and age < 50")
    assert f.mask(frame).tolist() == [True, False, True, False, True]
    assert f.columns == ("age", "bonus")
    # missing condition -> not eligible
    assert EligibilityFilter("bonus > 2").mask(frame).tolist() == [False, False, True, False, True]
    eligible = frame[EligibilityFilter("not is_missing(bonus)").mask(frame)]
    assert ThresholdTarget(name="b", column="bonus", threshold=2).apply(eligible).y.tolist() == [0, 1, 1]


def test_eligibility_empty(frame):
    e = err(lambda: EligibilityFilter("bonus > 100").mask(frame), "ELIGIBILITY_EMPTY")
    assert e.message == (
        "The eligibility filter `bonus > 100` keeps none of the 5 rows (2 of them because "
        "a value in the condition is missing); loosen the condition."
    )
    err(lambda: EligibilityFilter("age + 1").mask(frame), "EXPR_TYPE")
