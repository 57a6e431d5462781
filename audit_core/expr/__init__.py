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

from ._messages import EXPR_MESSAGES  # first: every submodule may fail with these
from ._frame import evaluate_frame, evaluate_mask
from ._nodes import (  # Expression: a public alias kept importable, not in __all__ (as before)
    FUNCTIONS, UNKNOWN, Binary, BoolOp, Call, Compare, Expr, Expression as Expression, ListLiteral, Literal, Membership,
    Name, Unary, referenced_names,
)
from ._parser import parse_expression
from ._record import evaluate_record
from ._render import to_text

__all__ = [
    "EXPR_MESSAGES",
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
