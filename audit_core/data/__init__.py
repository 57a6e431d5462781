"""The data layer: from an uploaded table to an audit dataset with evidence groups.

The flow, one module per step:

* :mod:`~audit_core.data.intake` — read CSV, Parquet and Excel files, with size caps;
* :mod:`~audit_core.data.frames` — a polars frame converted once to pandas (:func:`as_pandas`);
* :mod:`~audit_core.data.samples` — the bundled samples (synthetic loans, breast cancer);
* :mod:`~audit_core.data.roles` — infer each column's role (numeric, categorical, identifier, ...);
* :mod:`~audit_core.data.targets` — named target definitions (class, threshold, expression);
* :mod:`~audit_core.data.eligibility` — the eligibility filter: which records take part;
* :mod:`~audit_core.data.dataset` — the checked :class:`AuditDataset` (records, targets, domains);
* :mod:`~audit_core.data.preprocess` — the feature preprocessing and the origin of each feature;
* :mod:`~audit_core.data.groups` — evidence groups of the features;
* :mod:`~audit_core.data.baseline` — the baseline that stands in for missing evidence.

Stands only on the foundation (:mod:`audit_core.errors`, :mod:`audit_core.limits`,
:mod:`audit_core.expr`). Pure library code: never imports streamlit or plotly.
"""
from audit_core.lazy import lazy_exports

#: Each public name and the submodule that defines it. The names are imported on first use (PEP 562
#: ``__getattr__``), so importing one submodule (the app's first run imports a few) does not import every other
#: one and what they need (scikit-learn, SciPy): see ``components/shell.py`` and docs/reliability.md "First paint".
_EXPORTS = {
    "BASELINE_KINDS": ".baseline",
    "compute_baseline": ".baseline",
    "AuditDataset": ".dataset",
    "DatasetConfig": ".dataset",
    "build_dataset": ".dataset",
    "frame_fingerprint": ".dataset",
    "EligibilityFilter": ".eligibility",
    "as_pandas": ".frames",
    "GroupRule": ".groups",
    "Grouping": ".groups",
    "apply_group_rules": ".groups",
    "grouping_from_raw_map": ".groups",
    "parse_group_csv": ".groups",
    "raw_origin_grouping": ".groups",
    "LoadedTable": ".intake",
    "ReadOptions": ".intake",
    "check_table": ".intake",
    "read_path": ".intake",
    "read_table": ".intake",
    "feature_origins": ".preprocess",
    "make_preprocessor": ".preprocess",
    "ROLES": ".roles",
    "infer_roles": ".roles",
    "SAMPLES": ".samples",
    "SampleInfo": ".samples",
    "load_sample": ".samples",
    "TargetLabels": ".targets",
    "apply_targets": ".targets",
    "target_from_dict": ".targets",
}
__all__ = [
    "AuditDataset",
    "BASELINE_KINDS",
    "DatasetConfig",
    "EligibilityFilter",
    "GroupRule",
    "Grouping",
    "LoadedTable",
    "ROLES",
    "ReadOptions",
    "SAMPLES",
    "SampleInfo",
    "TargetLabels",
    "apply_group_rules",
    "apply_targets",
    "as_pandas",
    "build_dataset",
    "check_table",
    "compute_baseline",
    "feature_origins",
    "frame_fingerprint",
    "grouping_from_raw_map",
    "infer_roles",
    "load_sample",
    "make_preprocessor",
    "parse_group_csv",
    "raw_origin_grouping",
    "read_path",
    "read_table",
    "target_from_dict",
]


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
