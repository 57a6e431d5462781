"""Search beyond greedy: exact minimum flip sets and beam search (SPEC §1).

Both searches use the removal operator ``R(x, S)`` of the certificate's
protocol and flip when ``argmax p(R(x, S)) ≠ ŷ``.

* :func:`exact_min_flip` enumerates subsets by increasing size ``1..K`` in
  lexicographic order, for all unresolved cases at once, until each case has a
  flip or the per-case ``budget`` of evaluated subsets is spent. A case whose
  minimum was not settled within the budget is reported ``complete=False``
  (its ``min_size`` is then a lower bound: ``K+1`` or the size reached).
* :func:`beam_min_flip` keeps the ``B`` distinct sets with the lowest
  margin of ``ŷ`` at each depth (``B=1`` is the adaptive greedy path).

:func:`compare_search` summarises how closely greedy ``k*`` tracks either.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, islice
from math import comb
from typing import Any

import numpy as np
import pandas as pd

from audit_core.models.probs import clip_probs, margin_of, pseudo_logits

from .certificate import CertificateSettings
from .generic import as_predict
from .operators import group_mask
from .work import Progress, StopCheck, check_stop, item_blocks, padded, rows_in_budget

__all__ = ["SearchResult", "SearchSummary", "exact_min_flip", "beam_min_flip", "compare_search"]


@dataclass(frozen=True, eq=False)
class SearchResult:
    """Minimum flip set sizes found by a search.

    Attributes
    ----------
    method : str
        ``"exact"`` or ``"beam(B)"``.
    min_size : int ndarray of shape (n,)
        Smallest flipping set found, ``K+1`` when none within depth ``K``.
    complete : bool ndarray of shape (n,)
        Whether the result is certain (exact) — always True for beam, which is a heuristic.
    best_set : list of tuple of int
        A flipping set of size ``min_size`` (empty tuple when none).
    n_evaluated : int ndarray of shape (n,)
        Subsets evaluated per case.
    """

    method: str
    min_size: np.ndarray
    complete: np.ndarray
    best_set: list
    n_evaluated: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "min_size": self.min_size,
                "complete": self.complete,
                "best_set": [",".join(map(str, s)) for s in self.best_set],
                "n_evaluated": self.n_evaluated,
            }
        )


@dataclass(frozen=True)
class SearchSummary:
    """How greedy ``k*`` tracks a search: share equal and mean gap ``k* - min``."""

    method: str
    n_cases: int
    n_compared: int
    share_equal: float
    mean_gap: float
    max_gap: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.to_dict()])


def _eval_sets(predict, X, y_hat, proto: CertificateSettings, sel: np.ndarray, chunk_mb: float | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Margins and flips of removing ``sel`` (n, m, G) from each case, in blocks of at most ``chunk_mb``."""
    n, m, G = sel.shape
    F = X.shape[1]
    base = np.asarray(proto.baseline)
    cols = proto.columns
    marg = np.empty((n, m))
    flip = np.empty((n, m), dtype=bool)
    for cs, ms in item_blocks(n, m, 3 * 8 * F + G + 64, chunk_mb=chunk_mb):
        rows = np.where(group_mask(cols, sel[cs, ms]), base, X[cs, None, :])
        p = clip_probs(predict(rows.reshape(-1, F))).reshape(rows.shape[0], rows.shape[1], -1)
        marg[cs, ms] = margin_of(pseudo_logits(p), y_hat[cs, None])
        flip[cs, ms] = p.argmax(axis=-1) != y_hat[cs, None]
    return marg, flip


def _y_hat(predict, X) -> np.ndarray:
    return clip_probs(predict(X)).argmax(axis=1)


def exact_min_flip(
    model: Any,
    X: np.ndarray,
    protocol: CertificateSettings,
    *,
    max_size: int | None = None,
    budget: int = 5_000,
    chunk_mb: float | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> SearchResult:
    """Exact minimum flip set by enumeration, capped by a subset budget.

    Parameters
    ----------
    model : FittedModel, estimator or callable
    X : ndarray of shape (n, n_features)
    protocol : CertificateSettings
        Grouping, baseline; ``max_size`` defaults to ``protocol.k``.
    max_size : int, optional
    budget : int
        Maximum number of subsets evaluated per case.
    chunk_mb : float, optional
        Byte budget of the rows of one predict call.
    progress, should_stop : callables, optional
        Progress by subset size; Stop polled between blocks (:class:`.work.FragilityStopped`).

    Returns
    -------
    SearchResult
    """
    predict = padded(as_predict(model))
    X = np.asarray(X, dtype=float)
    n, G = len(X), protocol.n_groups
    K = protocol.k if max_size is None else int(max_size)
    y_hat = _y_hat(predict, X)
    found = np.full(n, K + 1)
    best: list = [()] * n
    complete = np.ones(n, dtype=bool)
    evaluated = np.zeros(n, dtype=int)
    for size in range(1, K + 1):
        todo = np.flatnonzero(found > K)
        if not len(todo):
            break
        room = budget - int(evaluated[todo[0]]) if len(todo) else 0
        take = min(comb(G, size), max(0, room))
        if take < comb(G, size):
            complete[todo] = False
        if take == 0:
            break
        sets = np.array(list(islice(combinations(range(G), size), take)), dtype=int)  # (take, size)
        sel_all = np.zeros((take, G), dtype=bool)
        np.put_along_axis(sel_all, sets, True, axis=1)
        per = max(1, rows_in_budget(max(1, len(todo)) * (3 * 8 * X.shape[1] + G), chunk_mb=chunk_mb))
        hit_first = np.full(len(todo), -1)
        for lo in range(0, take, per):
            check_stop(should_stop)
            live = hit_first < 0
            if not live.any():
                break
            idx = todo[live]
            block = sel_all[lo : lo + per]
            _, flip = _eval_sets(predict, X[idx], y_hat[idx], protocol, np.broadcast_to(block, (len(idx),) + block.shape),
                                 chunk_mb)
            anyf = flip.any(axis=1)
            hit_first[np.flatnonzero(live)[anyf]] = lo + flip[anyf].argmax(axis=1)
            evaluated[idx] += np.where(anyf, flip.argmax(axis=1) + 1, len(block))
        hit = hit_first >= 0
        found[todo[hit]] = size
        complete[todo[hit]] = True
        for i, h in zip(todo[hit], hit_first[hit], strict=True):
            best[i] = tuple(int(g) for g in sets[h])
        if progress is not None:
            progress(size / K, f"Exact search: subsets of size {size} of {K}")
        if take < comb(G, size):
            break
    return SearchResult(method="exact", min_size=found, complete=complete, best_set=best, n_evaluated=evaluated)


def _set_keys(sets: np.ndarray) -> np.ndarray:
    """Exact integer keys of boolean sets ``(..., G)``, ordered like ``Σ_g 2**g`` (for any ``G``)."""
    packed = np.packbits(sets[..., ::-1], axis=-1)  # group G-1 is the most significant bit
    flat = np.ascontiguousarray(packed.reshape(-1, packed.shape[-1]))
    _, ids = np.unique(flat.view(np.dtype((np.void, flat.shape[1]))).ravel(), return_inverse=True)
    return ids.reshape(sets.shape[:-1])


def _unique_best(keys: np.ndarray, marg: np.ndarray, B: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the positions of the B lowest-margin candidates with distinct keys, and their margins."""
    order = np.lexsort((marg, keys), axis=-1)
    ks = np.take_along_axis(keys, order, axis=-1)
    ms = np.take_along_axis(marg, order, axis=-1)
    dup = np.zeros_like(ks, dtype=bool)
    dup[:, 1:] = ks[:, 1:] == ks[:, :-1]
    ms = np.where(dup, np.inf, ms)
    pick = np.argsort(ms, axis=-1, kind="stable")[:, :B]
    return np.take_along_axis(order, pick, axis=-1), np.take_along_axis(ms, pick, axis=-1)


def beam_min_flip(
    model: Any,
    X: np.ndarray,
    protocol: CertificateSettings,
    *,
    width: int = 4,
    max_size: int | None = None,
    chunk_mb: float | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> SearchResult:
    """Beam search of width ``B`` for a small flipping set.

    At each depth every beam set is extended by every group not in it; all
    extensions of all cases are predicted in blocks of at most ``chunk_mb``
    MiB. The ``B`` distinct extensions with the lowest margin of ``ŷ``
    survive. Ties are broken by the set's bit pattern (groups with lower
    indices first). ``should_stop`` is polled at every depth.

    Returns
    -------
    SearchResult
        ``complete`` is all True (the search finished), but beam sizes are
        upper bounds on the true minimum.
    """
    predict = padded(as_predict(model))
    X = np.asarray(X, dtype=float)
    n, G = len(X), protocol.n_groups
    K = protocol.k if max_size is None else int(max_size)
    B = max(1, int(width))
    y_hat = _y_hat(predict, X)
    eye = np.eye(G, dtype=bool)
    beams = np.zeros((n, 1, G), dtype=bool)
    found = np.full(n, K + 1)
    best: list = [()] * n
    evaluated = np.zeros(n, dtype=int)
    for size in range(1, K + 1):
        todo = np.flatnonzero(found > K)
        if not len(todo):
            break
        b = beams.shape[1]
        beams_next = np.zeros((n, min(B, b * G), G), dtype=bool)
        per_case = b * G * (G + 3 * 8 * X.shape[1] + 64)
        for cs, _ in item_blocks(len(todo), 1, per_case, chunk_mb=chunk_mb):
            check_stop(should_stop)
            idx = todo[cs]
            bt = beams[idx]  # (t, b, G)
            t = len(idx)
            cand = (bt[:, :, None, :] | eye[None, None, :, :]).reshape(t, b * G, G)
            valid = (~bt).reshape(t, b * G)  # group g not already in the set
            marg, flip = _eval_sets(predict, X[idx], y_hat[idx], protocol, cand, chunk_mb)
            evaluated[idx] += valid.sum(axis=1)
            flip &= valid
            marg = np.where(valid, marg, np.inf)
            keys = _set_keys(cand)
            anyf = flip.any(axis=1)
            for i, row in zip(idx[anyf], np.flatnonzero(anyf), strict=True):
                found[i] = size
                best[i] = tuple(int(g) for g in np.flatnonzero(cand[row, flip[row].argmax()]))
            pos, ms = _unique_best(keys, marg, B)
            pos = np.where(np.isfinite(ms), pos, pos[:, :1])  # never carry a padded (invalid) set
            new = np.take_along_axis(cand, pos[:, :, None], axis=1)
            beams_next[idx] = new
        beams = beams_next
        if progress is not None:
            progress(size / K, f"Beam search: depth {size} of {K}")
    return SearchResult(method=f"beam({B})", min_size=found, complete=np.ones(n, dtype=bool), best_set=best, n_evaluated=evaluated)


def compare_search(k_star: np.ndarray, result: SearchResult) -> SearchSummary:
    """Share of cases where greedy ``k*`` equals the search minimum, and the mean gap.

    Only cases whose search result is ``complete`` are compared.
    """
    k = np.asarray(k_star)
    ok = np.asarray(result.complete, dtype=bool)
    gap = k[ok] - result.min_size[ok]
    return SearchSummary(
        method=result.method,
        n_cases=int(len(k)),
        n_compared=int(ok.sum()),
        share_equal=float(np.mean(gap == 0)) if ok.any() else float("nan"),
        mean_gap=float(np.mean(gap)) if ok.any() else float("nan"),
        max_gap=int(np.max(np.abs(gap))) if ok.any() else 0,
    )
