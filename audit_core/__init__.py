"""audit_core: the reliability-audit library behind the dashboard.

It never imports streamlit or plotly. The folders follow the data flow, each
standing only on those before it (``tests/test_architecture.py`` checks it):

* foundation — :mod:`~audit_core.errors`, :mod:`~audit_core.limits`,
  :mod:`~audit_core.expr`, :mod:`~audit_core.metrics`;
* :mod:`audit_core.data` — intake, roles, targets, dataset, groups, baseline, samples;
* :mod:`audit_core.models` — the zoo, training, model import, the model audit, probabilities;
* the three audits — :mod:`audit_core.fragility`, :mod:`audit_core.transport`,
  :mod:`audit_core.receipts` (they never import each other);
* :mod:`audit_core.runs` — registry, configs, plug-ins, back-ends, bundles, the release gate.

The public surface of the foundation (data, models and the run registry) is
re-exported here, with the notebook entry points of :mod:`audit_core.api`:
:class:`TableSpec`, :func:`fragility_audit`, :func:`transport_audit` and the
results they return, :class:`FragilityReport` and :class:`TransportReport`.
"""
from .api import FragilityReport, TableSpec, TransportReport, fragility_audit, transport_audit
from .data.baseline import BASELINE_KINDS, compute_baseline
from .data.dataset import AuditDataset, DatasetConfig, build_dataset, frame_fingerprint
from .data.eligibility import EligibilityFilter
from .data.frames import as_pandas
from .data.groups import GroupRule, Grouping, apply_group_rules, grouping_from_raw_map, parse_group_csv, raw_origin_grouping
from .data.intake import LoadedTable, ReadOptions, read_path, read_table
from .data.preprocess import feature_origins, make_preprocessor
from .data.roles import ROLES, infer_roles
from .data.samples import SAMPLES, load_sample
from .data.targets import apply_targets, target_from_dict
from .errors import MESSAGES, AuditInputError
from .models.importing import import_model
from .models.training import Workspace, attach_model, train_workspace
from .models.zoo import ZOO, FittedModel, ModelSpec, make_estimator, train_model
from .runs.registry import RunRecord, RunRegistry, default_registry_path

__all__ = [
    "AuditDataset",
    "AuditInputError",
    "BASELINE_KINDS",
    "DatasetConfig",
    "EligibilityFilter",
    "FragilityReport",
    "FittedModel",
    "GroupRule",
    "Grouping",
    "LoadedTable",
    "MESSAGES",
    "ModelSpec",
    "ROLES",
    "ReadOptions",
    "RunRecord",
    "RunRegistry",
    "SAMPLES",
    "TableSpec",
    "TransportReport",
    "Workspace",
    "ZOO",
    "apply_group_rules",
    "apply_targets",
    "as_pandas",
    "attach_model",
    "build_dataset",
    "compute_baseline",
    "default_registry_path",
    "feature_origins",
    "fragility_audit",
    "frame_fingerprint",
    "grouping_from_raw_map",
    "import_model",
    "infer_roles",
    "load_sample",
    "make_estimator",
    "make_preprocessor",
    "parse_group_csv",
    "raw_origin_grouping",
    "read_path",
    "read_table",
    "target_from_dict",
    "train_model",
    "train_workspace",
    "transport_audit",
]
