"""Evaluation for one record, with Kleene logic over :data:`UNKNOWN` (:func:`evaluate_record`)."""
from __future__ import annotations

import datetime as _dt
import math
import operator
from collections.abc import Mapping
from typing import Any
from typing import Literal as _TypingLiteral

import numpy as np
import pandas as pd

from audit_core.errors import fail

from ._nodes import (
    UNKNOWN, Binary, BoolOp, Call, Compare, Expr, Literal, Membership, Name, Unary, _check_tree,
)
from ._parser import _parse_iso_date
from ._render import _quote, _render, _render_name
from ._typecheck import (
    _MAX_DATE_SHIFT_DAYS, _as_date, _check_arith, _check_call, _check_compare, _check_logical,
    _check_membership, _close_matches, _describe, _literal_kind, _short, _type_error,
)

__all__ = ["evaluate_record"]

_SCALAR_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
               "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _record_value(name: str, v: object) -> object:
    """Normalise one record value to bool/int/float/str/date or UNKNOWN."""
    if v is UNKNOWN or v is None or v is pd.NA or v is pd.NaT:
        return UNKNOWN
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return UNKNOWN if math.isnan(v) else float(v)
    if isinstance(v, str):
        return v
    if isinstance(v, np.datetime64):
        return UNKNOWN if np.isnat(v) else _as_date(v)
    if isinstance(v, _dt.date):
        return _as_date(v)
    raise fail(
        "EXPR_TYPE", expression=_render_name(name),
        problem=f"the value of `{name}` has the unsupported type {type(v).__name__}",
    )


def _kind(v: object) -> str:
    return "null" if v is UNKNOWN else _literal_kind(v)


def _num(x: float | int) -> object:
    if isinstance(x, float):
        return x if math.isfinite(x) else UNKNOWN
    return float(x) if abs(x) >= 2**62 else x


class _RecordEval:
    def __init__(self, record: Mapping[str, object], unknown: str) -> None:
        self.record = record
        self.unknown = unknown

    def ev(self, e: Expr) -> Any:  # a number, date, text, bool or UNKNOWN, kind-checked at run time
        if isinstance(e, Literal):
            return e.value
        if isinstance(e, Name):
            if e.name not in self.record:
                if self.unknown == "unknown":
                    return UNKNOWN
                raise fail(
                    "EXPR_UNKNOWN_NAME", name=e.name, where="a field of the record",
                    suggestion=_close_matches(e.name, [k for k in self.record if isinstance(k, str)]),
                )
            return _record_value(e.name, self.record[e.name])
        if isinstance(e, Unary):
            x = self.ev(e.operand)
            if e.op == "not":
                _check_logical(e, e.operand, _kind(x), "field")
                return UNKNOWN if x is UNKNOWN else not x
            if _kind(x) not in ("number", "null"):
                raise _type_error(e, f"'-' needs a number, but got "
                                     f"{_describe(e.operand, _kind(x), 'field')}")
            return UNKNOWN if x is UNKNOWN else _num(-x)
        if isinstance(e, BoolOp):
            stop = e.op == "or"  # value that decides the result
            saw_unknown = False
            for o in e.operands:
                x = self.ev(o)
                _check_logical(e, o, _kind(x), "field")
                if x is UNKNOWN:
                    saw_unknown = True
                elif x is stop:
                    return stop
            return UNKNOWN if saw_unknown else (not stop)
        if isinstance(e, Compare):
            a, b = self.ev(e.left), self.ev(e.right)
            _check_compare(e, _kind(a), _kind(b), "field")
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            return bool(_SCALAR_CMP[e.op](a, b))
        if isinstance(e, Membership):
            x = self.ev(e.operand)
            _check_membership(e, _kind(x), "field")
            if x is UNKNOWN:
                return UNKNOWN
            hit = any(x == i.value for i in e.items.items)
            return (not hit) if e.negated else hit
        if isinstance(e, Binary):
            return self.arith(e)
        if isinstance(e, Call):
            return self.call(e)
        raise TypeError(f"cannot evaluate {type(e).__name__}")  # pragma: no cover

    def arith(self, e: Binary) -> object:
        a, b = self.ev(e.left), self.ev(e.right)
        _check_arith(e, _kind(a), _kind(b), "field")
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if _kind(a) == _kind(b) == "number":
            if e.op == "/":
                return UNKNOWN if b == 0 else _num(a / b)
            try:
                r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b}[e.op]()
            except OverflowError:
                return UNKNOWN
            return _num(r)
        if _kind(a) == _kind(b) == "date":
            return (a - b).days
        date_v, num, num_node = (a, b, e.right) if _kind(a) == "date" else (b, a, e.left)
        if isinstance(num, float) and num != round(num):
            raise _type_error(e, f"dates can only be shifted by whole days, but "
                                 f"{_describe(num_node, 'number', 'field')} is {num!r}")
        if abs(num) > _MAX_DATE_SHIFT_DAYS:
            return UNKNOWN
        days = int(num) if e.op == "+" else -int(num)
        try:
            return date_v + _dt.timedelta(days=days)
        except OverflowError:
            return UNKNOWN

    def call(self, e: Call) -> object:
        args = [self.ev(a) for a in e.args]
        _check_call(e, [_kind(a) for a in args], "field")  # validates the call; its kind is not needed here
        f = e.function
        if f == "is_missing":
            return args[0] is UNKNOWN
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        x = args[0]
        if f == "abs":
            return abs(x)
        if f == "log":
            return math.log(x) if x > 0 and math.isfinite(x) else UNKNOWN
        if f == "year":
            return x.year
        if f == "date":
            if isinstance(x, _dt.date):
                return x
            d = _parse_iso_date(x)
            if d is None:
                where = (f"in field `{e.args[0].name}`" if isinstance(e.args[0], Name)
                         else f"from `{_short(_render(e.args[0]), 40)}`")
                raise fail("EXPR_BAD_DATE", value=_quote(x), where=where)
            return d
        a, b = args
        return min(a, b) if f == "min" else max(a, b)


def evaluate_record(
    expr: Expr,
    record: Mapping[str, object],
    *,
    unknown: _TypingLiteral["error", "unknown"] = "error",
) -> object:
    """Evaluate ``expr`` for a single record.

    Parameters
    ----------
    expr : Expr
        A parsed expression.
    record : Mapping[str, object]
        Field values: bool, int, float, str, ``datetime.date`` (datetimes are
        truncated to their date), or missing (``None``/``NaN``/``NaT``/
        ``pd.NA``/:data:`UNKNOWN`).
    unknown : {"error", "unknown"}, default "error"
        What a name absent from ``record`` means: a declared error
        (``EXPR_UNKNOWN_NAME``) or the value :data:`UNKNOWN`.

    Returns
    -------
    bool, int, float, str, datetime.date or UNKNOWN
        Missing/unknown results are :data:`UNKNOWN`; ``and``/``or`` use Kleene
        logic (``UNKNOWN and false`` is false, ``UNKNOWN or true`` is true).

    Raises
    ------
    AuditInputError
        ``EXPR_UNKNOWN_NAME``, ``EXPR_TYPE``, ``EXPR_BAD_DATE``.
    """
    if unknown not in ("error", "unknown"):
        raise ValueError("unknown must be 'error' or 'unknown'")
    _check_tree(expr)
    return _RecordEval(record, unknown).ev(expr)
