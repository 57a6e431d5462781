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
from audit_core.lazy import lazy_exports

#: Each public name and the submodule that defines it. The names are imported on first use (PEP 562
#: ``__getattr__``), so importing one submodule (the app's first run imports a few) does not import every other
#: one and what they need (scikit-learn, SciPy): see ``components/shell.py`` and docs/reliability.md "First paint".
_EXPORTS = {
    "export_bundle": ".bundle",
    "import_bundle": ".bundle",
    "read_bundle": ".bundle",
    "write_parquet_tables": ".export",
    "compare_runs_tables": ".compare",
    "runs_overview": ".compare",
    "AuditConfig": ".config",
    "LoadedData": ".config",
    "load_config": ".config",
    "load_data": ".config",
    "parse_config": ".config",
    "AuditContext": ".context",
    "RunOutcome": ".execute",
    "run_config": ".execute",
    "DEFAULT_GATE_SCOPE": ".gate",
    "DEFAULT_GATE_YAML": ".gate",
    "GateResult": ".gate",
    "compare_runs": ".gate",
    "map_batches": ".parallel",
    "AuditResult": ".plugin",
    "AuditRunner": ".plugin",
    "ExecutionOptions": ".plugin",
    "get_runner": ".plugin",
    "register_audit": ".plugin",
    "RunRecord": ".registry",
    "RunRegistry": ".registry",
    "default_registry_path": ".registry",
    "save_fragility_run": ".save",
    "save_workspace": ".save",
}
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


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
