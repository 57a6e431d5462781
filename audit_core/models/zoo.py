"""The model zoo and the common model adapter.

Every model, trained here or imported, is wrapped in :class:`FittedModel`,
which exposes ``predict_proba`` on raw frames and on the transformed matrix.
The audits work in the transformed space (where evidence groups and baselines
live), so both entry points must agree: ``predict_proba(frame) ==
predict_proba_transformed(transform(frame))``.

Zoo (all seeded explicitly)
---------------------------
``logistic_regression``
    L2, ``C=1`` (SPEC §2).
``lightgbm``
    The fixed specification of SPEC §2: 200 trees, learning rate 0.05,
    31 leaves, minimum child samples 50, row and column subsampling 0.9,
    L2 regularisation 1.
``random_forest``, ``hist_gradient_boosting``, ``mlp``
    scikit-learn defaults with modest sizes, listed in :data:`ZOO`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from audit_core.data.groups import Grouping, raw_origin_grouping
from audit_core.data.preprocess import expansion_size, feature_origins, make_preprocessor
from audit_core.errors import fail, register_messages
from audit_core.limits import Limits

__all__ = ["ZOO", "ModelSpec", "FittedModel", "make_estimator", "train_model", "check_expansion_cap"]

register_messages(
    {
        "MODEL_UNKNOWN_KIND": "Model kind {kind!r} is not in the zoo: {kinds}.",
        "MODEL_BAD_PARAM": "Parameter {param!r} is not accepted by model {kind!r}: {detail}",
        "MODEL_MISSING_COLUMNS": (
            "The model expects column(s) {columns} that the table does not have."
        ),
        "MODEL_FIT_FAILED": "Training {kind} failed: {detail}",
        "MODEL_CLASS_MISMATCH": (
            "The model predicts {n_model} classes but the target definition has {n_target}."
        ),
        "MODEL_MATRIX_CAP": (
            "Training would expand {n_rows:,} rows into {n_features:,} transformed columns: a {size_mb:,.0f} MB "
            "matrix, over the {cap_mb:,.0f} MB cap (environment variable AUDIT_MAX_MATRIX_MB). {widest} "
            "Give a high-cardinality column the identifier role (it is then not a feature), group its rare "
            "levels into one before uploading, use fewer rows, or raise the cap."
        ),
        "MODEL_CLASS_ABSENT": (
            "The training rows hold no row of class {classes} (of the declared classes {declared}), so the "
            "model could never predict it. Change the source domain, the eligibility filter or the target "
            "definition (for example pick a positive class)."
        ),
        "MODEL_ZERO_WEIGHT_CLASS": (
            "Every training row of class {cls} ({count:,} rows) has weight 0, so the model would learn to "
            "predict the other class(es) for everyone. Give those rows a positive weight, or drop the weight column."
        ),
    }
)

#: Bytes per cell of the dense transformed matrix (float64).
_CELL_BYTES = 8


def _lightgbm(seed: int, **params: Any):
    from lightgbm import LGBMClassifier

    base: dict[str, Any] = dict(
        n_estimators=200,
        learning_rate=0.05,
        num_leaves=31,
        min_child_samples=50,
        subsample=0.9,
        subsample_freq=1,
        colsample_bytree=0.9,
        reg_lambda=1.0,
        random_state=seed,
        deterministic=True,
        force_row_wise=True,
        n_jobs=1,
        verbose=-1,
    )
    base.update(params)
    return LGBMClassifier(**base)


def _logistic(seed: int, **params: Any):
    from sklearn.linear_model import LogisticRegression

    base = dict(C=1.0, max_iter=2000, random_state=seed)
    base.update(params)
    return LogisticRegression(**base)


def _forest(seed: int, **params: Any):
    from sklearn.ensemble import RandomForestClassifier

    base = dict(n_estimators=200, min_samples_leaf=5, random_state=seed, n_jobs=1)
    base.update(params)
    return RandomForestClassifier(**base)


def _hgb(seed: int, **params: Any):
    from sklearn.ensemble import HistGradientBoostingClassifier

    base = dict(max_iter=200, learning_rate=0.05, random_state=seed, early_stopping=False)
    base.update(params)
    return HistGradientBoostingClassifier(**base)


def _mlp(seed: int, **params: Any):
    from sklearn.neural_network import MLPClassifier

    base = dict(hidden_layer_sizes=(64, 32), alpha=1e-3, max_iter=300, early_stopping=True, random_state=seed)
    base.update(params)
    return MLPClassifier(**base)


#: kind -> (display name, factory(seed, **params))
ZOO: dict[str, tuple[str, Callable[..., Any]]] = {
    "logistic_regression": ("Logistic regression (L2, C=1)", _logistic),
    "lightgbm": ("LightGBM (fixed settings)", _lightgbm),
    "random_forest": ("Random forest", _forest),
    "hist_gradient_boosting": ("Histogram gradient boosting", _hgb),
    "mlp": ("MLP (scikit-learn)", _mlp),
}


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """What to train: a zoo kind, an explicit seed, and parameter overrides."""

    kind: str
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seed": int(self.seed), "params": dict(self.params)}


def make_estimator(spec: ModelSpec):
    """Build the unfitted estimator for ``spec``."""
    if spec.kind not in ZOO:
        raise fail("MODEL_UNKNOWN_KIND", kind=spec.kind, kinds=", ".join(ZOO))
    # every path (a config, the app's model, a Transport refit) meets the same bounds before any fitting
    Limits.from_env().check_fields("model_params", dict(spec.params), where="model.params")
    try:
        return ZOO[spec.kind][1](int(spec.seed), **dict(spec.params))
    except TypeError as exc:
        raise fail("MODEL_BAD_PARAM", param=", ".join(spec.params), kind=spec.kind, detail=str(exc)) from None


@dataclass(frozen=True, eq=False)
class FittedModel:
    """A fitted classifier behind one interface.

    Attributes
    ----------
    spec : dict
        How it was made (``kind``, ``seed``, ``params``, or ``source`` for imports).
    input_columns : tuple of str
        Raw columns the model reads.
    preprocessor : transformer or None
        Maps a raw frame to the transformed matrix; ``None`` means the raw
        columns are the transformed space (all numeric).
    estimator : object
        Has ``predict_proba`` on the transformed matrix.
    classes : tuple
        Class codes in probability column order.
    origins : pandas.DataFrame
        Transformed feature → raw column table (see
        :func:`audit_core.data.preprocess.feature_origins`).
    """

    spec: Mapping[str, Any]
    input_columns: tuple[str, ...]
    preprocessor: Any
    estimator: Any
    classes: tuple
    origins: pd.DataFrame

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(self.origins["feature"])

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def default_grouping(self) -> Grouping:
        return raw_origin_grouping(self.origins)

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Raw frame of shape (n, n_inputs) → matrix of shape (n, n_features)."""
        missing = [c for c in self.input_columns if c not in frame.columns]
        if missing:
            raise fail("MODEL_MISSING_COLUMNS", columns=", ".join(repr(c) for c in missing[:10]))
        X = frame.loc[:, list(self.input_columns)]
        if self.preprocessor is None:
            return X.to_numpy(dtype=float)
        return np.asarray(self.preprocessor.transform(X), dtype=float)

    def predict_proba_transformed(self, Xt: np.ndarray) -> np.ndarray:
        """Class probabilities of shape (n, n_classes) from a transformed matrix."""
        Xt = np.asarray(Xt, dtype=float)
        if hasattr(self.estimator, "feature_names_in_") and not isinstance(Xt, pd.DataFrame):
            return np.asarray(self.estimator.predict_proba(pd.DataFrame(Xt, columns=list(self.estimator.feature_names_in_))),
                              dtype=float)
        return np.asarray(self.estimator.predict_proba(Xt), dtype=float)

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Class probabilities of shape (n, n_classes) from a raw frame."""
        return self.predict_proba_transformed(self.transform(frame))


def check_expansion_cap(
    X: pd.DataFrame,
    numeric: Sequence[str],
    categorical: Sequence[str],
    *,
    missing_indicators: bool = False,
    max_bytes: int | None = None,
) -> int:
    """Refuse, before any one-hot expansion, a dense transformed matrix over the cap.

    Parameters
    ----------
    X : pandas.DataFrame of shape (n_rows, n_raw)
    numeric, categorical : sequence of str
    missing_indicators : bool
    max_bytes : int, optional
        Default :attr:`Limits.max_matrix_bytes` from the environment (``AUDIT_MAX_MATRIX_MB``).

    Returns
    -------
    int
        The number of transformed columns.

    Raises
    ------
    AuditInputError
        ``MODEL_MATRIX_CAP`` naming the size, the cap and the widest columns.
    """
    cap = Limits.from_env().max_matrix_bytes if max_bytes is None else int(max_bytes)
    n_out, levels = expansion_size(X, numeric, categorical, missing_indicators=missing_indicators)
    size = len(X) * n_out * _CELL_BYTES
    if size > cap:
        wide = sorted(levels.items(), key=lambda kv: -kv[1])[:3]
        if wide and wide[0][1] > len(numeric):
            widest = "Widest: " + ", ".join(f"column {c!r} adds {n:,} one-hot columns (one per level)" for c, n in wide) + "."
        else:
            widest = f"The table has {len(numeric):,} numeric feature columns."
        raise fail("MODEL_MATRIX_CAP", n_rows=len(X), n_features=n_out, size_mb=size / 2**20,
                   cap_mb=cap / 2**20, widest=widest)
    return n_out


def _check_classes(y: np.ndarray, classes: Sequence | None, sample_weight: np.ndarray | None) -> None:
    """Refuse a declared class absent from the training rows, or one whose rows all weigh 0."""
    codes = np.asarray(y)
    n = len(classes) if classes is not None else (int(codes.max()) + 1 if codes.size else 0)
    names = [repr(str(c)) for c in classes] if classes is not None else [f"code {i}" for i in range(n)]
    counts = np.bincount(codes.astype(np.int64), minlength=n)[:n] if codes.size else np.zeros(n, dtype=int)
    absent = [names[i] for i in range(n) if counts[i] == 0]
    if absent:
        raise fail("MODEL_CLASS_ABSENT", classes=", ".join(absent), declared=", ".join(names))
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=float)
        for i in range(n):
            if counts[i] and not np.any(w[codes == i] > 0):
                raise fail("MODEL_ZERO_WEIGHT_CLASS", cls=names[i], count=int(counts[i]))


def train_model(
    X: pd.DataFrame,
    y: np.ndarray,
    *,
    spec: ModelSpec,
    numeric: tuple[str, ...] | list[str],
    categorical: tuple[str, ...] | list[str],
    missing_indicators: bool = False,
    sample_weight: np.ndarray | None = None,
    progress: Callable[[float, str], None] | None = None,
    classes: Sequence | None = None,
) -> FittedModel:
    """Fit the standard preprocessor and a zoo model on training rows.

    Parameters
    ----------
    X : pandas.DataFrame of shape (n_train, n_raw)
    y : ndarray of shape (n_train,)
        Integer class codes ``0..C-1``.
    spec : ModelSpec
    numeric, categorical : sequence of str
        Feature columns by role.
    missing_indicators : bool
    sample_weight : ndarray of shape (n_train,), optional
    progress : callable(fraction, message), optional
    classes : sequence, optional
        The declared classes in code order (e.g. ``TargetLabels.class_names``):
        a class with no training row, including the last one, is refused
        naming it. Without it, gaps among the codes ``0..max(y)`` are refused.

    Returns
    -------
    FittedModel

    Raises
    ------
    AuditInputError
        ``MODEL_MATRIX_CAP`` before any expansion when the dense transformed
        matrix would exceed ``AUDIT_MAX_MATRIX_MB``; ``MODEL_CLASS_ABSENT``,
        ``MODEL_ZERO_WEIGHT_CLASS``; ``MODEL_FIT_FAILED``.
    """
    report = progress or (lambda f, m: None)
    estimator = make_estimator(spec)
    _check_classes(np.asarray(y), classes, sample_weight)
    check_expansion_cap(X, numeric, categorical, missing_indicators=missing_indicators)
    report(0.05, "Fitting preprocessing")
    pre = make_preprocessor(list(numeric), list(categorical), missing_indicators=missing_indicators)
    cols = list(numeric) + list(categorical)
    Xt = pre.fit_transform(X.loc[:, cols])
    origins = feature_origins(pre)
    report(0.3, f"Training {ZOO[spec.kind][0]}")
    fit_kwargs = {}
    if sample_weight is not None and spec.kind != "mlp":
        fit_kwargs["sample_weight"] = np.asarray(sample_weight, dtype=float)
    try:
        estimator.fit(Xt, np.asarray(y), **fit_kwargs)
    except ValueError as exc:
        raise fail("MODEL_FIT_FAILED", kind=spec.kind, detail=str(exc)[:300]) from None
    report(1.0, "Done")
    return FittedModel(
        spec=spec.to_dict(),
        input_columns=tuple(cols),
        preprocessor=pre,
        estimator=estimator,
        classes=tuple(estimator.classes_.tolist()),
        origins=origins,
    )
