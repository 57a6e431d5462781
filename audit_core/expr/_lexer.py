"""Tokeniser: expression text -> a list of tokens, with positioned syntax errors."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from audit_core.errors import fail


__all__: list[str] = []

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
_INT_MAX = 2**63 - 1
_DIGITS = frozenset("0123456789")


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


def _syntax(text: str, pos: int, expected: str, found: str, hint: str | None = ""):
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

