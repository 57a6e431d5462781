"""Declared messages of multi-class Transport (``MULTICLASS_*``), registered once on import."""
from __future__ import annotations

from audit_core.errors import register_messages

__all__ = ["MULTICLASS_MESSAGES"]

#: code -> template, registered below; the package's ``__init__`` imports this table first, so every
#: module of the package finds its templates registered.
MULTICLASS_MESSAGES: dict[str, str] = {
    "MULTICLASS_SHAPE": "{what} must have shape {expected}, got shape {shape}.",
    "MULTICLASS_FEW_CLASSES": "Multi-class metrics need at least 2 probability columns, got {k}.",
    "MULTICLASS_LABELS": (
        "y_true must hold class indices 0 … {last} (one per probability column); found {values}."
    ),
    "MULTICLASS_ROWS": (
        "Each row of probabilities must lie in [0, 1] and sum to 1 (within 1e-6); row {row} "
        "has min {lo:.6g}, max {hi:.6g} and sum {total:.9g}."
    ),
    "MULTICLASS_MAPPING": "Unknown multi-class mapping {name!r}; choose from {names}.",
    "MULTICLASS_SCORE": "Unknown conformal score {name!r}; choose from {names}.",
    "MULTICLASS_RAPS": "RAPS needs k_reg ≥ 1 (an integer) and λ ≥ 0, got k_reg={k_reg!r}, λ={lam!r}.",
    "MULTICLASS_ALPHA": "alpha must be strictly between 0 and 1, got {alpha!r}.",
    "MULTICLASS_RATE": "A selection rate must be in (0, 1], got {rate!r}.",
}
register_messages(MULTICLASS_MESSAGES)
