"""The run machinery: configs, audit plug-ins, batch back-ends and the run registry.

* :mod:`~audit_core.runs.registry` — the saved-run registry (one SQLite file);
* :mod:`~audit_core.runs.save` — save a workspace or a fragility audit from the app as a run;
* :mod:`~audit_core.runs.config` — audit configs (YAML/JSON): parse, validate, load the data;
* :mod:`~audit_core.runs.plugin` — the audit plug-in interface and registry;
* :mod:`~audit_core.runs.context` — what a plug-in's run receives (config, data, workspace, back-end);
* :mod:`~audit_core.runs.execute` — running a config: data, model, each plug-in, one run each;
* :mod:`~audit_core.runs.plugins` — the built-in plug-ins (model, fragility, transport, receipts);
* :mod:`~audit_core.runs.parallel` — serial, process and Dask back-ends for batch work;
* :mod:`~audit_core.runs.bundle` — JSON bundles and Parquet exports of a run;
* :mod:`~audit_core.runs.compare` — metric deltas and verdict changes between runs, fragility runs at a glance;
* :mod:`~audit_core.runs.gate` — the release gate: a Receipts evaluator over saved runs.

Stands on everything below it (foundation, data, models and the three
audits); nothing in ``audit_core`` below it imports it. Pure library code:
never imports streamlit or plotly.
"""
from .bundle import export_bundle, import_bundle, read_bundle
from .export import write_parquet_tables
from .compare import compare_runs_tables, runs_overview
from .config import AuditConfig, LoadedData, load_config, load_data, parse_config
from .context import AuditContext
from .execute import RunOutcome, run_config
from .gate import DEFAULT_GATE_SCOPE, DEFAULT_GATE_YAML, GateResult, compare_runs
from .parallel import map_batches
from .plugin import AuditResult, AuditRunner, ExecutionOptions, get_runner, register_audit
from .registry import RunRecord, RunRegistry, default_registry_path
from .save import save_fragility_run, save_workspace

__all__ = [
    "AuditConfig",
    "AuditContext",
    "AuditResult",
    "AuditRunner",
    "DEFAULT_GATE_SCOPE",
    "DEFAULT_GATE_YAML",
    "ExecutionOptions",
    "GateResult",
    "LoadedData",
    "RunOutcome",
    "RunRecord",
    "RunRegistry",
    "compare_runs",
    "compare_runs_tables",
    "default_registry_path",
    "export_bundle",
    "get_runner",
    "import_bundle",
    "load_config",
    "load_data",
    "map_batches",
    "parse_config",
    "read_bundle",
    "register_audit",
    "run_config",
    "runs_overview",
    "save_fragility_run",
    "save_workspace",
    "write_parquet_tables",
]
