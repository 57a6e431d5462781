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

Extraction rules (documented in ``docs/receipts.md``)
-----------------------------------------------------
``test_auroc``/``test_log_loss``: model runs, else fragility runs (both
store the workspace's table ``metrics``; ``split == "test"``).
``brittle_share_confident``: fragility runs, table ``summary``: among rows
with ``p_hat >= 0.8``, the mean of the brittle flag: column ``brittle``,
else the first column starting with ``brittle``, else ``donor_any`` (the
Fragility audit's default label: any flip under donor replacement).
``mean_fds``: mean of ``summary.fds``. ``ood_ece``: transport runs, table
``results``: mean ``value`` over rows with ``metric == "ece"`` and
``domain == "ood"`` and, when a ``mapping`` column exists, ``mapping ==
"raw"`` (no mapping is picked by its target-domain result).
``worst_class_coverage_90``: ``results`` rows with ``alpha == 0.10`` and
``domain == "ood"``: ``metric == "worst_class_coverage"`` if present, else
the minimum over metrics named like ``coverage_class*``/``class_coverage*``
(mean over refits first). ``n_transport_sensitive``: transport ``verdicts``
table, rows whose verdict column equals ``transport-sensitive``. When
several runs provide a ground, the newest run wins.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.receipts.state import EvaluatorState, load_state, state_from_dict
from audit_core.receipts.state_cube import StateCube, execute_state_cube
from audit_core.safe_text import load_yaml

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

Extractor = Callable[[RunRecord], "tuple[float | None, str]"]


@dataclass(frozen=True)
class GroundSpec:
    """One gate ground: its name, the audit kind(s) it comes from and its extractor.

    ``audit_kind`` is one kind or a tuple of kinds, in order of preference.
    """

    name: str
    audit_kind: str | tuple[str, ...]
    description: str
    extract: Extractor = field(repr=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.audit_kind,) if isinstance(self.audit_kind, str) else tuple(self.audit_kind)


def _table(run: RunRecord, name: str) -> pd.DataFrame | None:
    t = run.tables.get(name)
    return t if isinstance(t, pd.DataFrame) and not t.empty else None


def _need(df: pd.DataFrame, cols: Sequence[str]) -> str | None:
    missing = [c for c in cols if c not in df.columns]
    return f"columns {missing} missing" if missing else None


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def _metric(metric: str) -> Extractor:
    def ex(run: RunRecord):
        df = _table(run, "metrics")
        if df is None:
            return None, "no 'metrics' table"
        if (why := _need(df, ["split", "metric", "value"])):
            return None, why
        rows = df[(df["split"] == "test") & (df["metric"] == metric)]
        v = _num(rows["value"].mean()) if len(rows) else None
        return (v, "metrics: split=test") if v is not None else (None, f"no finite test {metric}")
    return ex


def _brittle_share(run: RunRecord):
    df = _table(run, "summary")
    if df is None:
        return None, "no 'summary' table"
    flag = "brittle" if "brittle" in df.columns else next((c for c in df.columns if str(c).startswith("brittle")), None)
    if flag is None and "donor_any" in df.columns:
        flag = "donor_any"
    if flag is None or "p_hat" not in df.columns:
        return None, "summary needs 'p_hat' and a 'brittle…' or 'donor_any' column"
    conf = pd.to_numeric(df["p_hat"], errors="coerce") >= 0.8
    if not conf.any():
        return None, "no confident case (p_hat >= 0.8)"
    v = _num(df.loc[conf, flag].astype(float).mean())
    return (v, f"summary: mean of {flag!r} where p_hat >= 0.8") if v is not None else (None, "brittle flags not numeric")


def _mean_fds(run: RunRecord):
    df = _table(run, "summary")
    if df is None or "fds" not in df.columns:
        return None, "no 'summary.fds'"
    v = _num(pd.to_numeric(df["fds"], errors="coerce").mean())
    return (v, "summary: mean fds") if v is not None else (None, "fds not numeric")


def _transport_rows(run: RunRecord) -> tuple[pd.DataFrame | None, str]:
    df = _table(run, "results")
    if df is None:
        return None, "no 'results' table"
    if (why := _need(df, ["metric", "value", "domain"])):
        return None, why
    df = df[df["domain"].astype(str) == "ood"]
    if "mapping" in df.columns:
        df = df[df["mapping"].astype(str) == "raw"]
    return df, ""


def _ood_ece(run: RunRecord):
    df, why = _transport_rows(run)
    if df is None:
        return None, why
    rows = df[df["metric"].astype(str) == "ece"]
    v = _num(pd.to_numeric(rows["value"], errors="coerce").mean()) if len(rows) else None
    return (v, "results: ece, domain=ood, mapping=raw") if v is not None else (None, "no OOD ECE rows")


def _worst_cov(run: RunRecord):
    df, why = _transport_rows(run)
    if df is None:
        return None, why
    if "alpha" not in df.columns:
        return None, "results has no 'alpha' column"
    df = df[np.isclose(pd.to_numeric(df["alpha"], errors="coerce"), 0.10)]
    m = df["metric"].astype(str)
    direct = df[m == "worst_class_coverage"]
    if len(direct):
        v = _num(pd.to_numeric(direct["value"], errors="coerce").mean())
    else:
        per = df[m.str.match(r"(coverage_class|class_coverage)")]
        if not len(per):
            return None, "no class-coverage rows at alpha 0.10"
        v = _num(per.groupby("metric")["value"].mean().min())
    return (v, "results: alpha=0.10, domain=ood") if v is not None else (None, "coverage not numeric")


def _n_sensitive(run: RunRecord):
    df = _table(run, "verdicts")
    if df is None:
        return None, "no 'verdicts' table"
    col = "verdict" if "verdict" in df.columns else next((c for c in df.columns if "verdict" in str(c)), None)
    if col is None:
        return None, "verdicts has no verdict column"
    return float((df[col].astype(str) == "transport-sensitive").sum()), f"verdicts: count of {col!r} == transport-sensitive"


#: Gate grounds and their extractors (extend here when audits gain outputs).
GROUND_SPECS: tuple[GroundSpec, ...] = (
    GroundSpec("test_auroc", ("model", "fragility"), "held-out AUROC of the model", _metric("auroc")),
    GroundSpec("test_log_loss", ("model", "fragility"), "held-out log loss", _metric("log_loss")),
    GroundSpec("brittle_share_confident", "fragility", "share of brittle cases among confident ones (p̂ ≥ 0.8)",
               _brittle_share),
    GroundSpec("mean_fds", "fragility", "mean fragility score (FDS)", _mean_fds),
    GroundSpec("ood_ece", "transport", "ECE on the target (OOD) test, raw mapping", _ood_ece),
    GroundSpec("worst_class_coverage_90", "transport", "worst-class conformal coverage at 90% (α = 0.10), OOD",
               _worst_cov),
    GroundSpec("n_transport_sensitive", "transport", "metrics classified transport-sensitive", _n_sensitive),
)


@dataclass(frozen=True)
class GateGrounds:
    """Extracted grounds and the report of where each came from (or why it is absent)."""

    values: dict[str, float | None]
    report: pd.DataFrame = field(repr=False)

    @property
    def absent(self) -> list[str]:
        return [k for k, v in self.values.items() if v is None]

    def to_frame(self) -> pd.DataFrame:
        return self.report.copy()


def extract_gate_grounds(runs: Sequence[RunRecord]) -> GateGrounds:
    """Run every extractor over ``runs`` (newest first wins); absent grounds are ``None``.

    Parameters
    ----------
    runs : sequence of RunRecord
        Any mix of audit kinds; missing tables or columns are tolerated.
    """
    ordered = sorted(runs, key=lambda r: r.created_at, reverse=True)
    values: dict[str, float | None] = {}
    rows = []
    for spec in GROUND_SPECS:
        found, reasons = None, []
        for run in sorted(ordered, key=lambda r: spec.kinds.index(r.audit_kind) if r.audit_kind in spec.kinds else 0):
            if run.audit_kind not in spec.kinds:
                continue
            v, why = spec.extract(run)
            if v is not None:
                found = (v, run.run_id, why)
                break
            reasons.append(f"{run.run_id}: {why}")
        if found is None:
            values[spec.name] = None
            why = "; ".join(reasons) if reasons else "no selected run of kind " + " or ".join(map(repr, spec.kinds))
            rows.append({"ground": spec.name, "value": None, "status": "absent → UNKNOWN", "source": "",
                         "detail": why, "description": spec.description})
        else:
            values[spec.name] = found[0]
            rows.append({"ground": spec.name, "value": found[0], "status": "present", "source": found[1],
                         "detail": found[2], "description": spec.description})
    return GateGrounds(values, pd.DataFrame(rows, columns=["ground", "value", "status", "source", "detail",
                                                           "description"]))


def gate_state(grounds: GateGrounds, *, deployment_scope: str, rules_yaml: str = DEFAULT_GATE_YAML,
               name: str = "release gate") -> EvaluatorState:
    """The gate evaluator: extracted grounds + ``deployment_scope`` + rules (YAML with norms and authority).

    Raises
    ------
    AuditInputError
        ``RC_STATE_*`` when the rules text is invalid, e.g. a rule reads a
        ground the gate does not declare.
    """
    data = load_yaml(rules_yaml, what="The gate rules",
                     syntax=lambda reason: fail("RC_STATE_SYNTAX", label="gate rules", fmt="YAML", reason=reason))
    if not isinstance(data, dict):
        raise fail("RC_STATE_NOT_MAPPING", label="gate rules", allowed="norms, authority", got=type(data).__name__)
    g = {k: {"type": "number", "value": v} for k, v in grounds.values.items()}
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
    """
    go, gn = extract_gate_grounds(old_runs), extract_gate_grounds(new_runs)
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
        rows = [{"ground": g, "value_a": a.get(g), "value_b": b.get(g),
                 "status_b": "present" if b.get(g) is not None else "absent → UNKNOWN",
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
