"""The guided demo: one call runs a declared table through every audit, saves the runs and tells a 4-step story.

:func:`run_demo` trains the model of the declaration (Data & groups), runs
the Fragility audit and the model comparison, the Transport audit (source →
target domain) and the release gate, saving a registry run for each audit.
Its :class:`DemoResult` keeps every result object (so the app can open the
full pages on them) and the four :class:`DemoStep` of the story, whose
sentences are :class:`~audit_core.findings.Finding` generated from those
results (never hand-written numbers):

1. a confident case that collapses (:func:`~audit_core.findings.cases.striking_case`);
2. which model ranks best, against the stability measures ("most stable"
   only when they all agree);
3. whether the operating rule holds on the new domain (the selection
   threshold, conformal class coverage), on the headline slice;
4. the release decision told as what blocks, what passed and what is
   unknown, and what changed it from the model-only run (the state before
   the audits) to the full set of runs.

Every sentence is in plain words first (symbols in its ``detail``) and keyed
into the saved runs, so :func:`~audit_core.findings.check.check_findings`
checks it against them.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.errors import fail, register_messages
from audit_core.fragility.audit import AuditOptions, FragilityAudit, compare_models, run_fragility_audit
from audit_core.fragility.engine import FragilityConfig
from audit_core.models.training import Workspace, train_workspace
from audit_core.models.zoo import ModelSpec
from audit_core.runs.gate import GateResult, compare_runs
from audit_core.runs.registry import RunRegistry
from audit_core.runs.save import save_fragility_run, save_workspace
from audit_core.transport import TransportConfig, run_transport
from audit_core.transport.config import model_options
from audit_core.transport.results import TransportResult

from .cases import StrikingCase, case_finding, class_words, striking_case
from .finding import Finding
from .fragility import fragility_findings
from .gate import gate_findings
from .transport import transport_findings

__all__ = ["DemoOptions", "DemoStep", "DemoResult", "run_demo", "demo_steps", "STEP_TITLES"]

register_messages({
    "DEMO_STOPPED": "The demo was stopped while {stage}; the runs saved so far are kept ({runs}).",
})

Progress = Callable[[float, str], None]


@dataclass(frozen=True, kw_only=True)
class DemoOptions:
    """Sizes of the demo's audits (defaults: a run of about a minute on two cores).

    Attributes
    ----------
    model, compare_with : str, tuple of str
        The audited zoo model and the models it is compared with.
    seed : int
        Seed of the model, the case sample, the stressors and the transport refits.
    max_cases, k, n_boot, shap_max_cases, search_max_cases, temperature
        Fragility audit options (see :class:`~audit_core.fragility.audit.AuditOptions`).
    n_refits, n_bootstrap, stresses
        Transport options (see :class:`~audit_core.transport.TransportConfig`).
    selection_rate, alpha : float
        The operating rule of step 3: the selection rate whose threshold is fitted
        on the source, and the conformal miscoverage level.
    scope : str
        Deployment scope of the release gate.
    """

    model: str = "logistic_regression"
    compare_with: tuple[str, ...] = ("lightgbm",)
    seed: int = 0
    max_cases: int = 150
    k: int = 5
    n_boot: int = 100
    shap_max_cases: int = 100
    search_max_cases: int = 50
    temperature: bool = True
    n_refits: int = 2
    n_bootstrap: int = 200
    stresses: tuple[str, ...] = ()
    selection_rate: float = 0.8
    alpha: float = 0.1
    scope: str = "production"

    @classmethod
    def quick(cls) -> "DemoOptions":
        """Sizes for tests and a first look (a few seconds): 40 cases, one transport refit, 40 bootstrap draws."""
        return cls(max_cases=40, n_boot=20, shap_max_cases=20, search_max_cases=20, temperature=False, n_refits=1,
                   n_bootstrap=40)


@dataclass(frozen=True, kw_only=True)
class DemoStep:
    """One step of the story.

    Attributes
    ----------
    number : int
        1 to 4.
    title : str
    findings : tuple of Finding
        The step's sentences (the first is its headline).
    page : str
        Where the full result is: ``"fragility"``, ``"transport"`` or ``"receipts"``.
    """

    number: int
    title: str
    findings: tuple[Finding, ...]
    page: str


@dataclass(frozen=True, kw_only=True, eq=False)
class DemoResult:
    """Everything the demo computed.

    Attributes
    ----------
    workspace : Workspace
    audit : FragilityAudit
    models : DataFrame
        :func:`~audit_core.fragility.audit.compare_models` table (``model, heldout_auroc, mean_rcma, ...``).
    batches : dict
        Model kind -> (fitted model, certificate batch) of the comparison.
    transport : TransportResult
    gate : GateResult
        Baseline A: the model run alone; candidate B: the model, fragility and transport runs.
    case : StrikingCase or None
    run_ids : dict of str to str
        ``model, fragility, transport`` -> saved run id.
    steps : tuple of DemoStep
    options : DemoOptions
    """

    workspace: Workspace
    audit: FragilityAudit
    models: pd.DataFrame
    batches: Mapping[str, Any] = field(repr=False)
    transport: TransportResult
    gate: GateResult
    case: StrikingCase | None
    run_ids: Mapping[str, str]
    steps: tuple[DemoStep, ...]
    options: DemoOptions


def _case_step(ws: Workspace, audit: FragilityAudit, case: StrikingCase | None, frag: list[Finding],
               run_id: str = "") -> list[Finding]:
    out: list[Finding] = []
    if case is not None:
        cert = audit.batch.certificate(case.index)
        k = int(audit.batch.protocol.k)
        n = min(case.k_star, k)
        classes = class_words({"targets": list(ws.dataset.config.targets)}, ws.dataset.primary.name)
        out.append(case_finding(case, k=k, y_hat=cert.y_hat, flipped_to=int(cert.path_labels[n]),
                                groups=cert.removal_order_names()[:n], classes=classes, run_id=run_id))
    out += [f for f in frag if f.kind in ("confident_flips", "certificate_vs_confidence")]
    return out


#: The steps' titles: questions, so a title never claims what its sentences may not find.
STEP_TITLES = ("A confident prediction that collapses",
               "Which model ranks best, and which holds up when evidence goes missing?",
               "Does the operating rule still hold on the new domain?",
               "The release decision: what blocks, what passed, what is unknown")


def demo_steps(result_parts: Mapping[str, Any], options: DemoOptions) -> tuple[DemoStep, ...]:
    """The four steps from the demo's results (``workspace, audit, models, transport, gate, case`` and, when
    saved, ``run_ids``: the case sentence then keys its facts to the fragility run)."""
    ws, audit, tr = result_parts["workspace"], result_parts["audit"], result_parts["transport"]
    frag = fragility_findings(audit, models=result_parts["models"])
    trans = transport_findings(tr, selection_rate=options.selection_rate, alpha=options.alpha)
    fragility_run = dict(result_parts.get("run_ids") or {}).get("fragility", "")
    return (
        DemoStep(number=1, title=STEP_TITLES[0], page="fragility",
                 findings=tuple(_case_step(ws, audit, result_parts["case"], frag, fragility_run))),
        DemoStep(number=2, title=STEP_TITLES[1], page="fragility",
                 findings=tuple(f for f in frag if f.kind == "winner_vs_stable")),
        DemoStep(number=3, title=STEP_TITLES[2], page="transport",
                 findings=tuple(f for f in trans if f.kind in ("selective_threshold", "conformal_class_coverage"))),
        DemoStep(number=4, title=STEP_TITLES[3], page="receipts",
                 findings=tuple(gate_findings(result_parts["gate"]))),
    )


def _scaled(progress: Progress, lo: float, hi: float, stage: str) -> Progress:
    return lambda f, msg: progress(lo + (hi - lo) * min(max(float(f), 0.0), 1.0), f"{stage}: {msg}")


def run_demo(frame: pd.DataFrame, config: DatasetConfig, *, raw_groups: Mapping[str, str], registry: RunRegistry,
             missing_codes: Mapping[str, Sequence[Any]] | None = None, options: DemoOptions = DemoOptions(),
             progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> DemoResult:
    """Run the demo on a declared table and save its runs.

    Parameters
    ----------
    frame : DataFrame
        The table (its declaration must have a source and a target domain).
    config : DatasetConfig
        The declaration, as Data & groups makes it.
    raw_groups : mapping of str to str
        Raw column -> evidence group.
    registry : RunRegistry
        Where the model, fragility and transport runs are saved.
    missing_codes : mapping, optional
        Column -> special codes treated as unavailable by the Fragility stressors.
    options : DemoOptions
    progress : callable(fraction, message), optional
    should_stop : callable() -> bool, optional
        Polled between and inside the stages.

    Returns
    -------
    DemoResult

    Raises
    ------
    AuditInputError
        ``DEMO_STOPPED`` when stopped (the runs saved so far are kept), or the
        declared refusal of the stage that cannot run.
    """
    report = progress or (lambda f, m: None)
    stop = should_stop or (lambda: False)
    run_ids: dict[str, str] = {}

    def check(stage: str) -> None:
        if stop():
            raise fail("DEMO_STOPPED", stage=stage, runs=", ".join(f"{k} {v}" for k, v in run_ids.items()) or "none")

    report(0.0, "Declaring the data and training the model…")
    ds = build_dataset(frame, config)
    ws = train_workspace(ds, spec=ModelSpec(kind=options.model, seed=options.seed), raw_groups=raw_groups,
                         progress=_scaled(report, 0.0, 0.05, "Training"))
    run_ids["model"] = save_workspace(registry, ws)
    check("training the model")
    k = min(options.k, ws.grouping.n_groups)
    fr_opts = AuditOptions(config=FragilityConfig(k=k, seed=options.seed), max_cases=options.max_cases,
                           case_seed=options.seed, stress_seed=options.seed, missing_codes=dict(missing_codes or {}),
                           n_boot=options.n_boot, shap_max_cases=options.shap_max_cases,
                           search_max_cases=options.search_max_cases, temperature=options.temperature)
    audit = run_fragility_audit(ws, options=fr_opts, progress=_scaled(report, 0.05, 0.5, "Fragility"),
                                should_stop=stop)
    check("running the fragility audit")
    report(0.5, "Fragility: training the comparison models…")
    models, batches = compare_models(ws, [m for m in options.compare_with if m != options.model], audit=audit,
                                     seed=options.seed)
    check("comparing models")
    run_ids["fragility"] = save_fragility_run(registry, ws, audit, models=models)  # with the comparison table
    opts, fixed = model_options(ws)
    tc = TransportConfig.from_dataset(ds, n_refits=options.n_refits, n_bootstrap=options.n_bootstrap,
                                      seed=options.seed, stresses=tuple(options.stresses), **opts)
    tr = run_transport(ds.frame, config=tc, model=fixed, progress=_scaled(report, 0.6, 0.95, "Transport"),
                       should_stop=stop)
    check("running the transport audit")
    run_ids["transport"] = tr.save_to_registry(registry, dataset_name=config.name, dataset_fingerprint=ds.fingerprint)
    report(0.97, "Release gate…")
    records = {name: registry.load(rid) for name, rid in run_ids.items()}
    gate = compare_runs(records["model"], list(records.values()), scope=options.scope)
    case = striking_case(audit.certificates, k=int(audit.batch.protocol.k))
    parts: dict[str, Any] = dict(workspace=ws, audit=audit, models=models, transport=tr, gate=gate, case=case)
    steps = demo_steps({**parts, "run_ids": run_ids}, options)
    report(1.0, "Done")
    return DemoResult(**parts, batches=batches, run_ids=dict(run_ids), steps=steps, options=options)
