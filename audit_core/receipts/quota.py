"""Exact quotas of the benchmark generator: who must change the verdict, and a budget for getting there.

Every base case sits in a *cell* (stratum x split). Before any mutation is
drawn, each cell's cases get labels with exact counts:

* the mutation kinds ``noop`` / ``single`` / ``multi`` by ``mutation_mix``
  (largest remainder, :func:`~audit_core.receipts.bench_mix.apportion`);
* a target outcome for every ``single`` and ``multi`` case: ``round(change_share
  * cases)`` of the cell's cases must change the verdict (no-ops never do),
  split between single and multi in proportion to their counts.

The labels are shuffled within the cell (seeded), so outcome does not follow
generation order. The generator then draws candidate mutations for a case,
executes each candidate's new endpoint, and keeps the first whose outcome
(changed or not) is the case's target: rejection sampling kept to quota.

A world may resist its target (for example a logical world whose rules and
default all say ``fails``: no single edit changes its verdict). After
:data:`SWAP_AFTER` rejected candidates the case swaps its target with a
later, not yet generated case of the same cell and kind that has the
opposite target, and keeps the candidate in hand; the counts stay exact.
When no such case is left, :class:`Resisted` tells the generator to draw a
fresh base world for the unit and generate its cases again (the candidates
spent count against the budget). Every cell has a budget of ``budget`` candidates per mutated case; when it
is spent the generator stops with ``RC_BENCH_BUDGET``, naming the cell and
how far it got. With ``change_share=None`` nothing is steered: every case
keeps its first candidate (the natural, unbalanced benchmark).
"""
from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from audit_core.errors import fail, register_messages

from .bench_mix import apportion

__all__ = ["SWAP_AFTER", "Cell", "Resisted", "QuotaPlan", "GenerationStats"]

#: Rejected candidates after which a case swaps its target with a later case of its cell and kind.
SWAP_AFTER = 40

Cell = tuple[str, str]  # (stratum, split)

register_messages(
    {
        "RC_BENCH_BUDGET": (
            "The benchmark generator spent its budget of {limit} candidate mutations in stratum {stratum!r}, "
            "split {split!r} before filling the cell's quota: {made} of {quota} verdict-changing and "
            "{made_same} of {quota_same} unchanged mutated cases accepted so far. Lower change_share "
            "(now {share}) or raise budget (now {budget} candidates per mutated case)."
        ),
    }
)


class Resisted(Exception):
    """A case's world resists its target and no later case of its cell and kind can take the target over."""


@dataclass
class QuotaPlan:
    """Labels ``(kind, target)`` of every base case, with the per-cell budget (mutable; internal).

    Use :meth:`build`. ``target`` is ``True`` (must change the verdict),
    ``False`` (must not) or ``None`` (not steered; no-ops are ``False``).
    """

    labels: list[tuple[str, bool | None]]
    cells: list[Cell]
    change_share: float | None
    budget: float
    positions: dict[tuple[Cell, str], list[int]] = field(default_factory=dict)
    limit: dict[Cell, int] = field(default_factory=dict)
    tries: dict[Cell, int] = field(default_factory=dict)
    swaps: int = 0

    @classmethod
    def build(cls, cells: Sequence[Cell], *, mutation_mix: Sequence[float], change_share: float | None,
              budget: float, seed: int) -> "QuotaPlan":
        """Exact labels for base cases whose cells are ``cells`` (one per case, in generation order).

        Parameters
        ----------
        cells : sequence of (stratum, split), shape (n_cases,)
        mutation_mix : (noop, single, multi) shares
        change_share : float or None
            Share of each cell's cases that change the verdict.
        budget : float
            Candidates allowed per mutated case, pooled over the cell.
        seed : int
            Of the within-cell shuffle.

        Examples
        --------
        >>> p = QuotaPlan.build([("policy", "test")] * 20, mutation_mix=(0.15, 0.5, 0.35),
        ...                     change_share=0.6, budget=50, seed=0)
        >>> sorted((k, t, p.labels.count((k, t))) for k, t in set(p.labels))
        [('multi', False, 2), ('multi', True, 5), ('noop', False, 3), ('single', False, 3), ('single', True, 7)]
        """
        rng = random.Random(f"receipts-quota:{seed}")
        labels: list[tuple[str, bool | None]] = [("", None)] * len(cells)
        members: dict[Cell, list[int]] = {}
        for pos, cell in enumerate(cells):
            members.setdefault(cell, []).append(pos)
        plan = cls(labels, list(cells), change_share, budget)
        for cell in sorted(members):
            at = members[cell]
            n_noop, n_single, n_multi = apportion(len(at), mutation_mix)
            cell_labels: list[tuple[str, bool | None]] = []
            if change_share is None:
                cell_labels += ([("noop", False)] * n_noop + [("single", None)] * n_single
                               + [("multi", None)] * n_multi)
            else:
                n_change = min(math.floor(change_share * len(at) + 0.5), n_single + n_multi)
                c_single, c_multi = apportion(n_change, (n_single, n_multi))
                cell_labels += ([("noop", False)] * n_noop + [("single", True)] * c_single
                               + [("single", False)] * (n_single - c_single) + [("multi", True)] * c_multi
                               + [("multi", False)] * (n_multi - c_multi))
            rng.shuffle(cell_labels)
            for p, lab in zip(at, cell_labels, strict=True):
                labels[p] = lab
                plan.positions.setdefault((cell, lab[0]), []).append(p)
            plan.limit[cell] = math.ceil(budget * (n_single + n_multi))
            plan.tries[cell] = 0
        return plan

    def kind(self, pos: int) -> str:
        return self.labels[pos][0]

    def consider(self, pos: int, changed: bool, tries: int) -> bool:
        """Count one executed candidate of case ``pos``; whether to keep it.

        ``tries`` is the number of candidates this case has drawn so far.

        Raises
        ------
        AuditInputError
            ``RC_BENCH_BUDGET`` when the cell's budget is spent.
        Resisted
            After :data:`SWAP_AFTER` candidates, when no swap is possible.
        """
        cell = self.cells[pos]
        self.tries[cell] += 1
        kind, target = self.labels[pos]
        if target is None or changed == target:
            return True
        if self.tries[cell] >= self.limit[cell]:
            self._out_of_budget(pos)
        if tries >= SWAP_AFTER:
            if self._swap(pos):
                return True
            raise Resisted(pos)
        return False

    def _swap(self, pos: int) -> bool:
        kind, target = self.labels[pos]
        for other in self.positions[(self.cells[pos], kind)]:
            if other > pos and self.labels[other][1] is (not target):
                self.labels[pos], self.labels[other] = self.labels[other], self.labels[pos]
                self.swaps += 1
                return True
        return False

    def _out_of_budget(self, pos: int) -> None:
        cell = self.cells[pos]
        mutated = [p for k in ("single", "multi") for p in self.positions.get((cell, k), [])]
        done = [p for p in mutated if p < pos]
        quota = sum(self.labels[p][1] is True for p in mutated)
        made = sum(self.labels[p][1] is True for p in done)
        raise fail("RC_BENCH_BUDGET", limit=self.limit[cell], stratum=cell[0], split=cell[1], made=made,
                   quota=quota, made_same=len(done) - made, quota_same=len(mutated) - quota,
                   share=self.change_share, budget=self.budget)

    def check(self, pos: int, changed: bool) -> None:
        """Confirm that the certified cube of case ``pos`` has its planned outcome (an internal invariant)."""
        target = self.labels[pos][1]
        if target is not None and changed != target:
            raise RuntimeError(f"case at position {pos} was planned {'changed' if target else 'unchanged'} "
                               f"but its executed cube says {'changed' if changed else 'unchanged'}")


@dataclass(frozen=True)
class GenerationStats:
    """What steering the mutations cost.

    Parameters
    ----------
    candidates : int
        Candidate mutations executed for single and multi cases (those of
        redrawn worlds included).
    accepted : int
        Single and multi cases kept (one candidate each).
    swaps : int
        Targets swapped within a cell after a world resisted its target
        (:mod:`audit_core.receipts.quota`).
    redraws : int
        Base worlds drawn afresh because one resisted its target and no
        swap was left.
    seconds, cpu_seconds : float
        Wall and CPU time of the whole generation (certification included);
        not part of the benchmark's identity.
    """

    candidates: int
    accepted: int
    swaps: int
    redraws: int
    seconds: float = field(default=float("nan"), compare=False)
    cpu_seconds: float = field(default=float("nan"), compare=False)

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.candidates if self.candidates else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "accepted": self.accepted, "acceptance_rate": self.acceptance_rate,
                "swaps": self.swaps, "redraws": self.redraws, "seconds": self.seconds,
                "cpu_seconds": self.cpu_seconds}
