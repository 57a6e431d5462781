"""Vectorised evaluation over a DataFrame (:func:`evaluate_frame`, :func:`evaluate_mask`)."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from audit_core.errors import fail

from ._lexer import _INT_MAX
from ._nodes import (
    Binary, BoolOp, Call, Compare, Expr, Literal, Membership, Name, Unary, _check_tree, _names_in_order,
)
from ._parser import _parse_iso_date
from ._render import _quote, _render, _render_name
from ._typecheck import (
    _KIND_WORDS, _MAX_DATE_SHIFT_DAYS, _as_date, _check_arith, _check_call, _check_compare,
    _check_logical, _check_membership, _close_matches, _describe, _literal_kind, _short, _type_error,
)

__all__ = ["evaluate_frame", "evaluate_mask"]


@dataclass
class _Vec:
    kind: str
    values: np.ndarray
    missing: np.ndarray  # bool


_EPOCH = np.datetime64("1970-01-01", "D")
_DATE_MIN = np.datetime64("0001-01-01", "D")
_DATE_MAX = np.datetime64("9999-12-31", "D")


def _column_vec(frame: pd.DataFrame, name: str) -> _Vec:
    s = frame[name]
    if isinstance(s, pd.DataFrame):
        raise fail("EXPR_AMBIGUOUS_COLUMN", name=name, count=s.shape[1])
    n = len(s)
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(object)
    missing = np.asarray(s.isna(), dtype=bool)
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return _Vec("bool", s.to_numpy(dtype=bool, na_value=False), missing)
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        if pd.api.types.is_integer_dtype(dtype):
            try:
                vals = s.to_numpy(dtype=np.int64, na_value=0)
            except (OverflowError, ValueError):
                vals = s.to_numpy(dtype=float, na_value=0.0)
        else:
            vals = s.to_numpy(dtype=float, na_value=np.nan)
            vals = np.where(missing, 0.0, vals)
        return _Vec("number", vals, missing)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        if getattr(dtype, "tz", None) is not None:
            s = s.dt.tz_localize(None)
        vals = s.to_numpy(dtype="datetime64[ns]").astype("datetime64[D]")
        vals = np.where(missing, _EPOCH, vals)
        return _Vec("date", vals, missing)
    if dtype == np.dtype(object) or isinstance(dtype, pd.StringDtype):
        obj = s.to_numpy(dtype=object)
        present = obj[~missing]
        if isinstance(dtype, pd.StringDtype) or all(isinstance(v, str) for v in present):
            vals = np.where(missing, "", obj).astype(object)
            return _Vec("text" if len(present) or isinstance(dtype, pd.StringDtype) else "null",
                        vals, missing)
        if all(isinstance(v, (bool, np.bool_)) for v in present):
            vals = np.zeros(n, dtype=bool)
            vals[~missing] = [bool(v) for v in present]
            return _Vec("bool", vals, missing)
        if all(isinstance(v, (int, float, np.integer, np.floating))
               and not isinstance(v, (bool, np.bool_)) for v in present):
            if all(isinstance(v, (int, np.integer)) for v in present) and all(
                abs(int(v)) <= _INT_MAX for v in present
            ):
                vals = np.zeros(n, dtype=np.int64)
                vals[~missing] = [int(v) for v in present]
            else:
                vals = np.zeros(n, dtype=float)
                vals[~missing] = [float(v) for v in present]
            return _Vec("number", vals, missing)
        if all(isinstance(v, (_dt.date, np.datetime64)) for v in present):
            vals = np.full(n, _EPOCH)
            vals[~missing] = [np.datetime64(_as_date(v), "D") for v in present]
            return _Vec("date", vals, missing)
        kinds: dict[str, object] = {}
        for v in present:
            kinds.setdefault(_scalar_kind_name(v), v)
        examples = ", ".join(f"{v!r} ({k})" for k, v in list(kinds.items())[:3])
        raise fail(
            "EXPR_TYPE", expression=_render_name(name),
            problem=f"column `{name}` mixes values of different types, e.g. {examples}; "
            "clean the column so it holds one type",
        )
    raise fail(
        "EXPR_TYPE", expression=_render_name(name),
        problem=f"column `{name}` has the unsupported type {dtype}",
    )


def _scalar_kind_name(v: object) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true/false"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(v, str):
        return "text"
    if isinstance(v, (_dt.date, np.datetime64)):
        return "date"
    return type(v).__name__


def _const_vec(value: object, n: int) -> _Vec:
    kind = _literal_kind(value)
    missing = np.zeros(n, dtype=bool)
    if kind == "bool":
        return _Vec(kind, np.full(n, value, dtype=bool), missing)
    if kind == "number":
        dtype = np.int64 if isinstance(value, int) else float
        return _Vec(kind, np.full(n, value, dtype=dtype), missing)
    if kind == "text":
        vals = np.empty(n, dtype=object)
        vals[:] = value
        return _Vec(kind, vals, missing)
    return _Vec(kind, np.full(n, np.datetime64(_as_date(value), "D")), missing)


def _null_vec(n: int, kind: str = "null") -> _Vec:
    fill = {"bool": np.zeros(n, bool), "number": np.zeros(n, float),
            "date": np.full(n, _EPOCH), "text": np.full(n, "", dtype=object)}
    return _Vec(kind, fill.get(kind, np.zeros(n, bool)), np.ones(n, dtype=bool))


def _int_or_float(exact: np.ndarray, approx: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Use the int64 result unless it may have overflowed."""
    if np.any(np.abs(approx[~mask]) >= 2.0**62):
        return approx
    return exact


class _FrameEval:
    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.n = len(frame)
        self.cache: dict[str, _Vec] = {}

    def column(self, name: str) -> _Vec:
        if name not in self.cache:
            self.cache[name] = _column_vec(self.frame, name)
        return self.cache[name]

    def ev(self, e: Expr) -> _Vec:
        n = self.n
        if isinstance(e, Literal):
            return _const_vec(e.value, n)
        if isinstance(e, Name):
            return self.column(e.name)
        if isinstance(e, Unary):
            x = self.ev(e.operand)
            if e.op == "not":
                _check_logical(e, e.operand, x.kind, "column")
                return _Vec("bool", ~x.values & ~x.missing, x.missing.copy())
            if x.kind not in ("number", "null"):
                raise _type_error(e, f"'-' needs a number, but got "
                                     f"{_describe(e.operand, x.kind, 'column')}")
            if x.kind == "null":
                return _null_vec(n, "number")
            return _Vec("number", -x.values, x.missing.copy())
        if isinstance(e, BoolOp):
            vecs = []
            for o in e.operands:
                v = self.ev(o)
                _check_logical(e, o, v.kind, "column")
                vecs.append(v)
            true = vecs[0].values & ~vecs[0].missing
            false = ~vecs[0].values & ~vecs[0].missing
            for v in vecs[1:]:
                t = v.values & ~v.missing
                f = ~v.values & ~v.missing
                if e.op == "and":
                    true, false = true & t, false | f
                else:
                    true, false = true | t, false & f
            return _Vec("bool", true, ~(true | false))
        if isinstance(e, Compare):
            return self.compare(e)
        if isinstance(e, Membership):
            x = self.ev(e.operand)
            _check_membership(e, x.kind, "column")
            if x.kind == "null":
                return _null_vec(n, "bool")
            items: list[object] = [i.value for i in e.items.items]
            if x.kind == "date":
                items = [np.datetime64(_as_date(i), "D") for i in items]  # _check_membership: all dates
            hit = pd.Series(x.values).isin(items).to_numpy(dtype=bool) if items else np.zeros(n, bool)
            if e.negated:
                hit = ~hit
            return _Vec("bool", hit & ~x.missing, x.missing.copy())
        if isinstance(e, Binary):
            return self.arith(e)
        if isinstance(e, Call):
            return self.call(e)
        raise TypeError(f"cannot evaluate {type(e).__name__}")  # pragma: no cover

    def compare(self, e: Compare) -> _Vec:
        a, b = self.ev(e.left), self.ev(e.right)
        _check_compare(e, a.kind, b.kind, "column")
        missing = a.missing | b.missing
        if "null" in (a.kind, b.kind):
            return _null_vec(self.n, "bool")
        op = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
              ">": np.greater, ">=": np.greater_equal}[e.op]
        vals = np.asarray(op(a.values, b.values), dtype=bool)
        return _Vec("bool", vals & ~missing, missing)

    def arith(self, e: Binary) -> _Vec:
        a, b = self.ev(e.left), self.ev(e.right)
        kind = _check_arith(e, a.kind, b.kind, "column")
        n = self.n
        if "null" in (a.kind, b.kind):
            return _null_vec(n, kind)
        missing = a.missing | b.missing
        with np.errstate(all="ignore"):
            if a.kind == b.kind == "number":
                af, bf = a.values.astype(float), b.values.astype(float)
                if e.op == "/":
                    vals = af / np.where(bf == 0, 1.0, bf)
                    missing = missing | (bf == 0)
                else:
                    fop = {"+": np.add, "-": np.subtract, "*": np.multiply}[e.op]
                    approx = fop(af, bf)
                    if a.values.dtype.kind == "i" and b.values.dtype.kind == "i":
                        vals = _int_or_float(fop(a.values, b.values), approx, missing)
                    else:
                        vals = approx
                if vals.dtype.kind == "f":
                    missing = missing | ~np.isfinite(vals)
                    vals = np.where(missing, 0.0, vals)
                return _Vec("number", vals, missing)
            if a.kind == b.kind == "date":
                days = (a.values - b.values).astype(np.int64)
                return _Vec("number", np.where(missing, 0, days), missing)
            date_v, num_v, num_node = (a, b, e.right) if a.kind == "date" else (b, a, e.left)
            nums = num_v.values
            present = nums[~missing]
            if nums.dtype.kind == "f" and np.any(present != np.round(present)):
                raise _type_error(e, f"dates can only be shifted by whole days, but "
                                     f"{_describe(num_node, 'number', 'column')} has fractions")
            too_far = np.abs(nums.astype(float)) > _MAX_DATE_SHIFT_DAYS
            missing = missing | too_far
            days = np.where(missing, 0, nums).astype(np.int64)
            if e.op == "-":
                days = -days
            vals = date_v.values + days.astype("timedelta64[D]")
            missing = missing | (vals < _DATE_MIN) | (vals > _DATE_MAX)
            return _Vec("date", np.where(missing, _EPOCH, vals), missing)

    def call(self, e: Call) -> _Vec:
        args = [self.ev(a) for a in e.args]
        kind = _check_call(e, [a.kind for a in args], "column")
        n = self.n
        f = e.function
        if f == "is_missing":
            return _Vec("bool", args[0].missing.copy(), np.zeros(n, bool))
        if any(a.kind == "null" for a in args):
            return _null_vec(n, kind)
        x = args[0]
        with np.errstate(all="ignore"):
            if f == "abs":
                return _Vec("number", np.abs(x.values), x.missing.copy())
            if f == "log":
                xf = x.values.astype(float)
                missing = x.missing | ~(xf > 0) | ~np.isfinite(xf)
                vals = np.log(np.where(missing, 1.0, xf))
                return _Vec("number", vals, missing)
        if f == "year":
            years = x.values.astype("datetime64[Y]").astype(np.int64) + 1970
            return _Vec("number", np.where(x.missing, 0, years), x.missing.copy())
        if f == "date":
            if x.kind == "date":
                return x
            out = np.full(n, _EPOCH)
            present_idx = np.flatnonzero(~x.missing)
            parsed: dict[str, _dt.date] = {}
            for i in present_idx:
                s = x.values[i]
                if s not in parsed:
                    d = _parse_iso_date(s)
                    if d is None:
                        label = self.frame.index[int(i)]
                        where = (f"in column `{e.args[0].name}`" if isinstance(e.args[0], Name)
                                 else f"from `{_short(_render(e.args[0]), 40)}`")
                        raise fail("EXPR_BAD_DATE", value=_quote(s),
                                   where=f"{where} (row {label!r})")
                    parsed[s] = d
                out[i] = np.datetime64(parsed[s], "D")
            return _Vec("date", out, x.missing.copy())
        # min / max
        a, b = args
        missing = a.missing | b.missing
        if kind == "number":
            op = np.minimum if f == "min" else np.maximum
            vals = op(a.values, b.values)
        else:
            pick_a = (a.values <= b.values) if f == "min" else (a.values >= b.values)
            vals = np.where(np.asarray(pick_a, dtype=bool), a.values, b.values)
        return _Vec(kind, vals, missing)


def _to_series(v: _Vec, index: pd.Index) -> pd.Series:
    m = v.missing
    arr: ExtensionArray | np.ndarray
    if v.kind == "bool":
        arr = pd.arrays.BooleanArray(v.values.astype(bool), m.copy())
    elif v.kind == "number":
        if v.values.dtype.kind == "i":
            arr = pd.arrays.IntegerArray(v.values.astype(np.int64), m.copy())
        else:
            arr = pd.arrays.FloatingArray(np.where(m, 0.0, v.values).astype(float), m.copy())
    elif v.kind == "text":
        obj = np.array(v.values, dtype=object)
        obj[m] = None
        arr = pd.array(obj, dtype=pd.StringDtype())
    elif v.kind == "date":
        arr = np.where(m, np.datetime64("NaT"), v.values).astype("datetime64[s]")
    else:
        arr = np.full(len(index), pd.NA, dtype=object)
    return pd.Series(arr, index=index)


def _check_frame_names(expr: Expr, frame: pd.DataFrame) -> None:
    cols = [c for c in frame.columns if isinstance(c, str)]
    present = set(cols)
    for name in _names_in_order(expr):
        if name not in present:
            raise fail(
                "EXPR_UNKNOWN_NAME", name=name, where="a column of the data",
                suggestion=_close_matches(name, cols),
            )


def evaluate_frame(expr: Expr, frame: pd.DataFrame) -> pd.Series:
    """Evaluate ``expr`` for every row of ``frame`` (vectorised).

    Parameters
    ----------
    expr : Expr
        A parsed expression.
    frame : pandas.DataFrame, shape (n_samples, n_columns)

    Returns
    -------
    pandas.Series, shape (n_samples,)
        Indexed like ``frame``, with a nullable dtype: ``boolean`` for
        conditions, ``Int64``/``Float64`` for numbers, ``string`` for text,
        ``datetime64[s]`` for dates; missing results are ``<NA>``/``NaT``.

    Raises
    ------
    AuditInputError
        ``EXPR_UNKNOWN_NAME`` (with close matches), ``EXPR_TYPE`` (naming the
        column), ``EXPR_BAD_DATE``, ``EXPR_AMBIGUOUS_COLUMN``.
    """
    return _to_series(_evaluate_vec(expr, frame), frame.index)


def _evaluate_vec(expr: Expr, frame: pd.DataFrame) -> _Vec:
    _check_tree(expr)
    _check_frame_names(expr, frame)
    return _FrameEval(frame).ev(expr)


def evaluate_mask(expr: Expr, frame: pd.DataFrame) -> np.ndarray:
    """Evaluate a condition as a row filter; missing counts as false.

    Parameters
    ----------
    expr : Expr
        A parsed expression that yields true/false.
    frame : pandas.DataFrame, shape (n_samples, n_columns)

    Returns
    -------
    numpy.ndarray of bool, shape (n_samples,)

    Raises
    ------
    AuditInputError
        As :func:`evaluate_frame`, plus ``EXPR_TYPE`` if the expression is
        not a condition (e.g. ``age + 1``).
    """
    v = _evaluate_vec(expr, frame)
    if v.kind not in ("bool", "null"):
        raise _type_error(
            expr, f"a condition (true/false) is needed, but this gives {_KIND_WORDS[v.kind]}; "
            "compare it, e.g. `... > 0`",
        )
    return np.asarray(v.values & ~v.missing, dtype=bool)
