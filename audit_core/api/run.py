"""The two audits from one :class:`~audit_core.api.spec.TableSpec`: :func:`fragility_audit` and :func:`transport_audit`.

Both take a pandas or polars table (converted once, :func:`audit_core.data.frames.as_pandas`),
build the dataset the spec declares and run the same library code as the app
and the CLI: :func:`~audit_core.models.training.train_workspace` then
:func:`~audit_core.fragility.audit.run_fragility_audit`;
:meth:`~audit_core.transport.config.TransportConfig.from_dataset` then
:func:`~audit_core.transport.runner.run_transport` (binary target) or
:func:`~audit_core.transport.multiclass.run.run_multiclass_transport`
(every value a class, three or more classes).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from audit_core.data.baseline import BASELINE_KINDS
from audit_core.data.dataset import AuditDataset, build_source_dataset
from audit_core.data.frames import as_pandas
from audit_core.errors import excerpt, excerpts, fail, register_messages
from audit_core.findings import forecast_findings, fragility_findings, transport_findings
from audit_core.forecast.transport_stage import run_transport_with_forecast
from audit_core.fragility.audit import AuditOptions, run_fragility_audit
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ZOO, ModelSpec
from audit_core.transport.config import TransportConfig
from audit_core.transport.headline import (
    HeadlineSlice,
    headline_slice,
    recorded_headline,
)
from audit_core.transport.results import TransportResult

from .display import FragilityReport, TransportReport
from .spec import TableSpec

__all__ = ["fragility_audit", "transport_audit", "transport_kind", "SPEC_FIELDS"]

register_messages(
    {
        "API_BAD_ARGUMENT": "{where}: {name} {problem}.",
        "API_NO_DOMAIN": (
            "transport_audit compares a source and a target domain: declare domain, source_domain and "
            "target_domain in the TableSpec (for the target column {column})."
        ),
        "API_TRANSPORT_TARGET": "transport_audit cannot audit the target column {column}: {problem}.",
    }
)

#: TransportConfig fields derived from the TableSpec; ``options`` may not set them.
SPEC_FIELDS = ("targets", "numeric", "categorical", "eligibility", "domain_column", "source_value", "target_value",
               "weight_column", "key_column", "subgroup_columns")
_EXPLICIT = ("models", "n_refits", "n_bootstrap", "seed")


def _check_spec(spec: Any, where: str) -> TableSpec:
    if not isinstance(spec, TableSpec):
        raise fail("API_BAD_ARGUMENT", where=where, name="spec", problem=f"must be a TableSpec, got {type(spec).__name__}")
    return spec


def _model_spec(model: Any, seed: int) -> ModelSpec:
    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, str) and model in ZOO:
        return ModelSpec(kind=model, seed=int(seed))
    raise fail("API_BAD_ARGUMENT", where="fragility_audit", name="model",
               problem=f"must be a zoo kind ({', '.join(ZOO)}) or a ModelSpec, got {excerpt(model)}")


def fragility_audit(
    table: Any,
    spec: TableSpec,
    *,
    model: str | ModelSpec = "logistic_regression",
    seed: int = 0,
    baseline: str = "mean",
    test_size: float = 0.25,
    options: AuditOptions | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> FragilityReport:
    """Train a model on the table's source rows and certify how fragile its held-out predictions are.

    Parameters
    ----------
    table : pandas.DataFrame or polars.DataFrame of shape (n_rows, n_columns)
    spec : TableSpec
        Its evidence ``groups`` are the certificate's groups (a feature not listed is its own group). With a
        domain declared, only source rows are used.
    model : str or ModelSpec, default "logistic_regression"
        A zoo kind (:data:`audit_core.models.zoo.ZOO`), trained with ``seed``, or a full :class:`ModelSpec`.
    seed : int, default 0
        Seeds the model and the train / held-out split.
    baseline : {"mean", "median", "mode", "zero"}, default "mean"
        The baseline that stands in for removed evidence (training rows only).
    test_size : float, default 0.25
        Held-out share; the audited cases are drawn from it.
    options : AuditOptions, optional
        The audit's options (cases, depth, operators, stressors, bootstrap, seeds); see
        :class:`~audit_core.fragility.audit.AuditOptions`. Default: ``AuditOptions()``.
    progress : callable(fraction, message), optional

    Returns
    -------
    FragilityReport
        ``report.audit`` (the :class:`~audit_core.fragility.audit.FragilityAudit`), ``report.workspace`` and
        ``report.findings``; it renders in Jupyter.

    Raises
    ------
    AuditInputError
        A column the table lacks, a target with one class, a bad option, each named.
    """
    spec = _check_spec(spec, "fragility_audit")
    if baseline not in BASELINE_KINDS:
        raise fail("API_BAD_ARGUMENT", where="fragility_audit", name="baseline",
                   problem=f"must be one of {', '.join(BASELINE_KINDS)}, got {excerpt(baseline)}")
    options = AuditOptions() if options is None else options
    if not isinstance(options, AuditOptions):
        raise fail("API_BAD_ARGUMENT", where="fragility_audit", name="options",
                   problem=f"must be an AuditOptions, got {type(options).__name__}")
    ds = spec.dataset(as_pandas(table, where="fragility_audit"))
    stray = [c for c in spec.groups if c not in ds.features]
    if stray:
        raise fail("API_BAD_ARGUMENT", where="fragility_audit", name="spec.groups", problem=(
            f"names the column {excerpt(stray[0])}, which is not a feature (features: {excerpts(ds.features)})"))
    ws = train_workspace(ds, spec=_model_spec(model, seed), raw_groups=spec.groups or None,
                         baseline_kind=baseline, test_size=test_size)
    audit = run_fragility_audit(ws, options=options, progress=progress)
    return FragilityReport(audit=audit, workspace=ws, findings=tuple(fragility_findings(audit)), spec=spec)


def transport_kind(dataset: AuditDataset, spec: TableSpec) -> str:
    """``"binary"`` or ``"multiclass"``: which Transport protocol the spec's target runs.

    A declared positive class is binary; without one, three or more classes are multi-class. Two classes
    without a positive class, and a single class, are refused (``API_TRANSPORT_TARGET``, naming the column).
    """
    if spec.positive is not None:
        return "binary"
    classes = dataset.primary.class_names
    column = excerpt(spec.target)
    if len(classes) < 2:
        raise fail("API_TRANSPORT_TARGET", column=column,
                   problem=f"it holds one class only ({excerpts(classes)}) among the eligible records")
    if len(classes) == 2:
        raise fail("API_TRANSPORT_TARGET", column=column, problem=(
            f"it has two classes ({excerpts(classes)}) and no positive class: declare positive= one of them "
            "to run the binary protocol"))
    return "multiclass"


def _transport_config(ds: AuditDataset, spec: TableSpec, explicit: dict, options: Mapping[str, Any]) -> TransportConfig:
    names = {f.name for f in fields(TransportConfig)}
    for key in options:
        if key in SPEC_FIELDS:
            raise fail("API_BAD_ARGUMENT", where="transport_audit", name=f"options[{excerpt(key)}]",
                       problem="is declared by the TableSpec; set it there")
        if key in _EXPLICIT:
            raise fail("API_BAD_ARGUMENT", where="transport_audit", name=f"options[{excerpt(key)}]",
                       problem=f"is a keyword of transport_audit; pass {key}= instead")
        if key not in names:
            allowed = sorted(names - set(SPEC_FIELDS) - set(_EXPLICIT))
            raise fail("API_BAD_ARGUMENT", where="transport_audit", name=f"options[{excerpt(key)}]",
                       problem=f"is not a Transport option; allowed: {', '.join(allowed)}")
    return TransportConfig.from_dataset(ds, subgroup_columns=spec.subgroups, **explicit, **dict(options))


def transport_audit(
    table: Any,
    spec: TableSpec,
    *,
    models: str | Sequence[str] = ("logistic_regression",),
    n_refits: int = 10,
    n_bootstrap: int = 500,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> TransportReport:
    """Fit on the source domain, evaluate on both, and classify each change against its tolerance.

    The target decides the protocol (:func:`transport_kind`): a declared positive class runs the binary
    protocol (SPEC §2: mappings, selective prediction, conformal sets, stresses, heterogeneity, feature
    shift); a target with three or more classes runs the multi-class one (its mappings, scores LAC / APS /
    RAPS, no stresses).

    Parameters
    ----------
    table : pandas.DataFrame or polars.DataFrame of shape (n_rows, n_columns)
        One table holding both domains (the spec's ``domain`` column).
    spec : TableSpec
        Must declare ``domain``, ``source_domain`` and ``target_domain``.
    models : str or sequence of str, default ("logistic_regression",)
        Zoo kinds refitted on each refit's train partition; the first is the headline model.
    n_refits : int, default 10
        Seeded repetitions of the split and fit.
    n_bootstrap : int, default 500
        Record resamples of each paired change's interval.
    seed : int, default 0
    options : mapping, optional
        Other :class:`~audit_core.transport.config.TransportConfig` fields (``mappings``, ``alphas``,
        ``selection_rates``, ``stresses``, ``tolerances``, ``headline``, ...); the fields the spec declares
        (:data:`SPEC_FIELDS`) are refused here. ``target_labels="hidden"`` (the target's labels present but never
        read) or ``"absent"`` (missing on every target row) runs the forecast before the labels arrive
        (``docs/forecast.md``): the result's extras hold the forecast tables and the findings are the forecast's.
    progress : callable(fraction, message), optional

    Returns
    -------
    TransportReport
        ``report.result`` (the :class:`~audit_core.transport.results.TransportResult`), ``report.config``,
        ``report.headline`` and ``report.findings``; it renders in Jupyter. A labelled run's extras also hold
        ``realised`` (the forecast's quantities on the labelled target, for a later check).

    Raises
    ------
    AuditInputError
        ``API_NO_DOMAIN`` without two domains; ``API_TRANSPORT_TARGET`` for a target the protocols cannot
        audit; a column the table lacks or a bad option, each named.
    """
    spec = _check_spec(spec, "transport_audit")
    if spec.domain is None:
        raise fail("API_NO_DOMAIN", column=excerpt(spec.target))
    frame = as_pandas(table, where="transport_audit")
    labels = (options or {}).get("target_labels", "available")
    # before the target's labels arrive the declaration is checked on the source rows (the target's may be empty)
    ds, target = (spec.dataset(frame), None) if labels == "available" else build_source_dataset(
        frame, spec.dataset_config(frame))
    kind = transport_kind(ds, spec)
    models = (models,) if isinstance(models, str) else tuple(models)
    explicit = {"models": models, "n_refits": n_refits, "n_bootstrap": n_bootstrap, "seed": seed}
    config = _transport_config(ds, spec, explicit, options or {})
    result: TransportResult = run_transport_with_forecast(ds.frame, target, config=config, progress=progress)
    multiclass = kind == "multiclass"
    h = recorded_headline(result.manifest)
    if isinstance(h, str):  # not recorded: the rule on the declaration
        h = headline_slice(result.manifest.get("config") or config.to_dict(), multiclass=multiclass)
    assert isinstance(h, HeadlineSlice), h
    if config.label_free:  # the forecast's sentences, on the headline slice and the page's operating rule
        rate = 0.8 if 0.8 in config.selection_rates else float(config.selection_rates[0])
        alpha = 0.1 if 0.1 in config.alphas else float(config.alphas[0])
        said = forecast_findings(result.extras, model=h.model, mapping=h.mapping, selection_rate=rate, alpha=alpha)
        return TransportReport(result=result, config=config, headline=h, findings=tuple(said),
                               multiclass=multiclass, spec=spec)
    return TransportReport(result=result, config=config, headline=h, findings=tuple(transport_findings(result, headline=h)),
                           multiclass=multiclass, spec=spec)
