"""Audit plug-ins: one :class:`AuditRunner` per audit kind, registered by kind.

Each audit kind (``model``, ``fragility``, ``transport``, ``receipts``)
registers one runner with :func:`register_audit`; the built-in ones live in
:mod:`audit_core.runs.plugins`. The CLI, and anything else that executes
configs, only talks to :data:`AUDITS` through
:func:`audit_core.runs.execute.run_config`, so an audit becomes available to
``reliability-audit run`` the moment its module registers itself.

How an audit plugs in (see ``docs/cli.md``)::

    from audit_core.runs.config import check_keys, expect_type
    from audit_core.runs.context import AuditContext
    from audit_core.runs.plugin import AuditResult, AuditRunner, Progress, register_audit

    def _validate(options: dict, *, where: str) -> dict:
        options = check_keys(options, where=where, allowed=("n_cases", "seed"))
        return {"n_cases": expect_type(options.get("n_cases", 500), int, where=f"{where}.n_cases"),
                "seed": expect_type(options.get("seed", 0), int, where=f"{where}.seed")}

    def _run(options: dict, *, context: AuditContext, progress: Progress) -> AuditResult:
        ws = context.workspace()                        # trained once per config, shared
        chunks = [...]                                  # items that carry their own seeds
        parts = context.execution.map(job, chunks, progress=lambda d, t: progress(d, t, "certificates"))
        return AuditResult(tables={"certificates": ...}, key_numbers={...}, manifest={"seeds": {...}})

    register_audit(AuditRunner(kind="fragility", title="Fragility", validate_config=_validate, run=_run))

and the lead adds its module name to the built-in list of :func:`load_builtin_audits`.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from audit_core.errors import fail, register_messages

from .parallel import Backend, map_batches

__all__ = [
    "AUDITS",
    "AuditResult",
    "AuditRunner",
    "ExecutionOptions",
    "Progress",
    "get_runner",
    "load_builtin_audits",
    "register_audit",
]

register_messages(  # here, where it is raised: ``audit_core.runs`` loads its modules on first use
    {"CONFIG_UNKNOWN_AUDIT": "Unknown audit kind {kind!r} in {where}.{hint} Installed audit kinds: {kinds}."}
)


class Progress(Protocol):
    """``progress(done, total, step)``: ``step`` names the long step (e.g. ``"bootstrap"``)."""

    def __call__(self, done: int, total: int, step: str) -> None: ...


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
    key_numbers : dict
        JSON-compatible key numbers / verdicts of the run, shown as the report's
        key-numbers table (stored in the run manifest under ``"key_numbers"``).
    manifest : dict
        JSON-compatible provenance of this audit (its seeds under ``"seeds"``),
        merged into the run manifest.
    """

    tables: Mapping[str, pd.DataFrame]
    key_numbers: Mapping[str, Any] = field(default_factory=dict)
    manifest: Mapping[str, Any] = field(default_factory=dict)


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
    check_data : callable(options, data, *, where) -> None, optional
        Checks the options against the loaded data (e.g. that a named column
        exists) before any model is trained or run is created, so a mismatch
        is a config error (exit 2) and saves nothing. ``data`` is the
        config's :class:`~audit_core.runs.config.LoadedData`.
    tables : mapping of str to tuple of str
        The columns each stored table must have when present (those the Runs
        page, the report and the release gate read). An imported bundle of
        this kind is checked against it (:func:`audit_core.runs.bundle.check_run_tables`).
    numbers : mapping of str to tuple of str
        Of those columns, the ones that must hold numbers (or booleans): an
        imported bundle with text there is refused
        (:func:`audit_core.runs.bundle.check_run_tables`) instead of failing
        later in a figure or the report.
    model_spec : callable(options, config) -> dict, optional
        The run's model description for the registry, for an audit that fits
        models of its own (e.g. Transport, which may hold several); by
        default the workspace model's spec.
    """

    kind: str
    title: str
    validate_config: Callable[..., dict]
    run: Callable[..., AuditResult]
    needs_workspace: bool = True
    check_data: Callable[..., None] | None = None
    tables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    model_spec: Callable[..., dict] | None = None
    numbers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


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
