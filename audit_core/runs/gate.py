"""The audit release gate as a versioned evaluator.

* **Grounds** come from saved registry runs through the extractors in
  :data:`GROUND_SPECS` (one place to extend when new audits land). Every
  declared ground is always present in the state: a ground no run provides
  is declared *unknown* (``value: null``) and the extraction report says
  why. Unknown grounds are never guessed; under the default norms
  (``on_unknown: refer``) a rule that needs one makes the verdict ``refer``.
* **Norms** are editable release rules (:data:`DEFAULT_GATE_YAML`), written
  as *violations* that block a release; the default verdict is
  ``release``.
* **Authority** says which rules apply to which deployment scope, through
  the ground ``deployment_scope``.

Comparing two sets of runs, or one set under edited rules or scope, is a
cube over the revision; the receipt names the grounds, rules or authority
entries that account for a changed release verdict.

The grounds and their exact definitions are in :mod:`audit_core.runs.grounds`
(and the table of ``docs/receipts.md``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from audit_core.errors import fail
from audit_core.receipts.state import EvaluatorState, state_from_dict
from audit_core.receipts.state_cube import StateCube, execute_state_cube
from audit_core.safe_text import load_yaml

from .forecast_grounds import ForecastRequest, check_sources, is_forecast_ground, split_rules
from .grounds import GROUND_SPECS, GateGrounds, GroundSpec, extract_gate_grounds
from .registry import RunRecord

__all__ = ["GroundSpec", "GROUND_SPECS", "DEFAULT_GATE_YAML", "DEPLOYMENT_SCOPES", "GateGrounds",
           "GateComparison", "GateResult", "DEFAULT_GATE_SCOPE", "RELEASE", "extract_gate_grounds", "gate_state",
           "compare_gate", "compare_runs"]

#: Deployment scopes offered by the UI (any text is accepted).
DEPLOYMENT_SCOPES: tuple[str, ...] = ("research", "internal", "production", "regulated")

#: Default release rules; edit them as YAML (the ``grounds`` are filled from runs).
DEFAULT_GATE_YAML = """\
norms:
  default: release
  on_unknown: refer
  rules:
    - id: ood_ece
      when: ood_ece > 0.05
      then: block
      note: OOD ECE must be at most 0.05
    - id: worst_class_coverage
      when: worst_class_coverage_90 < 0.85
      then: block
      note: worst-class coverage at 90% must be at least 0.85
    - id: brittle_confident
      when: brittle_share_confident > 0.10
      then: block
      note: at most 10% of confident cases may be brittle
    - id: discrimination
      when: test_auroc < 0.70
      then: block
      note: held-out AUROC must be at least 0.70
authority:
  ood_ece: deployment_scope in ["production", "regulated"]
  worst_class_coverage: deployment_scope == "regulated"
  brittle_confident: deployment_scope in ["production", "regulated"]
  discrimination: deployment_scope != "research"
"""

def _rules(rules_yaml: str) -> tuple[dict, list[ForecastRequest], list[tuple[str, list[str]]]]:
    """The parsed rules (``source``/``assumption``/``method`` taken out), their forecast grounds and, per measured
    rule, the Transport grounds it reads (:func:`~audit_core.runs.forecast_grounds.split_rules`)."""
    data = load_yaml(rules_yaml, what="The gate rules",
                     syntax=lambda reason: fail("RC_STATE_SYNTAX", label="gate rules", fmt="YAML", reason=reason))
    if not isinstance(data, dict):
        raise fail("RC_STATE_NOT_MAPPING", label="gate rules", allowed="norms, authority", got=type(data).__name__)
    return split_rules(data)


def gate_state(grounds: GateGrounds, *, deployment_scope: str, rules_yaml: str = DEFAULT_GATE_YAML,
               name: str = "release gate") -> EvaluatorState:
    """The gate evaluator: extracted grounds + ``deployment_scope`` + rules (YAML with norms and authority).

    A rule with ``source: forecast`` reads forecast grounds (:mod:`.forecast_grounds`); each is declared, UNKNOWN
    when ``grounds`` does not hold it.

    Raises
    ------
    AuditInputError
        ``RC_STATE_*`` when the rules text is invalid, e.g. a rule reads a
        ground the gate does not declare; ``GATE_*`` for a bad ``source``,
        ``assumption`` or ``method``, or a forecast rule under ``on_unknown: skip``.
    """
    data, requests, _ = _rules(rules_yaml)
    g = {k: {"type": "number", "value": v} for k, v in grounds.values.items()}
    g.update({r.name: {"type": "number", "value": grounds.values.get(r.name)} for r in requests})
    g["deployment_scope"] = {"type": "text", "value": deployment_scope}
    return state_from_dict({"name": name, "grounds": g, **data}, label="gate rules")


@dataclass(frozen=True)
class GateComparison:
    """Two gate states and the executed cube between them."""

    old: EvaluatorState
    new: EvaluatorState
    old_grounds: GateGrounds
    new_grounds: GateGrounds
    cube: StateCube

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old.to_dict(), "new": self.new.to_dict(), "cube": self.cube.to_dict()}


def compare_gate(
    old_runs: Sequence[RunRecord],
    new_runs: Sequence[RunRecord],
    *,
    old_scope: str,
    new_scope: str,
    old_rules: str = DEFAULT_GATE_YAML,
    new_rules: str | None = None,
    granularity: Literal["parts", "items"] = "items",
) -> GateComparison:
    """Execute the release-gate cube between two runs (or one run under edited rules or scope).

    Returns
    -------
    GateComparison
        ``cube.receipt`` names what accounts for a changed release verdict
        (e.g. ``{G:ood_ece}``); empty when the verdict did not change.

    Raises
    ------
    AuditInputError
        ``GATE_MEASURED_ON_FORECAST`` / ``GATE_FORECAST_ON_MEASURED`` when a
        rule's source is one a side's Transport runs cannot give
        (:func:`~audit_core.runs.forecast_grounds.check_sources`), and as
        :func:`gate_state`.
    """
    rules_old = _rules(old_rules)
    rules_new = _rules(new_rules) if new_rules is not None else rules_old
    check_sources(old_runs, rules_old[1], rules_old[2])  # a rule never falls back from one source to the other
    check_sources(new_runs, rules_new[1], rules_new[2])
    go = extract_gate_grounds(old_runs, forecast=rules_old[1]) if rules_old[1] else extract_gate_grounds(old_runs)
    gn = extract_gate_grounds(new_runs, forecast=rules_new[1]) if rules_new[1] else extract_gate_grounds(new_runs)
    old = gate_state(go, deployment_scope=old_scope, rules_yaml=old_rules, name="gate (old)")
    new = gate_state(gn, deployment_scope=new_scope, rules_yaml=new_rules if new_rules is not None else old_rules,
                     name="gate (new)")
    cube = execute_state_cube(old, new, granularity=granularity, mode="full")
    return GateComparison(old, new, go, gn, cube)


#: The release verdict of the default norms; a gate passes when the candidate's verdict is this.
RELEASE = "release"
#: Scope used by :func:`compare_runs` (and ``reliability-audit gate``) unless one is given.
DEFAULT_GATE_SCOPE = "production"


@dataclass(frozen=True, kw_only=True, eq=False)
class GateResult:
    """The release gate between a baseline run set (A) and a candidate (B).

    Attributes
    ----------
    passed : bool
        The candidate's release verdict is ``"release"``.
    verdict_a, verdict_b : str
        Release verdicts of the two endpoints (``release``, ``block`` or ``refer``).
    receipt : tuple of tuple of str
        The complete family of inclusion-minimal source sets (e.g.
        ``(("G:brittle_share_confident",),)``) that turn A's verdict into
        B's; empty when the verdict did not change.
    receipt_text : str
    grounds_used : tuple of str
        Grounds present in B (with a value).
    grounds_absent : tuple of str
        Grounds no run of B provides (``UNKNOWN``; a rule that needs one
        refers under the default norms).
    scope : str
        Deployment scope of both endpoints.
    run_ids_a, run_ids_b : tuple of str
    comparison : GateComparison
        The executed cube and both states (for the Receipts page).
    """

    passed: bool
    verdict_a: str
    verdict_b: str
    receipt: tuple[tuple[str, ...], ...]
    receipt_text: str
    grounds_used: tuple[str, ...]
    grounds_absent: tuple[str, ...]
    scope: str
    run_ids_a: tuple[str, ...]
    run_ids_b: tuple[str, ...]
    comparison: GateComparison = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per ground: value in A and B, status in B, and whether it is in a receipt set."""
        a = self.comparison.old_grounds.values
        b = self.comparison.new_grounds.values
        in_receipt = {name.split(":", 1)[-1] for s in self.receipt for name in s if name.startswith("G:")}
        def status(g: str) -> str:
            if is_forecast_ground(g):
                return "present (forecast)" if b.get(g) is not None else "unknown (forecast)"
            return "present" if b.get(g) is not None else "absent → UNKNOWN"

        rows = [{"ground": g, "value_a": a.get(g), "value_b": b.get(g), "status_b": status(g),
                 "in_receipt": g in in_receipt} for g in b]
        return pd.DataFrame(rows, columns=["ground", "value_a", "value_b", "status_b", "in_receipt"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed, "verdict_a": self.verdict_a, "verdict_b": self.verdict_b,
            "receipt": [list(s) for s in self.receipt], "receipt_text": self.receipt_text,
            "grounds_used": list(self.grounds_used), "grounds_absent": list(self.grounds_absent),
            "scope": self.scope, "run_ids_a": list(self.run_ids_a), "run_ids_b": list(self.run_ids_b),
            "cube": self.comparison.cube.to_dict(),
        }

    def summary_text(self) -> str:
        """One line: verdicts, pass/fail, receipt and absent grounds."""
        absent = f"; absent grounds: {', '.join(self.grounds_absent)}" if self.grounds_absent else ""
        return (f"release gate ({self.scope}): A {self.verdict_a} -> B {self.verdict_b}: "
                f"{'PASSED' if self.passed else 'FAILED'}; receipt {self.receipt_text}{absent}")


def _runs(x: RunRecord | Sequence[RunRecord]) -> list[RunRecord]:
    return [x] if isinstance(x, RunRecord) else list(x)


def compare_runs(
    record_a: RunRecord | Sequence[RunRecord],
    record_b: RunRecord | Sequence[RunRecord],
    *,
    rules_yaml: str | None = None,
    scope: str | None = None,
) -> GateResult:
    """The release gate between saved runs: A (baseline) → B (candidate).

    Parameters
    ----------
    record_a, record_b : RunRecord or sequence of RunRecord
        Each side's runs (any mix of kinds; grounds are extracted with
        :func:`extract_gate_grounds`, newest run first).
    rules_yaml : str, optional
        Norms and authority (default :data:`DEFAULT_GATE_YAML`), used for both sides.
    scope : str, optional
        Deployment scope of both sides (default :data:`DEFAULT_GATE_SCOPE`).
        Under the default rules, ``production`` applies the OOD-ECE,
        brittleness and discrimination rules, so a candidate without a
        transport run has ``ood_ece`` UNKNOWN and is *referred*, which does
        not pass; ``internal`` applies the discrimination rule only.

    Returns
    -------
    GateResult
        ``passed`` is True when B's verdict is ``release``; the receipt names
        what accounts for a changed verdict (items granularity).

    Raises
    ------
    AuditInputError
        Invalid rules text (``RC_STATE_*``).
    """
    runs_a, runs_b = _runs(record_a), _runs(record_b)
    scope = DEFAULT_GATE_SCOPE if scope is None else str(scope)
    comp = compare_gate(runs_a, runs_b, old_scope=scope, new_scope=scope,
                        old_rules=DEFAULT_GATE_YAML if rules_yaml is None else rules_yaml)
    cube = comp.cube.cube
    order = {n: i for i, n in enumerate(cube.sources)}
    receipt = tuple(tuple(sorted(s, key=order.__getitem__)) for s in cube.receipt)
    values = comp.new_grounds.values
    return GateResult(
        passed=cube.v_new == RELEASE, verdict_a=cube.v_old, verdict_b=cube.v_new, receipt=receipt,
        receipt_text=cube.receipt_text,
        grounds_used=tuple(k for k, v in values.items() if v is not None),
        grounds_absent=tuple(comp.new_grounds.absent), scope=scope,
        run_ids_a=tuple(r.run_id for r in runs_a), run_ids_b=tuple(r.run_id for r in runs_b), comparison=comp,
    )
