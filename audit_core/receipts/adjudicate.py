"""The adjudicator: a deterministic function from an evaluator state to a verdict.

Semantics (SPEC §3, with the UNKNOWN policy made explicit)
----------------------------------------------------------
Rules are visited in order. For each rule:

1. **Authority.** The rule's scope (from ``A``) is evaluated on the grounds.
   A rule with no authority entry, or whose scope is false, has no authority
   and is passed over. A scope that is UNKNOWN (it reads an unknown ground)
   follows the norms' ``on_unknown`` policy (below).
2. **Condition.** For an authorised rule the condition is evaluated: true
   -> the rule *governs* and its disposition is the verdict; false -> next
   rule; UNKNOWN -> ``on_unknown``.

``on_unknown="refer"`` (the default) stops at the first rule whose scope or
condition is UNKNOWN and returns ``refer``: the case cannot be decided
without the missing ground, and no later rule or default may decide it on
incomplete evidence. ``on_unknown="skip"`` records the rule as
``skipped (unknown)`` in the trace and continues.

After the last rule: if no rule had authority (all scopes false, absent or
skipped as unknown) the verdict is ``refer`` (absent jurisdiction escalates,
it does not decide on the merits); otherwise the norms' declared default.

Names that no ground declares follow ``missing``: ``"error"`` (default)
raises ``RC_MISSING_GROUND``; ``"unknown"`` treats them as UNKNOWN. A ground
declared with ``value: null`` is always UNKNOWN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from audit_core.errors import AuditInputError, fail, register_messages
from audit_core.expr import UNKNOWN, evaluate_record, referenced_names

from .state import EvaluatorState, compile_expression

__all__ = ["REFER", "RuleTrace", "Adjudication", "adjudicate", "rule_outcomes"]

#: The verdict when no rule has authority (or an UNKNOWN forces referral).
REFER = "refer"

register_messages(
    {
        "RC_MISSING_GROUND": (
            "{where} refers to the ground `{name}`, which this state's grounds do "
            "not declare. Declare it (value: null means unknown), or choose to "
            "treat undeclared grounds as unknown; grounds are never guessed."
        ),
        "RC_EVALUATION": "While evaluating {where}: {message}",
        "RC_BAD_CONDITION_VALUE": (
            "{where} evaluated to {value!r}, which is not true/false; conditions "
            "and scopes must be true/false expressions such as `amount > 100`."
        ),
    }
)


@dataclass(frozen=True)
class RuleTrace:
    """What happened to one rule during adjudication.

    ``authority`` is ``"yes"``, ``"no"``, ``"unknown"`` or ``"none"`` (no
    entry in A); ``condition`` is ``"true"``, ``"false"``, ``"unknown"`` or
    ``"-"`` (not evaluated); ``outcome`` is ``"governs"``, ``"passed"``,
    ``"no authority"``, ``"skipped (unknown)"``, ``"refer (unknown)"`` or
    ``"not reached"``.
    """

    rule_id: str
    then: str
    authority: str
    condition: str
    outcome: str

    def to_dict(self) -> dict[str, str]:
        return {"rule_id": self.rule_id, "then": self.then, "authority": self.authority,
                "condition": self.condition, "outcome": self.outcome}


@dataclass(frozen=True)
class Adjudication:
    """A verdict with its trace.

    Parameters
    ----------
    verdict : str
    governed_by : str
        A rule id, ``"(default)"``, ``"(no authority)"`` or
        ``"(unknown: <rule id>)"``.
    reason : str
        One sentence: which rule governed and why.
    trace : tuple of RuleTrace
    """

    verdict: str
    governed_by: str
    reason: str
    trace: tuple[RuleTrace, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "governed_by": self.governed_by, "reason": self.reason,
                "trace": [t.to_dict() for t in self.trace]}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([t.to_dict() for t in self.trace],
                            columns=["rule_id", "then", "authority", "condition", "outcome"])


def _truth(v: object, where: str) -> str:
    if v is UNKNOWN:
        return "unknown"
    if v is True:
        return "true"
    if v is False:
        return "false"
    raise fail("RC_BAD_CONDITION_VALUE", where=where, value=v)


class Judge:
    """Adjudicator with a memo of expression results (internal; used by the cube).

    The memo key is ``(grounds, expression text)``: an expression depends only
    on the grounds, so each is evaluated at most once per grounds version
    within one cube (or across cubes sharing a judge).
    """

    def __init__(self, *, missing: Literal["error", "unknown"] = "error") -> None:
        if missing not in ("error", "unknown"):
            raise ValueError("missing must be 'error' or 'unknown'")
        self.missing = missing
        self.memo: dict[tuple[tuple, str], str] = {}
        self.calls = 0

    def truth(self, state: EvaluatorState, text: str, where: str) -> str:
        """``"true"``, ``"false"`` or ``"unknown"``: the expression ``text`` on the state's grounds (memoised).

        ``where`` names the expression in an error.
        """
        key = (state.grounds, text)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        tree = compile_expression(text)
        record = state.record
        if self.missing == "error":
            for n in referenced_names(tree):
                if n not in record:
                    raise fail("RC_MISSING_GROUND", where=where, name=n)
        try:
            value = evaluate_record(tree, record, unknown=self.missing)
        except AuditInputError as err:
            raise fail("RC_EVALUATION", where=where, message=err.message) from None
        out = _truth(value, where)
        self.memo[key] = out
        return out

    def __call__(self, state: EvaluatorState) -> Adjudication:
        self.calls += 1
        norms = state.norms
        scopes = state.authority_map
        trace: list[RuleTrace] = []
        any_authority = False
        result: tuple[str, str, str] | None = None
        for rule in norms.rules:
            if result is not None:
                trace.append(RuleTrace(rule.id, rule.then, "-", "-", "not reached"))
                continue
            scope = scopes.get(rule.id)
            if scope is None:
                trace.append(RuleTrace(rule.id, rule.then, "none", "-", "no authority"))
                continue
            auth = self.truth(state, scope, f"the authority scope of rule {rule.id!r}")
            if auth == "false":
                trace.append(RuleTrace(rule.id, rule.then, "no", "-", "no authority"))
                continue
            if auth == "unknown":
                if norms.on_unknown == "refer":
                    trace.append(RuleTrace(rule.id, rule.then, "unknown", "-", "refer (unknown)"))
                    result = (REFER, f"(unknown: {rule.id})",
                              f"The authority of rule {rule.id!r} depends on an unknown ground; "
                              "the norms say refer when a rule cannot be evaluated.")
                    continue
                trace.append(RuleTrace(rule.id, rule.then, "unknown", "-", "skipped (unknown)"))
                continue
            any_authority = True
            cond = self.truth(state, rule.when, f"the condition of rule {rule.id!r}")
            if cond == "true":
                trace.append(RuleTrace(rule.id, rule.then, "yes", "true", "governs"))
                result = (rule.then, rule.id,
                          f"Rule {rule.id!r} is the first authorised rule whose condition holds "
                          f"({rule.when}); it gives {rule.then!r}.")
            elif cond == "false":
                trace.append(RuleTrace(rule.id, rule.then, "yes", "false", "passed"))
            elif norms.on_unknown == "refer":
                trace.append(RuleTrace(rule.id, rule.then, "yes", "unknown", "refer (unknown)"))
                result = (REFER, f"(unknown: {rule.id})",
                          f"The condition of authorised rule {rule.id!r} is unknown (it reads an unknown "
                          "ground); the norms say refer rather than guess.")
            else:
                trace.append(RuleTrace(rule.id, rule.then, "yes", "unknown", "skipped (unknown)"))
        if result is None:
            if not any_authority:
                result = (REFER, "(no authority)",
                          "No rule has authority over this case, so it is referred, not decided on the merits.")
            else:
                result = (norms.default, "(default)",
                          f"No authorised rule fires; the norms' declared default {norms.default!r} applies.")
        return Adjudication(result[0], result[1], result[2], tuple(trace))


def adjudicate(state: EvaluatorState, *, missing: Literal["error", "unknown"] = "error") -> Adjudication:
    """Judge one state: the verdict and the trace of which rule governed and why.

    Parameters
    ----------
    state : EvaluatorState
    missing : {"error", "unknown"}, default "error"
        What a reference to an undeclared ground means (see module docs).

    Returns
    -------
    Adjudication

    Examples
    --------
    >>> from audit_core.receipts.state import load_state
    >>> s = load_state('{"grounds": {"x": 3}, "norms": {"default": "ok", '
    ...                '"rules": [{"id": "r", "when": "x > 2", "then": "no"}]}, "authority": {}}')
    >>> adjudicate(s).verdict
    'refer'
    """
    return Judge(missing=missing)(state)


def rule_outcomes(state: EvaluatorState, *, missing: Literal["error", "unknown"] = "unknown") -> tuple[RuleTrace, ...]:
    """Every rule judged on its own, in order, without stopping at the first that governs or is unknown.

    :func:`adjudicate` stops at the rule that decides the verdict; a reader also wants to know, of every rule,
    whether it applies and holds. Here each rule's ``authority`` and ``condition`` are evaluated
    (``"true"``/``"false"``/``"unknown"``; ``condition`` is ``"-"`` without authority) and its ``outcome`` is
    ``"holds"``, ``"does not hold"``, ``"unknown"`` or ``"no authority"``.
    """
    judge = Judge(missing=missing)
    scopes = state.authority_map
    out = []
    for rule in state.norms.rules:
        scope = scopes.get(rule.id)
        auth = "none" if scope is None else judge.truth(state, scope, f"the authority scope of rule {rule.id!r}")
        if auth in ("none", "false"):
            out.append(RuleTrace(rule.id, rule.then, auth, "-", "no authority"))
            continue
        cond = judge.truth(state, rule.when, f"the condition of rule {rule.id!r}")
        outcome = "unknown" if "unknown" in (auth, cond) else {"true": "holds", "false": "does not hold"}[cond]
        out.append(RuleTrace(rule.id, rule.then, auth, cond, outcome))
    return tuple(out)
