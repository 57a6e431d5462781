"""Canonical rendering of an expression tree back to text (:func:`to_text`)."""
from __future__ import annotations

import datetime as _dt

from ._lexer import _IDENT_RE, _KEYWORDS, _RESERVED
from ._nodes import (
    Binary, BoolOp, Call, Compare, Expr, ListLiteral, Literal, Membership, Name, Unary, _check_tree,
)

__all__ = ["to_text"]


_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "add": 5, "mul": 6, "neg": 7, "atom": 8}


def _prec(e: Expr) -> int:
    if isinstance(e, BoolOp):
        return _PREC[e.op]
    if isinstance(e, Unary):
        return _PREC["not"] if e.op == "not" else _PREC["neg"]
    if isinstance(e, (Compare, Membership)):
        return _PREC["cmp"]
    if isinstance(e, Binary):
        return _PREC["add"] if e.op in "+-" else _PREC["mul"]
    if isinstance(e, Literal) and isinstance(e.value, (int, float)) and not isinstance(
        e.value, bool
    ) and str(e.value).startswith("-"):
        return _PREC["neg"]
    return _PREC["atom"]


def _quote(s: str) -> str:
    body = (
        s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        .replace("\t", "\\t").replace("\r", "\\r")
    )
    return f'"{body}"'


def _render_name(name: str) -> str:
    if _IDENT_RE.fullmatch(name) and name not in _KEYWORDS and name not in _RESERVED:
        return name
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def _render_literal(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return _quote(v)
    assert isinstance(v, _dt.date)
    return f'date("{v.isoformat()}")'


def to_text(expr: Expr) -> str:
    """Render ``expr`` canonically; ``parse_expression(to_text(e))`` equals ``e``
    for every tree produced by :func:`parse_expression`.

    Parameters
    ----------
    expr : Expr

    Returns
    -------
    str
    """
    _check_tree(expr)
    return _render(expr)


def _wrap(e: Expr, min_prec: int) -> str:
    s = _render(e)
    return f"({s})" if _prec(e) < min_prec else s


def _render(e: Expr) -> str:
    if isinstance(e, Literal):
        return _render_literal(e.value)
    if isinstance(e, Name):
        return _render_name(e.name)
    if isinstance(e, BoolOp):
        p = _PREC[e.op] + 1
        return f" {e.op} ".join(_wrap(o, p) for o in e.operands)
    if isinstance(e, Unary):
        if e.op == "not":
            return "not " + _wrap(e.operand, _PREC["not"])
        return "-" + _wrap(e.operand, _PREC["neg"])
    if isinstance(e, Compare):
        return f"{_wrap(e.left, _PREC['add'])} {e.op} {_wrap(e.right, _PREC['add'])}"
    if isinstance(e, Membership):
        op = "not in" if e.negated else "in"
        return f"{_wrap(e.operand, _PREC['add'])} {op} {_render(e.items)}"
    if isinstance(e, ListLiteral):
        return "[" + ", ".join(_render_literal(i.value) for i in e.items) + "]"
    if isinstance(e, Binary):
        p = _PREC["add"] if e.op in "+-" else _PREC["mul"]
        return f"{_wrap(e.left, p)} {e.op} {_wrap(e.right, p + 1)}"
    if isinstance(e, Call):
        return f"{e.function}(" + ", ".join(_render(a) for a in e.args) + ")"
    raise TypeError(f"not an expression node: {type(e).__name__}")  # pragma: no cover

