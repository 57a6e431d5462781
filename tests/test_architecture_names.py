"""One name per idea (issue 23): the old names are gone, not aliased, so they cannot come back.

``audit_core.calibration`` is ``audit_core.calibration_error``; ``audit_core.models.audit`` is
``audit_core.models.batch_jobs``; Fragility's ``Protocol`` is ``CertificateSettings``; ``summary`` is split
into ``certificates`` (Fragility, one row per case), ``refit_summary`` (Transport, across refits),
``key_numbers`` (a run's manifest entry) and ``Grouping.group_sizes``. Stored runs keep their old names
on disk and are read through ``audit_core.runs.registry.with_current_names``
(``tests/test_registry_renamed_names.py``).
"""
from __future__ import annotations

import ast

import pytest

from test_architecture import ROOT, SOURCES, discover

@pytest.mark.parametrize("gone", ["audit_core.calibration", "audit_core.models.audit"])
def test_renamed_modules_are_gone(gone: str) -> None:
    """``calibration`` (ECE code, now ``calibration_error``) and ``models.audit`` (now ``models.batch_jobs``)."""
    assert gone not in discover(ROOT, ("audit_core",)), f"{gone} is back; it was renamed (one name per idea)"


def test_summary_is_no_field_of_a_result() -> None:
    """Per-case certificates, across-refit aggregates and a run's key numbers each have their own name."""
    import dataclasses

    from audit_core.findings.fragility import FragilityTables
    from audit_core.fragility.audit import FragilityAudit
    from audit_core.data.groups import Grouping
    from audit_core.runs.plugin import AuditResult
    from audit_core.transport.results import TransportResult

    assert not hasattr(Grouping, "summary") and hasattr(Grouping, "group_sizes")

    expected = {FragilityAudit: "certificates", FragilityTables: "certificates", TransportResult: "refit_summary",
                AuditResult: "key_numbers"}
    for cls, name in expected.items():
        fields = {f.name for f in dataclasses.fields(cls)}
        assert "summary" not in fields and name in fields, (cls.__name__, sorted(fields))


def test_fragility_has_no_protocol_class() -> None:
    """Fragility's certificate settings are ``CertificateSettings`` (``Protocol`` shadowed ``typing.Protocol``)."""
    import audit_core.fragility as fragility
    from audit_core.fragility import certificate

    assert not hasattr(fragility, "Protocol") and not hasattr(certificate, "Protocol")


def _summary_used_as_a_stored_name(tree: ast.AST) -> list[int]:
    """Lines where the literal ``"summary"`` names a table, a manifest key or a table key (``x["summary"]``,
    ``x.get("summary")``, ``TableKey("summary", ...)``, a ``{"summary": ...}`` entry)."""
    def is_summary(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and node.value == "summary"

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_summary(node.slice):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and node.args and is_summary(node.args[0]) and (
                getattr(node.func, "attr", None) in ("get", "of") or getattr(node.func, "id", None) == "TableKey"):
            lines.append(node.lineno)
        elif isinstance(node, ast.Dict) and any(is_summary(k) for k in node.keys):
            lines.append(node.lineno)
    return lines


def test_summary_is_no_stored_name() -> None:
    """Only the registry's one migration of stored names (and the gate report's own sentence) still spell it."""
    allowed = {"audit_core.runs.registry._records",  # RENAMED_TABLES / RENAMED_MANIFEST_KEYS: old -> current
               "audit_core.findings.gate_report"}  # the gate report's one-line verdict text, not a table
    found = {name: hits for name, (path, _pkg) in discover(ROOT, SOURCES).items()
             if name not in allowed and (hits := _summary_used_as_a_stored_name(ast.parse(path.read_text("utf-8"))))}
    assert not found, f"'summary' used as a stored name again: {found}"
