"""Model formats a user brings: native and ONNX give the same audits; every file gets an answer.

Format matrix (Statlog German credit, ``../shared/datasets``; source domain: no telephone, target: telephone):

* a scikit-learn pipeline (``ColumnTransformer``: scaler over 7 numeric, one-hot over 12 text columns; logistic
  regression) saved with skops, and converted by skl2onnx twice: with double inputs and a probability tensor
  (float64 all the way: float-exact) and with float inputs and the default ZipMap (float32);
* a LightGBM model (numeric columns) as LightGBM text, and converted by onnxmltools (float32 trees);
* an XGBoost model (numeric columns) as XGBoost JSON, and converted by onnxmltools (float32, as XGBoost itself).

Tolerances (written in ``docs/data.md``, "ONNX and XGBoost"): a float-exact pair agrees within 1e-6 in
everything. A float32 graph rounds each probability to float32 (relative error about 6e-8, so at most 1e-7
absolute on a probability): probabilities agree within 1e-6; the certificate's margins are pseudo-logits,
``log p - log(1-p)``, whose error is the probability's divided by ``p(1-p)``, so they (and ``Δ``, path margins,
curves) are compared within 1e-4, and RCMA (a ratio of margins) within 1e-4 relative. Discrete parts (ŷ, k*, the path's groups, λ*) must be equal; where a
float32 probability could land on the other side of a decision boundary the comparison keeps the cases whose
every path margin is farther than 1e-3 from 0 (and requires at least 90% of them). Transport's tables agree
within 1e-6, except statistics on logits or over a small variance (Spiegelhalter's z, calibration slope and
intercept), which amplify the float32 rounding of probabilities near 0 and 1: within 1e-5 relative.

The pipeline's ONNX graph takes the raw columns, so it is audited in raw space (one coordinate per raw column;
a text column as a category code), while the skops pipeline is audited in its one-hot space. Both have one
evidence group per raw column and a mode baseline that picks the same category, so every *group-level* part
of the certificate agrees (ŷ, p̂, m0, Δ, the greedy path, k*, RCMA). The severity curves act per coordinate
(noise and dropout draw per coordinate), and the two spaces have different coordinates, so the pipeline's
curves are not compared; the tree models are audited in the same raw space either way and are compared whole.
"""
from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import pandas as pd
import pytest
import skops.io as sio

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.errors import AuditInputError
from audit_core.fragility.engine import certify, column_scale
from audit_core.models.importing import import_model
from audit_core.models.training import attach_model
from audit_core.transport import TransportAudit, TransportConfig, model_options

from real_data import require
from saved_runs import GERMAN, GERMAN_COLUMNS, read

# german.doc's attributes; "telephone" (A191 none / A192 yes) is the domain, kredit 2 = bad credit
NUMERIC = ["duration", "amount", "rate", "residence", "age", "credits", "liable"]
TEXT = ["checking", "history", "purpose", "savings", "employment", "personal", "debtors", "property", "plans",
        "housing", "job", "foreign"]
SMALL = dict(n_refits=2, n_bootstrap=20, n_random_sets=3, mappings=("raw", "platt"), stresses=())
N_CASES = 60
EXACT, F32_PROB, F32_LOGIT, F32_STAT_RTOL, AWAY = 1e-6, 1e-6, 1e-4, 1e-5, 1e-3


@pytest.fixture(scope="module")
def german():
    frame = read(require(GERMAN), column_names=GERMAN_COLUMNS)
    cfg = DatasetConfig(name="german", targets=({"kind": "class", "name": "bad", "column": "kredit", "positive": 2},),
                        domain_column="telephone", source_domain="A191", target_domain="A192",
                        roles={"telephone": "ignore"})
    return build_dataset(frame, cfg)


def _source(ds):
    mask = ds.domain_mask("A191")
    return ds.frame[mask], ds.primary.y[mask]


def _with_names(model, names: list[str]) -> bytes:
    from onnx import helper

    helper.set_model_props(model, {"feature_names": json.dumps(names)})
    return model.SerializeToString()


def _pipeline_files(ds) -> dict[str, tuple[bytes, str]]:
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType, StringTensorType
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X, y = _source(ds)
    pre = ColumnTransformer([("num", StandardScaler(), NUMERIC),
                             ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), TEXT)])
    pipe = make_pipeline(pre, LogisticRegression(max_iter=2000)).fit(X[NUMERIC + TEXT], y)
    opset = {"": 17, "ai.onnx.ml": 3}
    double = [(c, DoubleTensorType([None, 1])) for c in NUMERIC] + [(c, StringTensorType([None, 1])) for c in TEXT]
    single = [(c, FloatTensorType([None, 1])) for c in NUMERIC] + [(c, StringTensorType([None, 1])) for c in TEXT]
    return {
        "pipe.skops": (sio.dumps(pipe), "native"),
        "pipe64.onnx": (to_onnx(pipe, initial_types=double, options={id(pipe[-1]): {"zipmap": False}},
                                target_opset=opset).SerializeToString(), "exact"),
        "pipe32.onnx": (to_onnx(pipe, initial_types=single, target_opset=opset).SerializeToString(), "float32"),
    }


def _lightgbm_files(ds) -> dict[str, tuple[bytes, str]]:
    from lightgbm import LGBMClassifier
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y = _source(ds)
    clf = LGBMClassifier(n_estimators=60, min_child_samples=20, random_state=0, deterministic=True, n_jobs=1,
                         verbose=-1).fit(X[NUMERIC], y)
    onnx_model = convert_lightgbm(clf, initial_types=[("input", FloatTensorType([None, len(NUMERIC)]))],
                                  target_opset=15, zipmap=False)
    return {"lgb.txt": (clf.booster_.model_to_string().encode(), "native"),
            "lgb.onnx": (_with_names(onnx_model, NUMERIC), "float32")}


def _xgboost_files(ds) -> dict[str, tuple[bytes, str]]:
    import xgboost as xgb
    from onnxmltools import convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y = _source(ds)
    clf = xgb.XGBClassifier(n_estimators=60, max_depth=3, learning_rate=0.1, random_state=0, n_jobs=1)
    clf.fit(X[NUMERIC].to_numpy(dtype=float), y)  # onnxmltools reads features named f0, f1, ...
    onnx_model = convert_xgboost(clf, initial_types=[("input", FloatTensorType([None, len(NUMERIC)]))],
                                 target_opset=15)
    booster = clf.get_booster()
    booster.feature_names = list(NUMERIC)
    return {"xgb.json": (bytes(booster.save_raw("json")), "native"),
            "xgb.onnx": (_with_names(onnx_model, NUMERIC), "float32")}


@pytest.fixture(scope="module")
def files(german) -> dict[str, tuple[bytes, str]]:
    return {**_pipeline_files(german), **_lightgbm_files(german), **_xgboost_files(german)}


@pytest.fixture(scope="module")
def workspaces(german, files):
    return {name: attach_model(german, import_model(data, name=name, table=german.frame), baseline_kind="mode")
            for name, (data, _) in files.items()}


PAIRS = [("pipe.skops", "pipe64.onnx"), ("pipe.skops", "pipe32.onnx"), ("lgb.txt", "lgb.onnx"),
         ("xgb.json", "xgb.onnx")]


@pytest.mark.parametrize(("native", "converted"), PAIRS)
def test_probabilities_agree(workspaces, files, german, native, converted):
    a, b = workspaces[native].model, workspaces[converted].model
    assert a.classes == b.classes == (0, 1)
    pa, pb = a.predict_proba(german.frame), b.predict_proba(german.frame)
    np.testing.assert_allclose(pb, pa, rtol=0, atol=EXACT if files[converted][1] == "exact" else F32_PROB)
    if files[converted][1] == "exact":
        assert np.abs(pb - pa).max() < 1e-12  # float64 end to end: agreement to rounding
    assert b.preprocessor is None or set(b.preprocessor.vocab) == set(TEXT)
    assert b.input_columns == tuple(NUMERIC + TEXT) if native == "pipe.skops" else tuple(NUMERIC)
    # raw-space audit: one feature per raw column, traced to itself
    assert list(b.origins["feature"]) == list(b.origins["raw_column"]) == list(b.input_columns)


def _certify(ws):
    rows = ws.test_index[:N_CASES]
    X = ws.model.transform(ws.dataset.frame.iloc[rows])
    scale = column_scale(ws.model.transform(ws.dataset.frame.iloc[ws.train_index]))
    return certify(ws.model, X, grouping=ws.grouping, baseline=ws.baseline, scale=scale, baseline_kind="mode",
                   keys=np.asarray(rows))


def _named_paths(batch) -> np.ndarray:
    names = np.asarray(batch.protocol.group_names, dtype=object)
    return names[batch.path_groups]


@pytest.mark.parametrize(("native", "converted"), PAIRS)
def test_fragility_certificates_agree(workspaces, files, native, converted):
    a, b = _certify(workspaces[native]), _certify(workspaces[converted])
    exact = files[converted][1] == "exact"
    prob_tol, logit_tol = (EXACT, EXACT) if exact else (F32_PROB, F32_LOGIT)
    assert set(a.protocol.group_names) == set(b.protocol.group_names)
    keep = np.ones(len(a), dtype=bool)
    if not exact:  # away from a decision boundary (see the module docstring)
        keep = (np.abs(a.path_margins).min(axis=1) > AWAY) & (np.abs(b.path_margins).min(axis=1) > AWAY)
        assert keep.sum() >= 0.9 * len(a), f"only {keep.sum()} of {len(a)} cases are away from the boundary"
    np.testing.assert_array_equal(a.y_hat[keep], b.y_hat[keep])
    np.testing.assert_array_equal(a.k_star[keep], b.k_star[keep])
    np.testing.assert_array_equal(_named_paths(a)[keep], _named_paths(b)[keep])
    np.testing.assert_allclose(b.p_hat, a.p_hat, rtol=0, atol=prob_tol)
    for field in ("m0", "path_margins"):
        np.testing.assert_allclose(getattr(b, field)[keep], getattr(a, field)[keep], rtol=0, atol=logit_tol,
                                   err_msg=field)
    # RCMA is a ratio of margins: relative tolerance (a margin near 0 below it makes it large)
    np.testing.assert_allclose(b.rcma[keep], a.rcma[keep], rtol=logit_tol, atol=logit_tol)
    da, db = a.delta_frame(), b.delta_frame()
    np.testing.assert_allclose(db[da.columns].to_numpy()[keep], da.to_numpy()[keep], rtol=0, atol=logit_tol)
    if native == "pipe.skops":
        return  # the curves act per coordinate, and the two audit spaces have different coordinates
    for fam in a.protocol.families:
        np.testing.assert_allclose(b.curves[fam][keep], a.curves[fam][keep], rtol=0, atol=logit_tol, err_msg=fam)
        np.testing.assert_array_equal(b.j_star[fam][keep], a.j_star[fam][keep], err_msg=fam)
    np.testing.assert_allclose(b.fds[keep], a.fds[keep], rtol=0, atol=logit_tol)


def _transport_table(ws) -> pd.DataFrame:
    opts, fixed = model_options(ws)
    res = TransportAudit(TransportConfig.from_dataset(ws.dataset, **SMALL, **opts), model=fixed).run(ws.dataset.frame)
    t = res.table.drop(columns=["model"])
    keys = [c for c in t.columns if not pd.api.types.is_float_dtype(t[c].dtype)]
    return t.set_index(keys).sort_index()


@pytest.mark.parametrize(("native", "converted"), PAIRS)
def test_transport_tables_agree(workspaces, files, native, converted):
    a, b = _transport_table(workspaces[native]), _transport_table(workspaces[converted])
    assert list(a.index) == list(b.index) and list(a.columns) == list(b.columns) and len(a) > 100
    va, vb = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
    np.testing.assert_array_equal(np.isfinite(vb), np.isfinite(va))
    finite = np.isfinite(va)
    # float32 trees: Spiegelhalter's z and the calibration slope/intercept (on logits, of probabilities near 0 and 1)
    # amplify the float32 rounding to about 3e-6 relative; everything else agrees within 1e-6
    rtol = 0 if files[converted][1] == "exact" else F32_STAT_RTOL
    np.testing.assert_allclose(vb[finite], va[finite], rtol=rtol, atol=EXACT)


def _mlflow_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model/MLmodel", "artifact_path: model\nflavors:\n  python_function:\n    loader_module: "
                                     "mlflow.sklearn\n  sklearn:\n    pickled_model: model.pkl\n")
        zf.writestr("model/model.pkl", pickle.dumps({"not": "opened"}))
    return buf.getvalue()


def test_seven_files_a_new_user_has(german, files):
    """Each file imports, or is refused with a message that names its format and the way forward."""
    seven = {
        "model.skops": files["pipe.skops"][0],
        "model.txt": files["lgb.txt"][0],
        "model.pkl": pickle.dumps({"model": "a pickled estimator"}),
        "model.json": files["xgb.json"][0],
        "model.onnx": files["pipe32.onnx"][0],
        "model.cbm": b"CBM1" + bytes(16),
        "mlflow_model.zip": _mlflow_zip(),
    }
    outcomes, messages = {}, {}
    for name, data in seven.items():
        try:
            model = import_model(data, name=name, table=german.frame)
        except AuditInputError as err:
            outcomes[name], messages[name] = err.code, err.message
        else:
            outcomes[name] = model.spec["kind"]
            assert model.predict_proba(german.frame.head(5)).shape == (5, 2)
    assert outcomes == {
        "model.skops": "imported_skops",
        "model.txt": "imported_lightgbm_text",
        "model.pkl": "IMPORT_PICKLE",
        "model.json": "imported_xgboost",
        "model.onnx": "imported_onnx",
        "model.cbm": "IMPORT_NOT_SUPPORTED_YET",
        "mlflow_model.zip": "IMPORT_MLFLOW",
    }
    # each refusal names the format, and says what to do instead
    assert messages["model.pkl"].startswith("'model.pkl' is a pickle file.")
    assert "skops.io.dump(model, 'model.skops')" in messages["model.pkl"]
    assert messages["model.cbm"].startswith("'model.cbm' looks like a CatBoost model")
    assert "model.save_model('model.onnx', format='onnx')" in messages["model.cbm"]
    assert messages["mlflow_model.zip"].startswith("'mlflow_model.zip' is an MLflow model (flavour(s): "
                                                   "python_function, sklearn).")
    assert "mlflow.sklearn.load_model(path) and save it with skops.io.dump" in messages["mlflow_model.zip"]
