"""Findings a stakeholder can read: a few plain-language sentences per audit result, each with its contract.

The sentences are rendered from records of the numbers they read (each with its
key into the stored tables) and of the logical words they use (each with the
condition that licenses it): :mod:`.contract`. They are generated from the
result objects (the Fragility audit, a Transport result on its headline
slice, the release gate), never filled in by hand per dataset, and
:func:`check_findings` re-derives every number and word of a saved run's
sentences from its tables. A negative result is said whenever it holds (e.g.
the certificate not ranking brittle cases better than plain confidence).
"""
from .check import Violation, check_findings
from .finding import Fact, Finding, Severity, Word
from .forecast import forecast_check_finding, forecast_findings
from .fragility import fragility_findings
from .gate import gate_findings
from .gate_report import GateReport, GateRuleReport, gate_report
from .records import record_findings, report_findings
from .transport import transport_findings

__all__ = ["Finding", "Fact", "Word", "Severity", "Violation", "fragility_findings", "transport_findings",
           "gate_findings", "forecast_findings", "forecast_check_finding", "gate_report", "GateReport", "GateRuleReport",
           "record_findings", "report_findings", "check_findings"]
