"""Declared, user-facing errors.

Every problem with user input is raised as :class:`AuditInputError` with a
stable ``code``. The message templates live in one table, :data:`MESSAGES`, so
tests can assert their text and the UI can show them without a traceback.
Modules register their own templates with :func:`register_messages`.
"""
from __future__ import annotations

from typing import Any

__all__ = ["AuditInputError", "MESSAGES", "register_messages", "fail"]

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
