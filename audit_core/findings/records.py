"""Findings of a saved run, read from its stored tables (for the CLI and the HTML report)."""
from __future__ import annotations

from audit_core.runs.registry import RunRecord
from audit_core.transport.results import TransportResult

from .finding import Finding
from .fragility import stored_fragility_findings
from .transport import transport_findings

__all__ = ["record_findings"]


def record_findings(record: RunRecord) -> list[Finding]:
    """The findings a saved run's tables support.

    Transport runs are rebuilt from their ``results``, ``verdicts`` and
    ``summary`` tables (and ``feature_shift``, ``domain_classifier`` when
    stored) and the run config. Fragility runs from their ``summary``,
    ``scores``, ``auroc`` and ``incremental`` tables and the audit's options
    (:func:`stored_fragility_findings`: the page's sentences, without the
    model comparison, which is not saved). Other kinds return ``[]``.
    """
    t = record.tables
    if record.audit_kind == "fragility":
        config = (record.manifest or {}).get("fragility_config") or record.config or {}
        return stored_fragility_findings(t, config)
    if record.audit_kind != "transport" or not {"results", "verdicts", "summary"} <= set(t):
        return []
    config = record.manifest.get("config") or record.config
    extras = {k: t[k] for k in ("feature_shift", "domain_classifier") if k in t}
    result = TransportResult(table=t["results"], verdicts=t["verdicts"], summary=t["summary"], extras=extras,
                             manifest={"config": config})
    return transport_findings(result)
