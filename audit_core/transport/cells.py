"""The cells of the binned bootstrap: bins over the score order, cut wherever a step column changes.

A test set's records are sorted by the mapped score ``p̂`` and cut into bins
(:func:`bin_starts`); a *cell* is one bin and one class (:class:`CellLayout`).
The cuts (no bin splits a run of tied scores; forced cuts wherever a step
column changes within a class; equal-count, logit-scale and top-of-ranking
base cuts) are described in :mod:`~audit_core.transport.binned`, whose
:class:`~audit_core.transport.binned.BinnedMetrics` computes the statistics
from the replicates' cell totals.
"""
from __future__ import annotations

import numpy as np

from ..logistic import logit
from ..metrics import bin_ids

__all__ = ["DEFAULT_BINS", "LOGIT_STEP", "TOP_SHARE", "bin_starts", "CellLayout"]

#: target number of equal-count bins per test set.
DEFAULT_BINS = 640
#: a cut at every multiple of this on the logit scale.
LOGIT_STEP = 0.5
#: at the top of the ranking a bin holds at most this share of the records above it.
TOP_SHARE = 0.2


def bin_starts(s: np.ndarray, forced=(), *, n_bins: int = DEFAULT_BINS, logit_step: float = LOGIT_STEP,
               top_share: float = TOP_SHARE) -> np.ndarray:
    """Start positions of the bins over ascending scores.

    Parameters
    ----------
    s : ndarray of shape (n,)
        Scores sorted ascending.
    forced : array-like of int
        Positions that must start a bin (moved down to the start of their run
        of ties).
    n_bins : int
        Target number of equal-count bins; with at most ``2 · n_bins``
        distinct scores every distinct score is a bin.

    Returns
    -------
    ndarray of int, ascending, starting with 0; every entry starts a run of ties.

    logit_step : float
        A cut at every multiple of this on the logit scale.
    top_share : float
        At the top of the ranking a bin holds at most this share of the
        records ranked above it (0 turns the refinement off).

    Examples
    --------
    Ties are never split: a forced cut at position 2, inside the run
    ``0.2, 0.2, 0.2`` at positions 1–3, moves to 1.

    >>> s = np.array([0.1, 0.2, 0.2, 0.2, 0.3, 0.4])
    >>> bin_starts(s, [2], n_bins=1, logit_step=100.0, top_share=0.0).tolist()
    [0, 1]

    With at most ``2 · n_bins`` distinct scores, every distinct score is a bin:

    >>> bin_starts(s, n_bins=2).tolist()
    [0, 1, 4, 5]
    """
    s = np.asarray(s, dtype=float)
    n = len(s)
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    first = np.r_[True, s[1:] != s[:-1]]
    ties = np.flatnonzero(first)
    group = np.cumsum(first) - 1

    def snap(pos):
        pos = np.asarray(pos, dtype=np.intp)
        pos = pos[(pos >= 0) & (pos < n)]
        return ties[group[pos]]

    parts = [np.zeros(1, dtype=np.intp), snap(forced)]
    if len(ties) <= 2 * n_bins:
        return ties
    parts.append(snap(np.round(np.arange(1, n_bins) * (n / n_bins)).astype(np.intp)))
    x = logit(s)
    lo, hi = np.ceil(x[0] / logit_step), np.floor(x[-1] / logit_step)
    if hi >= lo:
        parts.append(snap(np.searchsorted(x, np.arange(lo, hi + 1) * logit_step, side="left")))
    top, r, size = [], 1, n / n_bins
    while top_share > 0 and r < size / top_share and r < n:
        top.append(n - r)
        r += max(1, int(top_share * r))
    parts.append(snap(top))
    return np.unique(np.concatenate(parts))


class CellLayout:
    """The (bin × class) cells of one test set under one fixed pipeline.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    p : ndarray of shape (n,)
        Mapped scores.
    steps : dict of str to ndarray (n,)
        Step columns (functions of ``p̂`` within each class); a cut is
        forced wherever one changes within a class.
    n_ece_bins : int
        ECE bins (their edges are forced cuts, with the metric's closedness).
    n_bins : int
        Target number of equal-count bins (:func:`bin_starts`).
    order : ndarray (n,), optional
        ``np.argsort(p, kind="stable")`` when the caller has it (the evaluation stage's).
    **bin_options
        ``logit_step`` and ``top_share`` of :func:`bin_starts`.

    Attributes
    ----------
    order : ndarray (n,)
        Stable ascending score order.
    starts : ndarray (K,)
        Bin starts in that order.
    cell : ndarray (n,)
        Cell of each record (input order): ``2 · bin + y``.
    n_cells : int
        ``2 K``.
    exact : bool
        Every bin holds one distinct score (then every statistic is exact).
    """

    def __init__(self, y, p, steps=None, *, n_ece_bins: int = 15, n_bins: int = DEFAULT_BINS, order=None,
                 **bin_options) -> None:
        y = np.asarray(y).astype(np.intp)
        p = np.asarray(p, dtype=float)
        self.order = np.argsort(p, kind="stable") if order is None else np.asarray(order)
        s, ys = p[self.order], y[self.order]
        self.ece_bin = bin_ids(p, n_ece_bins)
        codes = [c[self.order] for c in _signature([self.ece_bin] + list((steps or {}).values()))]
        forced = []
        for c in (0, 1):
            pos = np.flatnonzero(ys == c)
            if len(pos) > 1:
                ch = np.zeros(len(pos) - 1, dtype=bool)
                for code in codes:
                    cc = code[pos]
                    ch |= cc[1:] != cc[:-1]
                forced.append(pos[1:][ch])
        forced_at = np.concatenate(forced) if forced else np.zeros(0, dtype=np.intp)
        first = np.r_[True, s[1:] != s[:-1]]
        #: every step column is constant on every cell (false only if a column differs between tied records)
        self.steps_constant = bool(first[forced_at].all()) if len(s) else True
        self.starts = bin_starts(s, forced_at, n_bins=n_bins, **bin_options)
        K = len(self.starts)
        bin_sorted = np.zeros(len(s), dtype=np.intp)
        bin_sorted[self.starts[1:]] = 1
        bin_sorted = np.cumsum(bin_sorted)
        self.bin = np.empty(len(s), dtype=np.intp)
        self.bin[self.order] = bin_sorted
        self.cell = 2 * self.bin + y
        self.n_bins = K
        self.n_cells = 2 * K
        self.exact = bool(len(s) == 0 or K == int(np.count_nonzero(np.r_[True, s[1:] != s[:-1]])))


def _signature(columns) -> list[np.ndarray]:
    """Integer codes (int64, shape (n,)) that differ between two records wherever any column does.

    Columns are packed exactly (mixed radix over their distinct values); a new
    code starts before the product of radices would pass 2**62.
    """
    codes, code, cap = [], None, 1
    for v in columns:
        v = np.asarray(v)
        k = v.astype(np.int64)
        if v.dtype.kind == "b":  # already 0/1
            base = int(k.max()) + 1 if len(v) else 1
        elif len(v) and k.min() >= 0 and (v.dtype.kind in "iu" or np.array_equal(k, v)):
            base = int(k.max()) + 1
        else:
            uniq, k = np.unique(v, return_inverse=True)
            k, base = k.reshape(-1).astype(np.int64), max(len(uniq), 1)
        if code is None or cap * base > 2**62:
            if code is not None:
                codes.append(code)
            code, cap = np.zeros(len(v), dtype=np.int64), 1
        code = code * base + k
        cap *= base
    return codes + ([code] if code is not None else [])
