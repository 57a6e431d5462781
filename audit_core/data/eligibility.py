"""The eligibility filter: which records take part in the audit.

A condition of the expression language (:mod:`audit_core.expr`); a row whose
condition is missing is not eligible.

The expression-length cap bounds the *syntax* a user writes, not the column
names in it: long names (a table may have 5,000-character column names) are
not counted against it (:func:`parse_condition`), so the refusal's own
suggestion ``not is_missing(<long name>)`` can be used as written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages
from audit_core.expr import Expr, evaluate_frame, evaluate_mask, parse_expression, referenced_names

__all__ = ["EligibilityFilter", "parse_condition"]

#: The parser's own cap on the text of an expression, in characters.
EXPR_MAX_LENGTH = 2000
#: Column names in an expression may add up to this many characters beyond the cap.
NAMES_MAX_LENGTH = 1_000_000
_NAME = re.compile(r"`(?:\\.|[^`\\])*`?|[A-Za-z_][A-Za-z0-9_]*")


def parse_condition(text: str) -> Expr:
    """Parse an expression, counting long column names (over 30 characters) apart from the length cap.

    Raises the expression errors of :func:`audit_core.expr.parse_expression`
    (``EXPR_TOO_LONG`` when the text without its long names passes 2,000 characters).
    """
    names = sum(len(m) for m in (m.group() for m in _NAME.finditer(text)) if len(m) > 30) if isinstance(text, str) else 0
    return parse_expression(text, max_length=EXPR_MAX_LENGTH + min(names, NAMES_MAX_LENGTH))

register_messages(
    {
        "ELIGIBILITY_EMPTY": (
            "The eligibility filter `{expression}` keeps none of the {total} rows"
            "{detail}; loosen the condition."
        ),
    }
)


@dataclass(frozen=True)
class EligibilityFilter:
    """Which records take part in the audit.

    Parameters
    ----------
    expression : str
        A condition, e.g. ``'not is_missing(income) and age >= 18'``; parsed
        at construction.
    """

    expression: str
    _tree: Expr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.expression, str):
            raise TypeError("expression must be a str")
        object.__setattr__(self, "_tree", parse_condition(self.expression))

    @property
    def columns(self) -> tuple[str, ...]:
        """Columns the filter refers to, sorted."""
        return tuple(sorted(referenced_names(self._tree)))

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Rows that are eligible; a missing condition counts as not eligible.

        Parameters
        ----------
        frame : pandas.DataFrame, shape (n_samples, n_columns)

        Returns
        -------
        numpy.ndarray of bool, shape (n_samples,)

        Raises
        ------
        AuditInputError
            ``ELIGIBILITY_EMPTY`` if no row is kept, and expression errors.
        """
        m = evaluate_mask(self._tree, frame)
        if not m.any():
            v = evaluate_frame(self._tree, frame)
            n_missing = int(v.isna().sum())
            detail = (f" ({n_missing} of them because a value in the condition is missing)"
                      if n_missing else "")
            raise fail("ELIGIBILITY_EMPTY", expression=self.expression.strip(),
                       total=len(frame), detail=detail)
        return m
