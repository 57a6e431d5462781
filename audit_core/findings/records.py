"""Findings of a saved run, read from its stored tables (for the CLI and the HTML report)."""
from __future__ import annotations

from audit_core.runs.registry import RunRecord
from audit_core.transport.results import TransportResult

from .finding import Finding
from .transport import transport_findings

__all__ = ["record_findings"]


def record_findings(record: RunRecord) -> list[Finding]:
    """The findings a saved run's tables support.

    Transport runs are rebuilt from their ``results``, ``verdicts`` and
    ``summary`` tables (and ``feature_shift``, ``domain_classifier`` when
    stored) and the run config. Other kinds return ``[]``: a
    Fragility run does not store the per-case scores its ranking sentence
    needs, so its findings are given by the page right after the run.
    """
    t = record.tables
    if record.audit_kind != "transport" or not {"results", "verdicts", "summary"} <= set(t):
        return []
    config = record.manifest.get("config") or record.config
    extras = {k: t[k] for k in ("feature_shift", "domain_classifier") if k in t}
    result = TransportResult(table=t["results"], verdicts=t["verdicts"], summary=t["summary"], extras=extras,
                             manifest={"config": config})
    return transport_findings(result)
