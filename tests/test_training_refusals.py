"""Training refusals and warnings that name the real cause, and bounded one-hot expansion.

Before: one positive row among 300 read "Only 300 eligible training rows; at
least 20 are needed"; a class absent from the source rows trained a model
whose probability columns did not match the declared classes; zero weight on
every positive row trained silently; a held-out split with one positive gave
an AUROC with no warning; a 50,000-level categorical exhausted memory in the
one-hot step; a numeric column ``c=a`` duplicated the one-hot name ``c=a``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.roles import MAX_CODE_LEVELS, MAX_ONEHOT_LEVELS, propose_roles
from audit_core.errors import MESSAGES, AuditInputError
from audit_core.models.training import MIN_HELDOUT_CLASS_ROWS, split_holdout, train_workspace
from audit_core.models.zoo import ModelSpec, check_expansion_cap, train_model

LR = ModelSpec(kind="logistic_regression")
YES = {"kind": "class", "name": "t", "column": "label", "positive": "yes"}


def refused(code: str, call) -> str:
    with pytest.raises(AuditInputError) as info:
        call()
    assert info.value.code == code, info.value.message
    return info.value.message


def test_codes_registered():
    assert {"TRAIN_CLASS_TOO_SMALL", "TRAIN_CLASS_ABSENT", "TRAIN_FEW_HELDOUT", "MODEL_MATRIX_CAP",
            "MODEL_CLASS_ABSENT", "MODEL_ZERO_WEIGHT_CLASS"} <= set(MESSAGES)


def _one_positive(n: int = 300) -> pd.DataFrame:
    label = np.array(["no"] * n, dtype=object)
    label[7] = "yes"
    return pd.DataFrame({"x": np.arange(n, dtype=float), "label": label})


def test_single_positive_names_the_class_and_its_count():
    ds = build_dataset(_one_positive(), DatasetConfig(name="t", targets=(YES,)))
    msg = refused("TRAIN_CLASS_TOO_SMALL", lambda: split_holdout(ds))
    assert "class 'yes' has only 1 of the 300 eligible training rows" in msg
    assert "rows per class: 'not yes' 299, 'yes' 1" in msg and "at least 4" in msg
    assert "at least 20" not in msg  # 300 rows are plenty: that was not the problem


def test_too_few_rows_reports_the_class_counts():
    ds = build_dataset(_one_positive(12).assign(label=["yes", "no"] * 6), DatasetConfig(name="t", targets=(YES,)))
    msg = refused("TRAIN_TOO_FEW_ROWS", lambda: split_holdout(ds))
    assert "Only 12 eligible training rows" in msg and "at least 20" in msg and "'yes' 6" in msg


def _three_class_sites(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    site = np.where(np.arange(n) < n // 2, "A", "B")
    y = rng.choice(["lo", "mid", "hi"], n)
    y[(site == "A") & (y == "mid")] = "lo"  # the middle class only occurs at site B
    return pd.DataFrame({"x": rng.normal(size=n), "site": site, "y": y})


def test_middle_class_absent_from_the_source_is_named():
    cfg = DatasetConfig(name="t", targets=({"kind": "class", "name": "grade", "column": "y"},),
                        domain_column="site", source_domain="A", target_domain="B")
    ds = build_dataset(_three_class_sites(), cfg)
    msg = refused("TRAIN_CLASS_ABSENT", lambda: train_workspace(ds, spec=LR))
    assert "Target `grade`: class 'mid' has no row among the 200 eligible training rows" in msg
    assert "(source domain site = 'A')" in msg and "'mid' 0" in msg


@pytest.mark.parametrize("y, classes, named", [
    ([0, 2, 0, 2], None, "code 1"),
    ([0, 1, 0, 1], ("lo", "mid", "hi"), "'hi'"),
    ([0, 2, 0, 2], ("lo", "mid", "hi"), "'mid'"),
])
def test_train_model_refuses_an_absent_declared_class(y, classes, named):
    X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    msg = refused("MODEL_CLASS_ABSENT",
                  lambda: train_model(X, np.array(y), spec=LR, numeric=["x"], categorical=[], classes=classes))
    assert named in msg


def test_zero_weight_on_every_positive_is_refused():
    rng = np.random.default_rng(2)
    x = rng.normal(size=400)
    label = np.where(x + rng.normal(size=400) > 0.5, "yes", "no")
    frame = pd.DataFrame({"x": x, "label": label, "w": np.where(label == "yes", 0.0, 1.0)})
    ds = build_dataset(frame, DatasetConfig(name="t", targets=(YES,), weight_column="w"))
    msg = refused("MODEL_ZERO_WEIGHT_CLASS", lambda: train_workspace(ds, spec=LR))
    assert "class 'yes'" in msg and "weight 0" in msg
    # Weight back on every other positive row: something to learn from in training, so it trains.
    frame.loc[frame.index[frame["label"] == "yes"][::2], "w"] = 1.0
    ws = train_workspace(build_dataset(frame, DatasetConfig(name="t", targets=(YES,), weight_column="w")), spec=LR)
    assert ws.model.n_classes == 2


def test_few_held_out_positives_warn():
    n = 2_000
    label = np.array(["no"] * n, dtype=object)
    label[np.arange(0, n, 100)] = "yes"  # 20 positives -> 5 held out (25%), fewer than 20
    frame = pd.DataFrame({"x": np.arange(n, dtype=float) % 97, "label": label})
    ws = train_workspace(build_dataset(frame, DatasetConfig(name="t", targets=(YES,))), spec=LR)
    held = int((ws.dataset.primary.y[ws.test_index] == 1).sum())
    assert held == 5
    assert [c for c, _ in ws.warnings] == ["TRAIN_FEW_HELDOUT"]
    assert f"only 5 row(s) of class 'yes' (fewer than {MIN_HELDOUT_CLASS_ROWS})" in ws.warnings[0][1]
    # The regrouped workspace keeps the warning.
    assert ws.with_grouping({}).warnings == ws.warnings


def test_enough_held_out_rows_do_not_warn():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(size=400), "label": rng.choice(["yes", "no"], 400)})
    ws = train_workspace(build_dataset(frame, DatasetConfig(name="t", targets=(YES,))), spec=LR)
    assert ws.warnings == ()


def test_50k_level_categorical_is_bounded_before_expansion():
    rng = np.random.default_rng(4)
    n = 200_000
    levels = np.array([f"L{i}" for i in range(50_000)])
    frame = pd.DataFrame({"zip": levels[rng.integers(0, 50_000, n)], "x": rng.normal(size=n),
                          "label": rng.choice(["yes", "no"], n)})
    cfg = DatasetConfig(name="t", targets=(YES,), roles={"zip": "categorical"})
    ds = build_dataset(frame, cfg)
    # A dense float matrix of 150,000 x ~47,600 would need ~54 GB: refused from the distinct counts alone.
    msg = refused("MODEL_MATRIX_CAP", lambda: train_workspace(ds, spec=LR))
    assert "AUDIT_MAX_MATRIX_MB" in msg and "column 'zip' adds" in msg and "identifier role" in msg


def test_matrix_cap_by_hand_and_from_the_environment(monkeypatch):
    X = pd.DataFrame({"c": ["a", "b", "c", "d"] * 25, "x": np.arange(100.0)})
    # 100 rows x (1 numeric + 4 levels) x 8 bytes = 4,000 bytes.
    assert check_expansion_cap(X, ["x"], ["c"], max_bytes=4_000) == 5
    msg = refused("MODEL_MATRIX_CAP", lambda: check_expansion_cap(X, ["x"], ["c"], max_bytes=3_999))
    assert "100 rows into 5 transformed columns" in msg
    monkeypatch.setenv("AUDIT_MAX_MATRIX_MB", "0.001")  # 1,048 bytes
    refused("MODEL_MATRIX_CAP", lambda: train_model(X, np.arange(100) % 2, spec=LR, numeric=["x"], categorical=["c"]))


def test_collision_free_names_through_training():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"c": rng.choice(["a", "b"], 200), "c=a": rng.normal(size=200),
                          "label": rng.choice(["yes", "no"], 200)})
    ws = train_workspace(build_dataset(frame, DatasetConfig(name="t", targets=(YES,))), spec=LR)
    table = ws.grouping.to_frame()
    assert table["feature"].is_unique
    assert dict(zip(table["feature"], table["raw_column"])) == {"c\\=a": "c=a", "c=a": "c", "c=b": "c"}


# ---------------------------------------------------------------------------
# Long column names are never length-checked as an expression
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("target, counts", [
    ({"kind": "class", "name": "t", "column": "L", "positive": "yes"}, (20, 20)),
    # n = i % 3 for i in 0..39: n >= 1.5 where n == 2, i = 2, 5, ..., 38: 13 rows; 27 below.
    ({"kind": "threshold", "name": "t", "column": "N", "threshold": 1.5}, (27, 13)),
])
def test_long_column_names_in_class_and_threshold_targets(target, counts):
    long_l, long_n = "l" * 5_000, "n" * 5_000  # over the 2,000-character expression cap
    target = dict(target, column=long_l if target["column"] == "L" else long_n)
    frame = pd.DataFrame({long_l: ["yes", "no"] * 20, long_n: np.arange(40.0) % 3, "x": np.arange(40.0)})
    ds = build_dataset(frame, DatasetConfig(name="t", targets=(target,)))
    assert ds.primary.counts == counts
    assert train_workspace(ds, spec=LR).model.n_classes == 2


# ---------------------------------------------------------------------------
# Role proposals
# ---------------------------------------------------------------------------


def test_integer_codes_are_proposed_categorical():
    frame = pd.DataFrame({
        "code": [1, 2, 3, 4] * 10,  # 4 levels <= 10, 40 rows >= 2 x 4
        "many": np.arange(40) % 11,  # 11 levels > 10: numeric stays
        "flt": np.arange(40) / 4,  # not whole numbers
        "few_rows": [1, 2, 3, 4] + [np.nan] * 36,  # 4 values, 4 rows < 8
    })
    props = propose_roles(frame)
    assert set(props) == {"code"} and props["code"].role == "categorical"
    assert str(MAX_CODE_LEVELS) in props["code"].reason


def test_high_cardinality_categoricals_are_proposed_identifiers():
    levels = [f"z{i}" for i in range(MAX_ONEHOT_LEVELS + 1)]
    frame = pd.DataFrame({"zip": levels * 3})  # 101 levels, 303 rows: inferred categorical (101 <= 151)
    props = propose_roles(frame)
    assert props["zip"].role == "identifier" and "101 levels" in props["zip"].reason
    assert propose_roles(frame, {"zip": "identifier"}) == {}


def test_the_missing_value_suggestion_works_for_a_long_column_name():
    long = "income_" + "x" * 4_000  # the suggestion is ~4,020 characters, over the 2,000-character cap
    frame = pd.DataFrame({long: [np.nan] + list(np.arange(39.0)), "x": np.arange(40.0), "z": np.arange(40.0) % 3})
    target = {"kind": "threshold", "name": "rich", "column": long, "threshold": 10}
    msg = refused("TARGET_MISSING_VALUES", lambda: build_dataset(frame, DatasetConfig(name="t", targets=(target,))))
    suggestion = msg.split("such as `", 1)[1].rsplit("`.", 1)[0]
    assert len(suggestion) > 4_000
    ds = build_dataset(frame, DatasetConfig(name="t", targets=(target,), eligibility=suggestion))
    assert len(ds.frame) == 39  # the one missing row is excluded; the long column holds 0..38, x 1..39
    expr = {"kind": "expression", "name": "e", "expression": f"{long} >= 10 and x > 0"}
    assert build_dataset(ds.frame, DatasetConfig(name="t", targets=(expr,))).primary.counts == (10, 29)


def test_the_syntax_cap_still_holds_without_long_names():
    from audit_core.data.eligibility import EligibilityFilter

    refused("EXPR_TOO_LONG", lambda: EligibilityFilter(expression="(" * 3_000 + "x" + ")" * 3_000))
    refused("EXPR_TOO_LONG", lambda: EligibilityFilter(expression=" or ".join(["a > 1"] * 500)))
