"""Recursive-descent parser: tokens -> an :class:`Expr` tree (:func:`parse_expression`)."""
from __future__ import annotations

import datetime as _dt
import re

from audit_core.errors import fail

from ._lexer import _Token, _syntax, _tokenize
from ._nodes import (
    _COMPARE_OPS, _HARD_MAX_DEPTH, FUNCTIONS, Binary, BoolOp, Call, Compare, Expr, ListLiteral, Literal,
    Membership, Name, Unary,
)
from ._render import _quote

__all__ = ["parse_expression"]

_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


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

