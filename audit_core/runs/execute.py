"""Running a config: load its data, train its model once, run each audit plug-in, save each run.

:func:`run_config` is what ``reliability-audit run`` calls; the audits it
runs are the plug-ins registered in :mod:`audit_core.runs.plugin`.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from audit_core.errors import AuditInputError
from audit_core.models.manifest import library_versions, workspace_manifest
from audit_core.models.training import Workspace, train_workspace
from audit_core.models.zoo import ModelSpec

from .config import AuditConfig, load_data
from .context import AuditContext
from .plugin import AuditResult, ExecutionOptions, Progress, get_runner
from .registry import RunRecord, RunRegistry

__all__ = ["RunOutcome", "run_config"]


def _no_progress(done: int, total: int, step: str) -> None:
    return None


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
    config: AuditConfig,
    *,
    registry: RunRegistry,
    base_dir: str | Path,
    execution: ExecutionOptions | None = None,
    progress: Progress | None = None,
    before_done: Callable[[RunRecord], None] | None = None,
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
    before_done : callable(RunRecord), optional
        Called with each finished run after its results are stored and
        before it is marked ``"done"``
        (:meth:`~audit_core.runs.registry.RunRegistry.finish_run`): the CLI
        writes the run's output folder there. If it raises, the run is saved
        as ``"failed"`` with the error, like a failing audit.

    Returns
    -------
    list of RunOutcome
        In the order of ``config.audits``. A failing audit is saved as a
        ``"failed"`` run with its error and the others still run.

    Raises
    ------
    AuditInputError
        Before any run is created: the data cannot be loaded or does not
        match the declarations or an audit's options (``check_data``), or
        the model cannot be trained on it.
    KeyboardInterrupt, SystemExit
        Re-raised after the current run is saved as ``"failed"`` with the
        error ``"interrupted (...)"``, so no run is left ``"running"``.
    """
    execution = execution or ExecutionOptions()
    report = progress or _no_progress
    runners = [(get_runner(a["kind"]), a) for a in config.audits]
    report(0, 1, "loading data")
    data = load_data(config, base_dir=base_dir)
    for i, (runner, entry) in enumerate(runners):
        if runner.check_data is not None:
            runner.check_data({k: v for k, v in entry.items() if k != "kind"}, data, where=f"audits[{i}]")
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

    def workspace() -> Workspace:
        assert ws is not None, "called only when a runner has needs_workspace"
        return ws

    context = AuditContext(config=config, data=data, workspace=workspace, execution=execution, registry=registry,
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
            model_spec=(runner.model_spec(options, config) if runner.model_spec is not None
                        else dict(ws.model.spec) if ws is not None else {}),
            config={**config.to_dict(), "audit": dict(entry)},
            manifest=base_manifest,
        )
        try:
            result = runner.run(options, context=context, progress=report)
            seeds = {"model": int(config.model["seed"]), **dict(result.manifest.get("seeds", {}))}
            manifest = {**base_manifest, **dict(result.manifest), "seeds": seeds, "key_numbers": dict(result.key_numbers)}
            # the model's held-out warnings and the audit's own, each once
            both = [*(base_manifest.get("warnings") or ()), *(result.manifest.get("warnings") or ())]
            manifest["warnings"] = [w for i, w in enumerate(both) if w not in both[:i]]
            registry.finish_run(run_id, tables=dict(result.tables), manifest=manifest, before_done=before_done)
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
