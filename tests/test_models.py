"""Tests for audit_core.models.zoo: the zoo and the FittedModel adapter."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.errors import MESSAGES, AuditInputError
from audit_core.models.zoo import ZOO, FittedModel, ModelSpec, make_estimator, train_model

KINDS = ["logistic_regression", "lightgbm", "random_forest", "hist_gradient_boosting", "mlp"]


def make_data(n: int = 240, n_classes: int = 2, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
            "c": rng.choice(["p", "q", "r"], size=n),
        }
    )
    score = X["a"].to_numpy() + (X["c"] == "p").to_numpy() + 0.5 * rng.normal(size=n)
    cuts = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(cuts, score)
    return X, y.astype(int)


@pytest.fixture(scope="module")
def data():
    return make_data()


def fit(kind: str, X, y, seed: int = 0, **kw) -> FittedModel:
    return train_model(X, y, spec=ModelSpec(kind=kind, seed=seed), numeric=["a", "b"], categorical=["c"], **kw)


def test_zoo_is_the_declared_list():
    assert list(ZOO) == KINDS
    assert {"MODEL_UNKNOWN_KIND", "MODEL_BAD_PARAM", "MODEL_MISSING_COLUMNS", "MODEL_FIT_FAILED"} <= set(MESSAGES)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_trains_and_predicts(kind, data):
    X, y = data
    m = fit(kind, X, y, missing_indicators=True)
    p = m.predict_proba(X)
    assert p.shape == (len(X), 2)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    assert ((p >= 0) & (p <= 1)).all()
    assert m.classes == (0, 1) and m.n_classes == 2
    # a: 1, b: 1, c: 3 one-hot, b__missing: 1 -> 6 transformed features
    assert m.feature_names == ("a", "b", "c=p", "c=q", "c=r", "b__missing")
    assert m.input_columns == ("a", "b", "c")
    assert m.default_grouping().names == ("a", "b", "c")
    # the raw and the transformed entry points agree exactly
    Xt = m.transform(X)
    assert Xt.shape == (len(X), 6)
    np.testing.assert_array_equal(m.predict_proba(X), m.predict_proba_transformed(Xt))
    # better than chance on its own training data
    acc = float((p.argmax(axis=1) == y).mean())
    assert acc > 0.6
    assert m.spec == {"kind": kind, "seed": 0, "params": {}}


@pytest.mark.parametrize("kind", KINDS)
def test_seeded_determinism(kind, data):
    X, y = data
    p1 = fit(kind, X, y, seed=7).predict_proba(X)
    p2 = fit(kind, X, y, seed=7).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)


@pytest.mark.parametrize("kind", ["lightgbm", "random_forest", "mlp"])
def test_seed_matters_for_randomised_kinds(kind, data):
    X, y = data
    assert not np.array_equal(fit(kind, X, y, seed=1).predict_proba(X), fit(kind, X, y, seed=2).predict_proba(X))


def test_lightgbm_fixed_specification():
    est = make_estimator(ModelSpec(kind="lightgbm", seed=3))
    params = est.get_params()
    expected = {
        "n_estimators": 200,
        "learning_rate": 0.05,
        "num_leaves": 31,
        "min_child_samples": 50,
        "subsample": 0.9,
        "colsample_bytree": 0.9,
        "reg_lambda": 1.0,
        "random_state": 3,
    }
    assert {k: params[k] for k in expected} == expected
    # row subsampling only happens when subsample_freq > 0
    assert params["subsample_freq"] >= 1


def test_logistic_is_l2_c1():
    params = make_estimator(ModelSpec(kind="logistic_regression")).get_params()
    assert params["C"] == 1.0
    # scikit-learn >= 1.8 spells L2 as l1_ratio=0 (penalty is deprecated)
    assert params["l1_ratio"] == 0.0 and params["penalty"] in ("l2", "deprecated")


def test_params_override():
    est = make_estimator(ModelSpec(kind="lightgbm", params={"n_estimators": 5}))
    assert est.get_params()["n_estimators"] == 5


@pytest.mark.parametrize("kind", ["logistic_regression", "lightgbm", "hist_gradient_boosting"])
def test_multiclass(kind):
    X, y = make_data(n=300, n_classes=3, seed=1)
    assert sorted(set(y.tolist())) == [0, 1, 2]
    m = fit(kind, X, y)
    p = m.predict_proba(X)
    assert p.shape == (300, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    assert m.classes == (0, 1, 2)


def test_sample_weight_changes_the_fit(data):
    X, y = data
    w = np.where(y == 1, 5.0, 1.0)
    p_plain = fit("logistic_regression", X, y).predict_proba(X)[:, 1].mean()
    p_weighted = fit("logistic_regression", X, y, sample_weight=w).predict_proba(X)[:, 1].mean()
    assert p_weighted > p_plain  # up-weighting class 1 raises its predicted share


def test_progress_is_reported(data):
    X, y = data
    seen = []
    fit("logistic_regression", X, y, progress=lambda f, msg: seen.append(f))
    assert seen[0] < seen[-1] == 1.0


def test_unknown_kind():
    with pytest.raises(AuditInputError) as info:
        make_estimator(ModelSpec(kind="xgboost"))
    assert info.value.code == "MODEL_UNKNOWN_KIND"
    assert "'xgboost'" in info.value.message and "logistic_regression" in info.value.message


def test_bad_param():
    with pytest.raises(AuditInputError) as info:
        make_estimator(ModelSpec(kind="random_forest", params={"n_trees": 3}))
    assert info.value.code == "MODEL_BAD_PARAM"
    assert "'n_trees'" in info.value.message and "'random_forest'" in info.value.message


def test_fit_failure_is_declared(data):
    X, _ = data
    with pytest.raises(AuditInputError) as info:
        fit("logistic_regression", X, np.zeros(len(X), dtype=int))  # one class only
    assert info.value.code == "MODEL_FIT_FAILED"
    assert "logistic_regression" in info.value.message


def test_missing_columns_at_prediction(data):
    X, y = data
    m = fit("logistic_regression", X, y)
    with pytest.raises(AuditInputError) as info:
        m.predict_proba(X.drop(columns=["c"]))
    assert info.value.code == "MODEL_MISSING_COLUMNS"
    assert "'c'" in info.value.message


def test_extra_and_reordered_columns_are_fine(data):
    X, y = data
    m = fit("logistic_regression", X, y)
    shuffled = X[["c", "b", "a"]].assign(extra=1.0)
    np.testing.assert_array_equal(m.predict_proba(shuffled), m.predict_proba(X))
