"""Tests for audit_core.models.importing: safe formats only, nothing unpickled."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from lightgbm import LGBMClassifier, LGBMRegressor
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from audit_core.errors import MESSAGES
from audit_core.models.importing import REVIEWED_TYPES, import_model, load_lightgbm_text, load_skops
from refusals import declared

IMPORT_CODES = {
    "IMPORT_UNTRUSTED_TYPES",
    "IMPORT_UNREADABLE",
    "IMPORT_UNKNOWN_FORMAT",
    "IMPORT_NOT_CLASSIFIER",
    "IMPORT_NO_COLUMNS",
    "IMPORT_MISSING_COLUMNS",
    "IMPORT_NON_NUMERIC",
    "IMPORT_CLASS_MISMATCH",
}


@pytest.fixture(scope="module")
def table() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.choice(["p", "q"], n)})
    y = ((X["a"] + (X["c"] == "p")) > 0.5).astype(int).to_numpy()
    return X, y


def add_one(X):  # a custom function: skops cannot trust it
    return X + 1


def test_codes_registered():
    assert IMPORT_CODES <= set(MESSAGES)


def test_skops_pipeline_round_trip(table):
    X, y = table
    pipe = Pipeline(
        [
            ("ct", ColumnTransformer([("num", StandardScaler(), ["a", "b"]), ("cat", OneHotEncoder(), ["c"])])),
            ("lr", LogisticRegression()),
        ]
    ).fit(X, y)
    m = import_model(sio.dumps(pipe), name="pipe.skops", table=X)
    np.testing.assert_allclose(m.predict_proba(X), pipe.predict_proba(X), rtol=0, atol=1e-12)
    assert m.input_columns == ("a", "b", "c")
    assert m.classes == (0, 1)
    # transformed names traced to raw columns: num__a -> a, cat__c_p -> c
    assert dict(zip(m.origins["feature"], m.origins["raw_column"])) == {
        "num__a": "a",
        "num__b": "b",
        "cat__c_p": "c",
        "cat__c_q": "c",
    }
    assert m.default_grouping().names == ("a", "b", "c")
    np.testing.assert_array_equal(m.predict_proba(X), m.predict_proba_transformed(m.transform(X)))


def test_skops_untrusted_custom_function_is_refused(table):
    X, y = table
    pipe = make_pipeline(FunctionTransformer(add_one), LogisticRegression()).fit(X[["a", "b"]], y)
    data = sio.dumps(pipe)
    msg = declared("IMPORT_UNTRUSTED_TYPES", import_model, data, name="evil.skops", table=X)
    assert "'evil.skops'" in msg
    assert f"{__name__}.add_one" in msg  # the offending type is listed


def test_skops_lightgbm_classifier_loads(table):
    X, y = table
    assert "lightgbm.sklearn.LGBMClassifier" in REVIEWED_TYPES
    clf = LGBMClassifier(n_estimators=20, min_child_samples=10, verbose=-1, random_state=0).fit(X[["a", "b"]], y)
    m = import_model(sio.dumps(clf), name="lgb.skops", table=X)
    np.testing.assert_allclose(m.predict_proba(X), clf.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-12)
    assert m.input_columns == ("a", "b")


def test_skops_lightgbm_pipeline_loads(table):
    X, y = table
    pipe = make_pipeline(StandardScaler(), LGBMClassifier(n_estimators=20, min_child_samples=10, verbose=-1)).fit(
        X[["a", "b"]], y
    )
    m = import_model(sio.dumps(pipe), name="lgbpipe.skops", table=X)
    np.testing.assert_allclose(m.predict_proba(X), pipe.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-12)


def test_skops_lightgbm_regressor_is_untrusted(table):
    X, _ = table
    reg = LGBMRegressor(n_estimators=5, verbose=-1).fit(X[["a", "b"]], X["a"])
    msg = declared("IMPORT_UNTRUSTED_TYPES", import_model, sio.dumps(reg), name="reg.skops", table=X)
    assert "lightgbm.sklearn.LGBMRegressor" in msg


def test_lightgbm_text_model_loads(table):
    X, y = table
    clf = LGBMClassifier(n_estimators=20, min_child_samples=10, verbose=-1).fit(X[["a", "b"]], y)
    data = clf.booster_.model_to_string().encode()
    m = import_model(data, name="model.txt", table=X)
    np.testing.assert_allclose(m.predict_proba(X), clf.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-12)
    assert m.preprocessor is None and m.classes == (0, 1)
    assert m.input_columns == ("a", "b")


def test_lightgbm_text_multiclass(table):
    X, _ = table
    y3 = np.digitize(X["a"].to_numpy(), [-0.5, 0.5])  # 3 classes
    clf = LGBMClassifier(n_estimators=10, min_child_samples=10, verbose=-1).fit(X[["a", "b"]], y3)
    m = load_lightgbm_text(clf.booster_.model_to_string().encode(), name="m3.txt", table=X)
    p = m.predict_proba(X)
    assert p.shape == (len(X), 3)
    np.testing.assert_allclose(p, clf.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-12)


def test_lightgbm_text_regression_is_not_a_classifier(table):
    X, _ = table
    reg = LGBMRegressor(n_estimators=5, verbose=-1).fit(X[["a", "b"]], 10 * X["a"])
    msg = declared(
        "IMPORT_NOT_CLASSIFIER", import_model, reg.booster_.model_to_string().encode(), name="reg.txt", table=X
    )
    assert "'reg.txt'" in msg and "'regression'" in msg


class _Tripwire:
    """Unpickling this object would create a marker file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickle_is_refused_without_unpickling(tmp_path, table):
    X, _ = table
    marker = tmp_path / "unpickled.marker"
    data = pickle.dumps(_Tripwire(str(marker)))
    # sanity of the tripwire itself, on a *different* path: unpickling does create a file
    probe = tmp_path / "probe.marker"
    pickle.loads(pickle.dumps(_Tripwire(str(probe)))).close()
    assert probe.exists()
    msg = declared("IMPORT_PICKLE", import_model, data, name="model.pkl", table=X)
    assert "'model.pkl'" in msg and "refused without being opened" in msg
    assert not marker.exists()


def test_joblib_and_random_bytes_refused(table):
    X, _ = table
    declared("IMPORT_PICKLE", import_model, b"\x80\x04garbage", name="m.joblib", table=X)
    declared("IMPORT_UNKNOWN_FORMAT", import_model, b"", name="empty.skops", table=X)


def test_corrupt_zip_is_unreadable(table):
    X, _ = table
    msg = declared("IMPORT_UNREADABLE", import_model, b"PK\x03\x04 not really a zip", name="bad.skops", table=X)
    assert "'bad.skops'" in msg and "skops" in msg


def test_corrupt_lightgbm_text_is_unreadable(table):
    X, _ = table
    msg = declared("IMPORT_UNREADABLE", import_model, b"tree\nthis is no model", name="bad.txt", table=X)
    assert "'bad.txt'" in msg and "LightGBM" in msg
    msg = declared("IMPORT_UNREADABLE", load_lightgbm_text, b"not a tree", name="b2.txt", table=X)
    assert "'tree'" in msg


def test_missing_columns_skops(table):
    X, y = table
    clf = LogisticRegression().fit(X[["a", "b"]], y)
    msg = declared("IMPORT_MISSING_COLUMNS", import_model, sio.dumps(clf), name="lr.skops", table=X.drop(columns="b"))
    assert "'b'" in msg and "'lr.skops'" in msg


def test_missing_columns_lightgbm_text(table):
    X, y = table
    clf = LGBMClassifier(n_estimators=5, min_child_samples=10, verbose=-1).fit(X[["a", "b"]], y)
    msg = declared(
        "IMPORT_MISSING_COLUMNS",
        import_model,
        clf.booster_.model_to_string().encode(),
        name="m.txt",
        table=X.drop(columns="a"),
    )
    assert "'a'" in msg


def test_lightgbm_text_non_numeric_column(table):
    X, y = table
    clf = LGBMClassifier(n_estimators=5, min_child_samples=10, verbose=-1).fit(X[["a", "b"]], y)
    bad = X.assign(b=X["c"])  # column b now holds text
    msg = declared("IMPORT_NON_NUMERIC", import_model, clf.booster_.model_to_string().encode(), name="m.txt", table=bad)
    assert "'b'" in msg


def test_not_a_classifier(table):
    X, _ = table
    reg = LinearRegression().fit(X[["a", "b"]], X["a"])
    msg = declared("IMPORT_NOT_CLASSIFIER", load_skops, sio.dumps(reg), name="lin.skops", table_columns=list(X.columns))
    assert "LinearRegression" in msg and "'lin.skops'" in msg


def test_no_column_names(table):
    X, y = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LogisticRegression().fit(X[["a", "b"]].to_numpy(), y)  # fitted on an array
    msg = declared("IMPORT_NO_COLUMNS", import_model, sio.dumps(clf), name="arr.skops", table=X)
    assert "'arr.skops'" in msg and "feature_names_in_" in msg
