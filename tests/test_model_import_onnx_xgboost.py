"""ONNX and XGBoost imports: what is read, and each refusal naming what is wrong."""
from __future__ import annotations

import json
import pickle
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from audit_core.errors import MESSAGES, AuditInputError
from audit_core.models.importing import import_model
from audit_core.models.onnx_import import RawTextCodes, is_onnx, load_onnx
from audit_core.models.xgboost_import import load_xgboost
from refusals import declared

CODES = ("IMPORT_ONNX_INPUTS", "IMPORT_ONNX_NAMES_UNKNOWN", "IMPORT_ONNX_EXTERNAL_DATA", "IMPORT_ONNX_NO_PROBABILITIES",
         "IMPORT_XGBOOST_MISSING", "IMPORT_XGBOOST_OBJECTIVE", "IMPORT_XGBOOST_NO_NAMES")
OPSET = {"": 17, "ai.onnx.ml": 3}


@pytest.fixture(scope="module")
def table() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(3)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.choice(["p", "q", "r"], n)})
    y = ((X["a"] + (X["c"] == "p")) > 0.5).astype(int).to_numpy()
    return X, y


@pytest.fixture(scope="module")
def pipeline(table):
    X, y = table
    pre = ColumnTransformer([("num", StandardScaler(), ["a", "b"]), ("cat", OneHotEncoder(handle_unknown="ignore"), ["c"])])
    return make_pipeline(pre, LogisticRegression()).fit(X, y)


def _pipeline_onnx(pipe, X, **kw) -> bytes:
    from skl2onnx import to_onnx

    return to_onnx(pipe, X.astype({"a": np.float32, "b": np.float32})[:1], target_opset=OPSET, **kw).SerializeToString()


def _tree_onnx(table, *, n_classes=2, names=None) -> tuple[bytes, object]:
    from lightgbm import LGBMClassifier
    from onnx import helper
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y = table
    target = np.digitize(X["a"].to_numpy(), [-0.5, 0.5]) if n_classes == 3 else y
    clf = LGBMClassifier(n_estimators=10, min_child_samples=10, verbose=-1, random_state=0).fit(X[["a", "b"]], target)
    model = convert_lightgbm(clf, initial_types=[("input", FloatTensorType([None, 2]))], target_opset=15, zipmap=False)
    if names is not None:
        helper.set_model_props(model, {"feature_names": names})
    return model.SerializeToString(), clf


def test_codes_registered():
    assert set(CODES) <= set(MESSAGES)


def test_onnx_pipeline_reads_raw_columns_and_text_as_codes(table, pipeline):
    X, _ = table
    m = import_model(_pipeline_onnx(pipeline, X), name="pipe.onnx", table=X)
    assert m.spec["kind"] == "imported_onnx" and m.classes == (0, 1)
    assert m.input_columns == ("a", "b", "c") and m.default_grouping().names == ("a", "b", "c")
    np.testing.assert_allclose(m.predict_proba(X), pipeline.predict_proba(X), rtol=0, atol=1e-6)
    # the text column is one coordinate: its code in the sorted values "" (missing), p, q, r
    np.testing.assert_array_equal(m.transform(X.head(3))[:, 2], X["c"].head(3).map({"p": 1, "q": 2, "r": 3}))
    missing = X.head(3).assign(c=[None, "p", None])  # as a stress sets it: the graph gets "" (an unknown level)
    np.testing.assert_allclose(m.predict_proba(missing), pipeline.predict_proba(missing.fillna({"c": ""})),
                               rtol=0, atol=1e-6)


def test_missing_numbers_without_an_imputer_are_a_declared_error(table, pipeline):
    X, _ = table
    m = import_model(_pipeline_onnx(pipeline, X), name="pipe.onnx", table=X)
    holes = X.head(4).assign(b=[1.0, np.nan, 2.0, np.nan])
    msg = declared("IMPORT_ONNX_NOT_FINITE", m.predict_proba, holes)
    assert msg == ("The ONNX model in 'pipe.onnx' returned NaN or infinite probabilities for 2 of 4 rows, for example "
                   "a row with a missing value in column(s) 'b': its graph does not impute missing values.")


def test_text_codes_round_to_a_category_and_refuse_unseen_values():
    codes = RawTextCodes(["x", "c"], {"c": ["", "p", "q"]}, name="m.onnx")
    assert list(codes.decode("c", np.array([0.0, 0.6, 1.4, 2.2, 7.0]))) == ["", "p", "p", "q", "q"]
    frame = pd.DataFrame({"x": [1.0, 2.0], "c": ["q", None]})
    np.testing.assert_array_equal(codes.transform(frame), [[1.0, 2.0], [2.0, 0.0]])  # missing → ""
    msg = declared("IMPORT_ONNX_INPUTS", codes.transform, pd.DataFrame({"x": [1.0], "c": ["zz"]}))
    assert msg.startswith("The ONNX model in 'm.onnx' cannot read this table: column 'c' holds value(s) 'zz' not seen")


def test_every_input_mismatch_is_named_in_one_refusal(table, pipeline):
    X, _ = table
    bad = X.drop(columns="a").assign(b=X["c"], c=np.arange(len(X)))  # a missing, b text, c numeric
    msg = declared("IMPORT_ONNX_INPUTS", import_model, _pipeline_onnx(pipeline, X), name="pipe.onnx", table=bad)
    assert msg.startswith("The ONNX model in 'pipe.onnx' cannot read this table: column 'a' is missing from the table")
    assert "column 'b' holds text but the model's input 'b' expects numbers (tensor(float))" in msg
    assert "column 'c' holds numbers but the model's input 'c' expects text (tensor(string))" in msg


def test_single_tensor_reads_columns_by_the_feature_names_metadata(table):
    X, _ = table
    data, clf = _tree_onnx(table, names=json.dumps(["a", "b"]))
    m = import_model(data, name="lgb.onnx", table=X)
    assert m.input_columns == ("a", "b") and m.preprocessor is None
    np.testing.assert_allclose(m.predict_proba(X), clf.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-6)
    swapped = X.rename(columns={"a": "b", "b": "a"})  # read by name, not position
    np.testing.assert_allclose(m.predict_proba(swapped), clf.predict_proba(X[["b", "a"]].set_axis(["a", "b"], axis=1)),
                               rtol=0, atol=1e-6)


def test_single_tensor_without_names_width_mismatch_and_multiclass(table):
    X, _ = table
    msg = declared("IMPORT_ONNX_NAMES_UNKNOWN", import_model, _tree_onnx(table)[0], name="lgb.onnx", table=X)
    assert "takes one tensor 'input' of width 2, and the column names are unknown" in msg
    assert "onnx.helper.set_model_props(model, {'feature_names': json.dumps(column_names)})" in msg
    msg = declared("IMPORT_ONNX_NAMES_UNKNOWN", import_model, _tree_onnx(table, names="a,b")[0], name="l.onnx", table=X)
    assert "(not a JSON list)" in msg
    msg = declared("IMPORT_ONNX_INPUTS", import_model, _tree_onnx(table, names=json.dumps(["a", "b", "c"]))[0],
                   name="l.onnx", table=X)
    assert "input 'input' has width 2 but its 'feature_names' metadata lists 3 names" in msg
    data, clf = _tree_onnx(table, n_classes=3, names=json.dumps(["a", "b"]))
    m = import_model(data, name="m3.onnx", table=X)
    assert m.classes == (0, 1, 2)
    np.testing.assert_allclose(m.predict_proba(X), clf.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-6)


def test_string_class_labels_come_from_the_zipmap(table):
    X, y = table
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X[["a", "b"]], np.where(y == 1, "yes", "no"))
    m = load_onnx(_pipeline_onnx(pipe, X[["a", "b"]]), name="s.onnx", table=X)
    assert m.classes == ("no", "yes")
    np.testing.assert_allclose(m.predict_proba(X), pipe.predict_proba(X[["a", "b"]]), rtol=0, atol=1e-6)


def test_regressor_has_no_probabilities_and_broken_bytes_are_unreadable(table):
    X, _ = table
    from skl2onnx import to_onnx

    reg = LinearRegression().fit(X[["a", "b"]].to_numpy(np.float32), X["a"])
    data = to_onnx(reg, X[["a", "b"]].to_numpy(np.float32)[:1], target_opset=OPSET).SerializeToString()
    msg = declared("IMPORT_ONNX_NO_PROBABILITIES", import_model, data, name="r.onnx", table=X)
    assert "'r.onnx'" in msg and "(outputs: 'variable' (tensor(float)))" in msg
    msg = declared("IMPORT_UNREADABLE", import_model, b"\x00\x01 not protobuf", name="x.onnx", table=X)
    assert msg.startswith("Could not read 'x.onnx' as a ONNX model")
    assert not is_onnx(b"\x00\x01 not protobuf") and not is_onnx(b"")


def _softmax_classifier():
    """A hand-built graph: probabilities = softmax(input @ W) over columns a, b (weights as an initializer)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    W = numpy_helper.from_array(np.array([[1.0, -1.0], [0.5, 0.0]], dtype=np.float32), name="W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["input", "W"], ["logits"]),
         helper.make_node("Softmax", ["logits"], ["probabilities"], axis=1)],
        "softmax", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, 2])], initializer=[W])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"feature_names": json.dumps(["a", "b"])})
    onnx.checker.check_model(model)
    return model


def test_a_plain_probability_tensor_without_class_labels(table):
    X, _ = table
    m = import_model(_softmax_classifier().SerializeToString(), name="soft.onnx", table=X)
    assert m.classes == (0, 1)
    logits = X[["a", "b"]].to_numpy() @ np.array([[1.0, -1.0], [0.5, 0.0]])
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m.predict_proba(X), expected, rtol=0, atol=1e-6)


def test_external_data_is_refused_without_reading_it(tmp_path, table):
    import onnx

    X, _ = table
    model = _softmax_classifier()
    onnx.save_model(model, tmp_path / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    (tmp_path / "weights.bin").unlink()  # the importer must not need (or look for) it
    msg = declared("IMPORT_ONNX_EXTERNAL_DATA", import_model, (tmp_path / "m.onnx").read_bytes(), name="m.onnx",
                   table=X)
    assert "'weights.bin'" in msg and "save_as_external_data=False" in msg


def test_imported_classifiers_copy_to_worker_processes(table, pipeline):
    X, _ = table
    m = import_model(_pipeline_onnx(pipeline, X), name="pipe.onnx", table=X)
    m.predict_proba(X)  # the session exists; copying drops it and the copy builds its own
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(copy.predict_proba(X), m.predict_proba(X))


def _xgb(table, objective="binary:logistic", *, names=True):
    import xgboost as xgb

    X, y = table
    target = np.digitize(X["a"].to_numpy(), [-0.5, 0.5]) if objective.startswith("multi") else y
    label = X["a"].to_numpy() if objective.startswith("reg") else target
    booster = xgb.train({"objective": objective, "max_depth": 3, "seed": 0, "nthread": 1,
                         **({"num_class": 3} if objective.startswith("multi") else {})},
                        xgb.DMatrix(X[["a", "b"]].to_numpy(), label=label, feature_names=["a", "b"] if names else None),
                        num_boost_round=10)
    return booster


def test_xgboost_json_and_ubj_binary_and_multiclass(table):
    import xgboost as xgb

    X, _ = table
    booster = _xgb(table)
    expected = booster.predict(xgb.DMatrix(X[["a", "b"]].to_numpy(), feature_names=["a", "b"]))
    for fmt in ("json", "ubj"):
        m = import_model(bytes(booster.save_raw(fmt)), name=f"model.{fmt}", table=X)
        assert m.spec["kind"] == "imported_xgboost" and m.classes == (0, 1) and m.input_columns == ("a", "b")
        np.testing.assert_array_equal(m.predict_proba(X)[:, 1], expected)
    multi = _xgb(table, "multi:softprob")
    m = import_model(bytes(multi.save_raw("json")), name="m3.json", table=X)
    assert m.classes == (0, 1, 2)
    np.testing.assert_array_equal(m.predict_proba(X), multi.predict(xgb.DMatrix(X[["a", "b"]].to_numpy(),
                                                                                 feature_names=["a", "b"])))


@pytest.mark.parametrize("objective", ["multi:softmax", "reg:squarederror"])
def test_xgboost_other_objectives_refused_by_name(table, objective):
    X, _ = table
    msg = declared("IMPORT_XGBOOST_OBJECTIVE", import_model, bytes(_xgb(table, objective).save_raw("json")),
                   name="o.json", table=X)
    assert f"has objective {objective!r}, which does not give class probabilities" in msg


def test_xgboost_without_names_text_column_and_missing_column(table):
    X, _ = table
    msg = declared("IMPORT_XGBOOST_NO_NAMES", load_xgboost, bytes(_xgb(table, names=False).save_raw("json")),
                   name="n.json", table=X)
    assert "booster.feature_names = list_of_columns" in msg
    data = bytes(_xgb(table).save_raw("json"))
    msg = declared("IMPORT_NON_NUMERIC", import_model, data, name="t.json", table=X.assign(b=X["c"]))
    assert msg == "The XGBoost model reads column 'b' as a number, but the table holds text in it."
    msg = declared("IMPORT_MISSING_COLUMNS", import_model, data, name="t.json", table=X.drop(columns="a"))
    assert "'a'" in msg


def test_xgboost_not_installed_names_the_extra(table, monkeypatch):
    X, _ = table
    data = bytes(_xgb(table).save_raw("json"))
    monkeypatch.setitem(sys.modules, "xgboost", None)  # `import xgboost` now raises ImportError
    msg = declared("IMPORT_XGBOOST_MISSING", import_model, data, name="model.json", table=X)
    assert msg.startswith("'model.json' is an XGBoost model, and XGBoost (an optional extra) is not installed")
    assert "pip install -r requirements-xgboost.txt" in msg


def _mutations(data: bytes, seed: int, n: int) -> list[bytes]:
    """``n`` seeded damaged copies: truncations, and 1-4 bytes overwritten at random positions."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append(data[: int(rng.integers(1, len(data)))])
        else:
            b = bytearray(data)
            for pos in rng.integers(0, len(b), size=int(rng.integers(1, 5))):
                b[pos] = int(rng.integers(0, 256))
            out.append(bytes(b))
    return out


def test_damaged_onnx_and_xgboost_files_are_declared_or_read(table, pipeline):
    """A damaged file is refused with a declared code (or still reads); it never raises anything else."""
    X, _ = table
    booster = _xgb(table)
    originals = {"pipe.onnx": _pipeline_onnx(pipeline, X), "tree.onnx": _tree_onnx(table, names='["a", "b"]')[0],
                 "m.json": bytes(booster.save_raw("json")), "m.ubj": bytes(booster.save_raw("ubj"))}
    codes = {}
    for k, (name, data) in enumerate(originals.items()):
        # each XGBoost file is first read in a child process (about a second each), so fewer of them; 3 of 40
        # damaged UBJ copies (seed 3) crashed XGBoost's reader in-process before the child probe existed
        for damaged in _mutations(data, seed=k, n=4 if name.startswith("m.") else 40):
            try:
                m = import_model(damaged, name=name, table=X)
            except AuditInputError as err:
                codes[err.code] = codes.get(err.code, 0) + 1
            else:
                assert m.predict_proba(X.head(3)).shape[0] == 3
    assert codes.get("IMPORT_UNREADABLE", 0) > 0, codes


def test_a_reader_crash_in_the_child_is_a_declared_refusal(table, monkeypatch):
    from audit_core.models import xgboost_import

    X, _ = table
    data = bytes(_xgb(table).save_raw("ubj"))
    monkeypatch.setattr(xgboost_import, "_PROBE", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    msg = declared("IMPORT_UNREADABLE", import_model, data, name="m.ubj", table=X)
    assert msg == ("Could not read 'm.ubj' as a XGBoost model: XGBoost's reader crashed on it (signal 11): "
                   "the file is damaged")


def test_data_and_groups_page_imports_an_onnx_model(tmp_path, monkeypatch):
    from pathlib import Path

    from lightgbm import LGBMClassifier
    from onnx import helper
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType
    from streamlit.testing.v1 import AppTest

    from audit_core.data.samples import load_sample

    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "registry.sqlite3"))
    frame, _ = load_sample("breast_cancer")
    cols = ["mean radius", "mean texture"]
    clf = LGBMClassifier(n_estimators=20, verbose=-1, random_state=0).fit(
        frame[cols], (frame["diagnosis"] == "malignant").astype(int))
    model = convert_lightgbm(clf, initial_types=[("input", FloatTensorType([None, 2]))], target_opset=15, zipmap=False)
    helper.set_model_props(model, {"feature_names": json.dumps(cols)})
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=300).run()
    at.switch_page("pages/data_groups.py").run()
    at.selectbox(key="dg_sample").set_value("breast_cancer").run()
    at.file_uploader(key="up_model").set_value(("model.onnx", model.SerializeToString(), "application/octet-stream")).run()
    at.button(key="act_import").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    success = " ".join(s.value for s in at.success)
    assert "Model ready: imported_onnx" in success and "saved as run" in success
