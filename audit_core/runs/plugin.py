"""Audit plug-ins: one :class:`AuditRunner` per audit kind, and running a config.

Each audit kind (``model`` here; ``fragility``, ``transport`` and
``receipts`` when they land) registers one runner with :func:`register_audit`.
The CLI, and anything else that executes configs, only talks to
:data:`AUDITS` through :func:`run_config`, so an audit becomes available to
``reliability-audit run`` the moment its module registers itself.

How an audit plugs in (see ``docs/cli.md``)::

    from audit_core.runs.plugin import AuditResult, AuditRunner, register_audit
    from audit_core.runs.config import check_keys, expect_type

    def _validate(options: dict, *, where: str) -> dict:
        options = check_keys(options, where=where, allowed=("n_cases", "seed"))
        return {"n_cases": expect_type(options.get("n_cases", 500), int, where=f"{where}.n_cases"),
                "seed": expect_type(options.get("seed", 0), int, where=f"{where}.seed")}

    def _run(options: dict, *, context: AuditContext, progress: Progress) -> AuditResult:
        ws = context.workspace()                        # trained once per config, shared
        chunks = [...]                                  # items that carry their own seeds
        parts = context.execution.map(job, chunks, progress=lambda d, t: progress(d, t, "certificates"))
        return AuditResult(tables={"certificates": ...}, summary={...}, manifest={"seeds": {...}})

    register_audit(AuditRunner(kind="fragility", title="Fragility", validate_config=_validate, run=_run))

and the lead adds one import line to :func:`load_builtin_audits`.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from audit_core.errors import AuditInputError, fail
from audit_core.models.manifest import library_versions
from .parallel import Backend, map_batches

__all__ = [
    "AUDITS",
    "AuditContext",
    "AuditResult",
    "AuditRunner",
    "ExecutionOptions",
    "Progress",
    "RunOutcome",
    "get_runner",
    "load_builtin_audits",
    "register_audit",
    "run_config",
]


class Progress(Protocol):
    """``progress(done, total, step)``: ``step`` names the long step (e.g. ``"bootstrap"``)."""

    def __call__(self, done: int, total: int, step: str) -> None: ...


def _no_progress(done: int, total: int, step: str) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class ExecutionOptions:
    """Where batch work runs; passed to every audit through its context.

    Parameters
    ----------
    backend : {"serial", "processes", "dask"}
    n_jobs : int, optional
        Worker processes for ``"processes"``.
    scheduler_address : str, optional
        Dask scheduler for ``"dask"`` (else the current client).
    """

    backend: Backend = "serial"
    n_jobs: int | None = None
    scheduler_address: str | None = None

    def map(self, func: Callable[[Any], Any], items: Sequence[Any], *, progress: Callable[[int, int], None] | None = None) -> list:
        """:func:`audit_core.runs.parallel.map_batches` with these options."""
        return map_batches(
            func,
            items,
            backend=self.backend,
            n_jobs=self.n_jobs,
            scheduler_address=self.scheduler_address,
            progress=progress,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "n_jobs": self.n_jobs, "scheduler_address": self.scheduler_address}


@dataclass(frozen=True, kw_only=True, eq=False)
class AuditResult:
    """What an audit run returns; the registry stores exactly this.

    Attributes
    ----------
    tables : dict of str to pandas.DataFrame
        Result tables (string column names). A table named ``verdicts`` with a
        ``verdict`` column is compared across runs by the Runs page.
    summary : dict
        JSON-compatible headline numbers / verdicts, shown as the report's
        summary table (stored in the run manifest under ``"summary"``).
    manifest : dict
        JSON-compatible provenance of this audit (its seeds under ``"seeds"``),
        merged into the run manifest.
    """

    tables: Mapping[str, pd.DataFrame]
    summary: Mapping[str, Any] = field(default_factory=dict)
    manifest: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, eq=False)
class AuditContext:
    """What a runner may use besides its own options.

    Attributes
    ----------
    config : AuditConfig
        The whole validated config.
    data : LoadedData or None
        The checked dataset and input provenance.
    workspace : callable() -> Workspace
        The trained model workspace of the config (trained once, shared by
        every audit of the config).
    execution : ExecutionOptions
        Backend for batch work (use ``execution.map``).
    registry : RunRegistry or None
        The registry being written (e.g. Receipts reads earlier runs).
    base_dir : pathlib.Path
        Folder that relative paths in audit options are resolved against
        (the CLI's working directory).
    """

    config: Any
    data: Any
    workspace: Callable[[], Any]
    execution: ExecutionOptions = field(default_factory=ExecutionOptions)
    registry: Any = None
    base_dir: Path = field(default_factory=Path.cwd)


@dataclass(frozen=True, kw_only=True)
class AuditRunner:
    """One audit kind.

    Attributes
    ----------
    kind : str
        Registry ``audit_kind`` and the config's ``audits[i].kind``.
    title : str
        Display name.
    validate_config : callable(options, *, where) -> dict
        Checks the audit's options (the config entry without ``kind``) and
        returns them with defaults filled in; raises declared errors naming
        ``where`` (e.g. ``"audits[1]"``). Use
        :func:`audit_core.runs.config.check_keys` / :func:`~audit_core.runs.config.expect_type`.
    run : callable(options, *, context, progress) -> AuditResult
        Runs the audit. Stochastic steps take their seeds from ``options``.
    needs_workspace : bool
        Whether ``context.workspace()`` is used (a model is trained first).
    """

    kind: str
    title: str
    validate_config: Callable[..., dict]
    run: Callable[..., AuditResult]
    needs_workspace: bool = True


#: kind -> runner. Populated by :func:`register_audit`.
AUDITS: dict[str, AuditRunner] = {}

# Modules that register the shipped audits. The lead adds one line per audit
# when it lands, e.g. "audit_core.runs.plugins.fragility".
_BUILTIN_MODULES: tuple[str, ...] = (
    "audit_core.runs.plugins.model",
    "audit_core.runs.plugins.fragility",
    "audit_core.runs.plugins.receipts",
    "audit_core.runs.plugins.transport",
)


def register_audit(runner: AuditRunner) -> AuditRunner:
    """Add ``runner`` to :data:`AUDITS` (re-registering the same kind replaces it).

    Returns
    -------
    AuditRunner
        The runner, so the call can be used at module level.
    """
    AUDITS[runner.kind] = runner
    return runner


def load_builtin_audits() -> dict[str, AuditRunner]:
    """Import the modules that register the shipped audits; return :data:`AUDITS`."""
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)
    return AUDITS


def get_runner(kind: str, *, where: str = "audit kind") -> AuditRunner:
    """The runner for ``kind``.

    Raises
    ------
    AuditInputError
        ``CONFIG_UNKNOWN_AUDIT`` suggesting the closest installed kind.
    """
    load_builtin_audits()
    if kind not in AUDITS:
        planned = ("fragility", "transport", "receipts")
        close = difflib.get_close_matches(kind, sorted(set(AUDITS) | set(planned)), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        target = kind if kind in planned else (close[0] if close else None)
        if target in planned and target not in AUDITS:
            hint += f" The {target!r} audit is not installed in this version yet."
        raise fail("CONFIG_UNKNOWN_AUDIT", kind=kind, where=where, hint=hint, kinds=", ".join(sorted(AUDITS)))
    return AUDITS[kind]


@dataclass(frozen=True, kw_only=True, eq=False)
class RunOutcome:
    """One audit of a config after :func:`run_config`.

    Attributes
    ----------
    kind : str
    run_id : str
    status : {"done", "failed"}
    result : AuditResult or None
    error : str or None
    """

    kind: str
    run_id: str
    status: str
    result: AuditResult | None = None
    error: str | None = None


def run_config(
    config: Any,
    *,
    registry: Any,
    base_dir: str | Path,
    execution: ExecutionOptions | None = None,
    progress: Progress | None = None,
) -> list[RunOutcome]:
    """Run every audit of a validated config and save each as one registry run.

    Parameters
    ----------
    config : AuditConfig
        From :func:`audit_core.runs.config.load_config` / ``parse_config``.
    registry : RunRegistry
    base_dir : str or pathlib.Path
        Folder that relative data paths are resolved against.
    execution : ExecutionOptions, optional
    progress : callable(done, total, step), optional

    Returns
    -------
    list of RunOutcome
        In the order of ``config.audits``. A failing audit is saved as a
        ``"failed"`` run with its error and the others still run.

    Raises
    ------
    AuditInputError
        Before any run is created: the data cannot be loaded or does not
        match the declarations, or the model cannot be trained on it.
    KeyboardInterrupt, SystemExit
        Re-raised after the current run is saved as ``"failed"`` with the
        error ``"interrupted (...)"``, so no run is left ``"running"``.
    """
    from .config import load_data
    from .save import workspace_manifest
    from audit_core.models.training import train_workspace
    from audit_core.models.zoo import ModelSpec

    execution = execution or ExecutionOptions()
    report = progress or _no_progress
    runners = [(get_runner(a["kind"]), a) for a in config.audits]
    report(0, 1, "loading data")
    data = load_data(config, base_dir=base_dir)
    report(1, 1, "loading data")
    ws = None
    if any(r.needs_workspace for r, _ in runners):
        m = config.model
        ws = train_workspace(
            data.dataset,
            spec=ModelSpec(kind=m["kind"], seed=m["seed"], params=m["params"]),
            raw_groups=data.raw_groups,
            baseline_kind=m["baseline"],
            test_size=m["test_size"],
            progress=lambda f, msg: report(int(round(100 * min(max(f, 0.0), 1.0))), 100, "training"),
        )
    context = AuditContext(config=config, data=data, workspace=lambda: ws, execution=execution, registry=registry,
                           base_dir=Path(base_dir))
    base_manifest = {
        "config_source": config.source,
        "config_sha256": config.sha256,
        "inputs": data.inputs,
        "dataset_fingerprint": data.dataset.fingerprint,
        "execution": execution.to_dict(),
        "versions": library_versions(),
    }
    if ws is not None:
        base_manifest.update({k: v for k, v in workspace_manifest(ws).items() if k != "dataset_fingerprint"})
    outcomes = []
    for runner, entry in runners:
        options = {k: v for k, v in entry.items() if k != "kind"}
        run_id = registry.create_run(
            audit_kind=runner.kind,
            dataset_name=data.dataset.config.name,
            dataset_fingerprint=data.dataset.fingerprint,
            grouping_hash=ws.grouping.hash if ws is not None else None,
            model_spec=dict(ws.model.spec) if ws is not None else {},
            config={**config.to_dict(), "audit": dict(entry)},
            manifest=base_manifest,
        )
        try:
            result = runner.run(options, context=context, progress=report)
            seeds = {"model": int(config.model["seed"]), **dict(result.manifest.get("seeds", {}))}
            manifest = {**base_manifest, **dict(result.manifest), "seeds": seeds, "summary": dict(result.summary)}
            registry.finish_run(run_id, tables=dict(result.tables), manifest=manifest)
        except Exception as exc:  # noqa: BLE001 - recorded on the run, reported by the caller
            text = exc.message if isinstance(exc, AuditInputError) else f"{type(exc).__name__}: {exc}"
            registry.fail_run(run_id, error=text)
            outcomes.append(RunOutcome(kind=runner.kind, run_id=run_id, status="failed", error=text))
            continue
        except BaseException as exc:  # Ctrl-C, SIGTERM (raised as KeyboardInterrupt by the CLI), SystemExit
            registry.fail_run(run_id, error=f"interrupted ({type(exc).__name__}{': ' + str(exc) if str(exc) else ''})")
            raise
        outcomes.append(RunOutcome(kind=runner.kind, run_id=run_id, status="done", result=result))
    return outcomes
