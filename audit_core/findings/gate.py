"""Sentences about the release gate: the verdict with the rule that governs it, and what changed it."""
from __future__ import annotations

import re

from audit_core.receipts.adjudicate import adjudicate
from audit_core.runs.gate import GateResult

from .finding import Finding, num

__all__ = ["gate_findings"]

_VERDICT_WORDS = {"release": "Release is allowed", "block": "Release is blocked", "refer": "Release is referred for review"}


def _verdict(verdict: str) -> str:
    return _VERDICT_WORDS.get(verdict, f"The gate's verdict is {verdict!r}")


def _ground_values(when: str, values: dict) -> dict[str, float]:
    """The grounds a rule's condition names, with their values (unknown grounds are left out)."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", when))
    return {g: float(v) for g, v in values.items() if g in names and isinstance(v, (int, float))}


def gate_findings(gate: GateResult) -> list[Finding]:
    """Plain-language findings of a release gate between run sets A (baseline) and B (candidate).

    Returns
    -------
    list of Finding
        The candidate's verdict with the governing rule and its grounds;
        what accounts for a change from A, or that the verdict did not
        change; grounds no run provides.
    """
    new = gate.comparison.new
    adj = adjudicate(new, missing="unknown")
    values = dict(gate.comparison.new_grounds.values)
    rule = new.norms.rule(adj.governed_by)
    out: list[Finding] = []
    if rule is not None:
        used = _ground_values(rule.when, values)
        shown = ", ".join(f"{g} is {num(v)}" for g, v in used.items())
        what = rule.note or rule.when
        text = f"{_verdict(adj.verdict)}: {what} ({shown + '; ' if shown else ''}rule {rule.id})."
        numbers = used
    else:
        text = f"{_verdict(adj.verdict)} under the {gate.scope} scope: {adj.reason}"
        numbers = {}
    sev = "good" if gate.passed else ("alert" if adj.verdict == "block" else "warning")
    out.append(Finding(text=text, numbers=numbers, severity=sev, kind="gate_verdict"))
    if gate.verdict_a == gate.verdict_b:
        out.append(Finding(text=f"The verdict is the same as for the baseline run ({gate.verdict_a}).",
                           severity="info", kind="gate_change"))
    else:
        sets = [" and ".join(s) for s in gate.receipt]
        why = (" or ".join(f"{{{s}}}" for s in sets)) if sets else gate.receipt_text
        out.append(Finding(text=f"The change from the baseline run ({gate.verdict_a} → {gate.verdict_b}) is accounted "
                                f"for by {why} alone.", numbers={"receipt_sets": float(len(gate.receipt))},
                           severity="info", kind="gate_change"))
    if gate.grounds_absent:
        out.append(Finding(text=f"{len(gate.grounds_absent)} ground(s) are unknown because no run provides them: "
                                f"{', '.join(gate.grounds_absent)}.", numbers={"absent": float(len(gate.grounds_absent))},
                           severity="warning", kind="gate_absent"))
    return out
