"""Refusals that teach: pickle, joblib, MLflow and CatBoost files are recognised unopened.

Every pickle here carries a tripwire whose unpickling would create a marker file; each test asserts the
refusal's code and text and that the marker does not exist.
"""
from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from streamlit.testing.v1 import AppTest

from audit_core.errors import MESSAGES, AuditInputError
from audit_core.models.importing import import_model
from audit_core.models.refusals import mlflow_flavours

ROOT = Path(__file__).resolve().parents[1]
TABLE = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
CODES = ("IMPORT_PICKLE", "IMPORT_MLFLOW", "IMPORT_NOT_SUPPORTED_YET")


class _Tripwire:
    """Unpickling this object would create a marker file."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _refusal(code: str, data: bytes, name: str) -> str:
    with pytest.raises(AuditInputError) as info:
        import_model(data, name=name, table=TABLE)
    assert info.value.code == code, info.value.message
    return info.value.message


def _model_with_tripwire(marker: Path) -> dict:
    model = LogisticRegression().fit(TABLE, [0, 1, 0, 1])
    return {"model": model, "tripwire": _Tripwire(marker)}


def test_codes_registered():
    assert set(CODES) <= set(MESSAGES)


def test_tripwire_works_when_unpickled(tmp_path):
    # the check below is only meaningful if unpickling the payload really leaves a marker
    marker = tmp_path / "probe.marker"
    loaded = pickle.loads(pickle.dumps(_model_with_tripwire(marker)))
    loaded["tripwire"].close()
    assert marker.exists()


@pytest.mark.parametrize("protocol", range(6))
def test_pickle_every_protocol_refused_by_name_with_why_and_how(tmp_path, protocol):
    marker = tmp_path / "unpickled.marker"
    data = pickle.dumps(_model_with_tripwire(marker), protocol=protocol)
    msg = _refusal("IMPORT_PICKLE", data, "model.bin")
    assert msg.startswith("'model.bin' is a pickle file. It is refused without being opened")
    assert "runs whatever code the file names" in msg
    assert "skops.io.dump(model, 'model.skops')" in msg and "save_model('model.txt')" in msg
    assert "or an XGBoost model with model.save_model('model.json')" in msg
    assert ("Accepted: a scikit-learn model or pipeline saved with skops (.skops), a LightGBM text model (.txt), "
            "an ONNX classifier (.onnx) or an XGBoost model") in msg
    assert not marker.exists()


@pytest.mark.parametrize(
    ("compress", "kind"),
    [
        (0, "joblib"),
        (3, "compressed pickle (joblib)"),
        (("gzip", 3), "compressed pickle (joblib)"),
        (("bz2", 3), "compressed pickle (joblib)"),
        (("xz", 3), "compressed pickle (joblib)"),
        (("lzma", 3), "compressed pickle (joblib)"),
    ],
)
def test_joblib_with_and_without_compression_refused(tmp_path, compress, kind):
    marker = tmp_path / "unpickled.marker"
    path = tmp_path / "model.joblib"
    joblib.dump(_model_with_tripwire(marker), path, compress=compress)
    msg = _refusal("IMPORT_PICKLE", path.read_bytes(), "model.joblib")
    assert msg.startswith(f"'model.joblib' is a {kind} file.")
    assert not marker.exists()


def test_compressed_joblib_recognised_by_its_bytes_whatever_its_name(tmp_path):
    marker = tmp_path / "unpickled.marker"
    path = tmp_path / "m"
    joblib.dump(_model_with_tripwire(marker), path, compress=("gzip", 3))
    msg = _refusal("IMPORT_PICKLE", path.read_bytes(), "model.skops")
    assert msg.startswith("'model.skops' is a compressed pickle (joblib) file.")
    assert not marker.exists()


def test_pickle_extension_refused_even_when_bytes_are_not_a_pickle():
    msg = _refusal("IMPORT_PICKLE", b"whatever this is", "clf.pkl")
    assert msg.startswith("'clf.pkl' is a pickle file.")


def _mlmodel(flavours: str) -> bytes:
    return (
        "artifact_path: model\n"
        f"flavors:\n{flavours}"
        "mlflow_version: 2.9.2\n"
        "model_uuid: 0f3c\n"
    ).encode()


SKLEARN_MLMODEL = _mlmodel(
    "  python_function:\n    env:\n      conda: conda.yaml\n    loader_module: mlflow.sklearn\n"
    "    model_path: model.pkl\n    python_version: 3.11.6\n"
    "  sklearn:\n    code: null\n    pickled_model: model.pkl\n    serialization_format: cloudpickle\n"
    "    sklearn_version: 1.3.2\n"
)
LIGHTGBM_MLMODEL = _mlmodel(
    "  lightgbm:\n    code: null\n    data: model.lgb\n    lgb_version: 4.1.0\n    model_class: lightgbm.basic.Booster\n"
    "  python_function:\n    data: model.lgb\n    loader_module: mlflow.lightgbm\n"
)


def _mlflow_zip(mlmodel: bytes, marker: Path, folder: str = "model/") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(folder + "MLmodel", mlmodel)
        zf.writestr(folder + "model.pkl", pickle.dumps(_Tripwire(marker)))
        zf.writestr(folder + "conda.yaml", "name: mlflow-env\n")
    return buf.getvalue()


def test_mlflow_zip_sklearn_flavour_says_how_to_save_as_skops(tmp_path):
    marker = tmp_path / "unpickled.marker"
    msg = _refusal("IMPORT_MLFLOW", _mlflow_zip(SKLEARN_MLMODEL, marker), "mlflow_model.zip")
    assert msg.startswith("'mlflow_model.zip' is an MLflow model (flavour(s): python_function, sklearn).")
    assert "load it with mlflow.sklearn.load_model(path) and save it with skops.io.dump(model, 'model.skops')" in msg
    assert "schema.json" not in msg
    assert not marker.exists()


def test_mlflow_zip_lightgbm_flavour_says_how_to_save_as_text(tmp_path):
    marker = tmp_path / "unpickled.marker"
    msg = _refusal("IMPORT_MLFLOW", _mlflow_zip(LIGHTGBM_MLMODEL, marker, folder=""), "lgb.zip")
    assert msg.startswith("'lgb.zip' is an MLflow model (flavour(s): lightgbm, python_function).")
    assert "mlflow.lightgbm.load_model(path) and save it with model.booster_.save_model('model.txt')" in msg
    assert not marker.exists()


def test_mlflow_flavour_without_a_route_and_a_bare_mlmodel_file(tmp_path):
    marker = tmp_path / "unpickled.marker"
    h2o = _mlmodel("  h2o:\n    data: model.h2o\n  python_function:\n    loader_module: mlflow.h2o\n")
    msg = _refusal("IMPORT_MLFLOW", _mlflow_zip(h2o, marker), "h2o.zip")
    assert "(flavour(s): h2o, python_function)" in msg
    assert "None of its flavours can be saved in an accepted format" in msg
    xgb = _mlmodel("  xgboost:\n    data: model.xgb\n  python_function:\n    loader_module: mlflow.xgboost\n")
    msg = _refusal("IMPORT_MLFLOW", _mlflow_zip(xgb, marker), "xgb.zip")
    assert "mlflow.xgboost.load_model(path) and save it with model.save_model('model.json')" in msg
    msg = _refusal("IMPORT_MLFLOW", SKLEARN_MLMODEL, "MLmodel")
    assert "mlflow.sklearn.load_model(path)" in msg
    assert not marker.exists()


def test_mlmodel_is_read_with_the_safe_yaml_loader():
    assert mlflow_flavours(SKLEARN_MLMODEL, name="m.zip") == ["python_function", "sklearn"]
    with pytest.raises(AuditInputError) as info:
        mlflow_flavours(b"flavors: !!python/object/apply:os.system ['true']\n", name="m.zip")
    assert "m.zip" in info.value.message


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"CBM1\x00\x00\x00\x00", "model.bin"),
        (b"\x00\x01", "model.cbm"),
    ],
)
def test_catboost_named_as_not_supported_with_the_onnx_export(data, name):
    msg = _refusal("IMPORT_NOT_SUPPORTED_YET", data, name)
    assert msg.startswith(f"{name!r} looks like a CatBoost model, which is not supported yet.")
    assert "Export it to ONNX where you trained it, with model.save_model('model.onnx', format='onnx')" in msg
    assert "Accepted: a scikit-learn model or pipeline saved with skops" in msg


@pytest.mark.parametrize(
    ("data", "name", "fmt"),
    [
        (b"\x08\x07\x12\x07skl2onnx", "clf.onnx", "ONNX"),  # a header without a graph
        (b'{"learner":{"attributes":{},"feature_names":[]},"version":[2,0,3]}', "model.json", "XGBoost"),
        (b"{L\x00\x00\x00\x00\x00\x00\x00\x07learner{", "model.ubj", "XGBoost"),
    ],
)
def test_onnx_and_xgboost_are_now_read_and_broken_files_are_unreadable(data, name, fmt):
    msg = _refusal("IMPORT_UNREADABLE", data, name)
    assert msg.startswith(f"Could not read {name!r} as a {fmt} model")


def test_unknown_bytes_still_unknown():
    msg = _refusal("IMPORT_UNKNOWN_FORMAT", b"\x00\x01\x02 something", "model.bin")
    assert "Accepted: a scikit-learn model or pipeline saved with skops (.skops)" in msg
    assert "an ONNX classifier (.onnx)" in msg


def test_data_and_groups_page_shows_the_pickle_refusal(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "registry.sqlite3"))
    marker = tmp_path / "unpickled.marker"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/data_groups.py").run()
    at.selectbox(key="dg_sample").set_value("breast_cancer").run()
    data = pickle.dumps(_Tripwire(marker))
    at.file_uploader(key="up_model").set_value(("model.pkl", data, "application/octet-stream")).run()
    at.button(key="act_import").click().run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any(e.startswith("'model.pkl' is a pickle file. It is refused without being opened") for e in errors), errors
    assert not any("Unexpected problem" in e for e in errors)
    assert not marker.exists()
