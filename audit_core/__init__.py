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
from .lazy import lazy_exports

#: Each public name and the submodule that defines it. The names are imported on first use (PEP 562
#: ``__getattr__``), so importing one submodule (the app's first run imports a few) does not import every other
#: one and what they need (scikit-learn, SciPy): see ``components/shell.py`` and docs/reliability.md "First paint".
_EXPORTS = {
    "FragilityReport": ".api",
    "TableSpec": ".api",
    "TransportReport": ".api",
    "fragility_audit": ".api",
    "transport_audit": ".api",
    "BASELINE_KINDS": ".data.baseline",
    "compute_baseline": ".data.baseline",
    "AuditDataset": ".data.dataset",
    "DatasetConfig": ".data.dataset",
    "build_dataset": ".data.dataset",
    "frame_fingerprint": ".data.dataset",
    "EligibilityFilter": ".data.eligibility",
    "as_pandas": ".data.frames",
    "GroupRule": ".data.groups",
    "Grouping": ".data.groups",
    "apply_group_rules": ".data.groups",
    "grouping_from_raw_map": ".data.groups",
    "parse_group_csv": ".data.groups",
    "raw_origin_grouping": ".data.groups",
    "LoadedTable": ".data.intake",
    "ReadOptions": ".data.intake",
    "read_path": ".data.intake",
    "read_table": ".data.intake",
    "feature_origins": ".data.preprocess",
    "make_preprocessor": ".data.preprocess",
    "ROLES": ".data.roles",
    "infer_roles": ".data.roles",
    "SAMPLES": ".data.samples",
    "load_sample": ".data.samples",
    "apply_targets": ".data.targets",
    "target_from_dict": ".data.targets",
    "MESSAGES": ".errors",
    "AuditInputError": ".errors",
    "import_model": ".models.importing",
    "Workspace": ".models.training",
    "attach_model": ".models.training",
    "train_workspace": ".models.training",
    "ZOO": ".models.zoo",
    "FittedModel": ".models.zoo",
    "ModelSpec": ".models.zoo",
    "make_estimator": ".models.zoo",
    "train_model": ".models.zoo",
    "RunRecord": ".runs.registry",
    "RunRegistry": ".runs.registry",
    "default_registry_path": ".runs.registry",
}
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


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
