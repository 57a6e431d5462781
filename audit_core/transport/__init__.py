"""Transport: a reliability audit under shift (SPEC §2), for binary and multi-class targets.

Public surface::

    from audit_core.transport import TransportConfig, TransportAudit, run_transport

See :mod:`audit_core.transport.runner` for the staged binary runner (its stages are functions of
:class:`~audit_core.transport.state.TransportState`, :mod:`audit_core.transport.state`) and
:mod:`audit_core.transport.multiclass` for the multi-class one. A table of
predictions instead of a model: ``TransportConfig(score_columns=...)`` and
:func:`run_transport_on_scores` (:mod:`audit_core.transport.scores`).
"""
from .messages import TRANSPORT_MESSAGES  # first: every submodule may fail with these
from .columns import RESULT_COLUMNS
from .config import TransportConfig, model_options
from .conformal import calibrate, conformal_quantile, prediction_sets, set_report
from .mappings import MAPPINGS, ProbabilityMapping, fit_mapping
from .runner import STAGES, TransportAudit, run_transport
from .results import TransportResult
from .scores import NEEDS_A_MODEL
from .scores_run import run_transport_on_scores
from .selective import aurc, excess_aurc, risk_selection_curve, selection_threshold, selective_stats
from .splits import PARTITIONS, four_way_split
from .stress import decomposition, percentile_within
from .verdicts import DEFAULT_TOLERANCES, VERDICTS, classify_change

__all__ = [
    "TRANSPORT_MESSAGES",
    "TransportConfig",
    "model_options",
    "TransportAudit",
    "TransportResult",
    "run_transport",
    "run_transport_on_scores",
    "NEEDS_A_MODEL",
    "STAGES",
    "RESULT_COLUMNS",
    "PARTITIONS",
    "MAPPINGS",
    "VERDICTS",
    "DEFAULT_TOLERANCES",
    "four_way_split",
    "fit_mapping",
    "ProbabilityMapping",
    "selection_threshold",
    "selective_stats",
    "risk_selection_curve",
    "aurc",
    "excess_aurc",
    "conformal_quantile",
    "calibrate",
    "prediction_sets",
    "set_report",
    "decomposition",
    "percentile_within",
    "classify_change",
]
