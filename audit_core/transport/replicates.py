"""The protocol's default bootstrap: the record bootstrap's replicates, reduced to cells.

:func:`binned_bootstrap` returns the same replicate changes as the exact path
of :func:`~audit_core.transport.changes.classify`
(``exact_bootstrap=True``): a dict keyed ``(model, mapping, weighting,
analysis, metric, alpha, selection_rate)`` of arrays of shape (R, B).

The replicates are the exact bootstrap's: the same seeds, chunks and draws
(:func:`~audit_core.transport.bootstrap.stratified_draws`), so both paths see
identical resamples and differ only in arithmetic
(:mod:`~audit_core.transport.binned`). A draw is never expanded into a
per-record count vector. Each drawn record is mapped straight to an *atom*:
the records that share a cell in every pipeline using the same draws (all
refits, models and mappings for the target domain, all models and mappings
of one refit for its ID test). Counting the draws per atom is one ``bincount``
per chunk and class; each pipeline's cell totals are then a sparse sum over
atoms.
"""
from __future__ import annotations

import numpy as np

from .binned import BinnedMetrics
from .cells import CellLayout
from .bootstrap import class_positions, stratified_draws
from .evaluation import bootstrap_columns
from .state import Tick, TransportState, no_tick

__all__ = ["binned_bootstrap", "DrawGroup"]


def _common_refinement(cells) -> np.ndarray:
    """Atom id (0 … atoms − 1) of every record: records share an atom iff they share every cell."""
    import pandas as pd

    atom = pd.factorize(np.asarray(cells[0]))[0].astype(np.int64)
    for cl in cells[1:]:
        atom = pd.factorize(atom * (int(np.max(cl)) + 1) + np.asarray(cl, dtype=np.int64))[0].astype(np.int64)
    return atom


class DrawGroup:
    """Cell totals of many pipelines that share one test set's draws.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels (the strata of the draws).
    weights : ndarray of shape (n,) or None
        Record weights; when given, weighted cell totals are kept as well.
    cells : list of ndarray (n,)
        Cell of every record under each pipeline.
    n_cells : list of int
    B : int
        Replicates.
    """

    def __init__(self, y, weights, cells, n_cells, B: int) -> None:
        import scipy.sparse as sp

        self.y = np.asarray(y)
        n = len(self.y)
        if len(cells) == 1:
            atom, self.n_atoms, self._maps = np.asarray(cells[0], dtype=np.intp), int(n_cells[0]), [None]
        else:
            atom = _common_refinement(cells)
            self.n_atoms = int(atom.max()) + 1
            first = np.zeros(self.n_atoms, dtype=np.intp)
            first[atom[::-1]] = np.arange(n)[::-1]  # one record of each atom
            # number the atoms in cell order (the sparse sums then read memory in sequence)
            rank = np.empty(self.n_atoms, dtype=np.int64)
            by_cell = np.lexsort([np.asarray(cl)[first] for cl in cells[::-1]])
            rank[by_cell] = np.arange(self.n_atoms)
            atom, first = rank[atom], first[by_cell]
            self._maps = [sp.csr_matrix((np.ones(self.n_atoms), (np.asarray(cl)[first], np.arange(self.n_atoms))),
                                        shape=(k, self.n_atoms)) for cl, k in zip(cells, n_cells, strict=True)]
        self._classes = class_positions(self.y)
        self._lut = [atom[idx].astype(np.intp) for idx in self._classes]  # intp: bincount reads it as it is
        self._wl = None if weights is None else [np.asarray(weights, dtype=float)[idx] for idx in self._classes]
        self.V = [np.zeros((B, k)) for k in n_cells]
        self.Vw = None if weights is None else [np.zeros((B, k)) for k in n_cells]

    def add(self, rng: np.random.Generator, start: int, b: int) -> None:
        """Draw replicates ``start … start + b − 1`` (the exact bootstrap's draws for this chunk)."""
        n = len(self.y)
        slot = np.empty((b, n), dtype=self._lut[0].dtype)  # the atom of every drawn record
        wt = None if self._wl is None else np.empty((b, n))
        at = 0
        for j, (_, d) in enumerate(stratified_draws(self.y, b, rng, classes=self._classes)):
            k = d.shape[1]
            np.take(self._lut[j], d, out=slot[:, at:at + k])
            if wt is not None and self._wl is not None:  # both or neither: weights given
                np.take(self._wl[j], d, out=wt[:, at:at + k])
            at += k
        cnt = np.empty((b, self.n_atoms))
        wsum = None if wt is None else np.empty((b, self.n_atoms))
        for r in range(b):
            cnt[r] = np.bincount(slot[r], minlength=self.n_atoms)
            if wsum is not None and wt is not None:
                wsum[r] = np.bincount(slot[r], weights=wt[r], minlength=self.n_atoms)
        for tot, out in ((cnt, self.V), (wsum, self.Vw)):
            if tot is None or out is None:
                continue
            if self._maps[0] is None:  # the atoms are the cells
                out[0][start:start + b] = tot
                continue
            A = np.ascontiguousarray(tot.T)
            for j, m in enumerate(self._maps):
                out[j][start:start + b] = (m @ A).T


def binned_bootstrap(state: TransportState, *, tick: Tick = no_tick) -> dict:
    """Replicate changes OOD − ID, shape (R, B) per statistic, from cell totals (see module docstring)."""
    c = state.config
    B, R = c.n_bootstrap, c.n_refits
    U = c.primary_target
    wsrc, wtgt = state.w_source, state.w_target
    weighted = wsrc is not None
    seed = int(c.seed) + 7919
    chunks = list(range(0, B, c.bootstrap_chunk))
    specs = {}
    for (r, m) in state.pipes:
        for dom, y, w, _ in state.test_sets(r):
            for mp in c.mappings:
                p = state.mapped(r, m, mp, dom)
                lin, ratios, keys = bootstrap_columns(y, p, state.rules[(r, m, mp)], state.extra(r, m, mp, dom))
                steps = dict(lin)
                for k, (num, den) in ratios.items():
                    steps[k + ":num"], steps[k + ":den"] = num, den
                layout = CellLayout(y, p, steps, n_ece_bins=c.n_bins, order=state.orders.get((r, m, mp, dom)))
                schemes = {"unweighted": BinnedMetrics(layout, y, p, None, n_bins=c.n_bins, linear=lin, ratios=ratios)}
                if weighted:
                    schemes["weighted"] = BinnedMetrics(layout, y, p, w, n_bins=c.n_bins, linear=lin, ratios=ratios)
                specs[(r, m, mp, dom)] = (layout, schemes, keys)

    def group(y, w, members):
        return DrawGroup(y, w, [specs[k][0].cell for k in members], [specs[k][0].n_cells for k in members], B)

    ood_members = [k for k in specs if k[3] == "ood"]
    ood = group(state.y_target[U], wtgt if weighted else None, ood_members)
    for ci, start in enumerate(chunks):
        b = min(c.bootstrap_chunk, B - start)
        tick(0.5 * ci / len(chunks), f"Bootstrap (target) {start + b} of {B}")
        ood.add(np.random.default_rng([seed, ci, 10**6]), start, b)
    ood_V = {k: (ood.V[j], None if ood.Vw is None else ood.Vw[j]) for j, k in enumerate(ood_members)}
    del ood
    out: dict = {}
    for r in range(R):
        tick(0.5 + 0.5 * r / R, f"Bootstrap (ID test), refit {r + 1} of {R}")
        idt = state.source_rows(r, "id_test")
        members = [k for k in specs if k[0] == r and k[3] == "id"]
        g = group(state.y_source[U][idt], wsrc[idt] if wsrc is not None else None, members)
        for ci, start in enumerate(chunks):
            g.add(np.random.default_rng([seed, ci, r]), start, min(c.bootstrap_chunk, B - start))
        cells = {}
        for j, k_id in enumerate(members):
            k_ood = (r, k_id[1], k_id[2], "ood")
            cells[k_id] = {"unweighted": (g.V[j], ood_V[k_ood][0])}
            if weighted:
                cells[k_id]["weighted"] = (g.Vw[j], ood_V[k_ood][1])
        # keys in the exact path's order (model, weighting, mapping), so both give the same tables
        for m in c.models:
            for weighting in ("unweighted", "weighted")[:1 + weighted]:
                for mp in c.mappings:
                    v_id, v_ood = cells[(r, m, mp, "id")][weighting]
                    _, s_id_schemes, keys = specs[(r, m, mp, "id")]
                    s_id = s_id_schemes[weighting].compute(v_id)
                    s_ood = specs[(r, m, mp, "ood")][1][weighting].compute(v_ood)
                    for name, (analysis, metric, alpha, s) in keys.items():
                        key = (m, mp, weighting, analysis, metric, np.nan if alpha is None else alpha,
                               np.nan if s is None else s)
                        arr = out.setdefault(key, np.full((R, B), np.nan))
                        arr[r] = s_ood[name] - s_id[name]
    return out
