"""The findings checker: every number and every logical word of every sentence, re-derived from a saved run.

:func:`check_findings` takes a saved run (a :class:`~audit_core.runs.registry.RunRecord`)
and the sentences said about it (by default, what the report's first page
says: :func:`~audit_core.findings.records.report_findings`) and returns one
:class:`Violation` per problem:

* a sentence that states a number but has no contract (no template, no facts);
* a fact whose key no longer reads the value the sentence states (or reads
  nothing);
* a sentence that differs from its template re-rendered with the re-read facts;
* a logical word whose condition does not hold on the re-read facts
  (:data:`~audit_core.findings.contract.CONDITIONS`);
* a restricted word (*restore*, *rises*, *instead of*, *most stable*,
  *improves*, *fragile*, *brittle*, *threshold*, …) that no word of the
  contract licenses;
* text rules that hold whatever the contract says: ``X instead of X``; a
  selection rate called a threshold (``the 0.8 selection threshold``);
  *improves* in alarm colour;
* two readings of one quantity among the sentences checked together: two
  facts of the same ``results`` quantity (analysis, metric, domain, condition,
  α, selection rate) read with different slices (model, mapping, weighting,
  target definition or pooling), e.g. the gate's OOD ECE on the raw mapping
  beside a sentence's OOD ECE on Platt scaling.

Pure: it reads the run's stored tables only and never recomputes an audit
(a bootstrap interval is recomputed from the stored tables with its stored
seed, :data:`COMPUTED`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from audit_core.runs.keys import read_key
from audit_core.runs.registry import RunRecord

from .contract import CONDITIONS, RESTRICTED, holds
from .finding import ALARM, Fact, Finding, render
from .fragility import computed_facts

__all__ = ["Violation", "check_findings", "COMPUTED", "text_violations"]

#: ``computed:<name>`` keys: facts computed from the stored tables (a bootstrap interval), by name.
COMPUTED: dict[str, Callable[[RunRecord], Mapping[str, float]]] = {"certificate_vs_confidence": computed_facts}

_NUMBER = r"[−\-+]?\d+(?:[.,]\d+)?%?"


@dataclass(frozen=True)
class Violation:
    """One problem with one sentence: the finding's ``kind``, its ``text`` and what is wrong (``problem``)."""

    kind: str
    text: str
    problem: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.problem} — in: {self.text}"


def text_violations(finding: Finding) -> list[str]:
    """The rules every sentence obeys whatever its contract says (module docstring), as problems."""
    text, out = finding.text, []
    for a, b in re.findall(rf"({_NUMBER})[^\d;:]*?\binstead of\s+({_NUMBER})", text):
        if a == b:
            out.append(f"'instead of' between two equal numbers ({a} instead of {b})")
    if re.search(rf"{_NUMBER}\s+(?:selection\s+)?threshold|selection threshold", text, flags=re.IGNORECASE):
        out.append("a selection rate is called a threshold (say the threshold that answers the rate, with its "
                   "confidence value)")
    if re.search(RESTRICTED["improve"], text, flags=re.IGNORECASE) and finding.severity in ALARM:
        out.append(f"'improves' shown in alarm colour ({finding.severity})")
    return out


def _reread(fact: Fact, runs: Mapping[str, RunRecord], default: RunRecord,
            computed: dict[tuple[str, str], Mapping[str, float]]) -> tuple[Fact | None, str]:
    """The fact with its value re-read from the run's tables, or ``None`` and why not."""
    if fact.key is None:  # a declared constant (a rule's limit, the target coverage)
        return fact, ""
    run = runs.get(fact.run_id, default) if fact.run_id else default
    if fact.run_id and fact.run_id not in runs:
        return None, f"fact {fact.name!r} reads run {fact.run_id}, which is not given"
    v: float | str | None
    if fact.key.table.startswith("computed:"):
        name = fact.key.table.split(":", 1)[1]
        if (run.run_id, name) not in computed:
            computed[(run.run_id, name)] = COMPUTED[name](run) if name in COMPUTED else {}
        v = computed[(run.run_id, name)].get(fact.key.column)
        why = f"computed {name}.{fact.key.column} is not available"
    else:
        v, why = read_key(run.tables, fact.key)
    return (None, f"fact {fact.name!r}: {why}") if v is None else (replace(fact, value=v), "")


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _check_one(f: Finding, runs: Mapping[str, RunRecord], default: RunRecord, computed) -> list[str]:
    problems = text_violations(f) + _unlicensed(f)
    if not f.template:
        if re.search(r"\d", f.text):
            problems.append("the sentence states numbers but records no contract (template and facts)")
        return problems
    facts: dict[str, Fact] = {}
    for fact in f.facts:
        new, why = _reread(fact, runs, default, computed)
        if new is None:
            problems.append(why)
            continue
        if not _same(new.value, fact.value):
            problems.append(f"fact {fact.name!r} says {fact.value!r} but the table gives {new.value!r} "
                            f"({fact.key.describe() if fact.key else 'constant'})")
        facts[fact.name] = new
    if len(facts) == len(f.facts):
        again = render(f.template, list(facts.values()), f.words, f.labels)
        if again != f.text:
            problems.append(f"the sentence differs from its contract re-rendered from the tables: {again!r}")
    for w in f.words:
        ok = holds(w, facts)
        if ok is None:
            problems.append(f"'{w.text}': condition {w.condition!r} cannot be evaluated (unknown condition or fact)")
        elif not ok:
            shown = ", ".join(f"{a} = {facts[a].printed}" for a in w.args if a in facts)
            problems.append(f"'{w.text}' requires that {CONDITIONS[w.condition][0]}, which does not hold ({shown})")
    return problems


def _unlicensed(f: Finding) -> list[str]:
    """The restricted words the sentence uses that no word of its contract licenses."""
    licensed = " ".join(w.text.lower() for w in f.words)
    return [f"uses '{m.group(0)}' ({name}) without a condition that licenses it"
            for name, rx in RESTRICTED.items() for m in re.finditer(rx, f.text, flags=re.IGNORECASE)
            if m.group(0).lower() not in licensed]


def check_findings(record: RunRecord, findings: Sequence[Finding] | None = None, *,
                   others: Sequence[RunRecord] = ()) -> list[Violation]:
    """Re-derive every number and word condition of every sentence about ``record`` from its stored tables.

    Parameters
    ----------
    record : RunRecord
        The saved run (the run a fact without ``run_id`` reads).
    findings : sequence of Finding, optional
        The sentences to check; default :func:`~audit_core.findings.records.report_findings` (what the report's
        first page says about the run: its findings and the release gate on it alone).
    others : sequence of RunRecord
        Further runs that facts name by ``run_id`` (a gate across several runs).

    Returns
    -------
    list of Violation
        Empty when every sentence is supported by the tables.
    """
    if findings is None:
        from .records import report_findings

        findings = report_findings(record)
    runs = {r.run_id: r for r in (record, *others)}
    computed: dict = {}
    out = [Violation(f.kind, f.text, p) for f in findings for p in _check_one(f, runs, record, computed)]
    return out + _two_readings(findings, record.run_id)


#: The key columns that name a quantity of the ``results`` table, and those that name its slice.
_QUANTITY = ("analysis", "metric", "domain", "condition", "alpha", "selection_rate")
_SLICE = ("model", "mapping", "weighting", "target_definition")


def _two_readings(findings: Sequence[Finding], default_run: str) -> list[Violation]:
    """One quantity read with two slices in the same set of sentences (module docstring)."""
    seen: dict[tuple, tuple[tuple, Finding]] = {}
    out = []
    for f in findings:
        for fact in f.facts:
            if fact.key is None or fact.key.table != "results":
                continue
            filters = {c: v for c, op, v in fact.key.where if op == "="}
            quantity = tuple((c, filters.get(c)) for c in _QUANTITY)
            reading = tuple((c, filters.get(c)) for c in _SLICE) + (("pooling", fact.key.how), ("run", fact.run_id or default_run))
            first = seen.setdefault(quantity, (reading, f))
            if first[0] != reading:
                what = ", ".join(f"{c}={v}" for c, v in quantity if v is not None)
                out.append(Violation(f.kind, f.text, f"two readings of one quantity ({what}): "
                                                     f"{dict(first[0])} in [{first[1].kind}] and {dict(reading)}"))
    return out
