"""The expression tree: frozen dataclass nodes, :data:`UNKNOWN` and tree walks."""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

from audit_core.errors import fail


__all__ = [
    "Expr", "Literal", "Name", "Unary", "Binary", "BoolOp", "Compare", "ListLiteral", "Membership",
    "Call", "Expression", "FUNCTIONS", "UNKNOWN", "referenced_names",
]

#: Whitelisted functions: name -> number of arguments.
FUNCTIONS: dict[str, int] = {
    "abs": 1,
    "log": 1,
    "min": 2,
    "max": 2,
    "is_missing": 1,
    "date": 1,
    "year": 1,
}

_HARD_MAX_DEPTH = 64  # keeps parsing far below the recursion limit
_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
_ARITH_OPS = ("+", "-", "*", "/")


# --------------------------------------------------------------------------
# Tree
# --------------------------------------------------------------------------
class Expr:
    """Base class of all expression nodes (frozen dataclasses)."""

    __slots__ = ()


@dataclass(frozen=True, eq=False)
class Literal(Expr):
    """A constant: ``bool``, ``int``, ``float``, ``str`` or ``datetime.date``.

    Two literals are equal only if their values are equal *and* of the same
    Python type (so ``Literal(1) != Literal(1.0) != Literal(True)``).
    """

    value: bool | int | float | str | _dt.date

    def __post_init__(self) -> None:
        v = self.value
        if isinstance(v, _dt.datetime) or not isinstance(
            v, (bool, int, float, str, _dt.date)
        ):
            raise TypeError(f"unsupported literal value {v!r}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("literal numbers must be finite")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal):
            return NotImplemented
        return type(self.value) is type(other.value) and self.value == other.value

    def __hash__(self) -> int:
        return hash((type(self.value).__name__, self.value))


@dataclass(frozen=True)
class Name(Expr):
    """A reference to a column (frame) or a field (record)."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a name must be a non-empty string")


@dataclass(frozen=True)
class Unary(Expr):
    """Prefix operator: ``op`` is ``"-"`` or ``"not"``."""

    op: str
    operand: Expr

    def __post_init__(self) -> None:
        if self.op not in ("-", "not"):
            raise ValueError(f"unknown unary operator {self.op!r}")
        _require_expr(self.operand)


@dataclass(frozen=True)
class Binary(Expr):
    """Arithmetic: ``op`` is one of ``+ - * /``."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in _ARITH_OPS:
            raise ValueError(f"unknown arithmetic operator {self.op!r}")
        _require_expr(self.left)
        _require_expr(self.right)


@dataclass(frozen=True)
class BoolOp(Expr):
    """``and`` / ``or`` over two or more operands (a flat chain)."""

    op: str
    operands: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if self.op not in ("and", "or"):
            raise ValueError(f"unknown logical operator {self.op!r}")
        if not isinstance(self.operands, tuple) or len(self.operands) < 2:
            raise ValueError("BoolOp needs a tuple of at least two operands")
        for o in self.operands:
            _require_expr(o)


@dataclass(frozen=True)
class Compare(Expr):
    """One comparison ``left op right``; ``op`` is ``== != < <= > >=``."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in _COMPARE_OPS:
            raise ValueError(f"unknown comparison operator {self.op!r}")
        _require_expr(self.left)
        _require_expr(self.right)


@dataclass(frozen=True)
class ListLiteral(Expr):
    """A list of literals; only valid on the right of ``in`` / ``not in``."""

    items: tuple[Literal, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.items, tuple) or not all(
            isinstance(i, Literal) for i in self.items
        ):
            raise TypeError("ListLiteral items must be a tuple of Literal")


@dataclass(frozen=True)
class Membership(Expr):
    """``operand in [..]`` or, with ``negated=True``, ``operand not in [..]``."""

    operand: Expr
    items: ListLiteral
    negated: bool = False

    def __post_init__(self) -> None:
        _require_expr(self.operand)
        if not isinstance(self.items, ListLiteral):
            raise TypeError("Membership items must be a ListLiteral")
        if not isinstance(self.negated, bool):
            raise TypeError("negated must be a bool")


@dataclass(frozen=True)
class Call(Expr):
    """A call of one of the whitelisted :data:`FUNCTIONS`."""

    function: str
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if self.function not in FUNCTIONS:
            raise ValueError(f"unknown function {self.function!r}")
        if not isinstance(self.args, tuple) or len(self.args) != FUNCTIONS[self.function]:
            raise ValueError(f"{self.function}() takes {FUNCTIONS[self.function]} arguments")
        for a in self.args:
            _require_expr(a)


def _require_expr(x: object) -> None:
    if not isinstance(x, Expr) or isinstance(x, ListLiteral):
        raise TypeError(f"expected an expression node, got {type(x).__name__}")


class _UnknownType:
    """The singleton :data:`UNKNOWN` (a missing or unknown value in records).

    It has no truth value: ``bool(UNKNOWN)`` raises ``TypeError`` so callers
    must decide explicitly how to treat it.
    """

    _instance: "_UnknownType | None" = None

    def __new__(cls) -> "_UnknownType":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("UNKNOWN has no truth value; compare with `is UNKNOWN`")

    def __reduce__(self) -> str:
        return "UNKNOWN"


#: Result of :func:`evaluate_record` when the value is missing or unknown.
UNKNOWN = _UnknownType()


# --------------------------------------------------------------------------
# Tree utilities
# --------------------------------------------------------------------------
def _children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Unary):
        return (e.operand,)
    if isinstance(e, (Binary, Compare)):
        return (e.left, e.right)
    if isinstance(e, BoolOp):
        return e.operands
    if isinstance(e, Membership):
        return (e.operand, e.items)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, ListLiteral):
        return e.items
    return ()


def _check_tree(expr: Expr) -> None:
    """Validate node types and bound the depth (iteratively, no recursion)."""
    if not isinstance(expr, Expr):
        raise TypeError(f"expected an Expr, got {type(expr).__name__}")
    stack = [(expr, 1)]
    while stack:
        node, d = stack.pop()
        if d > _HARD_MAX_DEPTH:
            raise fail("EXPR_TOO_DEEP", limit=_HARD_MAX_DEPTH, where="")
        stack.extend((c, d + 1) for c in _children(node))


def referenced_names(expr: Expr) -> frozenset[str]:
    """Names (columns / fields) the expression refers to.

    Parameters
    ----------
    expr : Expr
        A parsed expression.

    Returns
    -------
    frozenset of str
    """
    return frozenset(_names_in_order(expr))


def _names_in_order(expr: Expr) -> list[str]:
    out: list[str] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Name) and node.name not in out:
            out.append(node.name)
        stack.extend(reversed(_children(node)))
    return out


Expression = Literal | Name | Unary | Binary | BoolOp | Compare | Membership | Call
