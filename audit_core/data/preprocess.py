"""Standard preprocessing and raw-origin tracing.

The preprocessor is a scikit-learn ``ColumnTransformer`` with three parts:

* ``num``: median imputation, then standardisation, on numeric columns;
* ``cat``: mode imputation, then one-hot with unknown categories ignored, on
  categorical columns (values are read as text, so ``1`` and ``"1"`` agree);
* ``miss`` (optional): one missingness indicator for each column that had a
  missing value in the training data.

:func:`feature_origins` walks the fitted transformer and returns, for every
transformed column, the raw variable it came from. One-hot columns and a
missingness indicator point at their variable, so a raw-origin evidence group
holds all of them.

Transformed names are unique by construction: a numeric column is named by
its raw name, a one-hot column ``raw=level`` and an indicator
``raw__missing``, where the raw name is escaped (:func:`feature_name_part`)
so that a numeric column called ``c=a`` (escaped ``c\\=a``) never collides
with level ``a`` of column ``c`` (``c=a``), nor a column called ``x__missing``
with the indicator of ``x``. Ordinary names (without ``=``, ``\\`` or a
``__missing`` ending) are unchanged. The exact raw origin of every feature is
the ``raw_column`` of :func:`feature_origins`, never parsed from the name.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

__all__ = ["make_preprocessor", "feature_origins", "feature_name_part", "expansion_size", "category_text", "ORIGIN_COLUMNS"]

ORIGIN_COLUMNS = ("feature", "raw_column", "kind", "category")


_EXACT_INT = 2.0**53
_MISSING_SUFFIX = "__missing"


def feature_name_part(raw: str) -> str:
    r"""A raw column name as it appears in transformed names.

    ``\`` and ``=`` are backslash-escaped, and a trailing ``__missing`` gets a
    backslash before it, so an unescaped ``=`` always separates a column from
    its level and an unescaped ``__missing`` ending always marks an indicator.

    Examples
    --------
    >>> feature_name_part("age"), feature_name_part("c=a"), feature_name_part("x__missing")
    ('age', 'c\\=a', 'x\\__missing')
    """
    text = raw.replace("\\", "\\\\").replace("=", "\\=")
    if text.endswith(_MISSING_SUFFIX):
        text = text[: -len(_MISSING_SUFFIX)] + "\\" + _MISSING_SUFFIX
    return text


def _value_text(v):
    """One value as text; an integral float reads like the integer (``2.0`` -> ``"2"``)."""
    if isinstance(v, (float, np.floating)) and abs(float(v)) < _EXACT_INT and float(v).is_integer():
        return str(int(v))
    return str(v)


def category_text(s: pd.Series) -> pd.Series:
    """A categorical column as the text the preprocessor one-hot encodes (object dtype, missing stays NaN)."""
    missing = s.isna().to_numpy()
    if pd.api.types.is_float_dtype(s.dtype):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        text = np.array([_value_text(v) for v in values], dtype=object)
    elif s.dtype == object:
        text = np.array([_value_text(v) for v in s.tolist()], dtype=object)
    else:
        text = s.astype(str).to_numpy(dtype=object)
    text[missing] = np.nan
    return pd.Series(text, index=s.index, name=s.name, dtype=object)


def _as_text(X):
    """Cast categorical input to object text, keeping missing values as NaN.

    Integral floats are written as integers, so a code column read as ``int``
    in training and as ``float`` later (because a value went missing) keeps
    matching its categories: ``1``, ``1.0`` and ``"1"`` all read ``"1"``.
    """
    frame = pd.DataFrame(X)
    return pd.DataFrame({i: category_text(frame.iloc[:, i]) for i in range(frame.shape[1])}).set_axis(
        frame.columns, axis=1
    )


def expansion_size(
    X: pd.DataFrame,
    numeric: Sequence[str],
    categorical: Sequence[str],
    *,
    missing_indicators: bool = False,
) -> tuple[int, dict[str, int]]:
    """How many transformed columns :func:`make_preprocessor` would output on ``X``, before fitting it.

    Cheap (one pass of distinct counts), so a caller can bound the dense
    matrix up front instead of meeting a ``MemoryError`` in the one-hot step.

    Parameters
    ----------
    X : pandas.DataFrame of shape (n_rows, n_raw)
    numeric, categorical : sequence of str
    missing_indicators : bool

    Returns
    -------
    n_features : int
        Numeric columns + one-hot levels (as text, like the encoder) +
        indicators of columns with a missing value.
    levels : dict of str to int
        One-hot levels per categorical column (at least 1: an all-missing
        column keeps one imputed column).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"x": [1.0, None, 3.0], "c": ["a", "b", "a"], "d": [1, 1.0, "1"]})
    >>> expansion_size(X, ["x"], ["c", "d"], missing_indicators=True)
    (5, {'c': 2, 'd': 1})
    """
    levels = {str(c): max(1, int(category_text(X[c]).nunique(dropna=True))) for c in categorical}
    n = len(numeric) + sum(levels.values())
    if missing_indicators:
        n += sum(int(X[c].isna().any()) for c in list(numeric) + list(categorical))
    return n, levels


def make_preprocessor(
    numeric: Sequence[str],
    categorical: Sequence[str],
    *,
    missing_indicators: bool = False,
) -> ColumnTransformer:
    """Build the (unfitted) standard preprocessor.

    Parameters
    ----------
    numeric, categorical : sequence of str
        Raw column names by role.
    missing_indicators : bool, default False
        Add one indicator per column with missing values in training.

    Returns
    -------
    sklearn.compose.ColumnTransformer
        Outputs a dense float matrix of shape (n_samples, n_features_out).
    """
    parts = []
    if numeric:
        parts.append(
            (
                "num",
                Pipeline(
                    [
                        # keep_empty_features: a column entirely missing in the training
                        # rows (e.g. only filled in the target domain) keeps its output
                        # column, so the matrix stays aligned with feature_origins.
                        ("impute", SimpleImputer(strategy="median", keep_empty_features=True)),
                        ("scale", StandardScaler()),
                    ]
                ),
                list(numeric),
            )
        )
    if categorical:
        parts.append(
            (
                "cat",
                Pipeline(
                    [
                        ("text", FunctionTransformer(_as_text, feature_names_out="one-to-one")),
                        ("impute", SimpleImputer(strategy="most_frequent", keep_empty_features=True)),
                        (
                            "onehot",
                            OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=np.float64),
                        ),
                    ]
                ),
                list(categorical),
            )
        )
    if missing_indicators and (numeric or categorical):
        parts.append(
            (
                "miss",
                Pipeline(
                    [
                        ("text", FunctionTransformer(_as_text, feature_names_out="one-to-one")),
                        ("ind", MissingIndicator(
                                # Missing values in a column that had none in training
                                # (e.g. in the target domain) are imputed, not an error.
                                features="missing-only",
                                missing_values=np.nan,
                                error_on_new=False,
                            )),
                    ]
                ),
                list(numeric) + list(categorical),
            )
        )
    return ColumnTransformer(parts, remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=False)


def feature_origins(preprocessor: ColumnTransformer) -> pd.DataFrame:
    """Trace every transformed column of a fitted preprocessor to its raw variable.

    Parameters
    ----------
    preprocessor : fitted ColumnTransformer from :func:`make_preprocessor`

    Returns
    -------
    pandas.DataFrame of shape (n_features_out, 4)
        Columns ``feature`` (unique transformed name), ``raw_column``,
        ``kind`` (``numeric``, ``onehot`` or ``missing_indicator``) and
        ``category`` (the one-hot level, else empty).
    """
    rows: list[tuple[str, str, str, str]] = []
    for name, trans, cols in preprocessor.transformers_:
        if name == "remainder" or trans == "drop":
            continue
        cols = list(cols)
        if name == "num":
            rows += [(feature_name_part(c), c, "numeric", "") for c in cols]
        elif name == "cat":
            enc: OneHotEncoder = trans.named_steps["onehot"]
            for col, cats in zip(cols, enc.categories_, strict=True):
                rows += [(f"{feature_name_part(col)}={cat}", col, "onehot", str(cat)) for cat in cats]
        elif name == "miss":
            ind: MissingIndicator = trans.named_steps["ind"]
            rows += [(feature_name_part(cols[i]) + _MISSING_SUFFIX, cols[i], "missing_indicator", "")
                     for i in ind.features_]
        else:  # pragma: no cover - only our own transformers are built here
            raise ValueError(f"unknown transformer {name!r}")
    return pd.DataFrame(rows, columns=list(ORIGIN_COLUMNS))
