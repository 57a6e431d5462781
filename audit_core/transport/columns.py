"""The columns of the Transport result table, shared by the protocol that fills it and the result that finalises it.

``domain`` is ``id`` or ``ood`` for evaluations, ``ood-id`` for paired
changes and ``source`` for quantities fitted on the source; ``refit`` is
``-1`` for rows that pool refits; ``alpha`` / ``selection_rate`` are ``NaN``
where they do not apply (see :mod:`audit_core.transport.results`).
"""
from __future__ import annotations

__all__ = ["RESULT_COLUMNS"]

#: Column order of the long-form result table.
RESULT_COLUMNS: tuple[str, ...] = (
    "analysis", "condition", "target_definition", "domain", "model", "mapping", "refit",
    "metric", "value", "weighting", "alpha", "selection_rate",
)
