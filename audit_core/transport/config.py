"""The frozen transport declaration (stage 1 of SPEC §2). Binary targets only."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

import numpy as np

from ..errors import fail
from ..manifest import library_versions
from ..models import ZOO
from ..targets import target_from_dict
from .mappings import MAPPINGS
from .verdicts import DEFAULT_TOLERANCES, check_tolerances

__all__ = ["TransportConfig", "versions"]


def _bad(name: str, problem: str):
    return fail("TRANSPORT_BAD_OPTION", name=name, problem=problem)


@dataclass(frozen=True, kw_only=True)
class TransportConfig:
    """The frozen transport declaration (stage 1). Binary targets only.

    Parameters
    ----------
    targets : tuple of dict
        Target definitions (:func:`audit_core.targets.target_from_dict`
        format). The first is the primary estimand; others enter the
        target-definition stress.
    numeric, categorical : tuple of str
        Raw feature columns by role.
    eligibility : str, optional
        Eligibility filter expression, applied to source and target alike.
    domain_column, source_value, target_value : optional
        One table with a domain column; leave ``None`` when passing two tables.
    weight_column, group_column, key_column : str, optional
        Survey weights (normalised to mean 1 per evaluation set); groups kept
        in one partition; record keys for the manifest.
    strata_columns : tuple of str
        Extra split strata (the primary target is always a stratum).
    subgroup_columns : tuple of str
        Heterogeneity subgroups (default: the strata).
    tolerances : mapping of str to float
        ``δ_m`` per metric name (:data:`~audit_core.transport.verdicts.DEFAULT_TOLERANCES`).
    n_refits : int, default 10
    models : tuple of str
        Zoo kinds; the first is the primary model.
    mappings : tuple of str
        Subset of ``("raw", "platt", "isotonic")``.
    alphas, selection_rates, hcep_thresholds : tuple of float
    n_bootstrap : int, default 500
    fractions : 4 floats, default (0.6, 0.15, 0.10, 0.15)
    seed : int
    missing_indicators : bool
    n_bins : int, default 15
    stresses : tuple of str
        Any of ``"target_definition"``, ``"degradation"``.
    degradation_m, n_random_sets : int
        Feature budget ``m`` and random sets ``J`` per refit.
    corruption_rate, corruption_sd, oracle_rate : float
    stress_max_rows : int
        Row cap per test set in the degradation stress (seeded subsample).
    mi_max_rows : int
        Row cap of the train sample for the mutual-information ranking.
    min_subgroup : int
        Smallest subgroup reported.
    input_files : tuple of str
        Files whose SHA-256 goes into the manifest.
    single_domain : bool, default False
        Allow a run without a target domain (no domain column and no target
        table): only the ID test is evaluated, there are no paired changes or
        verdicts. Used for evidence-degradation studies on one population.
    """

    targets: tuple
    numeric: tuple = ()
    categorical: tuple = ()
    eligibility: str | None = None
    domain_column: str | None = None
    source_value: Any = None
    target_value: Any = None
    weight_column: str | None = None
    group_column: str | None = None
    key_column: str | None = None
    strata_columns: tuple = ()
    subgroup_columns: tuple | None = None
    tolerances: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    n_refits: int = 10
    models: tuple = ("logistic_regression",)
    mappings: tuple = MAPPINGS
    alphas: tuple = (0.05, 0.10, 0.20)
    selection_rates: tuple = (0.5, 0.7, 0.8, 0.9, 0.95)
    hcep_thresholds: tuple = (0.80, 0.90, 0.95)
    n_bootstrap: int = 500
    fractions: tuple = (0.6, 0.15, 0.10, 0.15)
    seed: int = 0
    missing_indicators: bool = False
    n_bins: int = 15
    stresses: tuple = ("target_definition", "degradation")
    degradation_m: int = 3
    n_random_sets: int = 20
    corruption_rate: float = 0.2
    corruption_sd: float = 0.2
    oracle_rate: float = 0.3
    stress_max_rows: int = 20000
    mi_max_rows: int = 5000
    min_subgroup: int = 20
    bootstrap_chunk: int = 8
    level: float = 0.95
    input_files: tuple = ()
    single_domain: bool = False

    def __post_init__(self) -> None:
        for name in ("targets", "numeric", "categorical", "strata_columns", "models", "mappings", "alphas",
                     "selection_rates", "hcep_thresholds", "fractions", "stresses", "input_files"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.subgroup_columns is None:
            object.__setattr__(self, "subgroup_columns", tuple(self.strata_columns))
        else:
            object.__setattr__(self, "subgroup_columns", tuple(self.subgroup_columns))
        object.__setattr__(self, "tolerances", check_tolerances(self.tolerances))
        if not self.targets:
            raise _bad("targets", "declare at least one target definition")
        for t in self.targets:
            target_from_dict(dict(t))
        if not (self.numeric or self.categorical):
            raise _bad("features", "declare at least one numeric or categorical feature")
        for name in ("n_refits", "n_bootstrap", "n_bins", "degradation_m", "n_random_sets", "bootstrap_chunk"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise _bad(name, f"must be a positive integer, got {v!r}")
        for k in self.models:
            if k not in ZOO:
                raise _bad("models", f"{k!r} is not in the zoo ({', '.join(ZOO)})")
        if not self.models:
            raise _bad("models", "choose at least one model")
        for m in self.mappings:
            if m not in MAPPINGS:
                raise _bad("mappings", f"{m!r} is not one of {', '.join(MAPPINGS)}")
        if not self.mappings:
            raise _bad("mappings", "choose at least one probability mapping")
        for name in ("alphas", "selection_rates", "hcep_thresholds"):
            vals = getattr(self, name)
            if not vals or any(not (0 < float(v) < 1 or (name == "selection_rates" and float(v) == 1)) for v in vals):
                raise _bad(name, f"values must lie in (0, 1), got {vals!r}")
        for s in self.stresses:
            if s not in ("target_definition", "degradation"):
                raise _bad("stresses", f"unknown stress {s!r}")
        for name in ("corruption_rate", "oracle_rate"):
            if not 0 <= getattr(self, name) <= 1:
                raise _bad(name, "must lie in [0, 1]")

    @property
    def primary_target(self) -> str:
        return str(self.targets[0]["name"])

    @property
    def features(self) -> tuple:
        return self.numeric + self.categorical

    def to_dict(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = [dict(x) if isinstance(x, Mapping) else _plain(x) for x in v]
            elif isinstance(v, Mapping):
                v = dict(v)
            out[f.name] = _plain(v)
        return out

    @classmethod
    def from_dataset(cls, dataset, **options) -> "TransportConfig":
        """Declaration from a checked :class:`~audit_core.dataset.AuditDataset`.

        Targets, roles, eligibility, key, weight, domain, group and strata
        come from the dataset's config (the primary target first); ``options``
        set the remaining fields.
        """
        cfg = dataset.config
        targets = list(cfg.targets)
        if cfg.primary_target:
            targets.sort(key=lambda t: t["name"] != cfg.primary_target)
        base = dict(
            targets=tuple(dict(t) for t in targets),
            numeric=tuple(dataset.numeric),
            categorical=tuple(dataset.categorical),
            eligibility=None,  # already applied by build_dataset
            domain_column=cfg.domain_column,
            source_value=cfg.source_domain,
            target_value=cfg.target_domain,
            weight_column=cfg.weight_column,
            group_column=cfg.group_column,
            key_column=cfg.key_column,
            strata_columns=tuple(cfg.strata_columns),
            missing_indicators=cfg.missing_indicators,
        )
        base.update(options)
        return cls(**base)


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def versions() -> dict[str, str]:
    """Versions of Python and the numerical libraries used (shared with every run manifest)."""
    return library_versions()
