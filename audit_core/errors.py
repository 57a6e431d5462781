"""Declared, user-facing errors.

Every problem with user input is raised as :class:`AuditInputError` with a
stable ``code``. The message templates live in one table, :data:`MESSAGES`, so
tests can assert their text and the UI can show them without a traceback.
Modules register their own templates with :func:`register_messages`.

A message that quotes content read from a file (a cell, a line, a key) quotes
it through :func:`excerpt` / :func:`excerpts`: one line, control characters
escaped, at most a few dozen characters each and a few items, so a config
pointed at any file never echoes that file.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["AuditInputError", "MESSAGES", "excerpt", "excerpts", "register_messages", "fail"]

#: Characters of one quoted value, and values of a quoted list, in a message.
EXCERPT_CHARS = 40
EXCERPT_ITEMS = 5

#: code -> message template (``str.format`` fields).
MESSAGES: dict[str, str] = {}


class AuditInputError(ValueError):
    """A declared error about user input.

    Parameters
    ----------
    code : str
        Stable identifier, a key of :data:`MESSAGES`.
    message : str
        Human-readable text that names the offending column or value and,
        where possible, what to change.
    """

    #: 1-based character position in the user's text, set on expression syntax errors only
    position: int

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


def register_messages(table: dict[str, str]) -> None:
    """Add message templates; a code may only be registered once."""
    for code, template in table.items():
        if code in MESSAGES and MESSAGES[code] != template:
            raise RuntimeError(f"message code {code!r} registered twice")
        MESSAGES[code] = template


def fail(code: str, **fields: Any) -> AuditInputError:
    """Build the declared error ``code`` with its template filled in.

    Use as ``raise fail("EMPTY_FILE", name="x.csv")``.
    """
    template = MESSAGES[code]
    return AuditInputError(code, template.format(**fields))


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """``value`` quoted for a message: ``repr`` of at most ``limit`` characters, one line.

    Examples
    --------
    >>> excerpt("root:x:0:0:root:/root:/bin/bash\\ndaemon:x:1:1", limit=12)
    "'root:x:0:0:r'…"
    >>> excerpt(3.5)
    '3.5'
    """
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + "…"
    short = value[:limit]
    return repr(short) + ("…" if len(value) > limit else "")


def excerpts(values: Iterable[Any], *, limit: int = EXCERPT_CHARS, items: int = EXCERPT_ITEMS) -> str:
    """A few values quoted with :func:`excerpt`, then ``and N more``.

    Examples
    --------
    >>> excerpts(["a", "b", "c"], items=2)
    "'a', 'b' and 1 more"
    """
    values = list(values)
    shown = ", ".join(excerpt(v, limit) for v in values[:items])
    return shown + (f" and {len(values) - items:,} more" if len(values) > items else "")
