"""Declaring what a table means: features, targets, eligibility and special columns.

:class:`DatasetConfig` is what the user declares on the Data & groups page;
:func:`build_dataset` checks it against the table and returns an
:class:`AuditDataset` ready for training and auditing.

Columns that a target definition reads, and the key, weight, domain and group
columns, are never features: a target's own source column as a feature would
leak the label.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import excerpt, excerpts, fail, register_messages

from .eligibility import EligibilityFilter
from .frames import from_polars
from .roles import apply_role_overrides, infer_roles
from .targets import TargetLabels, apply_targets, target_from_dict, value_mask

__all__ = ["DatasetConfig", "AuditDataset", "build_dataset", "build_source_dataset", "frame_fingerprint",
           "mean_one_weights"]

register_messages(
    {
        "DATASET_NO_TARGET": "Declare at least one target definition.",
        "DATASET_FORECAST_DOMAINS": ("A forecast before the target's labels arrive needs one table with a domain "
                                     "column, and its source and target values named."),
        "DATASET_UNKNOWN_COLUMN": "The {what} column {column!r} is not in the table.",
        "DATASET_UNKNOWN_TARGET": "The primary target {name!r} is not among the declared definitions: {names}.",
        "DATASET_NO_FEATURES": (
            "No feature columns are left after excluding targets, keys, weights, domain and group columns. "
            "Mark at least one column numeric or categorical."
        ),
        "DATASET_BAD_WEIGHTS": "The weight column {column!r} {problem}. Weights must be finite, non-negative numbers.",
        "DATASET_DUPLICATE_KEY": (
            "The record-key column {column!r} is not unique: {value!r} appears {count} times."
        ),
        "DATASET_MISSING_KEY": "The record-key column {column!r} has {count} missing value(s).",
        "DATASET_DOMAIN_VALUES": (
            "The domain column {column!r} has no rows with value {value}. Values present: {present}."
        ),
    }
)


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's content (column names, dtypes and values, in order)."""
    h = hashlib.sha256()
    h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()


@dataclass(frozen=True, kw_only=True)
class DatasetConfig:
    """What the user declares about a table.

    Parameters
    ----------
    name : str
        Display name (usually the file name).
    targets : tuple of dict
        Target definitions in the format of :func:`audit_core.data.targets.target_from_dict`.
    primary_target : str, optional
        Name of the definition used for training; default the first.
    roles : mapping, optional
        Column → role; inferred for columns not listed.
    eligibility : str, optional
        An expression; rows where it is false or missing are dropped.
    weight_column, key_column, domain_column, group_column : str, optional
    strata_columns : tuple of str
    source_domain, target_domain : optional
        Values of ``domain_column`` for the source and the target.
    missing_indicators : bool
    """

    name: str
    targets: tuple[Mapping[str, Any], ...]
    primary_target: str | None = None
    roles: Mapping[str, str] = field(default_factory=dict)
    eligibility: str | None = None
    weight_column: str | None = None
    key_column: str | None = None
    domain_column: str | None = None
    group_column: str | None = None
    strata_columns: tuple[str, ...] = ()
    source_domain: Any = None
    target_domain: Any = None
    missing_indicators: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "targets": [dict(t) for t in self.targets],
            "primary_target": self.primary_target,
            "roles": dict(self.roles),
            "eligibility": self.eligibility,
            "weight_column": self.weight_column,
            "key_column": self.key_column,
            "domain_column": self.domain_column,
            "group_column": self.group_column,
            "strata_columns": list(self.strata_columns),
            "source_domain": _jsonable(self.source_domain),
            "target_domain": _jsonable(self.target_domain),
            "missing_indicators": self.missing_indicators,
        }


def _jsonable(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


@dataclass(frozen=True, eq=False)
class AuditDataset:
    """A checked table with its declarations.

    Attributes
    ----------
    config : DatasetConfig
    frame : pandas.DataFrame of shape (n_eligible, n_columns)
        Eligible rows only, index reset.
    numeric, categorical : tuple of str
        Feature columns by role.
    labels : dict of str to TargetLabels
        Every declared definition applied to the same rows.
    weights : ndarray of shape (n_eligible,)
        Normalised to mean 1 (all ones when no weight column).
    keys : ndarray of shape (n_eligible,)
        Record keys (row numbers when no key column).
    fingerprint : str
        SHA-256 of the checked input frame.
    """

    config: DatasetConfig
    frame: pd.DataFrame
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    labels: Mapping[str, TargetLabels]
    weights: np.ndarray
    keys: np.ndarray
    fingerprint: str
    n_input_rows: int

    @property
    def features(self) -> tuple[str, ...]:
        return self.numeric + self.categorical

    @property
    def primary(self) -> TargetLabels:
        name = self.config.primary_target or self.config.targets[0]["name"]
        return self.labels[name]

    @property
    def X(self) -> pd.DataFrame:
        return self.frame.loc[:, list(self.features)]

    def domain_mask(self, value: Any) -> np.ndarray:
        """Boolean mask of shape (n_eligible,) for rows of one domain value."""
        col = self.config.domain_column
        if col is None:
            return np.ones(len(self.frame), dtype=bool)
        return value_mask(self.frame[col], value)


def _check_columns(frame: pd.DataFrame, cfg: DatasetConfig) -> None:
    for what, col in (
        ("weight", cfg.weight_column),
        ("record-key", cfg.key_column),
        ("domain", cfg.domain_column),
        ("group", cfg.group_column),
    ):
        if col is not None and col not in frame.columns:
            raise fail("DATASET_UNKNOWN_COLUMN", what=what, column=col)
    for col in cfg.strata_columns:
        if col not in frame.columns:
            raise fail("DATASET_UNKNOWN_COLUMN", what="strata", column=col)


def _weights(frame: pd.DataFrame, col: str | None) -> np.ndarray:
    if col is None:
        return np.ones(len(frame))
    s = frame[col]
    if not pd.api.types.is_numeric_dtype(s.dtype):
        raise fail("DATASET_BAD_WEIGHTS", column=col, problem="is not numeric")
    w = s.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(w).any():
        raise fail("DATASET_BAD_WEIGHTS", column=col, problem=f"has {int(np.isnan(w).sum())} missing value(s)")
    if not np.isfinite(w).all() or (w < 0).any():
        raise fail("DATASET_BAD_WEIGHTS", column=col, problem="has negative or infinite values")
    if not (w > 0).any():
        raise fail("DATASET_BAD_WEIGHTS", column=col, problem="sums to zero")
    return mean_one_weights(w)


def mean_one_weights(w: np.ndarray) -> np.ndarray:
    """Finite non-negative weights, not all zero, scaled to mean 1.

    Scaled by the largest first: weights near the float maximum would sum to
    infinity, and dividing by an infinite mean would make every weight 0.

    Parameters
    ----------
    w : numpy.ndarray of float, shape (n,)

    Returns
    -------
    numpy.ndarray of float, shape (n,)

    Examples
    --------
    >>> mean_one_weights(np.array([1e308, 1e308, 1e308])).tolist()
    [1.0, 1.0, 1.0]
    >>> mean_one_weights(np.array([1.0, 3.0])).tolist()
    [0.5, 1.5]
    """
    w = w / w.max()
    return w / w.mean()


def _keys(frame: pd.DataFrame, col: str | None) -> np.ndarray:
    if col is None:
        return np.arange(len(frame))
    s = frame[col]
    if s.isna().any():
        raise fail("DATASET_MISSING_KEY", column=col, count=int(s.isna().sum()))
    counts = s.value_counts()
    if counts.iloc[0] > 1:
        raise fail("DATASET_DUPLICATE_KEY", column=col, value=counts.index[0], count=int(counts.iloc[0]))
    return s.to_numpy()


def build_dataset(frame: pd.DataFrame, config: DatasetConfig) -> AuditDataset:
    """Check ``config`` against ``frame`` and build the dataset.

    Parameters
    ----------
    frame : pandas.DataFrame or polars.DataFrame of shape (n_rows, n_columns)
        A table already read by :func:`audit_core.data.intake.read_table`, or
        built in memory; a polars frame is converted once through Arrow
        (:func:`audit_core.data.frames.from_polars`).
    config : DatasetConfig

    Returns
    -------
    AuditDataset

    Raises
    ------
    AuditInputError
        Naming the offending column, value or definition.
    """
    frame = from_polars(frame, where="build_dataset")
    if not config.targets:
        raise fail("DATASET_NO_TARGET")
    definitions = [target_from_dict(dict(t)) for t in config.targets]
    names = [d.name for d in definitions]
    if config.primary_target is not None and config.primary_target not in names:
        raise fail("DATASET_UNKNOWN_TARGET", name=config.primary_target, names=", ".join(names))
    _check_columns(frame, config)
    fingerprint = frame_fingerprint(frame)
    n_input = len(frame)
    if config.eligibility:
        mask = EligibilityFilter(expression=config.eligibility).mask(frame)
        frame = frame.loc[mask]
    frame = frame.reset_index(drop=True)
    for value in (config.source_domain, config.target_domain):
        if config.domain_column is not None and value is not None:
            if not value_mask(frame[config.domain_column], value).any():
                present = excerpts([v.item() if isinstance(v, np.generic) else v
                                    for v in frame[config.domain_column].dropna().unique()])
                raise fail("DATASET_DOMAIN_VALUES", column=config.domain_column, value=excerpt(value), present=present)
    labels = apply_targets(definitions, frame)
    excluded = set().union(*(set(d.columns) for d in definitions))
    excluded |= {
        c
        for c in (config.weight_column, config.key_column, config.domain_column, config.group_column)
        if c is not None
    }
    inferred = infer_roles(frame)
    # User roles are checked like any override (unknown column, unknown role,
    # "numeric" on text), except on excluded columns, which are never features.
    overrides = {c: r for c, r in config.roles.items() if c not in excluded}
    roles = apply_role_overrides(frame, inferred, overrides)
    numeric = tuple(c for c in frame.columns if c not in excluded and roles[c] == "numeric")
    converted = {
        c: pd.to_numeric(frame[c], errors="coerce") for c in numeric if not pd.api.types.is_numeric_dtype(frame[c].dtype)
    }
    if converted:  # numeric-looking text declared numeric: the imputer needs numbers
        frame = frame.assign(**converted)
    categorical = tuple(c for c in frame.columns if c not in excluded and roles[c] == "categorical")
    if not numeric and not categorical:
        raise fail("DATASET_NO_FEATURES")
    return AuditDataset(
        config=config,
        frame=frame,
        numeric=numeric,
        categorical=categorical,
        labels=labels,
        weights=_weights(frame, config.weight_column),
        keys=_keys(frame, config.key_column),
        fingerprint=fingerprint,
        n_input_rows=n_input,
    )


def build_source_dataset(frame: pd.DataFrame, config: DatasetConfig) -> tuple[AuditDataset, pd.DataFrame]:
    """The dataset of the source-domain rows and the target-domain rows apart, their labels never read.

    For a forecast before the target's labels arrive: the target rows' label
    columns may be missing on every row (or present and hidden). The
    declaration is checked as by :func:`build_dataset` on the source rows
    only (targets, roles, eligibility, key, weights), so training and the
    label checks see labelled rows; the target rows get the same eligibility
    filter and numeric conversions.

    Parameters
    ----------
    frame : pandas.DataFrame or polars.DataFrame of shape (n_rows, n_columns)
        One table with both domains.
    config : DatasetConfig
        With ``domain_column``, ``source_domain`` and ``target_domain``.

    Returns
    -------
    dataset : AuditDataset
        The source rows; its ``config`` is ``config`` (both domains named) and its ``fingerprint`` that of
        the whole table.
    target : pandas.DataFrame of shape (n_target, n_columns)
        The eligible target-domain rows, index reset.
    """
    from dataclasses import replace

    frame = from_polars(frame, where="build_source_dataset")
    if config.domain_column is None or config.source_domain is None or config.target_domain is None:
        raise fail("DATASET_FORECAST_DOMAINS")
    _check_columns(frame, config)
    target_rows = np.asarray(value_mask(frame[config.domain_column], config.target_domain), dtype=bool)
    source_rows = np.asarray(value_mask(frame[config.domain_column], config.source_domain), dtype=bool)
    if not target_rows.any():
        build_dataset(frame, config)  # names the missing domain value as the labelled declaration does
    ds = build_dataset(frame.loc[source_rows], replace(config, target_domain=None))
    target = frame.loc[target_rows]
    if config.eligibility:
        target = target.loc[EligibilityFilter(expression=config.eligibility).mask(target)]
    converted = {c: pd.to_numeric(target[c], errors="coerce") for c in ds.numeric
                 if not pd.api.types.is_numeric_dtype(target[c].dtype)}
    target = target.assign(**converted).reset_index(drop=True)
    return replace(ds, config=config, fingerprint=frame_fingerprint(frame), n_input_rows=len(frame)), target
