"""Paired consistency controls: source-order permutation, irrelevant distractor, inverse transition.

Each control is a transformation of a case with a *required relation*
between the receipt of the case and that of its control:

* ``permutation`` - the same revision with the sources listed (and
  serialised) in another order. Relation: identical receipt.
* ``distractor`` - the same ground and the same rule added to *both* states:
  a ground no condition reads and a rule whose authority scope is ``false``
  (it governs nothing). Relation: identical receipt.
* ``inverse`` - old and new swapped. Relation, derived from the executed
  cube: the inverse receipt is the family of minimal ``T`` with
  ``cell(all \\ T) == v_old`` (:func:`audit_core.receipts.cube.inverse_receipt`).

For *predictions* (where no gold is consulted) :func:`pair_relation_holds`
checks what any correct pair must satisfy; a violated pair proves that at
least one of the two predictions is wrong. For the inverse control these are
the necessary conditions: both or neither predict a change; predicted
endpoint verdicts are swapped; no predicted inverse set ``T`` has its
complement among the predicted forward sets (that cell would have to give
both verdicts); and, when the forward prediction includes a cube, the
inverse family equals the one read off that predicted cube.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd

from .cube import MAX_SOURCES, Family, format_family, inverse_receipt, minimal_sets_bruteforce
from .state import EvaluatorState, Ground, Norms, Rule
from .state_cube import StateCube, execute_state_cube

__all__ = ["CONTROLS", "permute_sources", "add_distractor", "invert", "pair_relation_holds", "cube_controls"]

#: The three paired controls.
CONTROLS: tuple[str, ...] = ("permutation", "distractor", "inverse")
ControlKind = Literal["permutation", "distractor", "inverse"]


def permute_sources(sources: Sequence[str], *, seed: int) -> tuple[str, ...]:
    """A seeded permutation of ``sources`` that differs from the input when possible."""
    src = list(sources)
    if len(src) < 2:
        return tuple(src)
    rng = random.Random(seed)
    out = list(src)
    while out == src:
        rng.shuffle(out)
    return tuple(out)


def add_distractor(state: EvaluatorState, *, seed: int) -> EvaluatorState:
    """Add an unread ground and a rule with scope ``false`` (it governs nothing)."""
    rng = random.Random(seed)
    tag = rng.randrange(10_000)
    gname = f"memo_ref_{tag}"
    while gname in state.record:
        tag += 1
        gname = f"memo_ref_{tag}"
    grounds = tuple(sorted(state.grounds + (Ground(gname, "number", rng.randrange(1, 999)),),
                           key=lambda g: g.name))
    rid = f"zz_archived_{tag}"
    when = f"{gname} > {rng.randrange(1, 999)}"
    rules = state.norms.rules + (Rule(rid, when, "archive"),)
    return EvaluatorState(
        grounds=grounds,
        norms=Norms(rules, state.norms.default, state.norms.on_unknown),
        authority=state.authority + ((rid, "false"),),
        name=state.name,
    )


def invert(old: EvaluatorState, new: EvaluatorState) -> tuple[EvaluatorState, EvaluatorState]:
    """The inverse transition: ``(new, old)``."""
    return new, old


def _fam(x) -> set[frozenset]:
    return {frozenset(s) for s in (x or ())}


def pair_relation_holds(
    control: ControlKind | str,  # another string raises ValueError (a gold case's control is a plain str)
    base: Mapping[str, Any],
    other: Mapping[str, Any],
    *,
    sources: Sequence[str],
) -> bool:
    """Whether two *predictions* satisfy the control's required relation.

    Parameters
    ----------
    control : {"permutation", "distractor", "inverse"}
    base, other : mapping
        Predictions with ``receipt`` (iterable of sets), optional ``v_old``,
        ``v_new`` and ``cube`` (mapping frozenset -> verdict over all
        ``2^k`` cells).
    sources : sequence of str
        The base case's sources.
    """
    fb, fo = _fam(base.get("receipt")), _fam(other.get("receipt"))
    if control in ("permutation", "distractor"):
        same_verdicts = all(base.get(k) == other.get(k) for k in ("v_old", "v_new")
                            if base.get(k) is not None and other.get(k) is not None)
        return fb == fo and same_verdicts
    if control != "inverse":
        raise ValueError(f"unknown control {control!r}")
    if bool(fb) != bool(fo):
        return False
    if base.get("v_old") is not None and other.get("v_new") is not None and base["v_old"] != other["v_new"]:
        return False
    if base.get("v_new") is not None and other.get("v_old") is not None and base["v_new"] != other["v_old"]:
        return False
    allset = frozenset(sources)
    if any((allset - t) in fb for t in fo):
        return False
    cube = base.get("cube")
    if cube and fb and len(cube) == 2 ** len(allset):
        v_old = cube.get(frozenset())
        flipped = {allset - s: v for s, v in cube.items()}
        required: Family = minimal_sets_bruteforce(tuple(sources), flipped, v_old)
        return set(required) == fo
    return True


def cube_controls(
    old: EvaluatorState, new: EvaluatorState, executed: StateCube, *,
    granularity: Literal["parts", "items"] = "parts", missing: Literal["error", "unknown"] = "error",
    max_sources: int = MAX_SOURCES,
) -> pd.DataFrame:
    """Execute the three paired controls of one revision and check their required relations.

    Parameters
    ----------
    old, new : EvaluatorState
    executed : StateCube
        The revision's executed cube (:func:`~audit_core.receipts.state_cube.execute_state_cube`).
    granularity, missing, max_sources
        As used for ``executed``.

    Returns
    -------
    DataFrame
        ``control, transformation, relation, executed receipt, holds``; the
        permutation control needs at least two sources.
    """
    cube = executed.cube
    rows = []
    if cube.k >= 2:
        perm = permute_sources(cube.sources, seed=0)
        pc = execute_state_cube(old, new, granularity=granularity, mode="pruned", missing=missing, sources=perm,
                                max_sources=max(max_sources, cube.k)).cube
        rows.append(("permutation", "order " + ", ".join(perm), "identical receipt", pc.receipt_text,
                     set(pc.receipt) == set(cube.receipt)))
    dc = execute_state_cube(add_distractor(old, seed=0), add_distractor(new, seed=0), granularity=granularity,
                            mode="pruned", missing=missing, max_sources=max(max_sources, cube.k + 2)).cube
    rows.append(("distractor", "unread ground + rule with scope false, in both states", "identical receipt",
                 dc.receipt_text, set(dc.receipt) == set(cube.receipt)))
    ic = execute_state_cube(new, old, granularity=granularity, mode="pruned", missing=missing,
                            max_sources=max(max_sources, cube.k)).cube
    req = inverse_receipt(cube) if cube.k else ()
    rows.append(("inverse", "old and new swapped", "required: " + format_family(req, cube.sources),
                 ic.receipt_text, set(ic.receipt) == set(req)))
    return pd.DataFrame(rows, columns=["control", "transformation", "relation", "executed receipt", "holds"])
