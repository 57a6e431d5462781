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
from .baseline import BASELINE_KINDS, compute_baseline
from .dataset import AuditDataset, DatasetConfig, build_dataset, frame_fingerprint
from .eligibility import EligibilityFilter
from .frames import as_pandas
from .groups import GroupRule, Grouping, apply_group_rules, grouping_from_raw_map, parse_group_csv, raw_origin_grouping
from .intake import LoadedTable, ReadOptions, check_table, read_path, read_table
from .preprocess import feature_origins, make_preprocessor
from .roles import ROLES, infer_roles
from .samples import SAMPLES, SampleInfo, load_sample
from .targets import TargetLabels, apply_targets, target_from_dict

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
