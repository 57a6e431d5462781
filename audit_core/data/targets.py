"""Named target definitions: class, threshold and expression targets, and applying them.

A *target definition* turns columns of the data into integer class labels
``y`` (codes ``0..C-1``) for a reliability audit. Three kinds exist, each a
frozen dataclass with keyword-only fields and a stable dict format
(:meth:`to_dict` / :func:`target_from_dict`):

``{"kind": "class", "name": str, "column": str, "positive": value or None}``
    A class column. With a ``positive`` class the label is binary
    (1 = positive); with ``positive=None`` every distinct value is a class
    (sorted), at most :data:`MAX_CLASSES`.
``{"kind": "threshold", "name": str, "column": str, "threshold": float, "op": ">=" | ">"}``
    Binary label ``column op threshold`` on a numeric column.
``{"kind": "expression", "name": str, "expression": str}``
    Binary label from a condition of the expression language
    (:mod:`audit_core.expr`), true -> 1.

Which records take part at all is the eligibility filter's business
(:mod:`audit_core.data.eligibility`).
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from audit_core.errors import excerpt, excerpts, fail, register_messages
from audit_core.expr import Expr, Name, evaluate_frame, referenced_names, to_text

from .eligibility import parse_condition
from .frames import from_polars

__all__ = [
    "MAX_CLASSES",
    "TargetLabels",
    "ClassTarget",
    "ThresholdTarget",
    "ExpressionTarget",
    "TargetDefinition",
    "target_from_dict",
    "apply_targets",
    "value_mask",
]

#: Largest number of classes of a multi-class target.
MAX_CLASSES = 50

register_messages(
    {
        "TARGET_BAD_DEFINITION": "Target definition {which}: {problem}.",
        "TARGET_UNKNOWN_COLUMN": (
            "Target `{name}` uses column `{column}`, which is not in the data.{suggestion}"
        ),
        "TARGET_MISSING_VALUES": (
            "Target `{name}`: {count} of {total} rows have no value for {source}. "
            "Exclude them with an eligibility filter such as `{suggestion}`."
        ),
        "TARGET_SINGLE_CLASS": (
            "Target `{name}` ({definition}) has only one class: all {total} rows are "
            "{cls}. An audit needs at least two classes; change the definition or "
            "the eligibility filter."
        ),
        "TARGET_UNKNOWN_CLASS": (
            "Target `{name}`: the positive class {positive} does not occur in column "
            "`{column}`. Values present: {values}."
        ),
        "TARGET_NOT_NUMERIC": (
            "Target `{name}`: a threshold needs a numeric column, but column "
            "`{column}` holds {dtype} values (e.g. {example})."
        ),
        "TARGET_DUPLICATE_NAME": (
            "Two target definitions are named `{name}`; give each target a unique name."
        ),
        "TARGET_TOO_MANY_CLASSES": (
            "Target `{name}`: column `{column}` has {count} distinct values, more than "
            "the {limit} classes allowed for a multi-class target. Choose a positive "
            "class to make it binary."
        ),
        "TARGET_NOT_CONDITION": (
            "Target `{name}`: the expression `{expression}` gives {kind}, not "
            "true/false; write a condition, e.g. with a comparison such as `> 0`."
        ),
        "TARGET_NO_ROWS": (
            "Target `{name}` cannot be computed because there are no rows; check "
            "the eligibility filter."
        ),
        "TARGET_AMBIGUOUS_COLUMN": (
            "Target `{name}`: column `{column}` appears {count} times in the data; "
            "rename the duplicates."
        ),
    }
)


# --------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, eq=False)
class TargetLabels:
    """Class labels of one target on a set of records.

    Attributes
    ----------
    name : str
        The target definition's name.
    y : numpy.ndarray of int64, shape (n_samples,)
        Class codes ``0..C-1`` indexing :attr:`classes` (read-only).
    classes : tuple, length C
        Class labels in code order; ``(0, 1)`` (negative, positive) for
        binary targets, the sorted column values for multi-class targets.
    class_names : tuple of str, length C
        Human-readable class names, e.g. ``("not default", "default")``.
    binary : bool
        True for binary (positive vs. rest) targets.
    """

    name: str
    y: np.ndarray
    classes: tuple
    class_names: tuple[str, ...]
    binary: bool

    @property
    def n_samples(self) -> int:
        """Number of records."""
        return int(self.y.shape[0])

    @property
    def counts(self) -> tuple[int, ...]:
        """Records per class, in :attr:`classes` order; length C."""
        return tuple(int(c) for c in np.bincount(self.y, minlength=len(self.classes)))

    @property
    def positive_share(self) -> float | None:
        """Share of positive (code 1) records for binary targets, else None."""
        if not self.binary or self.n_samples == 0:
            return None
        return float(np.mean(self.y == 1))


def _labels(name: str, y: np.ndarray, classes: tuple, class_names: tuple, binary: bool) -> TargetLabels:
    y = np.ascontiguousarray(y, dtype=np.int64)
    y.flags.writeable = False
    return TargetLabels(name=name, y=y, classes=classes, class_names=class_names, binary=binary)


# --------------------------------------------------------------------------
# Shared validation
# --------------------------------------------------------------------------
def _bad(which: str, problem: str):
    return fail("TARGET_BAD_DEFINITION", which=which, problem=problem)


def _check_name(kind: str, name: object) -> None:
    if not isinstance(name, str) or not name.strip():
        raise _bad(f"of kind {kind!r}", f"'name' must be a non-empty text, got {name!r}")


def _check_column_field(name: str, column: object) -> None:
    if not isinstance(column, str) or not column:
        raise _bad(f"`{name}`", f"'column' must be a non-empty column name, got {column!r}")


def _suggest(column: str, frame: pd.DataFrame) -> str:
    cols = [c for c in frame.columns if isinstance(c, str)]
    close = difflib.get_close_matches(column, cols, n=3, cutoff=0.6)
    if close:
        return " Did you mean " + ", ".join(f"`{c}`" for c in close) + "?"
    shown = ", ".join(f"`{c}`" for c in cols[:15])
    return f" Available columns: {shown}{' …' if len(cols) > 15 else ''}." if cols else ""


def _get_column(name: str, column: str, frame: pd.DataFrame) -> pd.Series:
    if column not in set(c for c in frame.columns if isinstance(c, str)):
        raise fail("TARGET_UNKNOWN_COLUMN", name=name, column=column,
                   suggestion=_suggest(column, frame))
    s = frame[column]
    if isinstance(s, pd.DataFrame):
        raise fail("TARGET_AMBIGUOUS_COLUMN", name=name, column=column, count=s.shape[1])
    return s


def _require_rows(name: str, frame: pd.DataFrame) -> None:
    if len(frame) == 0:
        raise fail("TARGET_NO_ROWS", name=name)


def _check_missing(name: str, column: str, s: pd.Series) -> None:
    n_missing = int(s.isna().sum())
    if n_missing:
        raise fail(
            "TARGET_MISSING_VALUES", name=name, count=n_missing, total=len(s),
            source=f"column `{column}`",
            suggestion=f"not is_missing({to_text(Name(column))})",
        )


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _text_form(v: Any) -> str:
    """A value as a person writes it: ``2019`` for the integer or the float 2019.0, ``yes`` for "yes"."""
    v = _py(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def value_mask(values: pd.Series, value: Any) -> np.ndarray:
    """Rows of ``values`` equal to ``value``, or, when none is equal, those that read the same as text.

    A config or a form gives a value as text or as a number, whatever the
    column's type: ``positive: "1"`` on a 0/1 integer column, or a domain
    ``2019`` on a column of year strings, means the value written that way.

    Parameters
    ----------
    values : pandas.Series, shape (n,)
    value : str, int, float or bool

    Returns
    -------
    numpy.ndarray of bool, shape (n,)

    Examples
    --------
    >>> value_mask(pd.Series([0, 1, 1]), "1").tolist()
    [False, True, True]
    >>> value_mask(pd.Series(["2019", "2020"]), 2019).tolist()
    [True, False]
    """
    obj = values.astype(object)
    hit = np.asarray(obj == value, dtype=bool)
    if hit.any():
        return hit
    wanted = _text_form(value)
    same = [u for u in pd.unique(obj.dropna()) if _text_form(u) == wanted]
    return obj.isin(same).to_numpy(dtype=bool) if same else hit


def _binary(name: str, definition: str, hit: np.ndarray, class_names: tuple[str, str]) -> TargetLabels:
    y = hit.astype(np.int64)
    if y.min() == y.max():
        raise fail("TARGET_SINGLE_CLASS", name=name, definition=definition, total=len(y),
                   cls=repr(class_names[int(y[0])]))
    return _labels(name, y, (0, 1), class_names, True)


def _kind_word(dtype: Any) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "true/false"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date"
    if isinstance(dtype, pd.StringDtype):
        return "text"
    return f"non-numeric ({dtype})"


def _fmt_number(x: float) -> str:
    return format(x, "g") if abs(x) < 1e15 else repr(x)


# --------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class ClassTarget:
    """Target from a class column.

    Parameters
    ----------
    name : str
        Unique name of the target.
    column : str
        The class column.
    positive : str, int, float, bool or None, default None
        The positive class (binary label, 1 = positive); None makes every
        distinct value a class (multi-class, sorted).
    """

    name: str
    column: str
    positive: str | int | float | bool | None = None

    def __post_init__(self) -> None:
        _check_name("class", self.name)
        _check_column_field(self.name, self.column)
        p = self.positive
        if p is not None and not isinstance(p, (str, int, float, bool)):
            raise _bad(f"`{self.name}`", "'positive' must be a text, a number, true/false "
                       f"or null, got {type(p).__name__}")
        if isinstance(p, float) and not math.isfinite(p):
            raise _bad(f"`{self.name}`", "'positive' must be a finite number")

    @property
    def columns(self) -> tuple[str, ...]:
        """Columns the target reads."""
        return (self.column,)

    def describe(self) -> str:
        """Short human description of the definition."""
        if self.positive is None:
            return f"the classes of column `{self.column}`"
        return f"column `{self.column}` == {self.positive!r}"

    @property
    def binary_names(self) -> tuple[str, str] | None:
        """The names of classes 0 and 1 (``("not yes", "yes")``); ``None`` for a multi-class target."""
        return None if self.positive is None else (f"not {self.positive}", str(self.positive))

    def to_dict(self) -> dict[str, Any]:
        """The dict format read by :func:`target_from_dict`."""
        return {"kind": "class", "name": self.name, "column": self.column,
                "positive": self.positive}

    def apply(self, frame: pd.DataFrame) -> TargetLabels:
        """Compute the labels.

        Parameters
        ----------
        frame : pandas.DataFrame, shape (n_samples, n_columns)

        Returns
        -------
        TargetLabels
            ``y`` of shape (n_samples,).
        """
        s = _get_column(self.name, self.column, frame)
        _require_rows(self.name, frame)
        _check_missing(self.name, self.column, s)
        obj = s.astype(object)
        values = [_py(v) for v in pd.unique(obj)]
        if self.positive is not None:
            hit = value_mask(obj, self.positive)
            if not hit.any():
                raise fail("TARGET_UNKNOWN_CLASS", name=self.name, positive=excerpt(self.positive),
                           column=self.column, values=excerpts(_sorted(values)))
            names = self.binary_names
            assert names is not None  # a positive class is given
            return _binary(self.name, self.describe(), hit, names)
        if len(values) > MAX_CLASSES:
            raise fail("TARGET_TOO_MANY_CLASSES", name=self.name, column=self.column,
                       count=len(values), limit=MAX_CLASSES)
        classes = tuple(_sorted(values))
        if len(classes) == 1:
            raise fail("TARGET_SINGLE_CLASS", name=self.name, definition=self.describe(),
                       total=len(s), cls=repr(classes[0]))
        index = {c: i for i, c in enumerate(classes)}
        y = np.fromiter((index[_py(v)] for v in obj), dtype=np.int64, count=len(s))
        return _labels(self.name, y, classes, tuple(str(c) for c in classes), False)


def _sorted(values: list) -> list:
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=lambda v: (type(v).__name__, str(v)))


@dataclass(frozen=True, kw_only=True)
class ThresholdTarget:
    """Binary target ``column op threshold`` on a numeric column.

    Parameters
    ----------
    name : str
    column : str
    threshold : float
    op : {">=", ">"}, default ">="
    """

    name: str
    column: str
    threshold: float
    op: str = ">="

    def __post_init__(self) -> None:
        _check_name("threshold", self.name)
        _check_column_field(self.name, self.column)
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            raise _bad(f"`{self.name}`", f"'threshold' must be a finite number, got {t!r}")
        object.__setattr__(self, "threshold", float(t))
        if self.op not in (">=", ">"):
            raise _bad(f"`{self.name}`", f"'op' must be \">=\" or \">\", got {self.op!r}")

    @property
    def columns(self) -> tuple[str, ...]:
        """Columns the target reads."""
        return (self.column,)

    def describe(self) -> str:
        """Short human description of the definition."""
        return f"`{self.column}` {self.op} {_fmt_number(self.threshold)}"

    @property
    def binary_names(self) -> tuple[str, str]:
        """The names of classes 0 and 1 (``("< 50", ">= 50")``)."""
        t = _fmt_number(self.threshold)
        return (f"< {t}", f">= {t}") if self.op == ">=" else (f"<= {t}", f"> {t}")

    def to_dict(self) -> dict[str, Any]:
        """The dict format read by :func:`target_from_dict`."""
        return {"kind": "threshold", "name": self.name, "column": self.column,
                "threshold": self.threshold, "op": self.op}

    def apply(self, frame: pd.DataFrame) -> TargetLabels:
        """Compute the binary labels (1 = ``column op threshold``).

        Parameters
        ----------
        frame : pandas.DataFrame, shape (n_samples, n_columns)

        Returns
        -------
        TargetLabels
            ``y`` of shape (n_samples,), classes ``(0, 1)``.
        """
        s = _get_column(self.name, self.column, frame)
        _require_rows(self.name, frame)
        if pd.api.types.is_bool_dtype(s.dtype) or not pd.api.types.is_numeric_dtype(s.dtype):
            present = s.dropna()
            example = repr(_py(present.iloc[0])) if len(present) else "none"
            raise fail("TARGET_NOT_NUMERIC", name=self.name, column=self.column,
                       dtype=_kind_word(s.dtype), example=example)
        _check_missing(self.name, self.column, s)
        v = s.to_numpy(dtype=float)
        hit = v >= self.threshold if self.op == ">=" else v > self.threshold
        return _binary(self.name, self.describe(), hit, self.binary_names)


@dataclass(frozen=True, kw_only=True)
class ExpressionTarget:
    """Binary target from a condition (true -> 1).

    Parameters
    ----------
    name : str
    expression : str
        A condition of the expression language, e.g. ``'income >= 50000'``;
        parsed (and syntax-checked) at construction.
    """

    name: str
    expression: str
    _tree: Expr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_name("expression", self.name)
        if not isinstance(self.expression, str):
            raise _bad(f"`{self.name}`", "'expression' must be a text, got "
                       f"{type(self.expression).__name__}")
        object.__setattr__(self, "_tree", parse_condition(self.expression))

    @property
    def columns(self) -> tuple[str, ...]:
        """Columns the expression refers to, sorted."""
        return tuple(sorted(referenced_names(self._tree)))

    def describe(self) -> str:
        """Short human description of the definition."""
        return f"`{self.expression.strip()}`"

    @property
    def binary_names(self) -> tuple[str, str]:
        """The names of classes 0 and 1 (``("not NAME", "NAME")``)."""
        return (f"not {self.name}", self.name)

    def to_dict(self) -> dict[str, Any]:
        """The dict format read by :func:`target_from_dict`."""
        return {"kind": "expression", "name": self.name, "expression": self.expression}

    def apply(self, frame: pd.DataFrame) -> TargetLabels:
        """Compute the binary labels (1 = condition true).

        Parameters
        ----------
        frame : pandas.DataFrame, shape (n_samples, n_columns)

        Returns
        -------
        TargetLabels
            ``y`` of shape (n_samples,), classes ``(0, 1)``.
        """
        for col in self.columns:
            _get_column(self.name, col, frame)
        _require_rows(self.name, frame)
        result = evaluate_frame(self._tree, frame)
        missing = np.asarray(result.isna(), dtype=bool)
        if missing.any():
            cols = [c for c in self.columns if frame.loc[missing, c].isna().any()]
            if cols:
                suggestion = " and ".join(f"not is_missing({to_text(Name(c))})" for c in cols)
                source = ", ".join(f"`{c}`" for c in cols)
                source = f"column{'s' if len(cols) > 1 else ''} {source}"
            else:
                suggestion = f"not is_missing({to_text(self._tree)})"
                source = f"the expression {self.describe()}"
            raise fail("TARGET_MISSING_VALUES", name=self.name, count=int(missing.sum()),
                       total=len(frame), source=source, suggestion=suggestion)
        if str(result.dtype) != "boolean":
            kind = "numbers" if pd.api.types.is_numeric_dtype(result.dtype) else (
                "dates" if pd.api.types.is_datetime64_any_dtype(result.dtype) else "text")
            raise fail("TARGET_NOT_CONDITION", name=self.name,
                       expression=self.expression.strip(), kind=kind)
        hit = result.to_numpy(dtype=bool)
        return _binary(self.name, self.describe(), hit, self.binary_names)


TargetDefinition = ClassTarget | ThresholdTarget | ExpressionTarget

_KEYS = {
    "class": ({"kind", "name", "column"}, {"positive"}),
    "threshold": ({"kind", "name", "column", "threshold"}, {"op"}),
    "expression": ({"kind", "name", "expression"}, set()),
}


def target_from_dict(d: Mapping[str, Any]) -> TargetDefinition:
    """Build a target definition from its dict format.

    Parameters
    ----------
    d : Mapping
        ``{"kind": "class" | "threshold" | "expression", ...}``; see the
        module docstring. ``positive`` (default None) and ``op`` (default
        ``">="``) may be omitted.

    Returns
    -------
    ClassTarget, ThresholdTarget or ExpressionTarget

    Raises
    ------
    AuditInputError
        ``TARGET_BAD_DEFINITION`` for unknown or missing keys and wrong
        types; expression errors (``EXPR_*``) for a bad expression.
    """
    if not isinstance(d, Mapping):
        raise _bad("", f"expected a mapping, got {type(d).__name__}")
    kind = d.get("kind")
    label = f"`{d['name']}`" if isinstance(d.get("name"), str) else "(unnamed)"
    if kind not in _KEYS:
        raise _bad(label, f"'kind' must be one of \"class\", \"threshold\", \"expression\", "
                   f"got {kind!r}")
    required, optional = _KEYS[kind]
    keys = set(d)
    unknown = sorted(map(str, keys - required - optional))
    if unknown:
        raise _bad(label, f"unknown key(s) {', '.join(map(repr, unknown))} for kind {kind!r}; "
                   f"allowed: {', '.join(sorted(required | optional))}")
    missing = sorted(required - keys)
    if missing:
        raise _bad(label, f"missing key(s) {', '.join(map(repr, missing))} for kind {kind!r}")
    fields = {k: v for k, v in d.items() if k != "kind"}
    cls = {"class": ClassTarget, "threshold": ThresholdTarget, "expression": ExpressionTarget}[kind]
    return cls(**fields)


def apply_targets(
    definitions: Iterable[TargetDefinition | Mapping[str, Any]], frame: pd.DataFrame
) -> dict[str, TargetLabels]:
    """Apply several target definitions to the same records.

    Parameters
    ----------
    definitions : iterable of target definitions or their dicts
    frame : pandas.DataFrame, shape (n_samples, n_columns)

    Returns
    -------
    dict of str to TargetLabels
        In definition order; every ``y`` has shape (n_samples,).

    Raises
    ------
    AuditInputError
        ``TARGET_DUPLICATE_NAME`` and any error of the individual definitions.
    """
    frame = from_polars(frame, where="apply_targets")
    defs = [target_from_dict(d) if isinstance(d, Mapping) else d for d in definitions]
    seen: set[str] = set()
    for t in defs:
        if t.name in seen:
            raise fail("TARGET_DUPLICATE_NAME", name=t.name)
        seen.add(t.name)
    return {t.name: t.apply(frame) for t in defs}
