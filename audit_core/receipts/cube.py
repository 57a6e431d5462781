"""Executed judgment cubes and receipts over ``k`` named sources.

A *source* is a named part of the evaluator state that a revision may
replace. For ``k`` sources there are ``2^k`` hybrids ("cells"): cell ``S``
takes the sources in ``S`` from the new state and all others from the old
state, so ``cell(∅)`` is the old endpoint and ``cell(all)`` the new one.

The **receipt** of a revision whose endpoints disagree is the complete
family of inclusion-minimal sets ``S`` with ``cell(S) == v_new``. Endpoints
that agree have no receipt (a no-op revision).

Two execution modes give the same receipt:

* ``"pruned"`` (certification): evaluate the endpoints, then enumerate
  interior sets by increasing size, skipping every superset of a set
  already found. A set reached this way that reproduces ``v_new`` is
  minimal, because any reproducing proper subset would contain a smaller
  minimal set, found earlier, and the set would have been skipped. No
  monotonicity is assumed. Worst case ``2^k - 2`` interior calls.
* ``"full"``: evaluate all ``2^k`` cells (for display, cube-cell accuracy
  and the inverse-transition relation).

The cube of a revision between two evaluator states (its sources, hybrids
and adjudicator traces) is :mod:`audit_core.receipts.state_cube`.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = [
    "MAX_SOURCES",
    "Family",
    "CubeResult",
    "execute_cube",
    "minimal_sets_bruteforce",
    "inverse_receipt",
    "format_family",
    "parse_family",
]

#: Largest supported number of sources (4,096 cells).
MAX_SOURCES = 12

register_messages(
    {
        "RC_CUBE_SOURCES": "{problem}",
        "RC_CUBE_TOO_MANY_SOURCES": (
            "The revision changes {k} items ({names}); a cube over more than "
            "{limit} sources is not executed. Use granularity 'parts' (G, N, A), "
            "split the revision, or raise the cap (environment variable AUDIT_MAX_CUBE_K, at most 20)."
        ),
        "RC_CUBE_NEEDS_FULL": "{what} needs the full cube; execute it with mode='full'.",
        "RC_FAMILY_SYNTAX": (
            "Cannot read the receipt family {text!r}: {problem}. Write sets such as "
            "'{{G}} | {{N,A}}', or 'none'."
        ),
    }
)

Family = tuple[frozenset, ...]


def _order_family(family, index: Mapping[str, int]) -> Family:
    return tuple(sorted(family, key=lambda s: (len(s), sorted(index[x] for x in s))))


def format_family(family: Sequence[frozenset] | None, sources: Sequence[str] | None = None) -> str:
    """Canonical text of a receipt family, e.g. ``"{G} | {A,N}"``; ``"none"`` if empty.

    Names inside a set follow ``sources`` order when given, else sorted;
    sets are sorted by size then by that order.
    """
    if not family:
        return "none"
    index = {s: i for i, s in enumerate(sources)} if sources is not None else None
    if index is None:
        names = sorted(set().union(*family))
        index = {s: i for i, s in enumerate(names)}
    fam = _order_family(family, index)
    return " | ".join("{" + ",".join(sorted(s, key=index.__getitem__)) + "}" for s in fam)


def parse_family(text: str) -> Family:
    """Inverse of :func:`format_family` (order-insensitive)."""
    t = text.strip()
    if t in ("none", ""):
        return ()
    out = []
    for part in t.split("|"):
        p = part.strip()
        if not (p.startswith("{") and p.endswith("}")):
            raise fail("RC_FAMILY_SYNTAX", text=text, problem=f"{p!r} is not a set in braces")
        names = [x.strip() for x in p[1:-1].split(",") if x.strip()]
        if not names:
            raise fail("RC_FAMILY_SYNTAX", text=text, problem="a set is empty")
        out.append(frozenset(names))
    return tuple(out)


@dataclass(frozen=True)
class CubeResult:
    """An executed cube.

    Parameters
    ----------
    sources : tuple of str
        Source names; cell keys are subsets of these (the replaced sources).
    v_old, v_new : str
        Endpoint verdicts.
    cells : Mapping[frozenset, str]
        Executed cells (all ``2^k`` in full mode).
    receipt : tuple of frozenset
        The complete family of inclusion-minimal replacement sets that
        reproduce ``v_new``; empty when the endpoints agree.
    calls : int
        Adjudicator calls made (endpoints included).
    mode : {"full", "pruned"}
    """

    sources: tuple[str, ...]
    v_old: str
    v_new: str
    cells: Mapping[frozenset, str]
    receipt: Family
    calls: int
    mode: str

    @property
    def k(self) -> int:
        return len(self.sources)

    @property
    def changed(self) -> bool:
        return self.v_old != self.v_new

    @property
    def interior_calls(self) -> int:
        return self.calls - 2

    @property
    def receipt_text(self) -> str:
        return format_family(self.receipt, self.sources)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "v_old": self.v_old,
            "v_new": self.v_new,
            "changed": self.changed,
            "receipt": [sorted(s) for s in self.receipt],
            "receipt_text": self.receipt_text,
            "calls": self.calls,
            "mode": self.mode,
            "cells": {"+".join(sorted(s, key=self.sources.index)) or "(old)": v for s, v in self.cells.items()},
        }

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, mode: str = "full") -> "CubeResult":
        """Rebuild a full cube from its stored :meth:`to_frame` table (e.g. a saved run's ``cells``).

        Source order is that of the largest cell; ``calls`` is the number of
        rows. Extra columns (``governed_by``, ``reason``) are ignored.

        Examples
        --------
        >>> r = execute_cube(("G", "N"), lambda s: "new" if "G" in s else "old", mode="full")
        >>> CubeResult.from_frame(r.to_frame()) == r
        True
        """
        def names(label: str) -> tuple[str, ...]:
            inner = str(label).strip()[1:-1]
            return tuple(x for x in inner.split(",") if x) if inner else ()

        labels = [names(c) for c in frame["cell"]]
        sources = max(labels, key=len) if labels else ()
        cells = {frozenset(n): str(v) for n, v in zip(labels, frame["verdict"], strict=True)}
        v_old = cells.get(frozenset(), "")
        v_new = cells.get(frozenset(sources), v_old)
        rec = [frozenset(n) for n, r in zip(labels, frame["in_receipt"], strict=True) if bool(r)]
        index = {s: i for i, s in enumerate(sources)}
        return cls(tuple(sources), v_old, v_new, cells, _order_family(rec, index), len(cells), mode)

    def to_frame(self) -> pd.DataFrame:
        """One row per executed cell: ``cell``, ``size``, ``verdict``, ``reproduces_new``, ``in_receipt``."""
        idx = {s: i for i, s in enumerate(self.sources)}
        keys = sorted(self.cells, key=lambda s: (len(s), sorted(idx[x] for x in s)))
        rec = set(self.receipt)
        rows = [{
            "cell": "{" + ",".join(sorted(s, key=idx.__getitem__)) + "}",
            "size": len(s),
            "verdict": self.cells[s],
            "reproduces_new": self.cells[s] == self.v_new,
            "in_receipt": s in rec,
        } for s in keys]
        return pd.DataFrame(rows, columns=["cell", "size", "verdict", "reproduces_new", "in_receipt"])


def _check_sources(sources: Sequence[str], max_sources: int = MAX_SOURCES) -> tuple[str, ...]:
    src = tuple(sources)
    if not src:
        raise fail("RC_CUBE_SOURCES", problem="A cube needs at least one source.")
    if len(set(src)) != len(src):
        raise fail("RC_CUBE_SOURCES", problem=f"Source names must be distinct: {list(src)}.")
    if len(src) > max_sources:
        raise fail("RC_CUBE_TOO_MANY_SOURCES", k=len(src), names=", ".join(src[:20]), limit=max_sources)
    return src


def _run_masks(k: int, cell: Callable[[int], str], mode: str) -> tuple[dict[int, str], list[int], int]:
    full = (1 << k) - 1
    done: dict[int, str] = {0: cell(0)}
    if full not in done:
        done[full] = cell(full)
    calls = len(done)
    v_old, v_new = done[0], done[full]
    if mode == "full":
        for m in range(1, full):
            done[m] = cell(m)
            calls += 1
    elif mode != "pruned":
        raise ValueError("mode must be 'pruned' or 'full'")
    found: list[int] = []
    if v_old == v_new:
        return done, found, calls
    for size in range(1, k):
        for combo in itertools.combinations(range(k), size):
            m = 0
            for i in combo:
                m |= 1 << i
            if any(m & f == f for f in found):
                continue
            v = done.get(m)
            if v is None:
                v = cell(m)
                done[m] = v
                calls += 1
            if v == v_new:
                found.append(m)
    if not found:
        found.append(full)
    return done, found, calls


def execute_cube(
    sources: Sequence[str],
    judge: Callable[[frozenset], str],
    *,
    mode: Literal["pruned", "full"] = "pruned",
    max_sources: int = MAX_SOURCES,
) -> CubeResult:
    """Execute a cube over named sources and return its receipt.

    Parameters
    ----------
    sources : sequence of str
        ``k`` distinct names (1 ≤ k ≤ :data:`MAX_SOURCES`).
    judge : callable
        ``judge(replaced) -> verdict`` for the hybrid that takes the sources
        in the frozenset ``replaced`` from the new state. Must be
        deterministic.
    mode : {"pruned", "full"}, default "pruned"
    max_sources : int, default :data:`MAX_SOURCES`
        Refuse (``RC_CUBE_TOO_MANY_SOURCES``) a cube over more sources; the
        app passes ``Limits.from_env().max_cube_k`` (``AUDIT_MAX_CUBE_K``).

    Returns
    -------
    CubeResult

    Examples
    --------
    >>> r = execute_cube(["G", "N", "A"], lambda s: "deny" if ("G" in s or "N" in s) else "ok")
    >>> r.receipt_text, r.calls
    ('{G} | {N}', 5)
    """
    src = _check_sources(sources, max_sources)
    k = len(src)

    def cell(m: int) -> str:
        return judge(frozenset(src[i] for i in range(k) if m >> i & 1))

    done, found, calls = _run_masks(k, cell, mode)
    to_set = lambda m: frozenset(src[i] for i in range(k) if m >> i & 1)  # noqa: E731
    cells = {to_set(m): v for m, v in done.items()}
    index = {s: i for i, s in enumerate(src)}
    receipt = _order_family([to_set(m) for m in found], index) if done[0] != done[(1 << k) - 1] else ()
    return CubeResult(src, done[0], done[(1 << k) - 1], cells, receipt, calls, mode)


def minimal_sets_bruteforce(sources: Sequence[str], cells: Mapping[frozenset, str], target: str) -> Family:
    """All inclusion-minimal sets whose cell equals ``target``.

    Checks every proper subset of every hit (no pruning, no monotonicity
    assumed); ``cells`` must hold every subset that is checked.
    """
    src = tuple(sources)
    index = {s: i for i, s in enumerate(src)}
    hits = set()
    for s, v in cells.items():
        if v == target:
            m = 0
            for x in s:
                m |= 1 << index[x]
            hits.add(m)
    minimal = []
    for m in hits:
        sub = (m - 1) & m
        ok = True
        while True:
            if sub != m and sub in hits:
                ok = False
                break
            if sub == 0:
                break
            sub = (sub - 1) & m
        if ok:
            minimal.append(frozenset(src[i] for i in range(len(src)) if m >> i & 1))
    return _order_family(minimal, index)


def inverse_receipt(cube: CubeResult) -> Family:
    """Receipt of the inverse transition (new → old), read off the executed cube.

    Cell ``T`` of the inverse cube equals cell ``all \\ T`` of this cube, so
    the inverse receipt is the family of minimal ``T`` with
    ``cell(all \\ T) == v_old``.
    """
    if len(cube.cells) != 2 ** cube.k:
        raise fail("RC_CUBE_NEEDS_FULL", what="The inverse-transition relation")
    if not cube.changed:
        return ()
    allset = frozenset(cube.sources)
    flipped = {allset - s: v for s, v in cube.cells.items()}
    return minimal_sets_bruteforce(cube.sources, flipped, cube.v_old)
