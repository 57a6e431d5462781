"""Import an XGBoost model saved in XGBoost's own format (JSON or UBJ), an optional extra.

The file is given to ``xgboost.Booster().load_model(bytearray)``, which parses
XGBoost's JSON or Universal Binary JSON model (no pickle). Its columns are the
feature names stored in the booster; its objective must give class
probabilities: ``binary:logistic`` or ``multi:softprob``. Any other objective
is refused by name (``multi:softmax`` predicts labels only).

XGBoost's UBJ reader can crash the process on a damaged file (a segmentation
fault inside ``load_model``: 3 of 40 seeded damaged copies of a real UBJ model
did), which would take the whole app down. So the file is first read, and
two rows predicted, in a child Python process (:func:`_probe_in_child`); a
child that dies by a signal or runs past 120 s is refused as unreadable, and
only a file the child read is loaded here.

XGBoost is not a core requirement: install it with
``pip install -r requirements-xgboost.txt``. Without it, an XGBoost file is
still recognised and refused with that instruction.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages

from .inputs import require_numeric
from .zoo import FittedModel

__all__ = ["XGBOOST_OBJECTIVES", "XGBoostClassifier", "is_xgboost", "load_xgboost"]

#: Objectives whose predictions are class probabilities.
XGBOOST_OBJECTIVES: frozenset[str] = frozenset({"binary:logistic", "multi:softprob"})

register_messages(
    {
        "IMPORT_XGBOOST_MISSING": (
            "{name!r} is an XGBoost model, and XGBoost (an optional extra) is not installed here. Install it with "
            "pip install -r requirements-xgboost.txt, or export the model to ONNX with onnxmltools."
        ),
        "IMPORT_XGBOOST_OBJECTIVE": (
            "The XGBoost model in {name!r} has objective {objective!r}, which does not give class probabilities. "
            "Accepted objectives: binary:logistic, multi:softprob (retrain a multi:softmax model with multi:softprob)."
        ),
        "IMPORT_XGBOOST_NO_NAMES": (
            "The XGBoost model in {name!r} does not record its feature names, so its columns are unknown. Set them "
            "before saving: booster.feature_names = list_of_columns (or fit on a pandas DataFrame)."
        ),
    }
)


_PROBE = (
    "import sys\n"
    "import numpy as np\n"
    "import xgboost as xgb\n"
    "b = xgb.Booster(params={'nthread': 1})\n"
    "b.load_model(bytearray(sys.stdin.buffer.read()))\n"
    "b.save_config()\n"
    "b.predict(xgb.DMatrix(np.zeros((2, b.num_features())), nthread=1))\n"
)
_PROBE_SECONDS = 120


def _probe_in_child(data: bytes, name: str) -> None:
    """Read ``data`` with XGBoost in a child process first; refuse it if the reader crashes or hangs there.

    A Python error in the child (a plain parse error) is left to the in-process load, which reports it.
    """
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], input=data, capture_output=True,
                              timeout=_PROBE_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise fail("IMPORT_UNREADABLE", name=name, fmt="XGBoost",
                   detail=f"XGBoost did not finish reading it in {_PROBE_SECONDS} s") from None
    if done.returncode < 0:
        raise fail("IMPORT_UNREADABLE", name=name, fmt="XGBoost",
                   detail=f"XGBoost's reader crashed on it (signal {-done.returncode}): the file is damaged") from None


def is_xgboost(data: bytes) -> bool:
    """Whether ``data`` begins like an XGBoost JSON or UBJ model (a top-level ``learner`` object)."""
    head = data[:64].lstrip()
    return head[:1] == b"{" and b"learner" in head[:24]  # JSON key, or UBJ length marker + key


class XGBoostClassifier:
    """``predict_proba`` over an XGBoost Booster, reading columns in ``feature_names`` order.

    Parameters
    ----------
    booster : xgboost.Booster
    n_classes : int
    """

    def __init__(self, booster, *, n_classes: int) -> None:
        self.booster = booster
        self.feature_names = list(booster.feature_names)
        self.classes_ = np.arange(n_classes)

    def predict_proba(self, X) -> np.ndarray:
        """Matrix of shape (n, n_features) → probabilities of shape (n, n_classes)."""
        import xgboost as xgb

        dm = xgb.DMatrix(np.asarray(X, dtype=float), feature_names=self.feature_names, nthread=1)
        p = np.asarray(self.booster.predict(dm), dtype=float)
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p


def load_xgboost(data: bytes, *, name: str, table: pd.DataFrame) -> FittedModel:
    """Load an XGBoost JSON/UBJ classifier; its features are read from ``table`` by name.

    Parameters
    ----------
    data : bytes
    name : str
        File name, for messages.
    table : pandas.DataFrame of shape (n_rows, n_columns)

    Returns
    -------
    FittedModel
        ``spec["kind"] == "imported_xgboost"``; no preprocessor; one feature per column.

    Raises
    ------
    AuditInputError
        ``IMPORT_XGBOOST_MISSING``, ``IMPORT_UNREADABLE``, ``IMPORT_XGBOOST_OBJECTIVE``, ``IMPORT_XGBOOST_NO_NAMES``,
        ``IMPORT_MISSING_COLUMNS``, ``IMPORT_NON_NUMERIC``.
    """
    try:
        import xgboost as xgb
    except ImportError:
        raise fail("IMPORT_XGBOOST_MISSING", name=name) from None
    _probe_in_child(data, name)
    booster = xgb.Booster(params={"nthread": 1})
    try:
        booster.load_model(bytearray(data))
        learner = json.loads(booster.save_config())["learner"]
    except (xgb.core.XGBoostError, ValueError, KeyError) as exc:
        detail = " ".join(str(exc).split("Stack trace")[0].split())[:200]
        raise fail("IMPORT_UNREADABLE", name=name, fmt="XGBoost", detail=detail) from None
    objective = str(learner.get("objective", {}).get("name", "unknown"))
    if objective not in XGBOOST_OBJECTIVES:
        raise fail("IMPORT_XGBOOST_OBJECTIVE", name=name, objective=objective)
    cols = [str(c) for c in (booster.feature_names or [])]
    if not cols:
        raise fail("IMPORT_XGBOOST_NO_NAMES", name=name)
    require_numeric(cols, table, name=name, fmt="XGBoost")
    n_class = int(learner.get("learner_model_param", {}).get("num_class", "0") or 0)
    est = XGBoostClassifier(booster, n_classes=max(n_class, 2) if objective == "multi:softprob" else 2)
    return FittedModel(
        spec={"kind": "imported_xgboost", "source": name, "objective": objective},
        input_columns=tuple(cols),
        preprocessor=None,
        estimator=est,
        classes=tuple(est.classes_.tolist()),
        origins=pd.DataFrame({"feature": cols, "raw_column": cols, "kind": ["numeric"] * len(cols),
                              "category": [""] * len(cols)}),
    )
