"""What an audit plug-in's ``run`` receives besides its own options: the :class:`AuditContext`.

The context carries the validated config, its loaded data, the shared
workspace, the execution back-end and the registry being written; it is
built by :func:`audit_core.runs.execute.run_config`. (It is apart from
:mod:`audit_core.runs.plugin` because it names the config's types, and the
config parser itself needs the plug-in registry.)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from audit_core.models.training import Workspace

from .config import AuditConfig, LoadedData
from .plugin import ExecutionOptions
from .registry import RunRegistry

__all__ = ["AuditContext"]


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
        every audit of the config; only trained, and only to be called, when
        a runner of the config has ``needs_workspace``).
    execution : ExecutionOptions
        Backend for batch work (use ``execution.map``).
    registry : RunRegistry or None
        The registry being written (e.g. Receipts reads earlier runs).
    base_dir : pathlib.Path
        Folder that relative paths in audit options are resolved against
        (the CLI's working directory).
    """

    config: AuditConfig
    data: LoadedData | None
    workspace: Callable[[], Workspace]
    execution: ExecutionOptions = field(default_factory=ExecutionOptions)
    registry: RunRegistry | None = None
    base_dir: Path = field(default_factory=Path.cwd)
