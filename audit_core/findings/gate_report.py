"""The release gate as a report CI systems read: one case per rule, as JUnit XML, JSON or a Markdown table.

:func:`gate_report` turns a :class:`~audit_core.runs.gate.GateResult` into a
:class:`GateReport`: the verdict, the two sides' run ids and one
:class:`GateRuleReport` per rule of the candidate's norms, each

* ``failed``: the rule applies to the scope and its violation holds (it
  blocks the release); its ``receipt`` is the sentence the gate's findings
  print (:func:`~audit_core.findings.gate.rule_sentence`: the ground, its
  value, the limit);
* ``passed``: the rule applies and its violation does not hold;
* ``unknown``: the rule applies (or may) but reads a ground no run provides;
  its ``reason`` says which, in the words of the findings
  (:func:`~audit_core.findings.gate.unknown_reason`);
* ``not_applicable``: its authority excludes the deployment scope.

:meth:`GateReport.to_junit` builds a JUnit ``<testsuites>`` tree with
:mod:`xml.etree.ElementTree` (markup in data is escaped by construction):
``failed`` is a ``<failure>``, ``unknown`` and ``not_applicable`` are
``<skipped>``, ``passed`` a plain ``<testcase>``. :meth:`GateReport.to_dict`
is the same content as JSON (:data:`JSON_SCHEMA` documents it).

Text from data (run ids, rule notes, dataset names in the notes, the scope)
is shown with invisible and control characters made visible
(:func:`~audit_core.safe_text.reveal`) in every form: XML 1.0 cannot hold
an escape character at all, and a JSON consumer that prints a field should
not replay a terminal sequence. The module is pure: it writes no file.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from audit_core.receipts.adjudicate import rule_outcomes
from audit_core.runs.gate import RELEASE, GateResult
from audit_core.safe_text import reveal

from .card import md_text
from .gate import _COMPARISON, _NAME, rule_sentence, unknown_reason

__all__ = ["JSON_SCHEMA", "SCHEMA_VERSION", "GateReport", "GateRuleReport", "RuleStatus", "gate_report"]

RuleStatus = Literal["passed", "failed", "unknown", "not_applicable"]
#: Version of the JSON layout (:data:`JSON_SCHEMA`); raised when a field changes meaning or goes away.
SCHEMA_VERSION = 1
#: JUnit element per status (``None``: a plain passing testcase).
_JUNIT = {"failed": "failure", "unknown": "skipped", "not_applicable": "skipped", "passed": None}

#: The JSON document of :meth:`GateReport.to_dict`, as a JSON Schema (draft 2020-12).
JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "reliability-audit release gate",
    "type": "object",
    "required": ["schema_version", "verdict", "passed", "scope", "suite", "runs", "verdicts", "receipt", "counts",
                 "rules", "notes", "summary"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "verdict": {"enum": ["passed", "failed"], "description": "passed when the candidate's verdict is release"},
        "passed": {"type": "boolean"},
        "scope": {"type": "string", "description": "deployment scope of both sides"},
        "suite": {"type": "string", "description": "the JUnit testsuite's name: release gate (SCOPE): A → B"},
        "runs": {"type": "object", "properties": {"baseline": {"type": "array", "items": {"type": "string"}},
                                                  "candidate": {"type": "array", "items": {"type": "string"}}}},
        "verdicts": {"type": "object", "description": "release verdicts: release, block or refer",
                     "properties": {"baseline": {"type": "string"}, "candidate": {"type": "string"}}},
        "receipt": {"type": "string", "description": "what accounts for a changed verdict, e.g. {G:ood_ece}"},
        "counts": {"type": "object", "description": "rules per status; tests, failures, skipped as in the JUnit file"},
        "rules": {"type": "array", "items": {
            "type": "object",
            "required": ["id", "name", "status", "condition", "then", "receipt", "reason", "numbers", "baseline",
                         "limit"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string", "description": "the rule in words: its note, else its condition"},
                "status": {"enum": ["passed", "failed", "unknown", "not_applicable"]},
                "condition": {"type": "string", "description": "the violation, e.g. ood_ece > 0.05"},
                "then": {"type": "string", "description": "the verdict when the violation holds"},
                "receipt": {"type": ["string", "null"], "description": "passed or failed: the sentence the terminal "
                            "prints (ground, value, limit)"},
                "reason": {"type": ["string", "null"], "description": "unknown or not_applicable: why"},
                "numbers": {"type": "object", "description": "candidate value of each ground the rule reads "
                            "(null: unknown)"},
                "baseline": {"type": "object", "description": "baseline value of the same grounds"},
                "limit": {"type": ["number", "null"], "description": "the number a plain comparison rule names"},
            }}},
        "notes": {"type": "array", "items": {"type": "string"},
                  "description": "what differs between the sides besides the model (data, configurations)"},
        "summary": {"type": "string"},
    },
}


@dataclass(frozen=True, kw_only=True)
class GateRuleReport:
    """One rule of the candidate's gate and what became of it.

    Attributes
    ----------
    id : str
    name : str
        The rule in words: its note, else its condition.
    status : {"passed", "failed", "unknown", "not_applicable"}
    condition : str
        The violation the rule tests (``ood_ece > 0.05``).
    then : str
        The verdict when it holds.
    text : str
        The receipt (``passed``/``failed``: ground, value and limit in words) or the reason
        (``unknown``/``not_applicable``).
    numbers, baseline : dict of str to float or None
        The candidate's and the baseline's value of each ground the condition reads.
    limit : float or None
        The number of a plain comparison (``ground op number``).
    authority : str
        The rule's authority scope (empty: none).
    """

    id: str
    name: str
    status: RuleStatus
    condition: str
    then: str
    text: str
    numbers: Mapping[str, float | None] = field(default_factory=dict)
    baseline: Mapping[str, float | None] = field(default_factory=dict)
    limit: float | None = None
    authority: str = ""

    def details(self) -> str:
        """The rule in symbols, one line each: condition and verdict, values against the limit, authority."""
        values = ", ".join(f"{g} = {_num(v)} (baseline {_num(self.baseline.get(g))})" for g, v in self.numbers.items())
        lines = [f"rule {self.id}: {self.condition} -> {self.then}"]
        if values:
            lines.append(values + ("" if self.limit is None else f"; limit {self.limit:g}"))
        lines.append(f"authority: {self.authority or 'none'}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        told = self.status in ("passed", "failed")
        return {"id": self.id, "name": _shown(self.name), "status": self.status, "condition": _shown(self.condition),
                "then": _shown(self.then), "receipt": _shown(self.text) if told else None,
                "reason": None if told else _shown(self.text), "numbers": dict(self.numbers),
                "baseline": dict(self.baseline), "limit": self.limit}


@dataclass(frozen=True, kw_only=True)
class GateReport:
    """The release gate between a baseline and a candidate, one entry per rule (see the module docs).

    Attributes
    ----------
    passed : bool
        The candidate's verdict is ``release`` (the CLI's exit code 0).
    verdict_a, verdict_b : str
    scope : str
    run_ids_a, run_ids_b : tuple of str
    receipt_text : str
    rules : tuple of GateRuleReport
        In the order of the norms.
    notes : tuple of str
        What differs between the sides besides the model (:func:`~audit_core.runs.gate_context.comparison_notes`).
    summary : str
        :meth:`~audit_core.runs.gate.GateResult.summary_text`.

    Examples
    --------
    >>> rule = GateRuleReport(id="discrimination", name="held-out AUROC must be at least 0.70", status="failed",
    ...                       condition="test_auroc < 0.70", then="block", text="AUROC 0.60, below the 0.70 minimum",
    ...                       numbers={"test_auroc": 0.6}, baseline={"test_auroc": 0.82}, limit=0.7)
    >>> report = GateReport(passed=False, verdict_a="release", verdict_b="block", scope="internal",
    ...                     run_ids_a=("A",), run_ids_b=("B",), receipt_text="{G:test_auroc}", rules=(rule,))
    >>> suite = report.to_junit().getroot().find("testsuite")
    >>> suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("skipped")
    ('release gate (internal): A → B', '1', '1', '0')
    >>> suite.find("testcase/failure").get("message")
    'AUROC 0.60, below the 0.70 minimum'
    >>> print(rule.details())
    rule discrimination: test_auroc < 0.70 -> block
    test_auroc = 0.6 (baseline 0.82); limit 0.7
    authority: none
    >>> report.to_dict()["rules"][0]["status"], report.to_dict()["verdict"]
    ('failed', 'failed')
    """

    passed: bool
    verdict_a: str
    verdict_b: str
    scope: str
    run_ids_a: tuple[str, ...]
    run_ids_b: tuple[str, ...]
    receipt_text: str
    rules: tuple[GateRuleReport, ...]
    notes: tuple[str, ...] = ()
    summary: str = ""

    @property
    def suite_name(self) -> str:
        """``release gate (SCOPE): A1,A2 → B1`` (baseline → candidate run ids)."""
        return f"release gate ({self.scope}): {','.join(self.run_ids_a)} → {','.join(self.run_ids_b)}"

    def counts(self) -> dict[str, int]:
        """Rules per status, and the JUnit totals: ``tests``, ``failures``, ``errors``, ``skipped``."""
        out = {s: sum(r.status == s for r in self.rules) for s in ("passed", "failed", "unknown", "not_applicable")}
        out.update(tests=len(self.rules), failures=out["failed"], errors=0,
                   skipped=out["unknown"] + out["not_applicable"])
        return out

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (:data:`JSON_SCHEMA`)."""
        return {
            "schema_version": SCHEMA_VERSION, "verdict": "passed" if self.passed else "failed", "passed": self.passed,
            "scope": _shown(self.scope), "suite": _shown(self.suite_name),
            "runs": {"baseline": [_shown(i) for i in self.run_ids_a], "candidate": [_shown(i) for i in self.run_ids_b]},
            "verdicts": {"baseline": _shown(self.verdict_a), "candidate": _shown(self.verdict_b)},
            "receipt": _shown(self.receipt_text), "counts": self.counts(),
            "rules": [r.to_dict() for r in self.rules], "notes": [_shown(n) for n in self.notes],
            "summary": _shown(self.summary),
        }

    def to_junit(self) -> ET.ElementTree:
        """The report as a JUnit XML tree: ``<testsuites>`` holding one ``<testsuite>``, one ``<testcase>`` per rule.

        Write it with ``tree.write(path, encoding="utf-8", xml_declaration=True)``.
        """
        c = self.counts()
        totals = {k: str(c[k]) for k in ("tests", "failures", "errors", "skipped")}
        root = ET.Element("testsuites", {"name": "reliability-audit gate", **totals, "time": "0"})
        suite = ET.SubElement(root, "testsuite", {"name": _shown(self.suite_name), **totals, "time": "0"})
        props = ET.SubElement(suite, "properties")
        for name, value in (("verdict", "passed" if self.passed else "failed"), ("scope", self.scope),
                            ("baseline_runs", ",".join(self.run_ids_a)), ("candidate_runs", ",".join(self.run_ids_b)),
                            ("baseline_verdict", self.verdict_a), ("candidate_verdict", self.verdict_b),
                            ("receipt", self.receipt_text)):
            ET.SubElement(props, "property", {"name": name, "value": _shown(value)})
        for r in self.rules:
            case = ET.SubElement(suite, "testcase", {"name": f"{r.id}: {_shown(r.name)}",
                                                     "classname": f"release_gate.{_shown(self.scope)}", "time": "0"})
            tag = _JUNIT[r.status]
            if tag == "failure":
                ET.SubElement(case, tag, {"message": _shown(r.text), "type": _shown(r.then)}).text = \
                    _shown(r.details(), lines=True)
            elif tag == "skipped":
                ET.SubElement(case, tag, {"message": _shown(r.text)}).text = _shown(r.details(), lines=True)
            else:
                ET.SubElement(case, "system-out").text = _shown(f"{r.text}\n{r.details()}", lines=True)
        out = [self.summary, *(f"note: {n}" for n in self.notes)]
        ET.SubElement(suite, "system-out").text = _shown("\n".join(out), lines=True)
        ET.indent(root)
        return ET.ElementTree(root)

    def _repr_markdown_(self) -> str:
        """A notebook shows the report as its Markdown table."""
        return self.to_markdown()

    def to_markdown(self) -> str:
        """The rules as a Markdown table (a GitHub job summary); text from data escaped with
        :func:`~audit_core.findings.card.md_text`."""
        head = (f"### Release gate: {'passed' if self.passed else 'failed'}\n\n"
                f"{md_text(self.suite_name)}; verdict {md_text(self.verdict_a)} → {md_text(self.verdict_b)}; "
                f"receipt {md_text(self.receipt_text)}\n\n"
                "| rule | status | receipt or reason |\n|---|---|---|\n")
        rows = [f"| {md_text(r.id)}: {md_text(r.name)} | {r.status.replace('_', ' ')} | {md_text(r.text)} |"
                for r in self.rules]
        notes = "".join(f"\n- note: {md_text(n)}" for n in self.notes)
        return head + "\n".join(rows) + ("\n" + notes if notes else "") + "\n"


def _shown(text: object, *, lines: bool = False) -> str:
    """Text from data as text: invisible and control characters visible; line breaks kept only in ``lines``."""
    return reveal(text, whitespace=not lines)


def _num(v: float | None) -> str:
    return "UNKNOWN" if v is None else f"{v:.6g}"


def _value(v: float | None) -> float | None:
    return None if v is None else float(v)


def _grounds_of(condition: str, values: Mapping[str, float | None]) -> list[str]:
    return [g for g in dict.fromkeys(re.findall(_NAME, condition)) if g in values]


def gate_report(gate: GateResult, *, notes: Sequence[str] = ()) -> GateReport:
    """The release gate rule by rule, ready for JUnit XML, JSON or Markdown.

    Parameters
    ----------
    gate : GateResult
        From :func:`audit_core.runs.gate.compare_runs`.
    notes : sequence of str, optional
        Sentences about what else differs between the sides
        (:func:`audit_core.runs.gate_context.comparison_notes`).

    Returns
    -------
    GateReport
        One :class:`GateRuleReport` per rule of the candidate's norms: ``failed`` when it applies and its
        violation holds with a verdict other than ``release``; ``passed`` when it applies and does not hold;
        ``unknown`` when it reads a ground no run provides; ``not_applicable`` when its authority excludes
        the scope.
    """
    state = gate.comparison.new
    now, before = gate.comparison.new_grounds.values, gate.comparison.old_grounds.values
    authority = state.authority_map
    rules = []
    for rule, t in zip(state.norms.rules, rule_outcomes(state), strict=True):  # both in the norms' order
        if t.outcome == "no authority":
            status: RuleStatus = "not_applicable"
            text = (f"the rule does not apply to the {gate.scope} scope" if t.rule_id in authority
                    else "no authority entry names this rule")
        elif t.outcome == "unknown":
            status, text = "unknown", unknown_reason(gate, t.rule_id)
        else:
            fires = t.outcome == "holds" and rule.then != RELEASE
            status, text = ("failed" if fires else "passed"), rule_sentence(gate, t.rule_id)
        grounds = _grounds_of(rule.when, now)
        m = _COMPARISON.match(rule.when)
        rules.append(GateRuleReport(
            id=rule.id, name=rule.note or rule.when, status=status, condition=rule.when, then=rule.then, text=text,
            numbers={g: _value(now[g]) for g in grounds}, baseline={g: _value(before.get(g)) for g in grounds},
            limit=float(m.group(3)) if m else None, authority=str(authority.get(rule.id, ""))))
    return GateReport(passed=gate.passed, verdict_a=gate.verdict_a, verdict_b=gate.verdict_b, scope=gate.scope,
                      run_ids_a=gate.run_ids_a, run_ids_b=gate.run_ids_b, receipt_text=gate.receipt_text,
                      rules=tuple(rules), notes=tuple(notes), summary=gate.summary_text())
