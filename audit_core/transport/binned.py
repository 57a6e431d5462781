"""Binned-cell arithmetic for the stratified record bootstrap.

The estimator is the protocol's stratified record bootstrap (records drawn
with replacement within each class, pipelines fixed); only the arithmetic of
each replicate changes. The records of one test set are sorted by the mapped
score ``p̂`` and cut into bins (:func:`~.cells.bin_starts`); a *cell* is one bin and
one class. A replicate is reduced to its weight total in every cell
(``V``, shape (B, cells): the number of draws landing in the cell, or the sum
of their record weights), and every statistic is computed from ``V`` in
O(cells).

Cuts
----
* No bin ever splits a run of tied scores.
* A cut is forced wherever any step column changes along the score order
  within a class: the selection indicators ``c ≥ τ_s`` and ``c ≥ t`` (HCEP),
  the errors of the 0.5 decision, conformal set membership and set sizes for
  every ``α`` and method, and the ECE bin. The columns are evaluated with the
  exact code's own expressions (same closedness, same ``1e-12`` tie allowance),
  so every step column is constant on each cell.
* Base cuts: about ``n_bins`` equal-count bins, a cut every 0.5 on the logit
  scale, and, for average precision, finer bins at the top of the ranking
  (a bin there holds at most 20 % of the records ranked above it).
* When a test set has at most ``2 · n_bins`` distinct scores, every distinct
  score is its own bin.

What is exact and what is approximate
-------------------------------------
Given the replicate's cell totals ``V`` (which the protocol takes from the
exact bootstrap's own draws, :func:`~audit_core.transport.bootstrap.stratified_draws`):

* exact (the same value as the record bootstrap for the same replicate, up to
  floating-point summation order): prevalence; every selective rate, risk and
  HCEP; conformal coverage and mean set size; and which records enter which
  ECE bin. These only depend on cell totals because their columns are
  constant on cells. Weighted variants are exact too, because ``V`` holds the
  replicate's weight sum per cell.
* AUROC: pairs in different bins are counted exactly; the pairs inside a bin
  enter as ``P_b N_b h_b``, with ``h_b`` the full-sample concordance
  (ties ½) of that bin's positive–negative pairs: the conditional expectation
  of the replicate's within-bin pairs given its cell totals. A bin of tied
  scores has ``h_b = ½`` and is exact.
* Average precision: thresholds in different bins are exact; within a bin the
  precision path is the full-sample path scaled to the replicate's cell
  totals, expanded to second order around its mean (exact for a bin of tied
  scores).
* Brier score, log loss, the ``p̂`` part of each ECE bin, and the
  calibration fit use the within-cell (weighted) means of ``(p̂ − y)²``,
  ``−log`` likelihood, ``p̂`` and the 16 Taylor moments of
  :mod:`~audit_core.transport.bootstrap`: each drawn record counts with its
  cell's mean instead of its own value. A cell of one distinct score is exact.
* MCE: each ECE bin's weight is exact, its ``p̂`` part smooth (as ECE).
* ACE: the equal-mass edges are re-cut per replicate from the cumulative bin
  weights; a single-score bin enters whole (exact), a bin an edge cuts
  through is split at the edge by each class's full-sample residual profile.
* Spiegelhalter's z: numerator smooth; the variance's squared weights enter
  as each cell's weighted mean of ``w · v`` (cells hold weight sums only).
* Calibration intercept and slope: the root of the third-order Taylor model
  around the full-sample fit (on the cell nodes below), from those cell moments; replicates whose root
  lies more than 0.05 from the full-sample fit (where a fourth-order error
  could reach about 1e-6), or where the Taylor model fails, and every
  replicate when all bins hold one distinct score, are refitted by Newton on
  a two-point Gauss representation of each cell (nodes matching the cell's
  first four weighted moments of ``logit p̂``).

So when every bin holds a single distinct score the binned bootstrap is the
record bootstrap exactly; otherwise only AUROC's within-bin pairs, AP's
within-bin path and the smooth statistics are approximated, by quantities that
agree with the record bootstrap at the full sample.
"""
from __future__ import annotations

import numpy as np

from ..calibration_error import ACE_FLOOR_ALLOWANCE, spiegelhalter_terms
from ..logistic import EPS_LOGIT, fit_logistic_1d, logit
from .bootstrap import _taylor_columns, _taylor_newton
from .cells import CellLayout

__all__ = ["BinnedMetrics"]

#: Taylor roots further than this (max-norm) from the full-sample fit are refitted.
POLISH_STEP = 0.05
#: replicates per block in the ranking arithmetic (keeps its temporaries in cache).
_BLOCK = 32


def _cell_sum(cell, values, n_cells):
    return np.bincount(cell, weights=values, minlength=n_cells)


class BinnedMetrics:
    """Bootstrap statistics from cell totals, for one weighting scheme.

    Parameters
    ----------
    layout : CellLayout
    y, p : ndarray of shape (n,)
        The layout's labels and mapped scores.
    weights : ndarray of shape (n,), optional
        Record weights of the scheme (``None``: unweighted).
    n_bins : int
        ECE bins.
    linear, ratios : dict
        As :class:`~audit_core.transport.bootstrap.BatchedMetrics`.
    with_calibration : bool

    Notes
    -----
    :meth:`compute` takes ``V`` of shape (B, ``layout.n_cells``): each
    replicate's weight total per cell (for the weighted scheme, the sum of the
    drawn records' weights). See the module docstring for what is exact.
    """

    def __init__(self, layout: CellLayout, y, p, weights=None, *, n_bins: int = 15, linear=None, ratios=None,
                 with_calibration: bool = True) -> None:
        self.layout = L = layout
        y = np.asarray(y).astype(float)
        p = np.asarray(p, dtype=float)
        w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
        nc, cell = L.n_cells, L.cell
        self.with_calibration = with_calibration
        Wc = _cell_sum(cell, w, nc)
        self.cell_weight = Wc
        live = Wc > 0
        safe = np.where(live, Wc, 1.0)

        import scipy.sparse as sp

        avg = sp.csr_matrix((w / safe[cell], (cell, np.arange(len(cell)))), shape=(nc, len(cell)))

        def mean(v):  # within-cell weighted mean of v (n,) or of each column of v (n, k)
            return avg @ v

        # a step column's value on a cell: taken from one of its records (it is constant there)
        rep = np.zeros(nc, dtype=np.intp)
        rep[cell[::-1]] = np.arange(len(cell))[::-1]
        has = np.bincount(cell, minlength=nc) > 0

        def step(v):  # v may be boolean or integer (0/1 steps): only its K values are made floats
            v = np.asarray(v)
            val = np.where(has, v[rep], 0.0).astype(float)
            if not L.steps_constant and np.any(v != val[cell]):  # not constant on its cells: treat as smooth
                return mean(v.astype(float))
            return val

        q = np.clip(p, EPS_LOGIT, 1 - EPS_LOGIT)
        x = logit(q)
        cols = {"__one": np.ones(nc), "prevalence": (np.arange(nc) % 2).astype(float),
                "brier_score": mean((p - y) ** 2), "log_loss": mean(-(y * np.log(q) + (1 - y) * np.log1p(-q)))}
        self.lin_names = ["prevalence", "brier_score", "log_loss"] + list(linear or {})
        for k, v in (linear or {}).items():
            cols[k] = step(v)
        ratios = ratios or {}
        self.ratio_names = list(ratios)
        mats = list(cols.values()) + [step(r[0]) for r in ratios.values()] + [step(r[1]) for r in ratios.values()]
        # ECE: residual p̄ − y of each cell, in the column of its ECE bin
        ece_cell = np.zeros(nc, dtype=np.intp)
        ece_cell[cell] = L.ece_bin
        resid = mean(p) - (np.arange(nc) % 2)
        E = np.zeros((nc, n_bins))
        E[np.arange(nc), ece_cell] = resid
        self._n_lin = len(mats)
        self._n_ece = n_bins
        # MCE: weight of each ECE bin; ACE: the residual p̄ − y of each cell; Spiegelhalter: numerator
        # and variance (the variance's squared weights enter as the cell's weighted mean of w · v)
        occ = np.zeros((nc, n_bins))
        occ[np.arange(nc), ece_cell] = 1.0
        self.resid = resid
        self._setup_ace_profile(L, y, p, w)
        u, v = spiegelhalter_terms(y, p)
        M = np.column_stack(mats + [E, occ, mean(u), mean(w * v)])
        self.start = None
        if with_calibration:
            self._setup_nodes(cell, x, w, Wc, live, nc)
            if 0 < np.dot(w, y) < w.sum():
                # expansion point of the Taylor model: the full-sample fit on the cell nodes (within
                # about 1e-6 of the record-level fit; only the replicates' roots are reported)
                a, b = self._refit(Wc[None, :], (0.0, 1.0))
                if np.isfinite(a[0]) and np.isfinite(b[0]):
                    self.start = (float(a[0]), float(b[0]))
        if self.start is not None:
            T = _taylor_columns(x, y, self.start)
            M = np.column_stack([M, mean(T)])
        self.M = M
        self._setup_ranking(L, y, p, w, unit=weights is None)

    # ------------------------------------------------------------ setup
    def _setup_ranking(self, L, y, p, w, *, unit=False):
        """Within-bin concordance (AUROC) and precision-path moments (AP).

        ``unit``: every weight is 1, so the weighted level sums equal the counts (computed once).
        """
        o = L.order
        s, ys, ws = p[o], y[o], w[o]
        lv = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])

        def level_sums(v):
            return np.add.reduceat(v, lv) if len(lv) else np.zeros(0)

        pos = level_sums(ys if unit else ws * ys)
        neg = level_sums(1 - ys if unit else ws * (1 - ys))
        binl = L.bin[o][lv]
        K = L.n_bins
        P0, N0 = np.bincount(binl, pos, K), np.bincount(binl, neg, K)
        first = np.r_[True, binl[1:] != binl[:-1]]
        gp, gn = np.cumsum(pos) - pos, np.cumsum(neg) - neg
        fi = np.flatnonzero(first)[np.cumsum(first) - 1]
        cpe, cne = gp - gp[fi], gn - gn[fi]  # within-bin weight strictly below each level
        with np.errstate(invalid="ignore", divide="ignore"):
            conc = np.bincount(binl, pos * (cne + 0.5 * neg), K)
            self.h = np.where((P0 > 0) & (N0 > 0), conc / (P0 * N0), 0.0)
            Pl, Nl = np.where(P0 > 0, P0, 1.0)[binl], np.where(N0 > 0, N0, 1.0)[binl]
            u = 1 - cpe / Pl
            v = np.where(N0[binl] > 0, 1 - cne / Nl, 0.0)
            pi = pos / Pl
        mu = np.bincount(binl, pi * u, K)
        mv = np.bincount(binl, pi * v, K)
        self.ap_u, self.ap_v = mu, mv
        self.ap_vu = np.maximum(np.bincount(binl, pi * u * u, K) - mu * mu, 0.0)
        self.ap_vv = np.maximum(np.bincount(binl, pi * v * v, K) - mv * mv, 0.0)
        self.ap_cuv = np.bincount(binl, pi * u * v, K) - mu * mv
        # resampling noise inside a bin, given its totals: the replicate's weight
        # at a level co-varies with the weight at or above it (a drawn record
        # counts in its own precision), and both paths fluctuate around the mean
        # path. Second-order terms with the within-bin second moments of the
        # weights (w = 1: kappa = Σ π(1 − u), lambda = Σ π u(1 − u), ...).
        if unit:  # 1 · v = v: the counts and squared-weight sums are the level sums above
            m1, m0, pos2, neg2 = P0, N0, pos, neg
        else:
            m1, m0 = np.bincount(binl, level_sums(ys), K), np.bincount(binl, level_sums(1 - ys), K)
            pos2, neg2 = level_sums(ws * ws * ys), level_sums(ws * ws * (1 - ys))
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = pos2 * (m1 / np.where(P0 > 0, P0, 1.0) ** 2)[binl]
            sig = neg2 * (m0 / np.where(N0 > 0, N0, 1.0) ** 2)[binl]
            wbar1 = np.where(m1 > 0, P0 / np.where(m1 > 0, m1, 1.0), 0.0)
            wbar0 = np.where(m0 > 0, N0 / np.where(m0 > 0, m0, 1.0), 0.0)
        grho, gsig = np.cumsum(rho) - rho, np.cumsum(sig) - sig
        rho_t, sig_t = np.bincount(binl, rho, K), np.bincount(binl, sig, K)
        R_ = rho_t[binl] - (grho - grho[fi])
        S_ = sig_t[binl] - (gsig - gsig[fi])
        # condition on the replicate's weight total in the cell (it is known): project out the
        # part of each fluctuation that moves the total (none when the weights are equal)
        with np.errstate(invalid="ignore", divide="ignore"):
            g1 = np.where(rho_t - 1 > 1e-12, 1 / (rho_t - 1), 0.0)[binl]
            g0 = np.where(sig_t - 1 > 1e-12, 1 / (sig_t - 1), 0.0)[binl]
        self.ap_kappa = wbar1 * np.bincount(binl, (rho - pi * u) - g1 * (rho - pi) * (R_ - u), K)
        self.ap_lambda = wbar1 * np.bincount(binl, pi * ((R_ - u * u) - g1 * (R_ - u) ** 2), K)
        self.ap_mu = wbar0 * np.bincount(binl, pi * ((S_ - v * v) - g0 * (S_ - v) ** 2), K)

    def _setup_ace_profile(self, L, y, p, w):
        """Within-bin residual profiles for ACE edges that cut a bin (class by class, full sample).

        ``G_c`` at ``k + x/2`` is the residual ``Σ w (p̂ − y)`` of bin ``k``'s class-``c``
        records in the lowest share ``x`` of the bin's weight, per unit of class-``c``
        weight (at ``x = 1``: the cell's mean residual).
        """
        o = L.order
        if not len(o):
            self.single_bin, self._ace_x, self._ace_g = np.zeros(0, bool), np.zeros(1), np.zeros((2, 1))
            return
        s, ys, ws, kb = p[o], y[o], w[o], L.bin[o]
        K = L.n_bins
        self.single_bin = np.add.reduceat(np.r_[True, s[1:] != s[:-1]], L.starts) == 1

        def within(v):  # cumulative sum of v inside each bin, and the bin totals
            c = np.cumsum(v)
            return c - (c - v)[L.starts][kb], np.bincount(kb, v, K)

        cw, Wk = within(ws)
        x = cw / np.where(Wk > 0, Wk, 1.0)[kb]
        g = []
        for c in (0, 1):
            rc, Rk = within(ws * (s - ys) * (ys == c))
            _, Wck = within(ws * (ys == c))
            g.append(rc / np.where(Wck > 0, Wck, 1.0)[kb])
        grid, at = np.arange(K, dtype=float), kb + 0.5 * x
        if np.all(at[1:] >= at[:-1]):  # already ascending (weights ≥ 0): merge the grid in, ties grid first
            ins = np.searchsorted(at, grid, side="left")
            self._ace_x = np.insert(at, ins, grid)
            self._ace_g = np.stack([np.insert(gc, ins, 0.0) for gc in g])
            return
        xp = np.r_[grid, at]
        key = np.lexsort((np.r_[np.zeros(K), np.ones(len(x))], xp))
        self._ace_x = xp[key]
        self._ace_g = np.stack([np.r_[np.zeros(K), gc][key] for gc in g])

    def _setup_nodes(self, cell, x, w, Wc, live, nc):
        """Two-point Gauss nodes per cell for the logistic refit (one node for a single value)."""
        safe = np.where(live, Wc, 1.0)
        m = _cell_sum(cell, w * x, nc) / safe
        d = x - m[cell]
        var = np.maximum(_cell_sum(cell, w * d * d, nc) / safe, 0.0)
        m3 = _cell_sum(cell, w * d ** 3, nc) / safe
        # x is monotone in p: a cell's extremes are its first and last record in score order
        xmin = np.full(nc, np.inf)
        xmax = np.full(nc, -np.inf)
        o = self.layout.order
        cs = cell[o]
        for c in (0, 1):
            pos = o[cs % 2 == c]
            if len(pos):
                cc = cell[pos]
                head = np.flatnonzero(np.r_[True, cc[1:] != cc[:-1]])
                tail = np.r_[head[1:] - 1, len(cc) - 1]
                xmin[cc[head]], xmax[cc[tail]] = x[pos[head]], x[pos[tail]]
        single = ~(xmax > xmin)
        sd = np.sqrt(var)
        with np.errstate(invalid="ignore", divide="ignore"):
            g = np.where(single, 0.0, m3 / np.where(single, 1.0, sd ** 3))
        root = np.sqrt(g * g + 4)
        t1, t2 = (g - root) / 2, (g + root) / 2
        x1 = np.where(single, np.where(np.isfinite(xmin), xmin, 0.0), m + sd * t1)
        x2 = np.where(single, x1, m + sd * t2)
        w1 = np.where(single, 1.0, t2 / (t2 - t1))
        keep1, keep2 = live, live & ~single
        self._nodes_cell = np.r_[np.flatnonzero(keep1), np.flatnonzero(keep2)]
        self._nodes_x = np.r_[x1[keep1], x2[keep2]]
        self._nodes_w = np.r_[w1[keep1], (1 - w1)[keep2]]
        self._nodes_y = (self._nodes_cell % 2).astype(float)

    # ------------------------------------------------------------ replicates
    def _refit(self, V, start):
        """Logistic MLE on the node representation for rows of ``V`` (shape (b, cells))."""
        Wn = V[:, self._nodes_cell] * self._nodes_w
        return fit_logistic_1d(self._nodes_x, self._nodes_y, Wn, start=start)

    def compute(self, V: np.ndarray) -> dict[str, np.ndarray]:
        """Statistics for cell totals ``V`` of shape (B, n_cells); values of shape (B,)."""
        V = np.atleast_2d(np.asarray(V, dtype=float))
        S = V @ self.M
        tot = S[:, 0]
        out = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            for j, name in enumerate(self.lin_names):
                out[name] = S[:, 1 + j] / tot
            k, r = 1 + len(self.lin_names), len(self.ratio_names)
            for j, name in enumerate(self.ratio_names):
                out[name] = S[:, k + j] / S[:, k + r + j]
            j = self._n_lin + self._n_ece
            ece, binw = S[:, self._n_lin:j], S[:, j:j + self._n_ece]
            out["ece"] = np.abs(ece).sum(axis=1) / tot
            out["mce"] = np.where(binw > 0, np.abs(ece) / np.where(binw > 0, binw, 1.0), -np.inf).max(axis=1)
            num, var = S[:, j + self._n_ece], S[:, j + self._n_ece + 1]
            out["spiegelhalter_z"] = np.where(var > 0, num / np.sqrt(np.where(var > 0, var, 1.0)), np.nan)
            out["ace"] = self._ace(V, tot)
            B = V.shape[0]
            out["auroc"], ap = np.empty(B), np.empty(B)
            for lo in range(0, B, _BLOCK):  # blocks of replicates, so the temporaries stay in cache
                out["auroc"][lo:lo + _BLOCK], ap[lo:lo + _BLOCK] = self._ranking(V[lo:lo + _BLOCK])
            out["average_precision"] = ap
            pi = out["prevalence"]
            out["pr_skill"] = (ap - pi) / (1 - pi)
        if self.with_calibration:
            out["calibration_intercept"], out["calibration_slope"] = self._calibration(V, S)
        return out

    def _ace(self, V, tot):
        """ACE per replicate, its equal-mass edges placed on the replicate's cumulative bin weights.

        A bin of one distinct score enters whole (the metric's rule: ties share an
        ACE bin); a bin an ACE edge cuts through is split in proportion to weight.
        """
        B, K = V.shape[0], self._n_ece
        Wb = V[:, 0::2] + V[:, 1::2]  # weight per bin, bins in score order
        kl = Wb.shape[1]
        lvl = V[:, 0::2] * self.resid[0::2] + V[:, 1::2] * self.resid[1::2]
        cumR = np.zeros((B, kl + 1))
        np.cumsum(lvl, axis=1, out=cumR[:, 1:])
        with np.errstate(invalid="ignore", divide="ignore"):
            t = K * (np.cumsum(Wb, axis=1) - Wb) / tot[:, None]  # scaled weight below each bin
        R = np.zeros((B, K + 1))
        R[:, K] = cumR[:, -1]
        if K > 1:
            # last bin starting below edge j (with the metric's floor allowance), all rows in one search
            off = (K + 1) * np.arange(B)[:, None]
            j = np.arange(1, K)[None, :]
            k = np.searchsorted((t + ACE_FLOOR_ALLOWANCE + off).ravel(), (j + off).ravel(), side="left")
            k = k.reshape(B, K - 1) - np.arange(B)[:, None] * kl - 1
            rows = np.arange(B)[:, None]
            tk = t[rows, k]
            with np.errstate(invalid="ignore", divide="ignore"):  # the bin's end, at the bins the edges cut only
                f = np.clip((j - tk) / (tk + K * Wb[rows, k] / tot[:, None] - tk), 0.0, 1.0)
            f = np.where(np.isfinite(f) & ~self.single_bin[k], f, 1.0)
            at = k + 0.5 * f
            part = (V[:, 0::2][rows, k] * np.interp(at, self._ace_x, self._ace_g[0])
                    + V[:, 1::2][rows, k] * np.interp(at, self._ace_x, self._ace_g[1]))
            R[:, 1:K] = cumR[rows, k] + np.where(f >= 1.0, lvl[rows, k], part)
        return np.abs(np.diff(R, axis=1)).sum(axis=1) / tot

    def _ranking(self, V):
        """AUROC and AP for cell totals ``V`` (b, cells)."""
        P, N = np.ascontiguousarray(V[:, 1::2]), np.ascontiguousarray(V[:, 0::2])
        cP, cN = np.cumsum(P, axis=1), np.cumsum(N, axis=1)
        W1, W0 = cP[:, -1].copy(), cN[:, -1].copy()
        PN = P * N
        cN -= N  # negatives in lower bins
        auroc = (np.einsum("ij,ij->i", P, cN) + PN @ self.h) / (W1 * W0)
        # precision path: T, F = positives and negatives at or above the bin's mean level
        T = W1[:, None] - cP
        T += P * self.ap_u
        F = W0[:, None] - N - cN
        F += N * self.ap_v
        D = T + F
        # second-order terms (module docstring): spread of the path, resampling noise
        corr: np.ndarray = P * (P * self.ap_vu + self.ap_lambda)
        corr -= D * self.ap_kappa
        corr *= -F
        corr += T * N * (N * self.ap_vv + self.ap_mu)
        corr += (T - F) * PN * self.ap_cuv
        corr /= D * D
        corr += T
        corr /= D
        corr *= P
        return auroc, np.where(P > 0, corr, 0.0).sum(axis=1) / W1

    def _calibration(self, V, S):
        B = V.shape[0]
        if self.start is None:
            return self._refit(V, None) if B else (np.zeros(0), np.zeros(0))
        a0, b0 = self.start
        a, b, bad = _taylor_newton(S[:, -16:], self.start, return_bad=True)
        redo = bad | (np.maximum(np.abs(a - a0), np.abs(b - b0)) > POLISH_STEP)
        if self.layout.exact:
            redo[:] = True
        idx = np.flatnonzero(redo)
        if idx.size:
            st = np.stack([np.where(bad[idx], a0, a[idx]), np.where(bad[idx], b0, b[idx])], axis=1)
            a2, b2 = self._refit(V[idx], st)
            a, b = a.copy(), b.copy()
            a[idx], b[idx] = a2, b2
        return a, b
