"""The cube of a revision ``old → new`` between two evaluator states, with every cell's adjudication.

:func:`state_sources` splits a revision either into the three parts
``("G", "N", "A")`` or into the individual items that differ
(``"G:<ground>"``, ``"N:<rule id>"``, ``"N:default"``, ``"N:order"``,
``"A:<rule id>"``); :func:`hybrid_state` builds each cell's hybrid state and
:func:`execute_state_cube` executes the cube (:mod:`audit_core.receipts.cube`)
by adjudicating every hybrid.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from audit_core.errors import fail

from .adjudicate import Adjudication, Judge
from .cube import MAX_SOURCES, CubeResult, Family, execute_cube
from .state import EvaluatorState, Norms, Rule

__all__ = ["StateCube", "state_sources", "hybrid_state", "execute_state_cube"]


def _merged_order(base: list[str], other: list[str]) -> list[str]:
    """``base`` order, with ids only in ``other`` inserted after their predecessor there."""
    out = list(base)
    for i, rid in enumerate(other):
        if rid in out:
            continue
        pred = next((other[j] for j in range(i - 1, -1, -1) if other[j] in out), None)
        out.insert(out.index(pred) + 1 if pred is not None else 0, rid)
    return out


def state_sources(old: EvaluatorState, new: EvaluatorState, *,
                  granularity: Literal["parts", "items"] = "parts") -> tuple[str, ...]:
    """Source names of a revision.

    ``"parts"`` always gives ``("G", "N", "A")``. ``"items"`` gives the items
    that differ, in the order grounds (by name), rules (new order, then
    old-only rules), ``N:default`` (default or on_unknown changed),
    ``N:order`` (the relative order of rules present in both changed),
    authority entries.
    """
    if granularity == "parts":
        return ("G", "N", "A")
    if granularity != "items":
        raise ValueError("granularity must be 'parts' or 'items'")
    out: list[str] = []
    go, gn = old.ground_map, new.ground_map
    out += [f"G:{n}" for n in sorted(set(go) | set(gn)) if go.get(n) != gn.get(n)]
    ro = {r.id: r for r in old.norms.rules}
    rn = {r.id: r for r in new.norms.rules}
    ids = [r.id for r in new.norms.rules] + [r.id for r in old.norms.rules if r.id not in rn]
    out += [f"N:{i}" for i in ids if ro.get(i) != rn.get(i)]
    if (old.norms.default, old.norms.on_unknown) != (new.norms.default, new.norms.on_unknown):
        out.append("N:default")
    common_o = [r.id for r in old.norms.rules if r.id in rn]
    common_n = [r.id for r in new.norms.rules if r.id in ro]
    if common_o != common_n:
        out.append("N:order")
    ao, an = old.authority_map, new.authority_map
    aids = [r for r in ids] + sorted((set(ao) | set(an)) - set(ids))
    out += [f"A:{i}" for i in aids if ao.get(i) != an.get(i)]
    return tuple(out)


def hybrid_state(old: EvaluatorState, new: EvaluatorState, replaced: frozenset,
                 *, granularity: Literal["parts", "items"] = "parts") -> EvaluatorState:
    """The hybrid taking the sources in ``replaced`` from ``new``, the rest from ``old``.

    Items mode: each ground, rule and authority entry comes from the chosen
    side (absent there = absent in the hybrid). Rule order follows the new
    state's order when ``N:order`` is replaced or is not a source (then both
    orders agree on common rules), else the old order; rules missing from
    that order are inserted after their predecessor in the other state.
    """
    if granularity == "parts":
        return EvaluatorState(
            grounds=(new if "G" in replaced else old).grounds,
            norms=(new if "N" in replaced else old).norms,
            authority=(new if "A" in replaced else old).authority,
            name="hybrid",
        )
    go, gn = old.ground_map, new.ground_map
    grounds = []
    for n in sorted(set(go) | set(gn)):
        g = gn.get(n) if f"G:{n}" in replaced else go.get(n)
        if go.get(n) == gn.get(n):
            g = go.get(n)
        if g is not None:
            grounds.append(g)
    ro = {r.id: r for r in old.norms.rules}
    rn = {r.id: r for r in new.norms.rules}
    lo, ln = [r.id for r in old.norms.rules], [r.id for r in new.norms.rules]
    common_o = [i for i in lo if i in rn]
    common_n = [i for i in ln if i in ro]
    use_new_order = common_o == common_n or "N:order" in replaced
    order = _merged_order(ln, lo) if use_new_order else _merged_order(lo, ln)
    rules: list[Rule] = []
    for rid in order:
        r = rn.get(rid) if f"N:{rid}" in replaced else ro.get(rid)
        if ro.get(rid) == rn.get(rid):
            r = ro.get(rid)
        if r is not None:
            rules.append(r)
    dn = new.norms if "N:default" in replaced else old.norms
    ao, an = old.authority_map, new.authority_map
    authority = []
    for rid in sorted(set(ao) | set(an)):
        s = an.get(rid) if f"A:{rid}" in replaced else ao.get(rid)
        if ao.get(rid) == an.get(rid):
            s = ao.get(rid)
        if s is not None:
            authority.append((rid, s))
    return EvaluatorState(grounds=tuple(grounds), norms=Norms(tuple(rules), dn.default, dn.on_unknown),
                          authority=tuple(authority), name="hybrid")


@dataclass(frozen=True)
class StateCube:
    """A cube executed on two evaluator states, with the trace of every executed cell."""

    cube: CubeResult
    granularity: str
    adjudications: Mapping[frozenset, Adjudication] = field(repr=False)

    @property
    def receipt(self) -> Family:
        return self.cube.receipt

    def to_dict(self) -> dict[str, Any]:
        out = self.cube.to_dict()
        out["granularity"] = self.granularity
        return out

    def to_frame(self) -> pd.DataFrame:
        """Cells with the governing rule and reason of each."""
        df = self.cube.to_frame()
        idx = {s: i for i, s in enumerate(self.cube.sources)}
        keys = sorted(self.cube.cells, key=lambda s: (len(s), sorted(idx[x] for x in s)))
        df["governed_by"] = [self.adjudications[s].governed_by for s in keys]
        df["reason"] = [self.adjudications[s].reason for s in keys]
        return df

    def trace_frame(self) -> pd.DataFrame:
        """Long table: one row per (cell, rule) with authority, condition and outcome."""
        idx = {s: i for i, s in enumerate(self.cube.sources)}
        rows = []
        for s in sorted(self.adjudications, key=lambda s: (len(s), sorted(idx[x] for x in s))):
            label = "{" + ",".join(sorted(s, key=idx.__getitem__)) + "}"
            for t in self.adjudications[s].trace:
                rows.append({"cell": label, **t.to_dict()})
        return pd.DataFrame(rows, columns=["cell", "rule_id", "then", "authority", "condition", "outcome"])


def execute_state_cube(
    old: EvaluatorState,
    new: EvaluatorState,
    *,
    granularity: Literal["parts", "items"] = "parts",
    mode: Literal["pruned", "full"] = "full",
    missing: Literal["error", "unknown"] = "error",
    sources: Sequence[str] | None = None,
    judge: Judge | None = None,
    max_sources: int = MAX_SOURCES,
) -> StateCube:
    """Execute the cube of a revision ``old → new``.

    Parameters
    ----------
    old, new : EvaluatorState
    granularity : {"parts", "items"}, default "parts"
    mode : {"pruned", "full"}, default "full"
    missing : {"error", "unknown"}, default "error"
        Passed to the adjudicator. A hybrid can combine grounds of one state
        with rules of the other; with ``"error"`` a rule reading a ground its
        hybrid lacks is a declared error (``RC_MISSING_GROUND``).
    sources : sequence of str, optional
        A permutation of :func:`state_sources` (the source-order control);
        the receipt does not depend on it.
    judge : Judge, optional
        Reuse an adjudicator (and its memo) across cubes.
    max_sources : int, default :data:`MAX_SOURCES`
        See :func:`execute_cube`.

    Returns
    -------
    StateCube
    """
    own = state_sources(old, new, granularity=granularity)
    if sources is None:
        src = own
    else:
        src = tuple(sources)
        if sorted(src) != sorted(own):
            raise fail("RC_CUBE_SOURCES", problem=f"Sources {list(src)} are not a permutation of {list(own)}.")
    if not src:  # items mode with identical states: nothing to replace
        j = judge or Judge(missing=missing)
        adj = j(old)
        cube = CubeResult((), adj.verdict, adj.verdict, {frozenset(): adj.verdict}, (), 1, mode)
        return StateCube(cube, granularity, {frozenset(): adj})
    j = judge or Judge(missing=missing)
    adjs: dict[frozenset, Adjudication] = {}

    def run(replaced: frozenset) -> str:
        if granularity == "parts" and not replaced:
            st = old
        elif granularity == "parts" and len(replaced) == 3:
            st = new
        else:
            st = hybrid_state(old, new, replaced, granularity=granularity)
        a = j(st)
        adjs[replaced] = a
        return a.verdict

    cube = execute_cube(src, run, mode=mode, max_sources=max_sources)
    return StateCube(cube, granularity, adjs)
