"""Import a user's own model through safe formats only.

Four formats are accepted, and nothing is ever unpickled (pickle, joblib, MLflow
and CatBoost files are recognised and refused with a way forward by
:mod:`.refusals`):

* a scikit-learn estimator or pipeline saved with **skops** (``.skops``).
  Before loading, :func:`skops.io.get_untrusted_types` lists every type the
  file would construct that skops does not trust by default. Types in
  :data:`REVIEWED_TYPES` (LightGBM's scikit-learn wrapper, whose state is its
  text model) are accepted; any other is shown to the user and refused.
* a **LightGBM text model** (``Booster.save_model``), which reads numeric
  columns by the feature names stored in the file;
* an **ONNX classifier** run by ONNX Runtime (:mod:`.onnx_import`), audited
  as it is in raw space;
* an **XGBoost** JSON or UBJ model (:mod:`.xgboost_import`; XGBoost is an
  optional extra).

A pipeline is split into its preprocessing (all steps but the last) and its
classifier, so the audits can work in its transformed space. Transformed
columns are traced to raw columns by scikit-learn's output names
(``transformer__column...``): the longest raw column name that the stripped
name starts with. Columns that cannot be traced form a group of their own.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core.data.intake.options import MB  # and the DECOMPRESSION_CAP template, registered there
from audit_core.errors import fail, register_messages
from audit_core.limits import Limits

from .inputs import require_columns, require_numeric
from .onnx_import import is_onnx, load_onnx
from .refusals import ACCEPTED_FORMATS, refuse_known_format
from .xgboost_import import is_xgboost, load_xgboost
from .zoo import FittedModel

__all__ = ["REVIEWED_TYPES", "import_model", "load_skops", "load_lightgbm_text"]

REVIEWED_TYPES: frozenset[str] = frozenset(
    {
        "collections.OrderedDict",
        "lightgbm.basic.Booster",
        "lightgbm.sklearn.LGBMClassifier",
    }
)

register_messages(
    {
        "IMPORT_UNTRUSTED_TYPES": (
            "Refused {name!r}: it would construct untrusted type(s) {types}. "
            "Only scikit-learn, NumPy and reviewed LightGBM types are loaded."
        ),
        "IMPORT_UNREADABLE": "Could not read {name!r} as a {fmt} model: {detail}",
        "IMPORT_UNKNOWN_FORMAT": (
            "{name!r} is not a supported model file. Accepted: " + ACCEPTED_FORMATS + ". "
            "Pickle and joblib files are never loaded."
        ),
        "IMPORT_NOT_CLASSIFIER": "The model in {name!r} ({type}) has no predict_proba; import a classifier.",
        "IMPORT_NO_COLUMNS": (
            "The model in {name!r} does not record its input column names (feature_names_in_). "
            "Fit it on a pandas DataFrame before saving."
        ),
        "IMPORT_CLASS_MISMATCH": (
            "The model in {name!r} predicts classes {model_classes}, but the target definition has {target_classes}."
        ),
    }
)


def _trace_origin(name: str, raw_columns: list[str]) -> str:
    stripped = name.split("__", 1)[1] if "__" in name else name
    for candidate in (name, stripped):
        if candidate in raw_columns:
            return candidate
    matches = [c for c in raw_columns if stripped.startswith(c)]
    return max(matches, key=len) if matches else stripped


def _origins_from_names(names: list[str], raw_columns: list[str]) -> pd.DataFrame:
    rows = []
    for n in names:
        raw = _trace_origin(n, raw_columns)
        kind = "numeric" if raw == n or n.endswith("__" + raw) else "derived"
        rows.append((n, raw, kind, ""))
    return pd.DataFrame(rows, columns=["feature", "raw_column", "kind", "category"])


def _check_zip_expansion(data: bytes, name: str) -> None:
    """Refuse a skops zip whose members would expand past the decompression cap."""
    import io
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            expanded = sum(info.file_size for info in zf.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise fail("IMPORT_UNREADABLE", name=name, fmt="skops", detail=str(exc)[:200]) from None
    cap = Limits.from_env().max_expansion_mb * MB
    if expanded > cap:
        raise fail("DECOMPRESSION_CAP", name=name, size_mb=expanded / MB, cap_mb=cap / MB,
                   cap_name="decompression cap", var="AUDIT_MAX_EXPANSION_MB", ratio=expanded / max(len(data), 1))


def load_skops(data: bytes, *, name: str, table_columns: list[str]) -> FittedModel:
    """Load a skops file with trusted types only.

    Parameters
    ----------
    data : bytes
    name : str
        File name, for messages.
    table_columns : list of str
        Columns of the current table; the model's inputs must be among them.
    """
    import skops.io as sio

    _check_zip_expansion(data, name)
    try:
        untrusted = sio.get_untrusted_types(data=data)
    except Exception as exc:  # skops raises zipfile/json/KeyError variants
        raise fail("IMPORT_UNREADABLE", name=name, fmt="skops", detail=str(exc)[:200]) from None
    refused = sorted(set(untrusted) - REVIEWED_TYPES)
    if refused:
        raise fail("IMPORT_UNTRUSTED_TYPES", name=name, types=", ".join(refused[:10]))
    try:
        obj = sio.loads(data, trusted=sorted(set(untrusted)))
    except Exception as exc:
        raise fail("IMPORT_UNREADABLE", name=name, fmt="skops", detail=str(exc)[:200]) from None
    if not hasattr(obj, "predict_proba"):
        raise fail("IMPORT_NOT_CLASSIFIER", name=name, type=type(obj).__name__)
    cols = getattr(obj, "feature_names_in_", None)
    if cols is None:
        raise fail("IMPORT_NO_COLUMNS", name=name)
    cols = [str(c) for c in cols]
    require_columns(cols, table_columns, name=name)
    from sklearn.pipeline import Pipeline

    if isinstance(obj, Pipeline) and len(obj.steps) > 1:
        pre, est = obj[:-1], obj[-1]
        try:
            names = [str(n) for n in pre.get_feature_names_out()]
        except Exception:
            n_out = len(getattr(est, "feature_names_in_", [])) or int(getattr(est, "n_features_in_", 0))
            names = [f"x{i}" for i in range(n_out)]
    else:
        pre, est, names = None, obj, cols
    return FittedModel(
        spec={"kind": "imported_skops", "source": name, "estimator": type(est).__name__},
        input_columns=tuple(cols),
        preprocessor=pre,
        estimator=est,
        classes=tuple(np.asarray(est.classes_).tolist()),
        origins=_origins_from_names(names, cols),
    )


_LGB_CLASSIFIER_OBJECTIVES = frozenset({"binary", "multiclass", "softmax", "cross_entropy", "xentropy"})


class _BoosterClassifier:
    """``predict_proba`` over a LightGBM Booster loaded from its text model."""

    def __init__(self, booster) -> None:
        self.booster = booster
        n_class = int(booster.params.get("num_class", 1) or 1) if hasattr(booster, "params") else 1
        n_class = max(n_class, booster.num_model_per_iteration())
        self.n_class = 2 if n_class == 1 else n_class
        self.classes_ = np.arange(self.n_class)

    def predict_proba(self, X) -> np.ndarray:
        p = np.asarray(self.booster.predict(np.asarray(X, dtype=float)), dtype=float)
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        return p


def load_lightgbm_text(data: bytes, *, name: str, table: pd.DataFrame) -> FittedModel:
    """Load a LightGBM text model; its features are read from ``table`` by name."""
    import lightgbm as lgb

    try:
        text = data.decode("utf-8")
        if not text.startswith("tree"):
            raise ValueError("the file does not start with LightGBM's 'tree' header")
        booster = lgb.Booster(model_str=text)
    except (UnicodeDecodeError, ValueError, lgb.basic.LightGBMError) as exc:
        raise fail("IMPORT_UNREADABLE", name=name, fmt="LightGBM text", detail=str(exc)[:200]) from None
    # Only classification objectives give probabilities: a regression (or
    # ranking) model's raw scores would otherwise pass as "probabilities".
    objective = str(booster.params.get("objective", "") or "").split(" ")[0]
    if objective not in _LGB_CLASSIFIER_OBJECTIVES:
        raise fail("IMPORT_NOT_CLASSIFIER", name=name, type=f"LightGBM objective {objective or 'unknown'!r}")
    cols = [str(c) for c in booster.feature_name()]
    require_numeric(cols, table, name=name, fmt="LightGBM text")
    est = _BoosterClassifier(booster)
    return FittedModel(
        spec={"kind": "imported_lightgbm_text", "source": name},
        input_columns=tuple(cols),
        preprocessor=None,
        estimator=est,
        classes=tuple(est.classes_.tolist()),
        origins=_origins_from_names(cols, cols),
    )


def import_model(data: bytes, *, name: str, table: pd.DataFrame) -> FittedModel:
    """Import a model file by its format: skops zip, LightGBM text, XGBoost JSON/UBJ or ONNX.

    Parameters
    ----------
    data : bytes
        The file; recognised by its bytes (an ONNX file, which has no magic number, by parsing it).
    name : str
        File name, for messages.
    table : pandas.DataFrame of shape (n_rows, n_columns)
        The table the model will score.

    Returns
    -------
    FittedModel

    Raises
    ------
    AuditInputError
        ``IMPORT_PICKLE``, ``IMPORT_MLFLOW`` or ``IMPORT_NOT_SUPPORTED_YET`` for a recognised file that is not
        imported (see :func:`.refusals.refuse_known_format`; nothing is opened), ``IMPORT_UNKNOWN_FORMAT`` for
        anything else; each loader's own refusals (see :func:`load_skops`, :func:`load_lightgbm_text`,
        :func:`.xgboost_import.load_xgboost`, :func:`.onnx_import.load_onnx`).
    """
    refuse_known_format(data, name=name)
    if data[:2] == b"PK":
        return load_skops(data, name=name, table_columns=[str(c) for c in table.columns])
    if data[:4] == b"tree":
        return load_lightgbm_text(data, name=name, table=table)
    if is_xgboost(data):
        return load_xgboost(data, name=name, table=table)
    if name.lower().endswith(".onnx") or is_onnx(data):
        return load_onnx(data, name=name, table=table)
    raise fail("IMPORT_UNKNOWN_FORMAT", name=name)
