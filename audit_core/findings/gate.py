"""Sentences about the release gate, told as a manager would: what blocks, what passed, what is unknown.

The gate's rules read *grounds* (``ood_ece``, ``test_auroc``, …) from saved
runs. Here every rule in scope is judged on its own
(:func:`~audit_core.receipts.adjudicate.rule_outcomes`) and said in plain
words with its value and its limit ("the model's stated probabilities are
off by 7.1 points on 2023 (ECE 0.071, …), above the 5-point limit"). The
symbols (ground names, rule ids, the receipt ``{G:ood_ece}``, the verdict
``refer``) are in each finding's ``detail``, shown below the sentence.

Each value is a fact keyed into the run that provided it (the ground's key,
:attr:`~audit_core.runs.grounds.GateGrounds.keys`), so the findings checker
re-reads it; a limit is a declared constant of the rules.
"""
from __future__ import annotations

import re

from audit_core.errors import fail, register_messages
from audit_core.receipts.adjudicate import adjudicate, rule_outcomes
from audit_core.receipts.state import Rule
from audit_core.runs.forecast_grounds import FORECAST_QUANTITIES, is_forecast_ground
from audit_core.runs.gate import GateResult

from .finding import Fact, Finding, Word, and_list, render

__all__ = ["gate_findings", "rule_sentence", "VERDICT_WORDS", "GROUND_NAMES", "unknown_reason",
           "rule_unknown_grounds", "ground_words"]

register_messages({
    "GATE_NO_SUCH_RULE": "The release gate has no rule {rule_id!r}; its rules are: {rules}.",
})

#: A verdict in plain words.
VERDICT_WORDS = {"release": "allowed", "block": "blocked", "refer": "undecided"}
#: A ground in plain words (what is unknown when no run provides it).
GROUND_NAMES = {
    "test_auroc": "the model's ranking quality on held-out rows (AUROC)",
    "test_log_loss": "the held-out log loss",
    "brittle_share_confident": "the share of confident predictions that change class under the donor test",
    "mean_fds": "the mean fragility score",
    "ood_ece": "how far the stated probabilities are off on the target domain (ECE)",
    "worst_class_coverage_90": "the worst class's coverage by the 90% prediction sets on the target domain",
    "worst_subgroup_coverage_90": "the worst subgroup's coverage by the 90% prediction sets",
    "n_transport_sensitive": "how many checked quantities changed beyond their tolerance",
    "n_transport_worse": "how many checked quantities got worse beyond their tolerance",
    "ood_selective_risk_80": "the error rate among the cases the 80% rule answers on the target domain",
}


def _forecast_parts(name: str) -> tuple[str, str] | None:
    """``(method, ground)`` of a forecast ground ``forecast_<method>_<ground>``, or None."""
    if not is_forecast_ground(name):
        return None
    for ground in sorted(FORECAST_QUANTITIES, key=len, reverse=True):
        if name.endswith("_" + ground):
            method = name[len("forecast_"):-len(ground) - 1]
            return method.replace("_", ":", 1), ground
    return None


def ground_words(name: str) -> str:
    """A ground in plain words; a forecast ground says it is a forecast and by which method.

    >>> ground_words("forecast_both_span_ood_ece")
    'the label-free forecast (both:span) of how far the stated probabilities are off on the target domain (ECE)'
    """
    parts = _forecast_parts(name)
    if parts is None:
        return GROUND_NAMES.get(name, name)
    return f"the label-free forecast ({parts[0]}) of {GROUND_NAMES.get(parts[1], parts[1])}"
#: ground -> (phrase with {v} and, for transport grounds, {where} and {slice}; value format; limit format, unit).
_PHRASES = {
    "test_auroc": ("the model ranks held-out cases with an AUROC of {v}", "num2", "num2", ""),
    "test_log_loss": ("the held-out log loss is {v}", "num3", "g", ""),
    "brittle_share_confident": ("{v} of confident predictions are {w_brittle} (they change class under the donor "
                                "test)", "pct", "pct", ""),
    "mean_fds": ("the mean fragility score is {v}", "num2", "g", ""),
    "ood_ece": ("the model's stated probabilities are off by {v_points} points on {where} (ECE {v}, 15 equal-width "
                "bins{slice})", "num3", "points_g", "-point"),
    "worst_class_coverage_90": ("the 90% prediction sets cover the worst class {v} of the time on {where}{slice}",
                                "pct", "pct", ""),
    "worst_subgroup_coverage_90": ("the 90% prediction sets cover the worst subgroup {v} of the time on {where}"
                                   "{slice}", "pct", "pct", ""),
    "n_transport_sensitive": ("{v} checked quantities changed by more than their tolerance on {where}{slice}",
                              "int", "int", ""),
    "n_transport_worse": ("{v} checked quantities got worse by more than their tolerance on {where}{slice}",
                          "int", "int", ""),
}
_COMPARISON = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*([-+]?\d+(?:\.\d+)?)\s*$")
#: op of a violation rule -> (word when it fires, condition; word when it does not, condition; limit noun)
_SIDES = {">": ("above", "above_limit", "within", "within_limit", "limit"),
          ">=": ("at or above", "at_least_limit", "below", "below_limit", "limit"),
          "<": ("below", "below_limit", "at least", "at_least_limit", "minimum"),
          "<=": ("at or below", "within_limit", "above", "above_limit", "minimum")}


def _check(rule, values, gate: GateResult, fires: bool, i: int):
    """``(phrase, facts, words, labels)`` of one decided rule in plain words, or ``None`` when it is not a plain
    comparison of a known ground with a number (then the rule's note is said)."""
    m = _COMPARISON.match(rule.when)
    forecast = _forecast_parts(m.group(1)) if m else None
    if not m or (m.group(1) not in _PHRASES and forecast is None) or values.get(m.group(1)) is None:
        return None
    ground, op, limit = m.group(1), m.group(2), float(m.group(3))
    if forecast is not None:  # a forecast is said as one, never in the words of a measured value
        base = _PHRASES.get(forecast[1], ("", "pct" if "coverage" in forecast[1] or "risk" in forecast[1] else "num3",
                                          "g", ""))
        vform = "pct" if "risk" in forecast[1] else base[1]
        phrase, lform, unit = f"{ground_words(ground)} is {{v}}", vform, ""
    else:
        phrase, vform, lform, unit = _PHRASES[ground]
    run_id, key = gate.comparison.new_grounds.keys.get(ground, ("", None))
    v = float(values[ground])
    facts = [Fact(f"v{i}", v, key, vform, run_id), Fact(f"limit{i}", limit, None, lform)]
    if ground == "ood_ece":  # (a forecast ground has its own name: its phrase has no points)
        facts.append(Fact(f"v{i}_points", v, key, "points", run_id))
    yes, yes_c, no, no_c, noun = _SIDES[op]
    word = Word(yes if fires else no, yes_c if fires else no_c, (f"v{i}", f"limit{i}"))
    words = [word]
    ctx = gate.comparison.new_grounds.context.get(ground, {})
    sl = ctx.get("slice", "")  # the transport run's headline slice, said beside its number
    labels = {f"where{i}": ctx.get("where", "the target domain"),
              f"slice{i}": (f"; {sl}" if ground == "ood_ece" else f" ({sl})") if sl else ""}
    text = phrase.replace("{v_points}", f"{{v{i}_points}}").replace("{v}", f"{{v{i}}}") \
        .replace("{where}", f"{{where{i}}}").replace("{slice}", f"{{slice{i}}}")
    if "{w_brittle}" in text:
        words.append(Word("brittle", "donor_count", (f"v{i}",)))
        labels[f"brittle{i}"] = "brittle"
        text = text.replace("{w_brittle}", f"{{brittle{i}}}")
    return f"{text}, {word.text} the {{limit{i}}}{unit} {noun}", facts, words, labels


def _plain_rules(gate: GateResult, outcome: str, start: int):
    """The rules with ``outcome`` said in plain words: ``(phrases, facts, words, labels, symbols)``."""
    state = gate.comparison.new
    values = dict(gate.comparison.new_grounds.values)
    phrases: list[str] = []
    facts, words, labels, symbols = [], [], {}, []
    for t in rule_outcomes(state):
        if t.outcome != outcome:
            continue
        rule = _rule(gate, t.rule_id)
        phrase, f, w, lab = _said(rule, values, gate, outcome == "holds", start + len(phrases))
        phrases.append(phrase)
        facts += f
        words += w
        labels.update(lab)
        symbols.append(f"rule {rule.id}: {rule.when}")
    return phrases, facts, words, labels, symbols


def _said(rule, values, gate: GateResult, fires: bool, i: int):
    """``(template, facts, words, labels)`` of one decided rule: the plain comparison, else its note (or its
    condition) as literal text (braces doubled, so a note is never read as a slot)."""
    said = _check(rule, values, gate, fires, i)
    if said is None:
        return (rule.note or rule.when).replace("{", "{{").replace("}", "}}"), [], [], {}
    return said


def _rule(gate: GateResult, rule_id: str) -> Rule:
    """The candidate's rule ``rule_id``; ``GATE_NO_SUCH_RULE`` when its norms have none."""
    rule = gate.comparison.new.norms.rule(rule_id)
    if rule is None:
        raise fail("GATE_NO_SUCH_RULE", rule_id=rule_id,
                   rules=", ".join(r.id for r in gate.comparison.new.norms.rules) or "none")
    return rule


def rule_sentence(gate: GateResult, rule_id: str) -> str:
    """One decided rule of the candidate's gate state in the words the gate's findings use.

    Parameters
    ----------
    gate : GateResult
    rule_id : str
        A rule of the candidate's norms whose condition was decided (it holds or it does not).

    Returns
    -------
    str
        E.g. ``"the model ranks held-out cases with an AUROC of 0.60, below the 0.70 minimum"``; a rule that is
        not a plain comparison of a ground with a number is said by its note (else its condition).

    Raises
    ------
    AuditInputError
        ``GATE_NO_SUCH_RULE`` when the candidate's norms have no rule ``rule_id``.
    """
    state = gate.comparison.new
    rule = _rule(gate, rule_id)
    outcome = {t.rule_id: t.outcome for t in rule_outcomes(state)}[rule_id]
    template, facts, words, labels = _said(rule, dict(gate.comparison.new_grounds.values), gate,
                                           outcome == "holds", 0)
    return render(template, facts, words, labels)


def _unknown(gate: GateResult) -> tuple[list[str], list[str]]:
    """Grounds the rules in scope need but no run provides: plain names and symbols."""
    state = gate.comparison.new
    absent = set(gate.grounds_absent)
    names: list[str] = []
    for t in rule_outcomes(state):
        if t.outcome == "unknown":
            rule = _rule(gate, t.rule_id)
            names += [g for g in re.findall(_NAME, rule.when) if g in absent and g not in names]
    return [ground_words(g) for g in names], names


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def rule_unknown_grounds(gate: GateResult, rule_id: str) -> list[str]:
    """The grounds no run provides that one rule reads, in its condition or its authority scope, in order."""
    state = gate.comparison.new
    rule = _rule(gate, rule_id)
    absent = set(gate.grounds_absent)
    text = rule.when + " " + str(state.authority_map.get(rule_id, ""))
    return [g for g in dict.fromkeys(re.findall(_NAME, text)) if g in absent]


def unknown_reason(gate: GateResult, rule_id: str) -> str:
    """Why one rule of the candidate's gate could not be decided, in the words of the gate's findings.

    Returns
    -------
    str
        E.g. ``"how far the stated probabilities are off on the target domain (ECE) is unknown, because no
        saved run provides it"``; ``"its condition could not be decided"`` when it reads no absent ground.
    """
    ids = rule_unknown_grounds(gate, rule_id)
    if not ids:
        return "its condition could not be decided"
    return _why_unknown(gate, [ground_words(g) for g in ids], ids)


def _why_unknown(gate: GateResult, names: list[str], ids: list[str]) -> str:
    """The unknown grounds in words, split by why: no saved run of the kind that provides them, or a saved run
    that does not define them (a multi-class run has no ECE-15 of a positive class); the reasons are in the
    grounds table."""
    rep = gate.comparison.new_grounds.report
    detail = dict(zip(rep["ground"], rep["detail"], strict=True)) if {"ground", "detail"} <= set(rep.columns) else {}
    absent = [n for n, g in zip(names, ids, strict=True) if str(detail.get(g, "no selected run")).startswith("no selected run")]
    forecast = [(n, str(detail[g])) for n, g in zip(names, ids, strict=True) if str(detail.get(g, "")).startswith("unknown:")]
    undefined = [n for n in names if n not in absent and n not in {f for f, _ in forecast}]
    parts = [f"{n} is {why} (only the target's labels can settle it)" for n, why in forecast]
    for group, why in ((absent, "unknown, because no saved run provides {}"),
                       (undefined, "not defined for the saved runs given (their kind or target does not have {})")):
        if group:
            one = len(group) == 1
            parts.append(and_list(group) + (" is " if one else " are ") + why.format("it" if one else "them"))
    return ", and ".join(parts)


def gate_findings(gate: GateResult) -> list[Finding]:
    """Plain-language findings of a release gate between run sets A (baseline) and B (candidate).

    Returns
    -------
    list of Finding
        The verdict and what blocks (or why it cannot be decided); the checks
        that passed; what is unknown; what accounts for a change from A (or
        that the verdict did not change). Rule ids, ground names and the
        receipt are in each finding's ``detail``.
    """
    new = gate.comparison.new
    adj = adjudicate(new, missing="unknown")
    out: list[Finding] = []
    unknown, unknown_ids = _unknown(gate)
    blocks = _plain_rules(gate, "holds", 0)
    governed = str(adj.governed_by).strip("()")
    detail = "; ".join([f"verdict {adj.verdict} ({governed}) under the {gate.scope} scope", *blocks[4]])
    if gate.grounds_absent:
        detail += "; grounds no run provides: " + ", ".join(gate.grounds_absent)
    if adj.verdict != "refer" and blocks[0]:
        template = "Release is " + VERDICT_WORDS.get(adj.verdict, adj.verdict) + ": " + "; ".join(blocks[0]) + "."
        out.append(Finding.of(kind="gate_verdict", severity="alert" if adj.verdict == "block" else "warning",
                              template=template, facts=blocks[1], words=blocks[2], labels=blocks[3], detail=detail))
    elif adj.verdict == "refer" and unknown:
        out.append(Finding.of(kind="gate_verdict", severity="warning", detail=detail,
                              template="Release cannot be decided yet: " + _why_unknown(gate, unknown, unknown_ids)
                                       + "."))
    elif adj.verdict == "refer":
        out.append(Finding.of(kind="gate_verdict", severity="warning", detail=detail, labels={"scope": gate.scope},
                              template="Release cannot be decided: no release rule applies to the {scope} scope."))
    else:
        out.append(Finding(text="Release is allowed: every check that applies passed.", severity="good",
                           kind="gate_verdict", detail=detail))
    passed = _plain_rules(gate, "does not hold", len(blocks[0]))
    if passed[0]:
        out.append(Finding.of(kind="gate_passed", severity="good", template="Passed: " + "; ".join(passed[0]) + ".",
                              facts=passed[1], words=passed[2], labels=passed[3], detail="; ".join(passed[4])))
    if unknown and adj.verdict != "refer":
        out.append(Finding.of(kind="gate_absent", severity="warning", detail="unknown grounds: " + ", ".join(unknown_ids),
                              template="Not known: " + _why_unknown(gate, unknown, unknown_ids) + "."))
    if gate.verdict_a == gate.verdict_b:
        out.append(Finding(text=f"The verdict is the same as for the baseline runs ({VERDICT_WORDS.get(gate.verdict_a, gate.verdict_a)}).",
                           severity="info", kind="gate_change", detail=f"verdict {gate.verdict_a} in both"))
    else:
        causes = [" and ".join(_source_words(s) for s in sources) for sources in gate.receipt]
        why = " or ".join(causes) if causes else "the changes together"
        out.append(Finding(text=f"Against the baseline runs the verdict goes from "
                                f"{VERDICT_WORDS.get(gate.verdict_a, gate.verdict_a)} to "
                                f"{VERDICT_WORDS.get(gate.verdict_b, gate.verdict_b)}; {why} alone "
                                f"account{'s' if len(causes) == 1 and ' and ' not in why else ''} for the change.",
                           severity="info", kind="gate_change",
                           detail=f"verdict {gate.verdict_a} → {gate.verdict_b}; receipt {gate.receipt_text}"))
    return out


def _source_words(source: str) -> str:
    """A receipt source in words: ``G:ood_ece`` -> the ground's plain name; norms and authority by their part."""
    part, _, name = source.partition(":")
    if part == "G":
        return "the deployment scope" if name == "deployment_scope" else ground_words(name)
    return {"N": f"the release rule {name}", "A": f"who may apply the rule {name}"}.get(part, source)
