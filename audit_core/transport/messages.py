"""The Transport protocol's declared messages (``TRANSPORT_*``), registered once on import."""
from __future__ import annotations

from audit_core.errors import register_messages

__all__ = ["TRANSPORT_MESSAGES"]

#: code -> template, registered below; the package's ``__init__`` imports this table first, so every
#: module of the package finds its templates registered.
TRANSPORT_MESSAGES: dict[str, str] = {
    "TRANSPORT_STAGE_ORDER": (
        "Step {stage!r} cannot run yet: run {needed!r} first. The steps run in order: {order}."
    ),
    "TRANSPORT_STAGE_DONE": "Step {stage!r} has already run; start a new TransportAudit to run it again.",
    "TRANSPORT_TOLERANCES_LOCKED": (
        "Tolerances are locked once the audit is declared (before any target result is seen); "
        "start a new audit to use different tolerances."
    ),
    "TRANSPORT_NOT_BINARY": (
        "Transport is binary-only: target {name!r} makes every value of column {column!r} a class "
        "({k} classes: {classes}; the source domain holds {source}). Declare a positive class "
        "(or a threshold or expression target). The multi-class audit (the Transport page or the CLI's "
        "transport audit with no positive class, or run_multiclass_transport) needs every class in the source domain."
    ),
    "TRANSPORT_TARGET_IN_DOMAIN": "Target definitions on the {which} domain: {message}",
    "TRANSPORT_NO_DOMAINS": (
        "Declare the target domain: pass a target table, or a domain column with a source and a target value."
    ),
    "TRANSPORT_SAME_DOMAIN": "The source and the target domain are both {value!r}; choose two different values.",
    "TRANSPORT_EMPTY_DOMAIN": "The {which} domain has no eligible rows ({column} = {value!r}).",
    "TRANSPORT_UNKNOWN_COLUMN": "The {what} column {column!r} is not in the {which} table.",
    "TRANSPORT_BAD_OPTION": "Transport option {name}: {problem}",
    "TRANSPORT_TARGET_TUNING": (
        "Refused: {what} would be fitted on target-domain records. The target domain is used for evaluation only."
    ),
    "TRANSPORT_CANCELLED": "The transport run was cancelled at step {stage!r}; nothing was saved.",
    "TRANSPORT_FIXED_MODEL_MISSING": (
        "The declaration audits the model {label!r} as it is, but no fitted model was given "
        "(TransportAudit(config, model=...))."
    ),
    "TRANSPORT_FIXED_MODEL_UNUSED": (
        "A fitted model was given, but the declaration refits zoo models: set fixed_model to audit it as it is."
    ),
    "TRANSPORT_FIXED_MODEL_TARGET": (
        "The model {label!r} predicts the target {target!r}: make {target!r} the first (primary) target "
        "definition to audit it as it is, or refit zoo models instead."
    ),
    "TRANSPORT_FIXED_MODEL_NOT_BINARY": "Transport is binary-only: the model {label!r} predicts {k} classes.",
    "TRANSPORT_MODEL_CANNOT_SCORE": (
        "The model {label!r} cannot score the {what}: {detail}. An imported model brings its own "
        "preprocessing; if it has no imputer it cannot score records with missing values (the evidence-"
        "degradation stress sets values missing): turn that stress off or import a pipeline that imputes."
    ),
    "TRANSPORT_SMALL_PARTITION": (
        "Refit {refit}: the {partition} partition has {count} record(s) of class {cls}; "
        "every partition needs both classes. Use a larger source or fewer strata."
    ),
    "TRANSPORT_LABEL_FREE_STAGE": (
        "Step {stage!r} needs the target's labels, but the run declares them {mode!r} (target_labels): a label-free "
        "run's steps are {order}. Run it with target_labels='available' once the labels have arrived."
    ),
    "TRANSPORT_FORECAST_LABELLED": (
        "Step 'forecast' runs only when the target's labels are absent or hidden (target_labels); this run declares "
        "them 'available', so its steps are {order}."
    ),
    "TRANSPORT_FORECAST_RUNNER": (
        "A label-free run (target_labels={mode!r}) ends with the forecast step, which this runner does not hold: "
        "run it with audit_core.forecast.run_transport_with_forecast."
    ),
    "TRANSPORT_LABEL_FREE_NO_TARGET": (
        "A label-free run (target_labels={mode!r}) forecasts a target domain: pass a target table, or a domain "
        "column with a source and a target value."
    ),
}
register_messages(TRANSPORT_MESSAGES)
