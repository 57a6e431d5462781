"""The table declared once: :class:`TableSpec`, from which both audits derive what they need.

A :class:`TableSpec` names the target (a column and its positive class, or no
positive class for a multi-class target), the features, the evidence groups,
the domain column with its source and target values, and optional weight, key
and subgroup columns. :meth:`TableSpec.dataset` turns it into the
:class:`~audit_core.data.dataset.DatasetConfig` the app and the CLI declare and
builds the checked :class:`~audit_core.data.dataset.AuditDataset`; the
Fragility workspace and the Transport declaration
(:meth:`~audit_core.transport.config.TransportConfig.from_dataset`) are both
derived from that dataset, so nothing is declared twice.

Choices (documented here because the spec leaves them open):

* ``features=()`` means every column that is not the target, a column an
  extra target reads, the domain, the weight or the key, with roles inferred
  (:func:`~audit_core.data.roles.infer_roles`; identifier-like and constant
  columns are left out). Declared features are always used: numeric dtypes
  as numeric, anything else (and every column in ``categorical``) as
  categorical.
* A target without a positive class makes every value a class. A column of
  non-integer numbers is refused as regression-like (``SPEC_REGRESSION_TARGET``):
  the audits are for classifiers, so declare a positive class or a threshold
  target in ``extra_targets``.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from audit_core.data.dataset import AuditDataset, DatasetConfig, build_dataset
from audit_core.data.targets import target_from_dict
from audit_core.errors import excerpt, excerpts, fail, register_messages

__all__ = ["TableSpec"]

register_messages(
    {
        "SPEC_BAD_FIELD": "TableSpec {field}: {problem}.",
        "SPEC_UNKNOWN_COLUMN": "TableSpec {field} names the column {column}, which is not in the table.{hint}",
        "SPEC_COLUMN_TWICE": (
            "TableSpec declares the column {column} as {first} and as {second}; give each column one role."
        ),
        "SPEC_REGRESSION_TARGET": (
            "The target column {column} holds {count:,} distinct non-integer numbers (e.g. {examples}): it looks like "
            "a regression target, and the audits need classes. Declare positive= (one value against the rest) or add "
            "a threshold target in extra_targets."
        ),
    }
)

_COLUMN_FIELDS = ("domain", "weight", "key")


def _bad(name: str, problem: str):
    return fail("SPEC_BAD_FIELD", field=name, problem=problem)


def _names(name: str, value: Any) -> tuple[str, ...]:
    """A tuple of column names from a list or tuple; a bare text is refused (it would be read letter by letter)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise _bad(name, f"must be a list of column names, got {excerpt(value)}")
    bad = [v for v in value if not isinstance(v, str) or not v]
    if bad:
        raise _bad(name, f"must be a list of column names, got {excerpt(bad[0])}")
    if len(set(value)) != len(value):
        twice = next(v for i, v in enumerate(value) if v in value[:i])
        raise _bad(name, f"names the column {excerpt(twice)} twice")
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class TableSpec:
    """What a table means, declared once for every audit.

    Parameters
    ----------
    target : str
        The target column.
    positive : scalar, optional
        The positive class of ``target`` (binary: this value against the rest).
        ``None`` (default): every value is a class (a multi-class target).
    features : sequence of str, optional
        Feature columns; default every column that has no other role (module docstring).
    categorical : sequence of str, optional
        Features to treat as categorical whatever their dtype.
    groups : mapping of str to str, optional
        Raw feature column -> evidence group; a feature not listed is its own group.
    domain : str, optional
        The column that tells the source domain from the target domain (Transport needs it).
    source_domain, target_domain : scalar, optional
        The values of ``domain`` for the source (where models are fitted) and the target.
    weight, key : str, optional
        Survey or sample weights (normalised to mean 1); a unique record key.
    subgroups : sequence of str, optional
        Columns whose levels Transport reports heterogeneity by.
    eligibility : str, optional
        An expression (:mod:`audit_core.expr`); rows where it is false or missing take no part.
    extra_targets : sequence of dict, optional
        More target definitions (:func:`audit_core.data.targets.target_from_dict`
        format) for Transport's target-definition stress.
    name : str, default "table"
        Display name recorded with the dataset.

    Raises
    ------
    AuditInputError
        ``SPEC_BAD_FIELD`` or ``SPEC_COLUMN_TWICE``, naming the field or the column.

    Examples
    --------
    >>> spec = TableSpec(target="diagnosis", positive="malignant", key="record_id")
    >>> spec.target_definitions()[0]["positive"]
    'malignant'
    >>> TableSpec(target="y", features=("x", "y"))
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: TableSpec declares the column 'y' as the target and as a feature; give \
each column one role.
    """

    target: str
    positive: Any = None
    features: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    groups: Mapping[str, str] = field(default_factory=dict)
    domain: str | None = None
    source_domain: Any = None
    target_domain: Any = None
    weight: str | None = None
    key: str | None = None
    subgroups: tuple[str, ...] = ()
    eligibility: str | None = None
    extra_targets: tuple[Mapping[str, Any], ...] = ()
    name: str = "table"

    def __post_init__(self) -> None:
        if not isinstance(self.target, str) or not self.target:
            raise _bad("target", f"must be a column name, got {excerpt(self.target)}")
        for name in ("features", "categorical", "subgroups"):
            object.__setattr__(self, name, _names(name, getattr(self, name)))
        for name in _COLUMN_FIELDS:
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise _bad(name, f"must be a column name, got {excerpt(v)}")
        if not isinstance(self.groups, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in self.groups.items()):
            raise _bad("groups", "must map feature columns to group names (text)")
        object.__setattr__(self, "groups", dict(self.groups))
        if not isinstance(self.extra_targets, (list, tuple)) or not all(
                isinstance(t, Mapping) for t in self.extra_targets):
            raise _bad("extra_targets", "must be a list of target definitions (mappings)")
        object.__setattr__(self, "extra_targets", tuple(dict(t) for t in self.extra_targets))
        if self.eligibility is not None and not isinstance(self.eligibility, str):
            raise _bad("eligibility", f"must be an expression (text), got {excerpt(self.eligibility)}")
        self._check_roles()
        self._check_domain()

    def _check_roles(self) -> None:
        roles = [("the target", self.target)] + [(f"the {n} column", getattr(self, n)) for n in _COLUMN_FIELDS]
        seen: dict[str, str] = {}
        for what, col in roles:
            if col is None:
                continue
            if col in seen:
                raise fail("SPEC_COLUMN_TWICE", column=excerpt(col), first=seen[col], second=what)
            seen[col] = what
        for t in self.extra_targets:
            definition = target_from_dict(dict(t))
            for col in definition.columns:
                seen.setdefault(col, f"read by the target definition {excerpt(definition.name)}")
        for col in self.features:
            if col in seen:
                raise fail("SPEC_COLUMN_TWICE", column=excerpt(col), first=seen[col], second="a feature")
        if self.features:
            for name, cols in (("categorical", self.categorical), ("groups", tuple(self.groups))):
                extra = [c for c in cols if c not in self.features]
                if extra:
                    raise _bad(name, f"names {excerpt(extra[0])}, which is not among the declared features")

    def _check_domain(self) -> None:
        if self.domain is None:
            if self.source_domain is not None or self.target_domain is not None:
                raise _bad("domain", "source_domain and target_domain need the domain column that holds them")
            return
        if self.source_domain is None or self.target_domain is None:
            raise _bad("domain", f"the domain column {excerpt(self.domain)} needs both source_domain and target_domain")
        if self.source_domain == self.target_domain:
            raise _bad("target_domain", f"must differ from source_domain, both are {excerpt(self.source_domain)}")

    # ------------------------------------------------------------------ derived declarations
    def target_definitions(self) -> tuple[dict[str, Any], ...]:
        """The target definitions, the primary first: ``{"kind": "class", "name": target, "column": target, ...}``."""
        primary = {"kind": "class", "name": self.target, "column": self.target, "positive": self.positive}
        return (primary, *(dict(t) for t in self.extra_targets))

    def columns(self) -> dict[str, tuple[str, ...]]:
        """Every column the spec names, by field (for the check against a table)."""
        out = {"target": (self.target,), "features": self.features, "categorical": self.categorical,
               "groups": tuple(self.groups), "subgroups": self.subgroups}
        out.update({n: (getattr(self, n),) for n in _COLUMN_FIELDS if getattr(self, n) is not None})
        return out

    def check(self, frame: pd.DataFrame) -> None:
        """Refuse a column the table does not have (``SPEC_UNKNOWN_COLUMN``, with the closest name)."""
        present = [str(c) for c in frame.columns]
        known = set(present)
        for name, cols in self.columns().items():
            for col in cols:
                if col not in known:
                    close = difflib.get_close_matches(col, present, n=1, cutoff=0.5)
                    hint = f" Did you mean {excerpt(close[0])}?" if close else f" Columns: {excerpts(present, items=8)}."
                    raise fail("SPEC_UNKNOWN_COLUMN", field=name, column=excerpt(col), hint=hint)
        if self.positive is None:
            _refuse_regression(self.target, frame[self.target])

    def roles(self, frame: pd.DataFrame) -> dict[str, str]:
        """Column -> role overrides for :class:`DatasetConfig`: declared features forced in, other columns out."""
        if not self.features:
            return {c: "categorical" for c in self.categorical}
        out = {str(c): "ignore" for c in frame.columns}
        for c in self.features:
            s = frame[c]
            numeric = pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype)
            out[c] = "categorical" if c in self.categorical or not numeric else "numeric"
        return out

    def dataset_config(self, frame: pd.DataFrame) -> DatasetConfig:
        """The :class:`DatasetConfig` of this spec on ``frame`` (checked with :meth:`check` first)."""
        self.check(frame)
        return DatasetConfig(name=self.name, targets=self.target_definitions(), roles=self.roles(frame),
                             eligibility=self.eligibility, weight_column=self.weight, key_column=self.key,
                             domain_column=self.domain, source_domain=self.source_domain,
                             target_domain=self.target_domain)

    def dataset(self, frame: pd.DataFrame) -> AuditDataset:
        """The checked dataset both audits start from (:func:`~audit_core.data.dataset.build_dataset`).

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_rows, n_columns)

        Returns
        -------
        AuditDataset
        """
        return build_dataset(frame, self.dataset_config(frame))


def _refuse_regression(column: str, s: pd.Series) -> None:
    """``SPEC_REGRESSION_TARGET`` for a float column holding non-integer values (no positive class declared)."""
    if not pd.api.types.is_float_dtype(s.dtype):
        return
    x = s.dropna().to_numpy(dtype=float)
    if len(x) and not np.all(np.isclose(x, np.round(x))):
        values = np.unique(x)
        raise fail("SPEC_REGRESSION_TARGET", column=excerpt(column), count=len(values),
                   examples=excerpts([float(v) for v in values[:3]], items=3))
