"""A small declarative expression language for filters, targets and rules.

Expressions are tokenised and parsed by hand (recursive descent) into a tree
of frozen dataclasses; nothing is ever handed to Python's ``eval``/``exec``.
The same tree can be evaluated

* vectorised over a :class:`pandas.DataFrame` (:func:`evaluate_frame`,
  :func:`evaluate_mask`) - used for target definitions and eligibility
  filters, and
* for one record, a mapping of typed values (:func:`evaluate_record`) - used
  for rule conditions, with Kleene three-valued logic over :data:`UNKNOWN`.

The grammar, the typing rules and the limits are documented in
``docs/expressions.md``.

Missing values
--------------
A missing value (``None``, ``NaN``, ``NaT``, ``pd.NA``; in record mode also a
name absent from the record when ``unknown="unknown"``) propagates: any
comparison, arithmetic or function involving it is missing, ``and``/``or``
follow Kleene logic (``missing and false`` is false, ``missing or true`` is
true), and only ``is_missing(x)`` turns it into a definite true/false.
Filters (:func:`evaluate_mask`) treat a missing condition as *not kept*.
"""
from __future__ import annotations

import datetime as _dt
import difflib
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal as _TypingLiteral, Union

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = [
    "Expr",
    "Literal",
    "Name",
    "Unary",
    "Binary",
    "BoolOp",
    "Compare",
    "ListLiteral",
    "Membership",
    "Call",
    "FUNCTIONS",
    "UNKNOWN",
    "parse_expression",
    "referenced_names",
    "to_text",
    "evaluate_frame",
    "evaluate_mask",
    "evaluate_record",
]

register_messages(
    {
        "EXPR_EMPTY": (
            "The expression is empty; write a condition such as `age >= 18`."
        ),
        "EXPR_TOO_LONG": (
            "The expression is {length} characters long; the limit is {limit} "
            "characters. Shorten it, e.g. use `x in [...]` instead of many `or`s."
        ),
        "EXPR_TOO_DEEP": (
            "The expression is nested more than {limit} levels deep{where}; "
            "remove redundant parentheses or split it up."
        ),
        "EXPR_SYNTAX": (
            "Syntax error at character {position}: expected {expected}, "
            "found {found}{hint}. Context: {context}"
        ),
        "EXPR_UNKNOWN_FUNCTION": (
            "Unknown function `{name}` at character {position}; the available "
            "functions are {allowed}."
        ),
        "EXPR_ARITY": (
            "Function `{name}` at character {position} takes {expected}, "
            "but {given} given."
        ),
        "EXPR_BAD_DATE": (
            "Invalid date {value} {where}; write dates as YYYY-MM-DD, "
            'for example date("2024-01-31").'
        ),
        "EXPR_UNKNOWN_NAME": (
            "The expression refers to `{name}`, which is not {where}.{suggestion}"
        ),
        "EXPR_AMBIGUOUS_COLUMN": (
            "Column `{name}` appears {count} times in the data; rename the "
            "duplicates before using it in an expression."
        ),
        "EXPR_TYPE": "Type error in `{expression}`: {problem}.",
    }
)

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

_KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false"})
#: Identifiers refused because they look like Python; backquote a column with
#: such a name.
_RESERVED = {
    "lambda": "lambda expressions are not allowed",
    "True": "write booleans in lower case: true / false",
    "False": "write booleans in lower case: true / false",
    "None": "there is no missing-value literal; test with is_missing(x)",
    "null": "there is no missing-value literal; test with is_missing(x)",
    "is": "use == or != to compare, and is_missing(x) to test for missing values",
}
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER_RE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INT_MAX = 2**63 - 1
_DIGITS = frozenset("0123456789")
_HARD_MAX_DEPTH = 64  # keeps parsing far below the recursion limit
_MAX_DATE_SHIFT_DAYS = 3_700_000  # more than the span of year 1..9999
_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
_SCALAR_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
               "<=": operator.le, ">": operator.gt, ">=": operator.ge}
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
# Tokeniser
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Token:
    kind: str  # NUM STR NAME QNAME KW OP EOF
    value: Any
    pos: int  # 0-based offset
    src: str  # source text of the token


def _context(text: str, pos: int) -> str:
    before = text[max(0, pos - 20) : pos]
    after = text[pos : pos + 20]
    lead = "…" if pos > 20 else ""
    trail = "…" if pos + 20 < len(text) else ""
    return (lead + before + " ▶ " + after + trail).replace("\n", " ").replace("\r", " ")


def _syntax(text: str, pos: int, expected: str, found: str, hint: str = ""):
    err = fail(
        "EXPR_SYNTAX",
        position=pos + 1,
        expected=expected,
        found=found,
        hint=f" ({hint})" if hint else "",
        context=_context(text, pos),
    )
    err.position = pos + 1
    return err


def _show_char(ch: str) -> str:
    if ch.isprintable() and not ch.isspace():
        return f"'{ch}'"
    return f"character U+{ord(ch):04X}"


_STRING_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_UNSUPPORTED_OPS = {
    "**": "powers are not supported",
    "//": "integer division is not supported; use /",
    "==": None,
    "&&": "use `and`",
    "||": "use `or`",
    "%": "the modulo operator is not supported",
    "&": "use `and`",
    "|": "use `or`",
    "!": "use `not` (or != for inequality)",
    "=": "use == to test equality",
    "^": "powers are not supported",
    "~": "use `not`",
    ".": "attribute access with '.' is not allowed; backquote column names "
    "that contain dots, e.g. `a.b`",
    ":": "slices and lambdas are not allowed",
    ";": "only a single expression is allowed",
    "{": "sets and dicts are not allowed",
    "}": "sets and dicts are not allowed",
    "@": "the @ operator is not supported",
    "#": "comments are not allowed",
    "$": "variables are not supported",
}


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
            continue
        start = i
        if ch in _DIGITS or (ch == "." and i + 1 < n and text[i + 1] in _DIGITS):
            m = _NUMBER_RE.match(text, i)
            assert m is not None
            src = m.group(0)
            i = m.end()
            if i < n and (text[i].isalnum() or text[i] in "_.`"):
                raise _syntax(
                    text, i, "an operator or the end of the expression",
                    _show_char(text[i]),
                    "a number must be followed by an operator or a space",
                )
            if any(c in src for c in ".eE"):
                value: Any = float(src)
                if not math.isfinite(value):
                    raise _syntax(text, start, "a finite number", f"the number {src}",
                                  "the number is too large")
            else:
                value = int(src)
                if value > _INT_MAX:
                    raise _syntax(text, start, f"an integer of at most {_INT_MAX}",
                                  f"the number {src[:30]}", "write it as a decimal, e.g. 1e20")
            tokens.append(_Token("NUM", value, start, src))
            continue
        if ch.isascii() and (ch.isalpha() or ch == "_"):
            m = _IDENT_RE.match(text, i)
            assert m is not None
            word = m.group(0)
            i = m.end()
            if word in _RESERVED:
                raise _syntax(text, start, "a value, a column name or an operator",
                              f"'{word}'", _RESERVED[word])
            tokens.append(_Token("KW" if word in _KEYWORDS else "NAME", word, start, word))
            continue
        if ch in "\"'":
            quote = ch
            i += 1
            out: list[str] = []
            while True:
                if i >= n:
                    raise _syntax(text, n, f"a closing {quote} for the text started at "
                                  f"character {start + 1}", "the end of the expression")
                c = text[i]
                if c == quote:
                    i += 1
                    break
                if c == "\\":
                    if i + 1 >= n:
                        raise _syntax(text, n, f"a closing {quote} for the text started at "
                                      f"character {start + 1}", "the end of the expression")
                    e = text[i + 1]
                    if e not in _STRING_ESCAPES:
                        raise _syntax(text, i, "one of the escapes \\\\ \\\" \\' \\n \\t \\r",
                                      f"'\\{e}'")
                    out.append(_STRING_ESCAPES[e])
                    i += 2
                    continue
                out.append(c)
                i += 1
            tokens.append(_Token("STR", "".join(out), start, text[start:i]))
            continue
        if ch == "`":
            i += 1
            out = []
            while True:
                if i >= n:
                    raise _syntax(text, n, "a closing ` for the column name started at "
                                  f"character {start + 1}", "the end of the expression")
                c = text[i]
                if c == "`":
                    i += 1
                    break
                if c == "\\":
                    if i + 1 >= n or text[i + 1] not in "`\\":
                        found = "the end of the expression" if i + 1 >= n else f"'\\{text[i + 1]}'"
                        raise _syntax(text, i, "one of the escapes \\` or \\\\ inside a "
                                      "backquoted name", found)
                    out.append(text[i + 1])
                    i += 2
                    continue
                out.append(c)
                i += 1
            name = "".join(out)
            if not name:
                raise _syntax(text, start, "a column name between the backquotes", "``")
            tokens.append(_Token("QNAME", name, start, text[start:i]))
            continue
        two = text[i : i + 2]
        if two in ("==", "!=", "<=", ">="):
            tokens.append(_Token("OP", two, start, two))
            i += 2
            continue
        if ch in "<>+-*/(),[]":
            if two in ("**", "//"):
                raise _syntax(text, start, "a value, a name or an operator", f"'{two}'",
                              _UNSUPPORTED_OPS[two])
            tokens.append(_Token("OP", ch, start, ch))
            i += 1
            continue
        if two in ("&&", "||"):
            raise _syntax(text, start, "a value, a name or an operator", f"'{two}'",
                          _UNSUPPORTED_OPS[two])
        hint = _UNSUPPORTED_OPS.get(ch) or ""
        if not hint and not ch.isascii() and ch.isalpha():
            hint = "names with non-ASCII letters must be backquoted, e.g. `größe`"
        raise _syntax(text, start, "a value, a name or an operator", _show_char(ch), hint)
    tokens.append(_Token("EOF", None, n, ""))
    return tokens


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------
class _Parser:
    def __init__(self, text: str, tokens: list[_Token], max_depth: int) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0
        self.max_depth = max_depth
        self.level = 0

    # -- helpers ---------------------------------------------------------
    def peek(self, k: int = 0) -> _Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def next(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "EOF":
            self.i += 1
        return tok

    def is_op(self, tok: _Token, *ops: str) -> bool:
        return tok.kind == "OP" and tok.value in ops

    def is_kw(self, tok: _Token, *words: str) -> bool:
        return tok.kind == "KW" and tok.value in words

    def describe(self, tok: _Token) -> str:
        if tok.kind == "EOF":
            return "the end of the expression"
        src = tok.src if len(tok.src) <= 30 else tok.src[:27] + "..."
        if tok.kind == "NUM":
            return f"the number {src}"
        if tok.kind == "STR":
            return f"the text {src}"
        if tok.kind == "NAME":
            return f"the name `{src}`"
        if tok.kind == "QNAME":
            return f"the column name {src}"
        return f"'{src}'"

    def error(self, tok: _Token, expected: str, hint: str = ""):
        return _syntax(self.text, tok.pos, expected, self.describe(tok), hint)

    def enter(self, tok: _Token) -> None:
        self.level += 1
        if self.level > self.max_depth:
            err = fail("EXPR_TOO_DEEP", limit=self.max_depth,
                       where=f" (at character {tok.pos + 1})")
            err.position = tok.pos + 1
            raise err

    def node(self, node: Expr, depth: int, tok: _Token) -> tuple[Expr, int]:
        if depth > self.max_depth:
            err = fail("EXPR_TOO_DEEP", limit=self.max_depth,
                       where=f" (at character {tok.pos + 1})")
            err.position = tok.pos + 1
            raise err
        return node, depth

    # -- grammar ---------------------------------------------------------
    def parse(self) -> Expr:
        expr, _ = self.parse_or()
        tok = self.peek()
        if tok.kind != "EOF":
            hint = ""
            if tok.kind in ("NAME", "QNAME", "NUM", "STR"):
                hint = "two values must be joined by an operator such as `and`, `==` or `+`"
            elif self.is_op(tok, ")"):
                hint = "this parenthesis is never opened"
            raise self.error(tok, "an operator or the end of the expression", hint)
        return expr

    def parse_or(self) -> tuple[Expr, int]:
        first, depth = self.parse_and()
        if not self.is_kw(self.peek(), "or"):
            return first, depth
        op_tok = self.peek()
        operands, depths = [first], [depth]
        while self.is_kw(self.peek(), "or"):
            self.next()
            x, d = self.parse_and()
            operands.append(x)
            depths.append(d)
        return self.node(BoolOp("or", tuple(operands)), 1 + max(depths), op_tok)

    def parse_and(self) -> tuple[Expr, int]:
        first, depth = self.parse_not()
        if not self.is_kw(self.peek(), "and"):
            return first, depth
        op_tok = self.peek()
        operands, depths = [first], [depth]
        while self.is_kw(self.peek(), "and"):
            self.next()
            x, d = self.parse_not()
            operands.append(x)
            depths.append(d)
        return self.node(BoolOp("and", tuple(operands)), 1 + max(depths), op_tok)

    def parse_not(self) -> tuple[Expr, int]:
        tok = self.peek()
        if self.is_kw(tok, "not"):
            self.next()
            self.enter(tok)
            operand, d = self.parse_not()
            self.level -= 1
            return self.node(Unary("not", operand), d + 1, tok)
        return self.parse_comparison()

    def _at_comparison(self) -> bool:
        tok = self.peek()
        return (
            (tok.kind == "OP" and tok.value in _COMPARE_OPS)
            or self.is_kw(tok, "in")
            or (self.is_kw(tok, "not") and self.is_kw(self.peek(1), "in"))
        )

    def parse_comparison(self) -> tuple[Expr, int]:
        left, dl = self.parse_additive()
        if not self._at_comparison():
            return left, dl
        tok = self.next()
        if tok.kind == "OP":
            right, dr = self.parse_additive()
            result = self.node(Compare(tok.value, left, right), 1 + max(dl, dr), tok)
        else:
            negated = tok.value == "not"
            if negated:
                self.next()  # the `in`
            items, di = self.parse_list()
            result = self.node(Membership(left, items, negated), 1 + max(dl, di), tok)
        if self._at_comparison():
            raise self.error(
                self.peek(), "`and`, `or`, ')' or the end of the expression",
                "comparisons cannot be chained; write `a < b and b < c`",
            )
        return result

    def parse_list(self) -> tuple[ListLiteral, int]:
        tok = self.peek()
        if not self.is_op(tok, "["):
            hint = ""
            if tok.kind in ("NAME", "QNAME"):
                hint = "`in` needs a list of values, e.g. x in [1, 2]"
            raise self.error(tok, "a list such as [1, 2, \"a\"]", hint)
        self.next()
        self.enter(tok)
        items: list[Literal] = []
        if self.is_op(self.peek(), "]"):
            self.next()
        else:
            while True:
                items.append(self.parse_list_item())
                sep = self.next()
                if self.is_op(sep, "]"):
                    break
                if not self.is_op(sep, ","):
                    raise self.error(sep, "',' or ']' in the list")
        self.level -= 1
        return ListLiteral(tuple(items)), (2 if items else 1)

    def parse_list_item(self) -> Literal:
        tok = self.peek()
        if self.is_op(tok, "-") and self.peek(1).kind == "NUM":
            self.next()
            return Literal(-self.next().value)
        if tok.kind in ("NUM", "STR"):
            self.next()
            return Literal(tok.value)
        if self.is_kw(tok, "true", "false"):
            self.next()
            return Literal(tok.value == "true")
        if (
            tok.kind == "NAME"
            and tok.value == "date"
            and self.is_op(self.peek(1), "(")
            and self.peek(2).kind == "STR"
            and self.is_op(self.peek(3), ")")
        ):
            self.next()
            self.next()
            s = self.next()
            self.next()
            return Literal(_parse_date_literal(self.text, s))
        hint = ""
        if tok.kind in ("NAME", "QNAME"):
            hint = "list items must be literal values, not column names"
        raise self.error(
            tok, 'a literal value (a number, text in quotes, true/false or date("YYYY-MM-DD"))',
            hint,
        )

    def parse_additive(self) -> tuple[Expr, int]:
        left, dl = self.parse_multiplicative()
        while self.is_op(self.peek(), "+", "-"):
            tok = self.next()
            right, dr = self.parse_multiplicative()
            left, dl = self.node(Binary(tok.value, left, right), 1 + max(dl, dr), tok)
        return left, dl

    def parse_multiplicative(self) -> tuple[Expr, int]:
        left, dl = self.parse_unary()
        while self.is_op(self.peek(), "*", "/"):
            tok = self.next()
            right, dr = self.parse_unary()
            left, dl = self.node(Binary(tok.value, left, right), 1 + max(dl, dr), tok)
        return left, dl

    def parse_unary(self) -> tuple[Expr, int]:
        tok = self.peek()
        if self.is_op(tok, "-"):
            self.next()
            self.enter(tok)
            operand, d = self.parse_unary()
            self.level -= 1
            if (
                isinstance(operand, Literal)
                and isinstance(operand.value, (int, float))
                and not isinstance(operand.value, bool)
            ):
                return Literal(-operand.value), d  # fold negative numbers
            return self.node(Unary("-", operand), d + 1, tok)
        return self.parse_atom()

    def parse_atom(self) -> tuple[Expr, int]:
        tok = self.next()
        if tok.kind in ("NUM", "STR"):
            result: tuple[Expr, int] = (Literal(tok.value), 1)
        elif self.is_kw(tok, "true", "false"):
            result = (Literal(tok.value == "true"), 1)
        elif tok.kind == "NAME" and self.is_op(self.peek(), "("):
            result = self.parse_call(tok)
        elif tok.kind in ("NAME", "QNAME"):
            result = (Name(tok.value), 1)
        elif self.is_op(tok, "("):
            self.enter(tok)
            inner, d = self.parse_or()
            close = self.next()
            if not self.is_op(close, ")"):
                raise self.error(close, f"')' to close the '(' at character {tok.pos + 1}")
            self.level -= 1
            result = self.node(inner, d + 1, tok)
        else:
            hint = ""
            if self.is_op(tok, "["):
                hint = "lists are only allowed after `in`"
            elif self.is_kw(tok, "not"):
                hint = "put `not ...` in parentheses here"
            raise self.error(tok, "a value, a column name, a function call or '('", hint)
        nxt = self.peek()
        if self.is_op(nxt, "["):
            raise self.error(nxt, "an operator or the end of the expression",
                             "subscripts such as a[0] are not allowed")
        if self.is_op(nxt, "("):
            raise self.error(nxt, "an operator or the end of the expression",
                             "only the functions " + ", ".join(FUNCTIONS) + " can be called")
        return result

    def parse_call(self, name_tok: _Token) -> tuple[Expr, int]:
        name = name_tok.value
        if name not in FUNCTIONS:
            err = fail(
                "EXPR_UNKNOWN_FUNCTION", name=name, position=name_tok.pos + 1,
                allowed=", ".join(f"{f}()" for f in FUNCTIONS),
            )
            err.position = name_tok.pos + 1
            raise err
        open_tok = self.next()
        self.enter(open_tok)
        args: list[Expr] = []
        depths: list[int] = []
        if self.is_op(self.peek(), ")"):
            self.next()
        else:
            while True:
                a, d = self.parse_or()
                args.append(a)
                depths.append(d)
                sep = self.next()
                if self.is_op(sep, ")"):
                    break
                if not self.is_op(sep, ","):
                    raise self.error(sep, f"',' or ')' in the arguments of {name}()")
        self.level -= 1
        want = FUNCTIONS[name]
        if len(args) != want:
            err = fail(
                "EXPR_ARITY", name=name, position=name_tok.pos + 1,
                expected=f"{want} argument" + ("s" if want != 1 else ""),
                given=f"{len(args)} were" if len(args) != 1 else "1 was",
            )
            err.position = name_tok.pos + 1
            raise err
        if name == "date" and isinstance(args[0], Literal) and isinstance(args[0].value, str):
            # fold date("YYYY-MM-DD") into a date literal, validated now
            str_tok = self.tokens[self.i - 2]
            return Literal(_parse_date_literal(self.text, str_tok, args[0].value)), 1
        return self.node(Call(name, tuple(args)), 1 + max(depths), name_tok)


def _parse_iso_date(s: str) -> _dt.date | None:
    if not _ISO_DATE_RE.fullmatch(s):
        return None
    try:
        return _dt.date.fromisoformat(s)
    except ValueError:
        return None


def _parse_date_literal(text: str, tok: _Token, value: str | None = None) -> _dt.date:
    s = tok.value if value is None else value
    d = _parse_iso_date(s)
    if d is None:
        err = fail("EXPR_BAD_DATE", value=_quote(s), where=f"at character {tok.pos + 1}")
        err.position = tok.pos + 1
        raise err
    return d


def parse_expression(text: str, *, max_length: int = 2000, max_depth: int = 50) -> Expr:
    """Parse ``text`` into an expression tree.

    Parameters
    ----------
    text : str
        The expression, e.g. ``'age >= 18 and not is_missing(income)'``.
    max_length : int, default 2000
        Longest accepted text, in characters.
    max_depth : int, default 50
        Deepest accepted nesting (1..64). Every operator, function call,
        list and pair of parentheses adds one level.

    Returns
    -------
    Expr
        The root node of an immutable tree.

    Raises
    ------
    AuditInputError
        ``EXPR_EMPTY``, ``EXPR_TOO_LONG``, ``EXPR_TOO_DEEP``, ``EXPR_SYNTAX``,
        ``EXPR_UNKNOWN_FUNCTION``, ``EXPR_ARITY`` or ``EXPR_BAD_DATE``; syntax
        errors carry a 1-based ``position`` attribute.
    """
    if not isinstance(text, str):
        raise TypeError(f"expression text must be a str, got {type(text).__name__}")
    if not 1 <= max_depth <= _HARD_MAX_DEPTH:
        raise ValueError(f"max_depth must be between 1 and {_HARD_MAX_DEPTH}")
    if len(text) > max_length:
        raise fail("EXPR_TOO_LONG", length=len(text), limit=max_length)
    if not text.strip():
        raise fail("EXPR_EMPTY")
    return _Parser(text, _tokenize(text), max_depth).parse()


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


# --------------------------------------------------------------------------
# Typing helpers shared by both evaluators
# --------------------------------------------------------------------------
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


# --------------------------------------------------------------------------
# Vectorised evaluation
# --------------------------------------------------------------------------
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
    if dtype == object or isinstance(dtype, pd.StringDtype):
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
        kinds = {}
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


def _as_date(v: object) -> _dt.date:
    if isinstance(v, np.datetime64):
        v = pd.Timestamp(v)
    if isinstance(v, _dt.datetime):
        return v.date()
    assert isinstance(v, _dt.date)
    return v


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
    return _Vec(kind, np.full(n, np.datetime64(value, "D")), missing)


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
            items = [i.value for i in e.items.items]
            if x.kind == "date":
                items = [np.datetime64(i, "D") for i in items]
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
                        label = self.frame.index[i]
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
    if v.kind == "bool":
        arr = pd.arrays.BooleanArray(v.values.astype(bool), m.copy())
    elif v.kind == "number":
        if v.values.dtype.kind == "i":
            arr = pd.arrays.IntegerArray(v.values.astype(np.int64), m.copy())
        else:
            arr = pd.arrays.FloatingArray(np.where(m, 0.0, v.values).astype(float), m.copy())
    elif v.kind == "text":
        obj = np.where(m, None, v.values).astype(object)
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


# --------------------------------------------------------------------------
# Record evaluation
# --------------------------------------------------------------------------
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

    def ev(self, e: Expr) -> object:
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
        kind = _check_call(e, [_kind(a) for a in args], "field")
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


Expression = Union[Literal, Name, Unary, Binary, BoolOp, Compare, Membership, Call]
