"""Multi-class Transport (C > 2 classes): metrics, mappings, selective and conformal rules, the run.

The binary runner (:mod:`audit_core.transport.runner`) is unchanged; a
class target without a positive class is audited here instead.
"""
from __future__ import annotations

from .messages import MULTICLASS_MESSAGES  # first: every submodule may fail with these
from .metrics import MC_METRICS, multiclass_metric_values

__all__ = ["MC_METRICS", "MULTICLASS_MESSAGES", "multiclass_metric_values"]
