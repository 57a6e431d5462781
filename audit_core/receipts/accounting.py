"""Accounting of predicted receipts against executed (gold) ones.

Definitions (per case; a *predicted change* is a non-empty predicted
receipt family, a *gold change* is ``v_old != v_new`` in the executed cube):

* **drift** - a change is predicted where there is none. Rate over gold
  no-change cases.
* **inertia** - a real change is missed (empty predicted family). Rate over
  gold changes.
* **misattribution** - a gold change with a predicted change whose family is
  not the gold family. Rate over gold changes. It is counted whether or not
  the predicted endpoint verdicts are right; ``misattribution_verdicts_correct``
  counts those where both endpoint verdicts were right (right answer,
  wrong reason).
* **receipt accuracy** - the predicted family equals the gold family exactly
  (both empty for no-change cases). Over all cases.
* **verdict accuracy** - both predicted endpoint verdicts right, over cases
  that predicted verdicts.
* **cube-cell accuracy** - share of the ``2^k`` cells whose predicted verdict
  equals the executed one, over cases that predicted a cube.
* **reason debt** at threshold ``t`` - among *accepted* changes (predicted
  change with confidence ``>= t``), the share whose family is wrong. Always
  reported with the **accepted coverage** (accepted / predicted changes that
  carry a confidence) and the **gold-change recall** (accepted, correct and
  a gold change / gold changes among cases with a confidence). Predictions
  without a confidence are left out of reason debt and counted.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .controls import pair_relation_holds
from .generator import BenchCase

__all__ = [
    "Gold",
    "Prediction",
    "Accounting",
    "ReasonDebt",
    "Consistency",
    "account",
    "reason_debt",
    "reason_debt_grid",
    "control_consistency",
    "gold_from_benchmark",
]


@dataclass(frozen=True)
class Gold:
    """The executed truth of one case."""

    case_id: str
    sources: tuple[str, ...]
    v_old: str
    v_new: str
    receipt: frozenset  # of frozensets
    cells: Mapping[frozenset, str] = field(repr=False)
    control: str = ""
    base_id: str = ""

    @property
    def changed(self) -> bool:
        return self.v_old != self.v_new


@dataclass(frozen=True)
class Prediction:
    """A predicted account of one case (from a learned evaluator, an LLM, an upload...)."""

    case_id: str
    receipt: frozenset  # of frozensets; empty = "no change"
    v_old: str | None = None
    v_new: str | None = None
    cube: Mapping[frozenset, str] | None = field(default=None, repr=False)
    confidence: float | None = None

    def as_mapping(self) -> dict[str, Any]:
        return {"receipt": self.receipt, "v_old": self.v_old, "v_new": self.v_new, "cube": self.cube}


def _rate(num: int, den: int) -> float:
    return float(num / den) if den else float("nan")


@dataclass(frozen=True)
class Accounting:
    """Counts and rates of one scored set of predictions (see module docs)."""

    n: int
    n_gold_change: int
    n_gold_no_change: int
    drift: int
    inertia: int
    misattribution: int
    misattribution_verdicts_correct: int
    receipt_correct: int
    n_with_verdicts: int
    verdict_correct: int
    n_with_cube: int
    cube_cells_correct: int
    cube_cells_total: int
    n_missing: int
    per_case: pd.DataFrame = field(repr=False, compare=False)

    @property
    def drift_rate(self) -> float:
        return _rate(self.drift, self.n_gold_no_change)

    @property
    def inertia_rate(self) -> float:
        return _rate(self.inertia, self.n_gold_change)

    @property
    def misattribution_rate(self) -> float:
        return _rate(self.misattribution, self.n_gold_change)

    @property
    def receipt_accuracy(self) -> float:
        return _rate(self.receipt_correct, self.n)

    @property
    def verdict_accuracy(self) -> float:
        return _rate(self.verdict_correct, self.n_with_verdicts)

    @property
    def cube_cell_accuracy(self) -> float:
        return _rate(self.cube_cells_correct, self.cube_cells_total)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n, "n_gold_change": self.n_gold_change, "n_gold_no_change": self.n_gold_no_change,
            "verdict_accuracy": self.verdict_accuracy, "receipt_accuracy": self.receipt_accuracy,
            "drift": self.drift, "drift_rate": self.drift_rate,
            "inertia": self.inertia, "inertia_rate": self.inertia_rate,
            "misattribution": self.misattribution, "misattribution_rate": self.misattribution_rate,
            "misattribution_verdicts_correct": self.misattribution_verdicts_correct,
            "n_with_cube": self.n_with_cube, "cube_cell_accuracy": self.cube_cell_accuracy,
            "n_missing_predictions": self.n_missing,
        }

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.to_dict().items()), columns=["metric", "value"])


def account(gold: Mapping[str, Gold], predictions: Iterable[Prediction]) -> Accounting:
    """Score predictions against the executed gold.

    Parameters
    ----------
    gold : mapping case_id -> Gold
        The cases to score; a gold case without a prediction counts in
        ``n_missing`` and is left out of every rate.
    predictions : iterable of Prediction
        Predictions for ids not in ``gold`` are ignored.

    Returns
    -------
    Accounting
    """
    preds = {p.case_id: p for p in predictions if p.case_id in gold}
    rows = []
    c = dict(drift=0, inertia=0, mis=0, mis_ok=0, rec=0, nv=0, vok=0, nc=0, cok=0, ctot=0, ch=0)
    for cid, g in gold.items():
        p = preds.get(cid)
        if p is None:
            continue
        pf = frozenset(frozenset(s) for s in p.receipt)
        gf = frozenset(g.receipt)
        pchange = bool(pf)
        vok = None
        if p.v_old is not None and p.v_new is not None:
            vok = p.v_old == g.v_old and p.v_new == g.v_new
            c["nv"] += 1
            c["vok"] += int(vok)
        kind = "correct"
        if g.changed:
            c["ch"] += 1
            if not pchange:
                c["inertia"] += 1
                kind = "inertia"
            elif pf != gf:
                c["mis"] += 1
                c["mis_ok"] += int(bool(vok))
                kind = "misattribution"
        elif pchange:
            c["drift"] += 1
            kind = "drift"
        c["rec"] += int(pf == gf)
        cells_ok = None
        if p.cube is not None:
            c["nc"] += 1
            cells_ok = sum(p.cube.get(s) == v for s, v in g.cells.items())
            c["cok"] += cells_ok
            c["ctot"] += len(g.cells)
        rows.append({"case_id": cid, "gold_change": g.changed, "predicted_change": pchange, "outcome": kind,
                     "receipt_correct": pf == gf, "verdicts_correct": vok, "cube_cells_correct": cells_ok,
                     "confidence": p.confidence})
    n = len(rows)
    return Accounting(
        n=n, n_gold_change=c["ch"], n_gold_no_change=n - c["ch"], drift=c["drift"], inertia=c["inertia"],
        misattribution=c["mis"], misattribution_verdicts_correct=c["mis_ok"], receipt_correct=c["rec"],
        n_with_verdicts=c["nv"], verdict_correct=c["vok"], n_with_cube=c["nc"], cube_cells_correct=c["cok"],
        cube_cells_total=c["ctot"], n_missing=len(gold) - n,
        per_case=pd.DataFrame(rows, columns=["case_id", "gold_change", "predicted_change", "outcome",
                                             "receipt_correct", "verdicts_correct", "cube_cells_correct",
                                             "confidence"]),
    )


@dataclass(frozen=True)
class ReasonDebt:
    """Reason debt at one confidence threshold, with its coverage and recall."""

    threshold: float
    n_with_confidence: int
    n_predicted_changes: int
    n_accepted: int
    n_accepted_wrong: int
    accepted_coverage: float
    reason_debt: float
    gold_change_recall: float
    n_without_confidence: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def reason_debt(gold: Mapping[str, Gold], predictions: Iterable[Prediction], *, threshold: float) -> ReasonDebt:
    """Reason debt at ``threshold`` (see module docs)."""
    nc = npc = acc = wrong = ok_gold = gold_ch = no_conf = 0
    for p in predictions:
        g = gold.get(p.case_id)
        if g is None:
            continue
        if p.confidence is None:
            no_conf += 1
            continue
        nc += 1
        gold_ch += int(g.changed)
        pf = frozenset(frozenset(s) for s in p.receipt)
        if not pf:
            continue
        npc += 1
        if p.confidence >= threshold:
            acc += 1
            right = pf == frozenset(g.receipt)
            wrong += int(not right)
            ok_gold += int(right and g.changed)
    return ReasonDebt(float(threshold), nc, npc, acc, wrong, _rate(acc, npc), _rate(wrong, acc),
                      _rate(ok_gold, gold_ch), no_conf)


def reason_debt_grid(gold: Mapping[str, Gold], predictions: Sequence[Prediction], *,
                     thresholds: Sequence[float] = tuple(np.round(np.linspace(0.0, 0.95, 20), 2))) -> pd.DataFrame:
    """:func:`reason_debt` across a grid of thresholds, one row each."""
    preds = list(predictions)
    return pd.DataFrame([reason_debt(gold, preds, threshold=t).to_dict() for t in thresholds])


@dataclass(frozen=True)
class Consistency:
    """Paired-control consistency of predictions: a rate per control and the violating pairs."""

    rates: Mapping[str, float]
    counts: Mapping[str, int]
    violations: tuple[tuple[str, str, str], ...]  # (control, base id, control id)

    def to_dict(self) -> dict[str, Any]:
        return {"rates": dict(self.rates), "counts": dict(self.counts),
                "violations": [list(v) for v in self.violations]}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"control": k, "pairs": self.counts[k], "consistency_rate": self.rates[k],
                              "violations": sum(v[0] == k for v in self.violations)} for k in self.rates])


def control_consistency(gold: Mapping[str, Gold], predictions: Iterable[Prediction]) -> Consistency:
    """Consistency rate of predicted pairs for each control present in ``gold``.

    A pair is (base case, control case), linked by ``Gold.base_id``; a pair
    with either prediction missing is skipped.
    """
    preds = {p.case_id: p for p in predictions}
    rates: dict[str, float] = {}
    counts: dict[str, int] = {}
    viol: list[tuple[str, str, str]] = []
    held: dict[str, list[bool]] = {}
    for cid, g in gold.items():
        if not g.control:
            continue
        base, other = preds.get(g.base_id), preds.get(cid)
        bg = gold.get(g.base_id)
        if base is None or other is None or bg is None:
            continue
        ok = pair_relation_holds(g.control, base.as_mapping(), other.as_mapping(), sources=bg.sources)
        held.setdefault(g.control, []).append(ok)
        if not ok:
            viol.append((g.control, g.base_id, cid))
    for k, v in held.items():
        counts[k] = len(v)
        rates[k] = float(np.mean(v))
    return Consistency(rates, counts, tuple(viol))


def gold_from_benchmark(cases: Iterable[BenchCase]) -> dict[str, Gold]:
    """Gold for :class:`audit_core.receipts.generator.BenchCase` objects."""
    out = {}
    for c in cases:
        cube = c.cube
        out[c.case_id] = Gold(c.case_id, tuple(sorted(cube.sources, key="GNA".index)) if set(cube.sources) <= set("GNA")
                              else cube.sources, cube.v_old, cube.v_new, frozenset(cube.receipt), cube.cells,
                              c.control, c.base_id)
    return out
