"""Precomputed scores as a model: audit a table of predictions, not a fitted classifier.

Users of other monitoring tools often hold a table of predictions: one
probability column per class (or, for a binary target, one column for the
positive class) beside the label and the domain. :func:`scored_model` wraps
those columns in a :class:`~audit_core.models.zoo.FittedModel` whose
``predict_proba(frame)`` reads them from the rows it is given, so every step
that only needs probabilities (mappings, thresholds, conformal sets, the
bootstrap, verdicts) runs unchanged. Nothing that needs a model to score
*changed* inputs can run on it (stresses, refits on another target
definition, Fragility); :func:`refuse_scores` says so in words.

:func:`check_scores` is the declared refusal of bad score columns: a missing
column, a value that is not a number, a missing value, a value outside
``[0, 1]``, or (several columns) a record whose probabilities do not sum to 1.
Each message names the column and the row.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from audit_core.errors import excerpt, excerpts, fail, register_messages

from .zoo import FittedModel

__all__ = ["SCORES_KIND", "SUM_TOLERANCE", "ScoreColumns", "scored_model", "scores_label", "is_scored",
           "check_scores", "refuse_scores"]

#: The ``spec["kind"]`` of a scored model.
SCORES_KIND = "scores"
#: Largest ``|Σ_c p_c − 1|`` accepted in a record of several score columns (rounded CSV exports).
SUM_TOLERANCE = 1e-3

register_messages(
    {
        "SCORES_BAD_COLUMNS": "Score columns: {problem}",
        "SCORES_COUNT": (
            "{k} score column(s) ({columns}) for a target with {c} classes ({classes}): give one probability "
            "column per class, in this class order, or, for a binary target, one column for the positive class."
        ),
        "SCORES_MISSING_COLUMN": "The score column {column} is not in the {which} table.",
        "SCORES_NOT_A_NUMBER": (
            "Score column {column} holds {value} in row {row} of the {which} records, not a probability "
            "({count} such value(s)); a score column holds numbers in [0, 1]."
        ),
        "SCORES_MISSING_VALUE": (
            "Score column {column} has no value in row {row} of the {which} records ({count} missing value(s)); "
            "every record needs its probabilities."
        ),
        "SCORES_OUT_OF_RANGE": (
            "Score column {column} holds {value} in row {row} of the {which} records, outside [0, 1] "
            "({count} such value(s)); a probability column holds probabilities."
        ),
        "SCORES_NOT_SUMMING": (
            "The score columns {columns} must sum to 1 in every record (within {tol}); row {row} of the "
            "{which} records sums to {total} ({count} such record(s))."
        ),
        "SCORES_NEED_A_MODEL": (
            "{what} needs a model: this run holds scores from column(s) {columns}, not a model that can score "
            "changed records. Train or import a model to run it."
        ),
    }
)


@dataclass(frozen=True)
class ScoreColumns:
    """The estimator of a scored model: the transformed matrix *is* the score columns.

    Parameters
    ----------
    n_classes : int
        Classes of the target. One column for two classes is the positive
        class's probability ``p`` and becomes ``[1 − p, p]``.
    """

    n_classes: int

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of shape (n, n_classes) from the score matrix of shape (n, k)."""
        X = np.asarray(X, dtype=float)
        if X.shape[1] == 1 and self.n_classes == 2:
            return np.column_stack([1.0 - X[:, 0], X[:, 0]])
        return X


def _columns(columns: Sequence[str]) -> tuple[str, ...]:
    if isinstance(columns, (str, bytes)) or not isinstance(columns, (list, tuple)):
        raise fail("SCORES_BAD_COLUMNS", problem=f"give a list of column names, got {type(columns).__name__}")
    cols = tuple(columns)
    if not cols or not all(isinstance(c, str) and c for c in cols):
        raise fail("SCORES_BAD_COLUMNS", problem=f"give one or more column names, got {excerpt(list(cols))}")
    if len(set(cols)) != len(cols):
        raise fail("SCORES_BAD_COLUMNS", problem=f"each column once, got {excerpt(list(cols))}")
    return cols


def scores_label(columns: Sequence[str]) -> str:
    """The model label of a scored run: ``scores from column 'p'`` / ``scores from columns 'a', 'b'``."""
    cols = _columns(columns)
    return f"scores from column{'s' if len(cols) > 1 else ''} " + ", ".join(repr(c) for c in cols)


def _check_count(cols: tuple[str, ...], n_classes: int, classes: Sequence[str]) -> None:
    if len(cols) not in (1, n_classes) or (len(cols) == 1 and n_classes != 2):
        raise fail("SCORES_COUNT", k=len(cols), columns=excerpts(cols), c=n_classes,
                   classes=excerpts([str(c) for c in classes], items=20) if len(classes) else "?")


def scored_model(columns: Sequence[str], *, n_classes: int = 2, classes: Sequence[str] = ()) -> FittedModel:
    """A :class:`~audit_core.models.zoo.FittedModel` whose probabilities are the score columns of each row.

    Parameters
    ----------
    columns : sequence of str
        One probability column per class, in class-code order (for a binary
        target: class 0 then the positive class), or one column holding the
        positive class's probability of a binary target.
    n_classes : int, default 2
    classes : sequence of str, optional
        Class names in code order, recorded in the spec.

    Returns
    -------
    FittedModel
        ``spec = {"kind": "scores", "columns": [...]}``; ``predict_proba(frame)``
        has shape (n, n_classes) and reads only ``columns``.

    Examples
    --------
    >>> m = scored_model(["p"])
    >>> m.predict_proba(pd.DataFrame({"p": [0.2, 0.9]})).tolist()
    [[0.8, 0.2], [0.09999999999999998, 0.9]]
    """
    cols = _columns(columns)
    _check_count(cols, n_classes, classes)
    origins = pd.DataFrame({"feature": list(cols), "raw_column": list(cols), "kind": "numeric", "category": ""})
    spec: dict[str, Any] = {"kind": SCORES_KIND, "columns": list(cols), "label": scores_label(cols)}
    if classes:
        spec["classes"] = [str(c) for c in classes]
    return FittedModel(spec=spec, input_columns=cols, preprocessor=None, estimator=ScoreColumns(n_classes),
                       classes=tuple(range(n_classes)), origins=origins)


def is_scored(model: Any) -> bool:
    """Whether ``model`` is a scored model (:func:`scored_model`)."""
    spec = getattr(model, "spec", None)
    return isinstance(spec, dict) and spec.get("kind") == SCORES_KIND and isinstance(model, FittedModel)


def refuse_scores(model: Any, what: str) -> None:
    """Raise ``SCORES_NEED_A_MODEL`` when ``model`` is a scored model: ``what`` needs a real one."""
    if is_scored(model):
        raise fail("SCORES_NEED_A_MODEL", what=what, columns=excerpts(model.spec["columns"]))


def _first(frame: pd.DataFrame, bad: np.ndarray) -> tuple[Any, int]:
    """The index label of the first bad row, and how many rows are bad."""
    return frame.index[int(np.flatnonzero(bad)[0])], int(bad.sum())


def check_scores(frame: pd.DataFrame, columns: Sequence[str], *, which: str = "source",
                 classes: Sequence[str] = ()) -> None:
    """Refuse score columns that are not probabilities (a declared error naming the column and the row).

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n, ·)
    columns : sequence of str
        The score columns, as for :func:`scored_model`.
    which : str
        Which records (``"source"``, ``"target"``), for the message.
    classes : sequence of str, optional
        The target's class names in code order: first checks there is one
        column per class (or one column for a binary target's positive class).

    Raises
    ------
    AuditInputError
        ``SCORES_COUNT``, ``SCORES_MISSING_COLUMN``, ``SCORES_NOT_A_NUMBER``, ``SCORES_MISSING_VALUE``,
        ``SCORES_OUT_OF_RANGE`` or, for several columns, ``SCORES_NOT_SUMMING``.
    """
    cols = _columns(columns)
    if classes:
        _check_count(cols, len(classes), classes)
    values = []
    for col in cols:
        name = excerpt(col)
        if col not in frame.columns:
            raise fail("SCORES_MISSING_COLUMN", column=name, which=which)
        raw = frame[col]
        if pd.api.types.is_bool_dtype(raw):
            raise fail("SCORES_NOT_A_NUMBER", column=name, value="true/false", row=excerpt(frame.index[0]),
                       which=which, count=len(raw))
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        missing = raw.isna().to_numpy()
        text = np.isnan(num) & ~missing
        if text.any():
            row, n = _first(frame, text)
            raise fail("SCORES_NOT_A_NUMBER", column=name, value=excerpt(raw.iloc[int(np.flatnonzero(text)[0])]),
                       row=excerpt(row), which=which, count=n)
        if missing.any():
            row, n = _first(frame, missing)
            raise fail("SCORES_MISSING_VALUE", column=name, row=excerpt(row), which=which, count=n)
        out = ~((num >= 0) & (num <= 1))
        if out.any():
            row, n = _first(frame, out)
            raise fail("SCORES_OUT_OF_RANGE", column=name, value=repr(float(num[np.flatnonzero(out)[0]])),
                       row=excerpt(row), which=which, count=n)
        values.append(num)
    if len(values) > 1:
        total = np.sum(values, axis=0)
        off = np.abs(total - 1) > SUM_TOLERANCE
        if off.any():
            row, n = _first(frame, off)
            raise fail("SCORES_NOT_SUMMING", columns=excerpts(cols), tol=SUM_TOLERANCE,
                       row=excerpt(row), which=which, total=f"{float(total[np.flatnonzero(off)[0]]):.6g}", count=n)
