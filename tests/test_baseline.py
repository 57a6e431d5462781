"""Tests for audit_core.data.baseline: every kind computed by hand."""
from __future__ import annotations

import numpy as np
import pytest

from audit_core.data.baseline import BASELINE_KINDS, compute_baseline
from audit_core.data.groups import Grouping
from audit_core.errors import AuditInputError
from toy_data import BASELINE_TOY_MEAN, BASELINE_TOY_MEDIAN, BASELINE_TOY_MODE, baseline_toy


def _grouping(features, groups) -> Grouping:
    return Grouping(tuple(features), tuple(features), tuple(groups), tuple(dict.fromkeys(groups)))


@pytest.fixture(scope="module")
def toy():
    X, features, groups = baseline_toy()
    return X, _grouping(features, groups)


def test_kinds():
    assert BASELINE_KINDS == ("mean", "median", "mode", "zero")


def test_mean(toy):
    X, g = toy
    np.testing.assert_allclose(compute_baseline(X, g, kind="mean"), BASELINE_TOY_MEAN)
    np.testing.assert_allclose(compute_baseline(X, g), BASELINE_TOY_MEAN)  # default


def test_median(toy):
    X, g = toy
    np.testing.assert_allclose(compute_baseline(X, g, kind="median"), BASELINE_TOY_MEDIAN)


def test_zero(toy):
    X, g = toy
    np.testing.assert_array_equal(compute_baseline(X, g, kind="zero"), np.zeros(5))


def test_mode_modal_pattern_and_conditional_median(toy):
    X, g = toy
    # (1,0,0) is modal (12 rows); v = median of rows 0..11 = 5.5; w median of all = 120
    np.testing.assert_allclose(compute_baseline(X, g, kind="mode"), BASELINE_TOY_MODE)


def test_mode_conditional_median_follows_the_modal_rows():
    # Move the modal pattern to rows 13..24 and check v follows it.
    X, features, groups = baseline_toy()
    X[:, :3] = 0.0
    X[:13, 1] = 1.0  # rows 0..12: pattern (0,1,0), 13 rows
    X[13:, 0] = 1.0  # rows 13..24: pattern (1,0,0), 12 rows
    out = compute_baseline(X, _grouping(features, groups), kind="mode")
    # modal (0,1,0) with 13 rows; v = median of 0..12 = 6
    np.testing.assert_allclose(out[:4], [0.0, 1.0, 0.0, 6.0])


def test_mode_tie_broken_by_smallest_pattern():
    # Two rows of (0,1) and two of (1,0): tie; lexicographically (0,1) < (1,0).
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    g = _grouping(("a", "b"), ("g", "g"))
    np.testing.assert_array_equal(compute_baseline(X, g, kind="mode"), [0.0, 1.0])
    # Same rows in another order: same answer
    np.testing.assert_array_equal(compute_baseline(X[::-1], g, kind="mode"), [0.0, 1.0])


def test_mode_docstring_case():
    # rows (0,1), (1,0), (1,0): (1,0) twice -> modal
    g = _grouping(("a", "b"), ("g", "g"))
    np.testing.assert_array_equal(compute_baseline(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]), g, kind="mode"), [1.0, 0.0])


def test_mode_pattern_is_per_group_not_per_column():
    # Patterns (1,0,0) x3, (0,1,0) x2, (0,0,1) x2 -> modal pattern (1,0,0).
    # A column-wise mode would give c=a -> 0 (4 zeros of 7), i.e. (0,0,0): not a category.
    X = np.array([[1, 0, 0]] * 3 + [[0, 1, 0]] * 2 + [[0, 0, 1]] * 2, dtype=float)
    g = _grouping(("a", "b", "c"), ("g", "g", "g"))
    np.testing.assert_array_equal(compute_baseline(X, g, kind="mode"), [1.0, 0.0, 0.0])


def test_mode_with_a_21_value_column_is_continuous():
    # 21 distinct values > 20 -> continuous: median of 0..20 = 10
    X = np.arange(21, dtype=float).reshape(-1, 1)
    np.testing.assert_array_equal(compute_baseline(X, _grouping(("v",), ("g",)), kind="mode"), [10.0])
    # 20 distinct values -> discrete: every value once, tie -> smallest = 0
    X20 = np.arange(20, dtype=float).reshape(-1, 1)
    np.testing.assert_array_equal(compute_baseline(X20, _grouping(("v",), ("g",)), kind="mode"), [0.0])


def test_unknown_kind(toy):
    X, g = toy
    with pytest.raises(AuditInputError) as info:
        compute_baseline(X, g, kind="average")
    assert info.value.code == "BASELINE_UNKNOWN_KIND"
    assert "'average'" in info.value.message


def test_shape_mismatch(toy):
    X, g = toy
    with pytest.raises(AuditInputError) as info:
        compute_baseline(X[:, :4], g)
    assert info.value.code == "BASELINE_SHAPE"
    assert info.value.message == "The training matrix has 4 columns but the grouping has 5 features."
