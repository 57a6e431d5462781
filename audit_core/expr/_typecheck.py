"""Typing rules and error wording shared by the frame and record evaluators."""
from __future__ import annotations

import datetime as _dt
import difflib

import numpy as np
import pandas as pd

from audit_core.errors import fail

from ._nodes import Binary, BoolOp, Call, Compare, Expr, Literal, Membership, Name, Unary
from ._render import _render

__all__: list[str] = []

_MAX_DATE_SHIFT_DAYS = 3_700_000  # more than the span of year 1..9999


_KIND_WORDS = {
    "number": "a number",
    "text": "text",
    "bool": "true/false",
    "date": "a date",
    "null": "always missing",
}


def _short(s: str, n: int = 80) -> str:
    return s if len(s) <= n else s[: n - 3] + "..."


def _describe(node: Expr, kind: str, noun: str) -> str:
    if isinstance(node, Name):
        return f"{noun} `{node.name}` ({_KIND_WORDS[kind]})"
    if isinstance(node, Literal):
        return f"{_short(_render(node), 40)} ({_KIND_WORDS[kind]})"
    return f"`{_short(_render(node), 40)}` ({_KIND_WORDS[kind]})"


def _type_error(node: Expr, problem: str):
    return fail("EXPR_TYPE", expression=_short(_render(node)), problem=problem)


def _literal_kind(v: object) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "text"
    return "date"


def _check_arith(node: Binary, lk: str, rk: str, noun: str) -> str:
    """Result kind of ``lk op rk`` (``"null"`` if undetermined)."""
    op = node.op
    for k, sub in ((lk, node.left), (rk, node.right)):
        if k in ("text", "bool"):
            raise _type_error(
                node,
                f"'{op}' cannot be applied to {_describe(sub, k, noun)}; "
                "arithmetic works on numbers (and + / - on dates)",
            )
    if "null" in (lk, rk):
        if not (op in "*/" and "date" in (lk, rk)):
            return "number" if op in "*/" else "null"
    if lk == rk == "number":
        return "number"
    if op == "-" and lk == rk == "date":
        return "number"
    if op in "+-" and lk == "date" and rk == "number":
        return "date"
    if op == "+" and lk == "number" and rk == "date":
        return "date"
    raise _type_error(
        node,
        f"'{op}' cannot combine {_describe(node.left, lk, noun)} and "
        f"{_describe(node.right, rk, noun)}; dates allow date - date (days), "
        "date + days and date - days",
    )


def _check_compare(node: Compare, lk: str, rk: str, noun: str) -> None:
    if "null" in (lk, rk):
        return
    if lk != rk:
        raise _type_error(
            node,
            f"cannot compare {_describe(node.left, lk, noun)} with "
            f"{_describe(node.right, rk, noun)}",
        )
    if lk == "bool" and node.op not in ("==", "!="):
        raise _type_error(node, "true/false values can only be compared with == or !=")


def _check_membership(node: Membership, kind: str, noun: str) -> None:
    if kind == "null":
        return
    for item in node.items.items:
        ik = _literal_kind(item.value)
        if ik != kind:
            raise _type_error(
                node,
                f"cannot look for {_describe(node.operand, kind, noun)} in a list "
                f"containing {_render(item)} ({_KIND_WORDS[ik]}); all list items "
                "must have the same type as the tested value",
            )


def _check_logical(node: Expr, sub: Expr, kind: str, noun: str) -> None:
    if kind not in ("bool", "null"):
        word = node.op if isinstance(node, (BoolOp, Unary)) else "?"
        raise _type_error(
            node,
            f"`{word}` needs conditions (true/false), but {_describe(sub, kind, noun)} "
            "is not one; compare it first, e.g. x > 0",
        )


def _check_call(node: Call, kinds: list[str], noun: str) -> str:
    f = node.function
    if f == "is_missing":
        return "bool"

    def bad(i: int, need: str):
        return _type_error(
            node, f"{f}() needs {need}, but got {_describe(node.args[i], kinds[i], noun)}"
        )

    if f in ("abs", "log"):
        if kinds[0] not in ("number", "null"):
            raise bad(0, "a number")
        return "number"
    if f == "year":
        if kinds[0] not in ("date", "null"):
            raise bad(0, "a date")
        return "number"
    if f == "date":
        if kinds[0] not in ("text", "date", "null"):
            raise bad(0, 'text such as "2024-01-31"')
        return "date"
    # min / max
    for i, k in enumerate(kinds):
        if k == "bool":
            raise bad(i, "numbers, dates or text")
    known = [k for k in kinds if k != "null"]
    if len(known) == 2 and known[0] != known[1]:
        raise _type_error(
            node,
            f"{f}() needs two values of the same type, but got "
            f"{_describe(node.args[0], kinds[0], noun)} and "
            f"{_describe(node.args[1], kinds[1], noun)}",
        )
    return known[0] if known else "null"


def _close_matches(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    if close:
        return " Did you mean " + ", ".join(f"`{c}`" for c in close) + "?"
    shown = ", ".join(f"`{c}`" for c in candidates[:15])
    more = f" and {len(candidates) - 15} more" if len(candidates) > 15 else ""
    return f" Available: {shown}{more}." if candidates else " There are none."


def _as_date(v: object) -> _dt.date:
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v)
    if isinstance(v, _dt.datetime):
        return v.date()
    assert isinstance(v, _dt.date)
    return v

