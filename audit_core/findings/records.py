"""Findings of a saved run, read from its stored tables (for the CLI and the HTML report)."""
from __future__ import annotations

from audit_core.errors import AuditInputError
from audit_core.runs.gate import compare_runs
from audit_core.runs.registry import RunRecord
from audit_core.transport.results import TransportResult

from .finding import Finding
from .fragility import fragility_config, stored_fragility_findings
from .gate import gate_findings
from .transport import transport_findings

__all__ = ["record_findings", "report_findings", "GATE_KINDS"]

#: Audit kinds whose runs give release-gate grounds on their own.
GATE_KINDS = ("model", "fragility", "transport")


def record_findings(record: RunRecord) -> list[Finding]:
    """The findings a saved run's tables support.

    Transport runs are rebuilt from their ``results``, ``verdicts`` and
    ``refit_summary`` tables (and the other stored tables: ``feature_shift``,
    ``domain_classifier``, …) and the run manifest (its config and headline
    slice). Fragility runs from their ``certificates``,
    ``scores``, ``auroc`` and ``incremental`` tables and the audit's options
    (:func:`stored_fragility_findings`: the page's sentences, without the
    model comparison, which is not saved). Other kinds return ``[]``.
    """
    t = record.tables
    if record.audit_kind == "fragility":
        return stored_fragility_findings(t, fragility_config(record))
    if record.audit_kind != "transport" or not {"results", "verdicts", "refit_summary"} <= set(t):
        return []
    manifest = dict(record.manifest or {})
    manifest["config"] = manifest.get("config") or record.config
    extras = {k: v for k, v in t.items() if k not in ("results", "verdicts", "refit_summary")}
    result = TransportResult(table=t["results"], verdicts=t["verdicts"], refit_summary=t["refit_summary"],
                             extras=extras, manifest=manifest)
    return transport_findings(result)


def report_findings(record: RunRecord) -> list[Finding]:
    """What a run's report says on its first page: its findings, then the release gate on this run alone.

    The gate's sentences are those of :func:`~audit_core.findings.gate.gate_findings` without the comparison
    with a baseline (there is none). A run of another kind, unfinished, or whose grounds this version cannot read
    gets its findings only.
    """
    out = record_findings(record)
    if record.audit_kind not in GATE_KINDS or record.status != "done":
        return out
    try:
        gate = compare_runs(record, record)
    except AuditInputError:  # grounds this version cannot read: no gate sentences
        return out
    return out + [f for f in gate_findings(gate) if f.kind != "gate_change"]
