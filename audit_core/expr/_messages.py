"""Message templates of the expression language, registered once at import."""
from __future__ import annotations

from audit_core.errors import register_messages

__all__ = ["EXPR_MESSAGES"]

#: code -> template, registered below; the package's ``__init__`` imports this table first, so every
#: module of the package finds its templates registered.
EXPR_MESSAGES: dict[str, str] = {
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
register_messages(EXPR_MESSAGES)
