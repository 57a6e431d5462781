"""Tests for audit_core.data.dataset and audit_core.models.training."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset, frame_fingerprint
from audit_core.errors import MESSAGES, AuditInputError
from audit_core.models.training import attach_model, holdout_metrics, split_holdout, train_workspace
from audit_core.models.zoo import ModelSpec, train_model
from toy_data import dataset_toy

CLASS_T = {"kind": "class", "name": "bought", "column": "outcome", "positive": "yes"}
THRESH_T = {"kind": "threshold", "name": "rich", "column": "income", "threshold": 50.0, "op": ">="}


def declared(code: str, frame: pd.DataFrame, cfg: DatasetConfig) -> str:
    with pytest.raises(AuditInputError) as info:
        build_dataset(frame, cfg)
    assert info.value.code == code, info.value.message
    return info.value.message


def cfg(**kw) -> DatasetConfig:
    base = dict(name="toy", targets=(CLASS_T, THRESH_T))
    base.update(kw)
    return DatasetConfig(**base)


def test_codes_registered():
    assert {
        "DATASET_NO_TARGET",
        "DATASET_UNKNOWN_COLUMN",
        "DATASET_UNKNOWN_TARGET",
        "DATASET_NO_FEATURES",
        "DATASET_BAD_WEIGHTS",
        "DATASET_DUPLICATE_KEY",
        "DATASET_MISSING_KEY",
        "DATASET_DOMAIN_VALUES",
        "TRAIN_TOO_FEW_ROWS",
    } <= set(MESSAGES)


# ---------------------------------------------------------------------------
# build_dataset on the toy frame
# ---------------------------------------------------------------------------


def test_targets_and_features_by_hand():
    frame = dataset_toy()
    ds = build_dataset(
        frame,
        cfg(key_column="rid", weight_column="w", domain_column="year", group_column="branch"),
    )
    # outcome == "yes": [yes, no, no, yes, no, yes, no, yes] -> [1, 0, 0, 1, 0, 1, 0, 1]
    np.testing.assert_array_equal(ds.labels["bought"].y, [1, 0, 0, 1, 0, 1, 0, 1])
    # income >= 50: [10, 55, 60, 20, 80, 5, 49, 50] -> [0, 1, 1, 0, 1, 0, 0, 1]
    np.testing.assert_array_equal(ds.labels["rich"].y, [0, 1, 1, 0, 1, 0, 0, 1])
    assert ds.primary.name == "bought"  # the first definition by default
    # outcome and income (target sources), rid (key), w (weight), year (domain), branch (group)
    # are excluded: only age and colour remain
    assert ds.numeric == ("age",)
    assert ds.categorical == ("colour",)
    assert ds.features == ("age", "colour")
    assert list(ds.X.columns) == ["age", "colour"]
    # weights [1,1,2,2,1,1,1,3]: mean 12/8 = 1.5 -> divided by 1.5
    np.testing.assert_allclose(ds.weights, np.array([1, 1, 2, 2, 1, 1, 1, 3]) / 1.5)
    np.testing.assert_array_equal(ds.keys, [101, 102, 103, 104, 105, 106, 107, 108])
    assert ds.n_input_rows == 8
    np.testing.assert_array_equal(ds.domain_mask(2019), [1, 1, 1, 1, 0, 0, 0, 0])
    assert ds.fingerprint == frame_fingerprint(frame)


def test_primary_target_choice():
    ds = build_dataset(dataset_toy(), cfg(primary_target="rich"))
    assert ds.primary.name == "rich"


def test_without_special_columns_they_are_features():
    ds = build_dataset(dataset_toy(), cfg())
    # rid: 8 unique ints but only 8 rows (<= 20) -> numeric; w, year numeric; branch categorical
    assert ds.numeric == ("rid", "age", "w", "year")
    assert ds.categorical == ("colour", "branch")
    np.testing.assert_array_equal(ds.weights, np.ones(8))
    np.testing.assert_array_equal(ds.keys, np.arange(8))
    np.testing.assert_array_equal(ds.domain_mask(2019), np.ones(8, dtype=bool))


def test_roles_overrides_apply_and_are_checked():
    ds = build_dataset(dataset_toy(), cfg(roles={"age": "ignore", "year": "categorical"}))
    assert "age" not in ds.features and "year" in ds.categorical
    msg = declared("ROLE_NOT_NUMERIC", dataset_toy(), cfg(roles={"colour": "numeric"}))
    assert "'colour'" in msg and "'red'" in msg
    msg = declared("ROLE_INVALID", dataset_toy(), cfg(roles={"age": "feature"}))
    assert "'feature'" in msg and "'age'" in msg


def test_numeric_role_on_numeric_text_converts_it():
    frame = dataset_toy().assign(code=["1", "2", "3", "4", "5", "6", "7", "8"])
    ds = build_dataset(frame, cfg(roles={"code": "numeric"}))
    assert "code" in ds.numeric
    assert ds.frame["code"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    m = train_model(ds.X, ds.primary.y, spec=ModelSpec(kind="logistic_regression"), numeric=ds.numeric,
                    categorical=ds.categorical)
    assert m.predict_proba(ds.frame).shape == (8, 2)


def test_eligibility_filter_reduces_rows():
    ds = build_dataset(dataset_toy(), cfg(eligibility="age >= 30"))
    # ages [25, 32, 47, 51, 62, 23, 36, 44] -> rows 1, 2, 3, 4, 6, 7 are kept (6 rows)
    assert len(ds.frame) == 6 and ds.n_input_rows == 8
    assert ds.frame["rid"].tolist() == [102, 103, 104, 105, 107, 108]
    # outcome of those rows [no, no, yes, no, no, yes] -> [0, 0, 1, 0, 0, 1]
    np.testing.assert_array_equal(ds.primary.y, [0, 0, 1, 0, 0, 1])


def test_no_target():
    assert "at least one target" in declared("DATASET_NO_TARGET", dataset_toy(), cfg(targets=()))


def test_unknown_primary_target():
    msg = declared("DATASET_UNKNOWN_TARGET", dataset_toy(), cfg(primary_target="nope"))
    assert "'nope'" in msg and "bought, rich" in msg


@pytest.mark.parametrize(
    "field, what", [("weight_column", "weight"), ("key_column", "record-key"), ("domain_column", "domain"),
                    ("group_column", "group")]
)
def test_unknown_special_column(field, what):
    msg = declared("DATASET_UNKNOWN_COLUMN", dataset_toy(), cfg(**{field: "ghost"}))
    assert msg == f"The {what} column 'ghost' is not in the table."


def test_unknown_strata_column():
    msg = declared("DATASET_UNKNOWN_COLUMN", dataset_toy(), cfg(strata_columns=("ghost",)))
    assert "strata" in msg and "'ghost'" in msg


def test_no_features_left():
    frame = dataset_toy()[["rid", "outcome", "income"]]
    msg = declared("DATASET_NO_FEATURES", frame, cfg(key_column="rid"))
    assert "No feature columns" in msg


@pytest.mark.parametrize(
    "weights, problem",
    [
        ([1, 1, -2, 1, 1, 1, 1, 1], "negative"),
        ([1, 1, np.nan, 1, 1, 1, 1, 1], "1 missing value"),
        ([1, 1, np.inf, 1, 1, 1, 1, 1], "infinite"),
        (["a", "b", "c", "d", "e", "f", "g", "h"], "is not numeric"),
        ([0, 0, 0, 0, 0, 0, 0, 0], "sums to zero"),
    ],
)
def test_bad_weights(weights, problem):
    frame = dataset_toy().assign(w=weights)
    msg = declared("DATASET_BAD_WEIGHTS", frame, cfg(weight_column="w"))
    assert "'w'" in msg and problem in msg


def test_duplicate_key():
    frame = dataset_toy().assign(rid=[1, 2, 3, 3, 5, 6, 3, 8])
    msg = declared("DATASET_DUPLICATE_KEY", frame, cfg(key_column="rid"))
    assert "'rid'" in msg and "3" in msg and "3 times" in msg


def test_missing_key():
    frame = dataset_toy().assign(rid=[1, 2, None, 4, 5, None, 7, 8])
    msg = declared("DATASET_MISSING_KEY", frame, cfg(key_column="rid"))
    assert "'rid'" in msg and "2 missing" in msg


def test_domain_value_absent():
    msg = declared("DATASET_DOMAIN_VALUES", dataset_toy(), cfg(domain_column="year", source_domain=2020))
    assert "'year'" in msg and "2020" in msg and "2019" in msg and "2023" in msg


def test_config_to_dict_is_plain():
    d = cfg(domain_column="year", source_domain=np.int64(2019)).to_dict()
    assert d["source_domain"] == 2019 and type(d["source_domain"]) is int
    assert d["targets"] == [CLASS_T, THRESH_T]


# ---------------------------------------------------------------------------
# Training on the toy: errors and imported models
# ---------------------------------------------------------------------------


def test_too_few_rows():
    ds = build_dataset(dataset_toy(), cfg())
    with pytest.raises(AuditInputError) as info:
        split_holdout(ds)
    assert info.value.code == "TRAIN_TOO_FEW_ROWS"
    assert "Only 8 eligible training rows" in info.value.message and "at least 20" in info.value.message


def _bigger_toy(n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    age = rng.normal(40, 10, n)
    return pd.DataFrame(
        {
            "age": age,
            "colour": rng.choice(["red", "blue"], n),
            "outcome": np.where(age + rng.normal(0, 5, n) > 40, "yes", "no"),
        }
    )


def test_attach_model_class_mismatch():
    frame = _bigger_toy()
    ds = build_dataset(frame, DatasetConfig(name="t", targets=(CLASS_T,)))
    y3 = np.digitize(frame["age"].to_numpy(), [35, 45])  # 3 classes vs a binary target
    m3 = train_model(frame, y3, spec=ModelSpec(kind="logistic_regression"), numeric=["age"], categorical=[])
    with pytest.raises(AuditInputError) as info:
        attach_model(ds, m3)
    assert info.value.code == "MODEL_CLASS_MISMATCH"
    assert info.value.message == "The model predicts 3 classes but the target definition has 2."


def test_attach_model_refuses_unmapped_class_labels():
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    from audit_core.models.importing import import_model

    frame = _bigger_toy()
    ds = build_dataset(frame, DatasetConfig(name="t", targets=(CLASS_T,)))
    # A model trained on the text labels "no"/"yes": which column is class code 1?
    clf = LogisticRegression().fit(frame[["age"]], frame["outcome"])
    model = import_model(sio.dumps(clf), name="text_labels.skops", table=frame)
    with pytest.raises(AuditInputError) as info:
        attach_model(ds, model)
    assert info.value.code == "IMPORT_CLASS_MISMATCH"
    assert "'text_labels.skops'" in info.value.message and "'no', 'yes'" in info.value.message


def test_attach_imported_model_with_codes():
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    from audit_core.models.importing import import_model

    frame = _bigger_toy()
    ds = build_dataset(frame, DatasetConfig(name="t", targets=(CLASS_T,)))
    clf = LogisticRegression().fit(frame[["age"]], ds.primary.y)
    ws = attach_model(ds, import_model(sio.dumps(clf), name="codes.skops", table=frame))
    assert ws.grouping.names == ("age",)
    assert ws.baseline.shape == (1,)
    auc = ws.metrics.query("split == 'test' and metric == 'auroc'")["value"].iloc[0]
    assert auc > 0.7


def test_holdout_metrics_by_hand():
    # A model-like object with fixed probabilities: p(class 1) = [0.9, 0.2, 0.6, 0.4], y = [1, 0, 0, 1]
    class Fixed:
        def predict_proba(self, X):
            p1 = np.array([0.9, 0.2, 0.6, 0.4])
            return np.column_stack([1 - p1, p1])

    out = holdout_metrics(Fixed(), pd.DataFrame({"a": range(4)}), np.array([1, 0, 0, 1]), split="test")
    values = dict(zip(out["metric"], out["value"]))
    # AUROC: positive scores {0.9, 0.4} vs negatives {0.2, 0.6}: pairs won 0.9>0.2, 0.9>0.6, 0.4>0.2 -> 3/4
    assert values["auroc"] == pytest.approx(0.75)
    # argmax: [1, 0, 1, 0] vs y [1, 0, 0, 1] -> 2 of 4 right
    assert values["accuracy"] == pytest.approx(0.5)
    # log loss: -(ln 0.9 + ln 0.8 + ln 0.4 + ln 0.4) / 4
    expected = -(np.log(0.9) + np.log(0.8) + np.log(0.4) + np.log(0.4)) / 4
    assert values["log_loss"] == pytest.approx(expected)
    assert values["n_rows"] == 4.0



class _FixedProba:
    """A model-like object returning the probabilities it was built with."""

    def __init__(self, p):
        self.p = np.asarray(p, dtype=float)

    def predict_proba(self, X):
        return self.p


def _held_out_auroc(p, y) -> float:
    out = holdout_metrics(_FixedProba(p), pd.DataFrame({"a": range(len(y))}), np.asarray(y), split="test")
    return float(out.set_index("metric").loc["auroc", "value"])


def test_holdout_auroc_is_the_projects_auroc_and_agrees_with_sklearn_on_ties():
    """Known answer: the held-out AUROC (binary and one-vs-rest macro) is ``audit_core.metrics``'s, equal to sklearn's."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(7)
    p1 = rng.choice([0.1, 0.3, 0.3, 0.5, 0.7, 0.7, 0.9], size=200)  # heavy ties
    y = (rng.random(200) < p1).astype(int)
    P = np.column_stack([1 - p1, p1])
    assert _held_out_auroc(P, y) == pytest.approx(roc_auc_score(y, p1), abs=1e-14)
    # by hand, with a tie across classes: positives {0.5, 0.9}, negatives {0.5, 0.1} -> (1/2 + 1 + 1 + 1) / 4
    tied = np.array([0.5, 0.5, 0.9, 0.1])
    assert _held_out_auroc(np.column_stack([1 - tied, tied]), [1, 0, 1, 0]) == 0.875
    raw = rng.dirichlet(np.ones(3), size=300).round(1) + 1e-9  # rounded: ties within every column
    P3 = raw / raw.sum(axis=1, keepdims=True)
    y3 = rng.integers(0, 3, size=300)
    assert _held_out_auroc(P3, y3) == pytest.approx(roc_auc_score(y3, P3, multi_class="ovr"), abs=1e-14)


def test_holdout_auroc_is_nan_when_a_class_is_missing():
    assert np.isnan(_held_out_auroc([[0.4, 0.6], [0.3, 0.7]], [1, 1]))
    assert np.isnan(_held_out_auroc([[0.4, 0.3, 0.3], [0.2, 0.7, 0.1]], [0, 1]))

# ---------------------------------------------------------------------------
# The loan sample: a real workspace
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loan():
    from audit_core.data.samples import load_sample

    frame, info = load_sample("loan_synthetic")
    config = DatasetConfig(
        name="loan_synthetic.csv",
        targets=tuple(info.target_definitions[:2]),
        key_column=info.key_column,
        domain_column=info.domain_column,
        group_column=info.group_column,
        source_domain=info.source_domain,
        target_domain=info.target_domain,
        roles={c: "ignore" for c in info.exclude_columns if c in frame.columns and c != info.key_column},
    )
    return frame, info, build_dataset(frame, config)


@pytest.fixture(scope="module")
def loan_ws(loan):
    _, info, ds = loan
    return train_workspace(ds, spec=ModelSpec(kind="logistic_regression", seed=0), raw_groups=info.evidence_groups)


def test_loan_dataset(loan):
    frame, info, ds = loan
    excluded = {info.key_column, info.domain_column, info.group_column, "defaulted", "income_next_year"}
    assert not excluded & set(ds.features)
    assert set(ds.features) == set(info.evidence_groups)  # every evidence column is a feature
    assert ds.labels["default"].binary


def test_loan_workspace(loan, loan_ws):
    frame, info, ds = loan
    ws = loan_ws
    auc = ws.metrics.query("split == 'test' and metric == 'auroc'")["value"].iloc[0]
    assert auc > 0.65
    # training rows are source-domain rows only
    assert set(ds.frame["year"].iloc[ws.train_index]) == {info.source_domain}
    assert set(ds.frame["year"].iloc[ws.test_index]) == {info.source_domain}
    assert not set(ws.train_index) & set(ws.test_index)
    n_source = int(ds.domain_mask(info.source_domain).sum())
    assert len(ws.train_index) + len(ws.test_index) == n_source
    assert len(ws.test_index) == pytest.approx(0.25 * n_source, abs=1)
    # the groups are the declared blocks
    assert set(ws.grouping.names) == set(info.evidence_groups.values())
    for raw, group in zip(ws.grouping.raw_columns, ws.grouping.group_of):
        assert info.evidence_groups[raw] == group
    assert ws.baseline.shape == (len(ws.model.feature_names),)
    assert ws.baseline_kind == "mean"
    Xtr = ws.model.transform(ds.frame.iloc[ws.train_index])
    np.testing.assert_allclose(ws.baseline, Xtr.mean(axis=0))


def test_loan_regrouping(loan_ws):
    ws2 = loan_ws.with_grouping({}, baseline_kind="median")
    assert ws2.grouping.n_groups == len(set(loan_ws.grouping.raw_columns))
    Xtr = ws2.model.transform(ws2.dataset.frame.iloc[ws2.train_index])
    np.testing.assert_allclose(ws2.baseline, np.median(Xtr, axis=0))


def test_training_is_deterministic(loan, loan_ws):
    _, info, ds = loan
    again = train_workspace(ds, spec=ModelSpec(kind="logistic_regression", seed=0), raw_groups=info.evidence_groups)
    pd.testing.assert_frame_equal(again.metrics, loan_ws.metrics)
    np.testing.assert_array_equal(again.train_index, loan_ws.train_index)
    np.testing.assert_array_equal(again.baseline, loan_ws.baseline)
