"""The frozen transport declaration (stage 1 of SPEC §2), shared by the binary and the multi-class runner."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

import numpy as np

from audit_core.data.dataset import AuditDataset
from audit_core.data.targets import target_from_dict
from audit_core.errors import AuditInputError, fail
from audit_core.limits import Limits
from audit_core.models.manifest import library_versions
from audit_core.models.scores import scores_label
from audit_core.models.training import Workspace
from audit_core.models.zoo import ZOO, FittedModel

from .headline import check_headline
from .mappings import DEFAULT_MAPPINGS, MAPPINGS
from .verdicts import DEFAULT_TOLERANCES, check_tolerances

__all__ = ["TARGET_LABELS", "TransportConfig", "class_names_of", "declaration_key", "model_options", "versions"]

#: What a run knows of the target's labels (``TransportConfig.target_labels``).
TARGET_LABELS = ("available", "absent", "hidden")


def _bad(name: str, problem: str):
    return fail("TRANSPORT_BAD_OPTION", name=name, problem=problem)


def class_names_of(config: Mapping[str, Any], target: str | None = None) -> tuple[str, str] | None:
    """The declared names of classes 0 and 1 of a target in a transport config dict (a manifest's ``config``).

    Parameters
    ----------
    config : Mapping
        With ``targets``, a list of target definitions (the primary first).
    target : str, optional
        The target's name; default the primary target.

    Returns
    -------
    tuple of str or None
        ``("not yes", "yes")`` for the class target ``positive: yes``; ``None`` when the config declares no
        such target or it cannot be read (callers then say ``class 0`` and ``class 1``).
    """
    targets = [t for t in config.get("targets") or () if isinstance(t, Mapping)]
    chosen = next((t for t in targets if t.get("name") == target), None) if target else None
    chosen = chosen or (targets[0] if targets else None)
    if chosen is None:
        return None
    try:
        names = target_from_dict(chosen).binary_names
    except AuditInputError:  # a config saved by another version: no names rather than a wrong one
        return None
    return names if names else None


#: Upper bounds of the counts (CLI configs have no widget limits): name -> (minimum, maximum).
_COUNT_RANGES = {"n_refits": (1, 1000), "n_bootstrap": (1, 100_000), "n_bins": (1, 1000),
                 "degradation_m": (1, 10_000), "n_random_sets": (1, 10_000), "bootstrap_chunk": (1, 100_000),
                 "stress_max_rows": (1, 10**9), "mi_max_rows": (1, 10**9), "min_subgroup": (1, 10**9),
                 "shift_max_rows": (2, 10**9),
                 # seed * 1000 + refit seeds scikit-learn, whose random_state must be below 2**32
                 "seed": (0, (2**32 - 1) // 1000 - 1)}
_SEQUENCES = ("targets", "numeric", "categorical", "strata_columns", "models", "mappings", "alphas",
              "selection_rates", "hcep_thresholds", "fractions", "stresses", "input_files", "score_columns")


def _real(v: Any) -> float | None:
    """``v`` as a finite float, or None for anything else (text, bool, None, nan, inf)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return None
    x = float(v)
    return x if math.isfinite(x) else None


@dataclass(frozen=True, kw_only=True)
class TransportConfig:
    """The frozen transport declaration (stage 1), for a binary or a multi-class target.

    The binary runner (:class:`~audit_core.transport.runner.TransportAudit`)
    needs a binary primary target and refuses a class target without a
    positive class (``TRANSPORT_NOT_BINARY``); the multi-class runner
    (:func:`~audit_core.transport.multiclass.run.run_multiclass_transport`)
    takes that class target, without the stresses the binary runner adds.

    Parameters
    ----------
    targets : tuple of dict
        Target definitions (:func:`audit_core.data.targets.target_from_dict`
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
        Zoo kinds refitted on each refit's train partition; the first is the
        primary model. With ``fixed_model`` it is ``(fixed_model,)``.
    model_params : mapping of str to mapping
        Zoo kind -> parameter overrides (:class:`~audit_core.models.zoo.ModelSpec`
        ``params``), e.g. the settings trained on Data & groups.
    fixed_model : str, optional
        Audit one given model *as it is*: the label of the fitted model passed
        to :class:`~audit_core.transport.runner.TransportAudit` (``model=``).
        It is never refitted and its own preprocessing is used; the source
        partitions fit only the probability mappings (calibration), the
        thresholds and conformal quantiles (selection) and the stress
        quantities (train: mutual-information ranking, corruption
        distribution, oracle donors).
    score_columns : tuple of str
        Bring your own scores: audit a table of predictions instead of a
        model. One probability column per class in class-code order (binary:
        class 0 then the positive class; multi-class: the sorted class
        values), or one column for the positive class of a binary target.
        The run's model is :func:`~audit_core.models.scores.scored_model`
        (``fixed_model`` becomes its label, ``scores from column(s) …``):
        never refitted, so the refits only re-partition the records; the
        stresses are not run (they need a model). Declared features are
        optional and feed the feature shift only.
    mappings : tuple of str
        Subset of ``("raw", "platt", "isotonic", "temperature", "beta")``; default the first three.
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
        Row cap per test set in the degradation stress and in the bootstrap
        of the target-definition decomposition (seeded subsample); bounds
        their memory and time on large tables.
    mi_max_rows : int
        Row cap of the train sample for the mutual-information ranking.
    shift_max_rows : int, default 20000
        Row cap per domain of the numeric features' shift statistics (PSI,
        KS, Wasserstein; a seeded sample, recorded in the manifest's
        ``feature_shift``); categorical features use every record, and the
        domain classifier has its own cap, ``min(10000, stress_max_rows)``.
    min_subgroup : int
        Smallest subgroup reported.
    input_files : tuple of str
        Files whose SHA-256 goes into the manifest.
    single_domain : bool, default False
        Allow a run without a target domain (no domain column and no target
        table): only the ID test is evaluated, there are no paired changes or
        verdicts. Used for evidence-degradation studies on one population.
    exact_bootstrap : bool, default False
        Compute every bootstrap replicate record by record. The default
        computes the same replicates on (score bin × class) cells
        (:mod:`~audit_core.transport.binned`): step statistics are identical,
        smooth ones agree to about 1e-4.
    target_labels : {"available", "absent", "hidden"}, default "available"
        The target domain's labels. ``"available"``: today's labelled run.
        ``"absent"`` (the target has no label column) and ``"hidden"`` (its
        label columns are dropped at declaration and never read): the
        label-free run, whose steps are ``declare → split → fit → evaluate →
        forecast`` (:mod:`~audit_core.transport.forecasting`, ``docs/forecast.md``).
    headline : mapping, optional
        The headline slice, declared before any result is seen: any of
        ``model`` (one of ``models``), ``mapping`` (one of ``mappings``) and
        ``weighting`` (``weighted`` needs a weight column). What is not
        declared follows the rule of :mod:`~audit_core.transport.headline`
        (the first model, Platt where fitted, weighted when weights are
        declared). The manifest records the slice.
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
    model_params: Mapping[str, Mapping] = field(default_factory=dict)
    fixed_model: str | None = None
    score_columns: tuple = ()
    mappings: tuple = DEFAULT_MAPPINGS
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
    shift_max_rows: int = 20000
    min_subgroup: int = 20
    bootstrap_chunk: int = 8
    level: float = 0.95
    input_files: tuple = ()
    single_domain: bool = False
    exact_bootstrap: bool = False
    headline: Mapping[str, str] | None = None
    target_labels: str = "available"

    def __post_init__(self) -> None:
        for name in _SEQUENCES + ("subgroup_columns",):
            v = getattr(self, name)
            if name == "subgroup_columns" and v is None:
                v = self.strata_columns
            if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
                raise _bad(name, f"must be a list, got {type(v).__name__}")
            if name in ("strata_columns", "subgroup_columns") and not all(isinstance(c, str) for c in v):
                raise _bad(name, f"must be a list of column names, got {list(v)!r}"[:300])
            object.__setattr__(self, name, tuple(v))
        Limits.from_env().check_fields("TransportConfig", self, where="TransportConfig")
        if not isinstance(self.tolerances, Mapping):
            raise _bad("tolerances", f"must be a mapping of metric to tolerance, got {type(self.tolerances).__name__}")
        object.__setattr__(self, "tolerances", check_tolerances(self.tolerances))
        if not self.targets:
            raise _bad("targets", "declare at least one target definition")
        for t in self.targets:
            if not isinstance(t, Mapping):
                raise _bad("targets", f"each target definition must be a mapping, got {type(t).__name__}")
            target_from_dict(dict(t))
        if self.score_columns:
            label = scores_label(self.score_columns)
            if self.fixed_model not in (None, label):
                raise _bad("fixed_model", f"a run on scores audits {label}, not the model {self.fixed_model!r}")
            object.__setattr__(self, "fixed_model", label)
        elif not (self.numeric or self.categorical):
            raise _bad("features", "declare at least one numeric or categorical feature")
        for name, (low, high) in _COUNT_RANGES.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not low <= v <= high:
                raise _bad(name, f"must be a whole number from {low:,} to {high:,}, got {v!r}")
        if self.fixed_model is not None:
            if not isinstance(self.fixed_model, str) or not self.fixed_model.strip():
                raise _bad("fixed_model", f"must be the label of the given model, got {self.fixed_model!r}")
            if self.models not in ((self.fixed_model,), ("logistic_regression",)):
                raise _bad("models", f"a run that audits the fixed model {self.fixed_model!r} as it is holds "
                                     f"that model only, got {list(self.models)!r}")
            object.__setattr__(self, "models", (self.fixed_model,))
        for k in self.models:
            if k != self.fixed_model and (not isinstance(k, str) or k not in ZOO):
                raise _bad("models", f"{k!r} is not in the zoo ({', '.join(ZOO)})")
        if not self.models:
            raise _bad("models", "choose at least one model")
        if len(set(self.models)) != len(self.models):
            raise _bad("models", f"each model once, got {list(self.models)!r}")
        if not isinstance(self.model_params, Mapping) or not all(
                k in ZOO and isinstance(v, Mapping) for k, v in self.model_params.items()):
            raise _bad("model_params", "must map zoo kinds to parameter mappings")
        object.__setattr__(self, "model_params", {str(k): dict(v) for k, v in self.model_params.items()})
        for kind, params in self.model_params.items():  # refused before any refit, naming the parameter
            Limits.from_env().check_fields("model_params", params, where=f"model_params.{kind}")
        for m in self.mappings:
            if not isinstance(m, str) or m not in MAPPINGS:
                raise _bad("mappings", f"{m!r} is not one of {', '.join(MAPPINGS)}")
        if not self.mappings:
            raise _bad("mappings", "choose at least one probability mapping")
        for name in ("alphas", "selection_rates", "hcep_thresholds"):
            vals = getattr(self, name)
            xs = [_real(v) for v in vals]
            if not vals or any(x is None or not (0 < x < 1 or (name == "selection_rates" and x == 1)) for x in xs):
                raise _bad(name, f"values must be numbers in (0, 1), got {vals!r}")
            object.__setattr__(self, name, tuple(xs))
        problem = check_headline(self.headline, models=self.models, mappings=self.mappings,
                                 weight_column=self.weight_column)
        if problem:
            raise _bad("headline", problem)
        if self.headline is not None:
            object.__setattr__(self, "headline", {str(k): str(v) for k, v in self.headline.items() if v is not None})
        if not isinstance(self.exact_bootstrap, (bool, np.bool_)):
            raise _bad("exact_bootstrap", f"must be true or false, got {self.exact_bootstrap!r}")
        if not isinstance(self.target_labels, str) or self.target_labels not in TARGET_LABELS:
            raise _bad("target_labels", f"must be one of {', '.join(TARGET_LABELS)}, got {self.target_labels!r}"[:300])
        if self.label_free and self.single_domain:
            raise _bad("target_labels", f"{self.target_labels!r} forecasts a target domain; a single-domain run has none")
        for s in self.stresses:
            if s not in ("target_definition", "degradation"):
                raise _bad("stresses", f"unknown stress {s!r}")
        for name in ("corruption_rate", "oracle_rate", "corruption_sd", "level"):
            x = _real(getattr(self, name))
            if x is None or not (0 <= x <= 1 if name != "corruption_sd" else x >= 0):
                raise _bad(name, "must be a number in [0, 1]" if name != "corruption_sd" else "must be a number >= 0")

    @property
    def primary_target(self) -> str:
        return str(self.targets[0]["name"])

    @property
    def refits_model(self) -> bool:
        """False when the run audits a given model as it is (``fixed_model``)."""
        return self.fixed_model is None

    @property
    def on_scores(self) -> bool:
        """True when the run audits a table of predictions (``score_columns``), not a model."""
        return bool(self.score_columns)

    @property
    def features(self) -> tuple:
        return self.numeric + self.categorical

    @property
    def label_free(self) -> bool:
        """True when the target's labels are ``absent`` or ``hidden`` (the forecast run)."""
        return self.target_labels != "available"

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain values; ``target_labels`` only when it is not ``"available"`` (a labelled run's
        dict is the one it has always been)."""
        out = {}
        for f in fields(self):
            if f.name == "target_labels" and not self.label_free:
                continue
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = [dict(x) if isinstance(x, Mapping) else _plain(x) for x in v]
            elif isinstance(v, Mapping):
                v = {k: dict(x) if isinstance(x, Mapping) else x for k, x in v.items()}
            out[f.name] = _plain(v)
        return out

    @classmethod
    def from_dataset(cls, dataset: AuditDataset, **options) -> "TransportConfig":
        """Declaration from a checked :class:`~audit_core.data.dataset.AuditDataset`.

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


def model_options(workspace: Workspace, *, as_is: bool | None = None) -> tuple[dict[str, Any], FittedModel | None]:
    """How to audit the model of a Data & groups workspace: ``(config options, fixed model or None)``.

    A zoo model trained on Data & groups is refitted with its kind and
    settings (``models``, ``model_params``) on each refit's train partition.
    An imported model is audited *as it is* (``fixed_model``; returned as the
    fixed model). ``as_is`` overrides the choice; an imported model cannot be
    refitted (its kind is not in the zoo), so ``as_is=False`` falls back to
    logistic regression with default settings.
    """
    spec = dict(workspace.model.spec)
    kind = spec.get("kind")
    trained = kind in ZOO
    if as_is if as_is is not None else not trained:
        label = f"imported:{spec['source']}" if spec.get("source") else f"{kind} (as trained)"
        return {"fixed_model": label}, workspace.model
    if not trained:
        return {"models": ("logistic_regression",), "model_params": {}}, None
    params = dict(spec.get("params") or {})
    return {"models": (kind,), "model_params": {kind: params} if params else {}}, None


def declaration_key(config: Mapping[str, Any]) -> str:
    """SHA-256 of a transport config dict (:meth:`TransportConfig.to_dict`) without ``target_labels``.

    The same for a label-free run and the labelled run of the same
    declaration, so a forecast can be checked against what was realised.

    >>> a = {"targets": [{"name": "y"}], "seed": 0}
    >>> declaration_key(a) == declaration_key({**a, "target_labels": "hidden"})
    True
    """
    import json

    plain = {k: v for k, v in dict(config).items() if k != "target_labels"}
    return hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()


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
