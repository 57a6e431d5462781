"""Vectorised, stratified, weighted bootstrap on a fixed pipeline.

A replicate is a vector of resampling counts over the test records (drawn
with replacement *within each class*, so every replicate keeps the class
counts). The model, mapping, thresholds and conformal quantiles stay fixed;
each replicate's statistic is computed from ``counts × weights`` as record
weights, all replicates at once:

* linear statistics (prevalence, Brier, log loss, rates, coverages) are one
  matrix product ``W @ M``;
* AUROC and AP reuse one sort of the scores (ties grouped) and forward
  cumulative sums along the replicate matrix (without ties: one cumulative
  sum over all records plus one over the positives only);
* ECE and MCE reuse the fixed bin assignment; ACE re-cuts its equal-mass
  bins in every replicate from the replicate's cumulative weights (the
  metric's own rule, :func:`~audit_core.calibration_error.equal_mass_bins`);
* Spiegelhalter's z is a ratio of two linear statistics; its variance term
  takes the replicate's squared record weights (``W2`` of
  :meth:`BatchedMetrics.compute`);
* the calibration intercept and slope (the weighted logistic MLE) are found
  in two phases. (i) Newton iterations on the third-order Taylor expansion
  of the logistic mean around the full-sample fit: the expansion's score and
  Hessian are polynomials in the step whose coefficients are 16 weighted
  moments, linear in the weights, so they come from the same ``W @ M``
  product and each iteration costs O(B). (ii) Exact Newton steps on the true
  likelihood from that point, each one pass over ``W``, until the step is
  within the tolerance (usually the first); any replicate not converged after
  three exact steps is refitted by :func:`~audit_core.logistic.fit_logistic_1d`.
  Phase (i) only chooses the starting point, so the estimate is the same
  MLE, to the same convergence tolerance, as plain Newton from the warm start.

Replicates are processed in chunks to bound memory (``chunk × n`` floats).
"""
from __future__ import annotations

import numpy as np

from ..calibration_error import equal_mass_bins, spiegelhalter_terms
from ..logistic import EPS_LOGIT, fit_logistic_1d, logit
from .state import Tick, TransportState, no_tick

__all__ = ["class_positions", "stratified_draws", "stratified_counts", "BatchedMetrics", "percentile_interval",
           "replicate_changes", "replicate_draws"]


def class_positions(y: np.ndarray) -> list[np.ndarray]:
    """Positions of each class's records, classes in ascending order."""
    y = np.asarray(y)
    return [np.flatnonzero(y == c) for c in np.unique(y)]


def stratified_draws(y: np.ndarray, B: int, rng: np.random.Generator, *, classes=None):
    """The random draws behind :func:`stratified_counts`, one class at a time.

    Yields ``(idx, draw)`` for every class in ascending order: ``idx`` (n_c,)
    are the positions of that class's records (``classes``, when given, is
    :func:`class_positions` of ``y``) and ``draw`` (B, n_c) the positions
    *within* ``idx`` drawn uniformly with replacement. Replicate ``b`` holds
    record ``idx[j]`` once for every occurrence of ``j`` in ``draw[b]``. Both
    bootstraps consume the generator through this function, so the binned
    bootstrap aggregates exactly the exact bootstrap's replicates.
    """
    for idx in (class_positions(y) if classes is None else classes):
        yield idx, rng.integers(0, len(idx), size=(B, len(idx)))


def stratified_counts(y: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """Resampling counts of shape (B, n), stratified by ``y``.

    Each row sums, within every class, to that class's record count.
    """
    n = len(y)
    out = np.zeros((B, n), dtype=np.float64)
    for idx, d in stratified_draws(y, B, rng):
        flat = (idx[d] + (np.arange(B) * n)[:, None]).ravel()
        out += np.bincount(flat, minlength=B * n).reshape(B, n)
    return out


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of replicate values of shape (B,), ignoring NaN."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(v, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


#: number of Taylor-moment columns appended to ``M`` (see ``_taylor_columns``).
_N_TAYLOR = 16


def _taylor_columns(x, y, start):
    """Columns whose weighted sums give the third-order Taylor model of the
    logistic score around ``start`` (shape (n, 16)).

    Order: ``y, y x``, then ``s_k x^j`` for ``k = 0..3`` and ``j = 0..k+1``,
    where ``s_k`` is the k-th derivative of the logistic function at
    ``a0 + b0 x``.
    """
    from scipy.special import expit

    s0 = expit(start[0] + start[1] * x)
    s1 = s0 * (1 - s0)
    s2 = s1 * (1 - 2 * s0)
    s3 = s1 * (1 - 6 * s1)
    # powers x^j by repeated products (1 · x, then · x), computed once for the four derivatives
    powers = [np.ones_like(x)]
    for _j in range(4):
        powers.append(powers[-1] * x)
    out = np.empty((len(x), _N_TAYLOR))
    out[:, 0] = y
    np.multiply(y, x, out=out[:, 1])
    col = 2
    for k, sk in enumerate((s0, s1, s2, s3)):
        for j in range(k + 2):
            np.multiply(sk, powers[j], out=out[:, col])
            col += 1
    return out


def _taylor_newton(T, start, *, iters: int = 25, return_bad: bool = False):
    """Newton on the Taylor model from the moment sums ``T`` of shape (B, 16).

    Returns the model's root ``(a, b)`` (arrays of shape (B,)); replicates
    where it is not finite, or more than 1 from the start, keep the warm start
    (``return_bad=True`` also returns that mask).
    """
    B = T.shape[0]
    Sy, Syx = T[:, 0], T[:, 1]
    m: list[list[np.ndarray]] = [[] for _ in range(4)]
    pos = 2
    for k in range(4):
        m[k] = [T[:, pos + j] for j in range(k + 2)]
        pos += k + 2
    da = np.zeros(B)
    db = np.zeros(B)

    def mom(k, j):
        return m[k][j]

    with np.errstate(all="ignore"):
        for _ in range(iters):
            # δ^p expansion coefficients: Σ W s_k δ^p x^t  = Σ_l C(p,l) da^(p-l) db^l M_k,(l+t)
            def poly(k, p, t, da=da, db=db):  # this iteration's step, bound explicitly
                if p == 0:
                    return mom(k, t)
                if p == 1:
                    return da * mom(k, t) + db * mom(k, t + 1)
                if p == 2:
                    return da * da * mom(k, t) + 2 * da * db * mom(k, t + 1) + db * db * mom(k, t + 2)
                return (da ** 3 * mom(k, t) + 3 * da * da * db * mom(k, t + 1) + 3 * da * db * db * mom(k, t + 2)
                        + db ** 3 * mom(k, t + 3))

            g = []
            for t, sy in ((0, Sy), (1, Syx)):
                g.append(sy - (poly(0, 0, t) + poly(1, 1, t) + 0.5 * poly(2, 2, t) + poly(3, 3, t) / 6.0))
            h = {}
            for t in (0, 1, 2):
                h[t] = poly(1, 0, t) + poly(2, 1, t) + 0.5 * poly(3, 2, t)
            det = h[0] * h[2] - h[1] * h[1]
            sa = (h[2] * g[0] - h[1] * g[1]) / det
            sb = (h[0] * g[1] - h[1] * g[0]) / det
            da, db = da + sa, db + sb
            if np.all(np.abs(sa) + np.abs(sb) < 1e-13 * (1 + np.abs(start[0]) + np.abs(start[1]))):
                break
        a, b = start[0] + da, start[1] + db
        bad = ~(np.isfinite(a) & np.isfinite(b)) | (np.abs(da) + np.abs(db) > 1.0)
    a[bad], b[bad] = start[0], start[1]
    return (a, b, bad) if return_bad else (a, b)


def _newton_warm(x, y, W, start, *, steps: int = 3, tol: float = 1e-7, a0=None, b0=None, gy=None):
    """Batched logistic MLE: at most ``steps`` plain Newton steps from
    ``(a0, b0)`` (per replicate; default the common warm ``start``;
    ``gy``, shape (B, 2), optionally gives ``W @ [y, y x]``);
    replicates that have not converged (relative step > ``tol``) are
    refitted with the safeguarded :func:`~audit_core.logistic.fit_logistic_1d`."""
    if start is None:
        return fit_logistic_1d(x, y, W)
    from scipy.special import expit

    B = W.shape[0]
    a = np.full(B, float(start[0])) if a0 is None else np.array(a0, dtype=float)
    b = np.full(B, float(start[1])) if b0 is None else np.array(b0, dtype=float)
    X2 = np.stack([np.ones_like(x), x], axis=1)
    X3 = np.stack([np.ones_like(x), x, x * x], axis=1)
    gy = np.stack([W @ y, W @ (y * x)], axis=1) if gy is None else gy
    ok = np.zeros(B, dtype=bool)
    live = np.arange(B)  # replicates still iterating
    for _ in range(steps):
        Wl = W if live.size == B else W[live]
        al, bl = a[live], b[live]
        mu = expit(al[:, None] + bl[:, None] * x[None, :])
        Wm = Wl * mu
        g = gy[live] - Wm @ X2
        mu -= 1.0
        Wm *= mu  # W mu (mu - 1) = -W v
        h = -(Wm @ X3)
        h00, h01, h11 = h[:, 0], h[:, 1], h[:, 2]
        g0, g1 = g[:, 0], g[:, 1]
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            da = (h11 * g0 - h01 * g1) / det
            db = (h00 * g1 - h01 * g0) / det
        a[live], b[live] = al + da, bl + db
        done = np.isfinite(a[live]) & np.isfinite(b[live]) & (
            np.maximum(np.abs(da), np.abs(db)) <= tol * (1 + np.abs(a[live]) + np.abs(b[live])))
        ok[live[done]] = True
        live = live[~done]
        if live.size == 0:
            break
    if not ok.all():
        bad = np.flatnonzero(~ok)
        a2, b2 = fit_logistic_1d(x, y, W[bad])
        a[bad], b[bad] = a2, b2
    return a, b


class BatchedMetrics:
    """Metric registry values for many weight vectors over fixed ``(y, p)``.

    Parameters
    ----------
    y : ndarray of shape (n,)
    p : ndarray of shape (n,)
    n_bins : int
        ECE bins.
    linear : dict of str to ndarray of shape (n,), optional
        Extra statistics of the form ``Σ w v / Σ w``.
    ratios : dict of str to (num (n,), den (n,)), optional
        Extra statistics ``Σ w num / Σ w den``.
    """

    def __init__(self, y, p, *, n_bins: int = 15, linear=None, ratios=None, with_calibration=True):
        self.y = np.asarray(y, dtype=float)
        self.p = np.asarray(p, dtype=float)
        q = np.clip(self.p, EPS_LOGIT, 1 - EPS_LOGIT)
        self.x = logit(q)
        self.with_calibration = with_calibration
        self.n_bins = n_bins
        y, p = self.y, self.p
        self._spg_u, self._spg_v = spiegelhalter_terms(y, p)
        cols = {
            "prevalence": y,
            "brier_score": (p - y) ** 2,
            "log_loss": -(y * np.log(q) + (1 - y) * np.log1p(-q)),
            "__spiegelhalter_num": self._spg_u,
        }
        cols.update(linear or {})
        self.lin_names = list(cols)
        ratios = ratios or {}
        self.ratio_names = list(ratios)
        mats = list(cols.values()) + [r[0] for r in ratios.values()] + [r[1] for r in ratios.values()]
        self._tot = len(mats)
        self.M = np.stack(mats + [np.ones_like(y)], axis=1)
        # ranking: ascending for AUROC, tie starts. When p is already sorted
        # (the protocol passes records in score order) no gather is needed.
        self.presorted = bool(np.all(np.diff(p) >= 0))
        self.order = None if self.presorted else np.argsort(p, kind="stable")
        s = p if self.presorted else p[self.order]
        self.starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        self.y_sorted = y if self.presorted else y[self.order]
        # ECE bins (same assignment as metrics.expected_calibration_error);
        # bins are monotone in p, so score order is also bin order.
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        b = np.searchsorted(edges[1:-1], s)
        self.bin_starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        self.resid_sorted = s - self.y_sorted
        self.start = None
        if with_calibration and 0 < y.sum() < len(y):
            a, b = fit_logistic_1d(self.x, y, np.ones(len(y)))
            if np.isfinite(a) and np.isfinite(b):
                self.start = (a, b)
        if self.start is not None:
            self.M = np.concatenate([self.M, _taylor_columns(self.x, y, self.start)], axis=1)
        self.pos_idx = np.flatnonzero(self.y_sorted == 1)

    def compute(self, W: np.ndarray, W2: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Statistics for weight matrix ``W`` of shape (B, n); values of shape (B,).

        ``W2`` (B, n) holds each replicate's sum of squared record weights per
        record (``counts · w²``; ``counts`` when unweighted), for the variance
        of Spiegelhalter's z. Default ``W²``: ``W`` read as record weights.
        """
        W = np.atleast_2d(np.asarray(W, dtype=float))
        S = W @ self.M
        tot = S[:, self._tot]
        out = {}
        k = len(self.lin_names)
        for j, name in enumerate(self.lin_names):
            out[name] = S[:, j] / tot
        var = (W * W if W2 is None else np.atleast_2d(np.asarray(W2, dtype=float))) @ self._spg_v
        with np.errstate(invalid="ignore", divide="ignore"):
            out["spiegelhalter_z"] = np.where(var > 0, S[:, self.lin_names.index("__spiegelhalter_num")]
                                              / np.sqrt(np.where(var > 0, var, 1.0)), np.nan)
        del out["__spiegelhalter_num"]
        r = len(self.ratio_names)
        with np.errstate(invalid="ignore", divide="ignore"):
            for j, name in enumerate(self.ratio_names):
                out[name] = S[:, k + j] / S[:, k + r + j]
        Ws = W if self.presorted else W[:, self.order]
        with np.errstate(invalid="ignore", divide="ignore"):
            if len(self.starts) == len(self.y_sorted):
                # no tied scores: positives and negatives are separate records.
                # cw = cumulative weight in ascending score order; at a
                # positive record, cumulative negatives = cw - cumulative positives.
                cw = np.cumsum(Ws, axis=1)
                WP = Ws[:, self.pos_idx]
                cp = np.cumsum(WP, axis=1)
                cn = cw[:, self.pos_idx]
                cn -= cp
                W1 = cp[:, -1] if WP.shape[1] else np.zeros(len(W))
                W0 = cw[:, -1] - W1
                out["auroc"] = np.einsum("ij,ij->i", WP, cn) / (W1 * W0)
                # AP over descending thresholds: at positive record j,
                # TP = W1 - cp_j + w_j, FP = W0 - cn_j
                tp = W1[:, None] - cp
                tp += WP
                den = W0[:, None] - cn
                den += tp
                ap = np.einsum("ij,ij->i", WP, tp / np.maximum(den, 1e-300)) / W1
            else:  # tied scores: one level per distinct score
                pos = np.add.reduceat(Ws * self.y_sorted, self.starts, axis=1)
                neg = np.add.reduceat(Ws, self.starts, axis=1) - pos
                W1, W0 = pos.sum(axis=1), neg.sum(axis=1)
                cp, cn = np.cumsum(pos, axis=1), np.cumsum(neg, axis=1)
                out["auroc"] = (pos * (cn - 0.5 * neg)).sum(axis=1) / (W1 * W0)
                tp = W1[:, None] - cp + pos
                fp = W0[:, None] - cn + neg
                prec = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1e-300), 0.0)
                ap = (pos * prec).sum(axis=1) / W1
            out["average_precision"] = ap
            pi = out["prevalence"]
            out["pr_skill"] = (ap - pi) / (1 - pi)
        binres = np.add.reduceat(Ws * self.resid_sorted, self.bin_starts, axis=1)
        out["ece"] = np.abs(binres).sum(axis=1) / tot
        binw = np.add.reduceat(Ws, self.bin_starts, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["mce"] = np.where(binw > 0, np.abs(binres) / np.where(binw > 0, binw, 1.0), -np.inf).max(axis=1)
        out["ace"] = self._ace(Ws, tot)
        if self.with_calibration:
            if self.start is None:
                a, b = _newton_warm(self.x, self.y, W, None)
            else:
                T = S[:, self._tot + 1:]
                a0, b0 = _taylor_newton(T, self.start)
                a, b = _newton_warm(self.x, self.y, W, self.start, a0=a0, b0=b0, gy=T[:, :2])
            out["calibration_intercept"], out["calibration_slope"] = a, b
        return out

    def _ace(self, Ws: np.ndarray, tot: np.ndarray) -> np.ndarray:
        """ACE per replicate: equal-mass bins re-cut from the replicate's weights (score order ``Ws``)."""
        B, K = Ws.shape[0], self.n_bins
        below = np.cumsum(Ws, axis=1)
        below -= Ws
        bins = equal_mass_bins(below[:, self.starts], tot, K)  # (B, levels)
        lvl = np.add.reduceat(Ws * self.resid_sorted, self.starts, axis=1)
        idx = bins + (np.arange(B) * K)[:, None]
        res = np.bincount(idx.ravel(), weights=lvl.ravel(), minlength=B * K).reshape(B, K)
        return np.abs(res).sum(axis=1) / tot


def replicate_draws(state: TransportState, *, tick: Tick = no_tick):
    """The record-bootstrap draws of a Transport run, chunk by chunk (the exact and the multi-class bootstraps).

    Yields ``(start, b, r, idt, counts_id, counts_ood)``: replicates ``start … start + b`` of refit ``r``,
    the refit's ID-test rows ``idt``, and the count matrices of shape ``(b, len(idt))`` and
    ``(b, n_target)``, stratified by the primary target's label. Each chunk and refit draws from its own
    seeded generator (``[seed + 7919, chunk, r]``; the target's ``[…, chunk, 10**6]``), so the draws do not
    depend on the order they are used in. Progress is reported once per chunk.
    """
    c = state.config
    B, R = c.n_bootstrap, c.n_refits
    y_ood, y_src = state.y_target[c.primary_target], state.y_source[c.primary_target]
    seed = int(c.seed) + 7919
    chunks = list(range(0, B, c.bootstrap_chunk))
    for ci, start in enumerate(chunks):
        b = min(c.bootstrap_chunk, B - start)
        tick(ci / len(chunks), f"Bootstrap {start + b} of {B}")
        counts_ood = stratified_counts(y_ood, b, np.random.default_rng([seed, ci, 10**6]))
        for r in range(R):
            idt = state.source_rows(r, "id_test")
            yield start, b, r, idt, stratified_counts(y_src[idt], b, np.random.default_rng([seed, ci, r])), counts_ood


def replicate_changes(state: TransportState, mappings, changes, *, tick: Tick = no_tick) -> dict:
    """The replicate loop of the exact and the multi-class bootstraps: OOD − ID per statistic, shape (R, B).

    Parameters
    ----------
    state : TransportState
        A Transport run (binary or multi-class) past its ``transport`` stage.
    mappings : sequence of str
        The mappings to bootstrap.
    changes : callable
        ``changes(r, m, mp, (W_id, Q_id), (W_ood, Q_ood))`` returns
        ``{(analysis, metric, alpha, s): OOD − ID of shape (b,)}`` for the
        replicate record weights ``W`` of shape (b, n) and their squares
        ``Q`` (Spiegelhalter's variance) of refit ``r``, model ``m`` and mapping ``mp``.
    tick : callable, optional
        Progress, once per chunk.

    Returns
    -------
    dict
        ``(model, mapping, weighting, analysis, metric, alpha, rate) -> ndarray (R, B)``;
        ``alpha`` and ``rate`` are ``nan`` where they do not apply.
    """
    c = state.config
    B, R = c.n_bootstrap, c.n_refits
    wsrc, wtgt = state.w_source, state.w_target
    schemes = [("unweighted", False)] + ([("weighted", True)] if wsrc is not None else [])
    out: dict = {}
    for start, b, r, idt, counts_id, counts_ood in replicate_draws(state, tick=tick):
        for m in c.models:
            for weighting, usew in schemes:
                ids = (counts_id * wsrc[idt], counts_id * wsrc[idt] ** 2) if usew else (counts_id,) * 2  # type: ignore[index]
                oods = (counts_ood * wtgt, counts_ood * wtgt ** 2) if usew else (counts_ood,) * 2  # type: ignore[operator]
                for mp in mappings:
                    for (analysis, metric, alpha, s), diff in changes(r, m, mp, ids, oods).items():
                        key = (m, mp, weighting, analysis, metric, np.nan if alpha is None else alpha,
                               np.nan if s is None else s)
                        arr = out.setdefault(key, np.full((R, B), np.nan))
                        arr[r, start:start + b] = diff
    return out
