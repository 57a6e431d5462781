"""Findings a stakeholder can read: a few plain-language sentences per audit result, each with its numbers.

The sentences are generated from the result objects (the Fragility audit, a
Transport result, the release gate), never filled in by hand per dataset. A
negative result is said whenever it holds (e.g. the certificate not ranking
brittle cases better than plain confidence).
"""
from .finding import Finding, Severity
from .fragility import fragility_findings
from .gate import gate_findings
from .records import record_findings
from .transport import transport_findings

__all__ = ["Finding", "Severity", "fragility_findings", "transport_findings", "gate_findings", "record_findings"]
