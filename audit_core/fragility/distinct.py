"""Certificates on distinct rows, predicted case-major (the default engine for non-linear models).

The generic engine predicts every perturbed row it builds. Many of them are
exact copies of another row of the same case: path step 1 is the single-group
removal of ``π_1``; ``interpolate`` at ``λ = 1`` and every ``dropout`` row at
``λ = 1`` are path step ``K``; a low-``λ`` dropout row often drops nothing and
is the case itself; removing a group whose values already equal the baseline
changes nothing. This engine predicts each distinct row once, with the rows
of one case together (trees predict that about twice as fast as block-major),
and gives every request the margin and label of its row, laid out exactly as
the generic engine lays them out, so :func:`.generic.finish` returns
bit-identical certificates (predict calls are padded, :mod:`.work`, so a row's
probabilities do not depend on the other rows of its call).

**Which rows are recognised as copies.** Every removal-type row (the case,
single-group removals, path rows, adaptive candidates, ``interpolate`` at
``λ = 1``, every ``dropout`` row) is the case with a set of columns set to the
baseline. Its *effective* set leaves out the columns whose value already has
the baseline's bits; two such rows of one case are equal exactly when their
effective sets are equal. Each set gets an integer key, the sum of per-column
weights. With at most 52 columns in play (all columns, or the case's top-``K``
columns for stage 2) the weights are powers of two and the key *is* the set;
otherwise they are random integers (:func:`.work.key_weights`) and rows with
equal keys are merged only after their sets are compared column by column, so
a collision costs a prediction, never a wrong result. ``interpolate`` rows
below ``λ = 1`` and ``noise`` rows are always predicted; they are built with
the generic engine's floating-point operations (``(1-λ)·x + λ·x̄``,
``x + (λ·s)·u``), so their bits are the same.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .generic import Ctx, finish, margins_labels, stage1_summary, stage2_spans
from .work import key_weights, predict_buffer, row_blocks, rows_in_budget

__all__ = ["certify_chunk_distinct", "row_bytes"]

_EXACT_BITS = 52  # powers of two below 2**52 sum exactly in float64 and fit 52 bits of a uint64 sort key
_CASE_BITS = 11  # chunks below 2**11 cases sort (case, key) as one uint64


def row_bytes(n_features: int, n_classes: int = 2) -> int:
    """Working bytes per built row: the row, its mask and the bookkeeping of its request."""
    return 10 * int(n_features) + 40 * int(n_classes) + 96


def _exact_weights(eff: np.ndarray) -> np.ndarray:
    """Per-row power-of-two weights of the columns in ``eff`` (rank within the row), 0 elsewhere."""
    rank = np.cumsum(eff, axis=1) - 1
    return np.where(eff, np.ldexp(1.0, np.maximum(rank, 0)), 0.0)


class _Chunk:
    """One chunk's cases, what the baseline changes in them, the path so far, and predict calls."""

    def __init__(self, ctx: Ctx, X: np.ndarray, chunk_mb: float | None) -> None:
        self.ctx, self.X, self.chunk_mb = ctx, X, chunk_mb
        n, F = X.shape
        self.neq = X.view(np.uint64) != ctx.baseline.view(np.uint64)[None, :]  # columns the baseline changes
        self.n_predicted = 0
        G, K = ctx.proto.n_groups, ctx.proto.k
        self.prefix = np.zeros((n, K + 1, G), dtype=bool)  # groups removed after k path steps
        self.pcols = np.zeros((n, K + 1, F), dtype=bool)  # the same as column masks
        self.member0 = np.concatenate([np.zeros((1, F), dtype=bool), ctx.member])  # row 0: no group
        self.dmask = np.zeros((0, F), dtype=bool)

    def set_prefix(self, k: int, groups: np.ndarray) -> None:
        self.prefix[:, k] = groups
        self.pcols[:, k] = self.ctx.fmask(groups)

    def predict(self, build: Callable[[slice, np.ndarray], None], n_rows: int) -> np.ndarray:
        """Raw probabilities of ``n_rows`` rows that ``build(slice, out)`` writes, in byte-bounded calls."""
        F = self.X.shape[1]
        parts = []
        assert self.ctx.raw_predict is not None  # make_context sets it
        for blk in row_blocks(n_rows, row_bytes(F), chunk_mb=self.chunk_mb):
            m = blk.stop - blk.start
            buf = self.ctx.buffer(m, F)
            build(blk, buf[:m])
            parts.append(predict_buffer(self.ctx.raw_predict, buf, m))
        self.n_predicted += n_rows
        if not parts:
            return np.zeros((0, 2))
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    def masks(self, case: np.ndarray, kind: np.ndarray, a: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Column sets of requests: kind 0 = group ``g`` (none when -1), 1 = path prefix ``a`` (plus group ``g``
        when ≥ 0), 2 = dropout draw ``a`` on the top-``K`` groups."""
        K = self.ctx.proto.k
        out = np.empty((len(case), self.X.shape[1]), dtype=bool)
        for k in (0, 1, 2):
            sel = np.flatnonzero(kind == k)
            if not len(sel):
                continue
            c = case[sel]
            if k == 0:
                out[sel] = self.member0[g[sel] + 1]
            elif k == 1:
                m = self.pcols[c, a[sel]]
                extra = g[sel] >= 0
                if extra.any():
                    m[extra] |= self.ctx.member[g[sel][extra]]
                out[sel] = m
            else:
                out[sel] = self.pcols[c, K] & self.dmask[a[sel]]
        return out

    def build_removals(self, out: np.ndarray, case, kind, a, g) -> None:
        """Write rows ``x`` with the requested column sets at the baseline into ``out``."""
        np.take(self.X, case, axis=0, out=out)
        np.copyto(out, self.ctx.baseline, where=self.masks(case, kind, a, g))

    def same_sets(self, i: np.ndarray, j: np.ndarray, spec: dict[str, np.ndarray]) -> np.ndarray:
        """Whether entries ``i`` and ``j`` have equal effective sets (compared in byte-bounded blocks)."""
        out = np.empty(len(i), dtype=bool)
        case, kind, a, g = spec["case"], spec["kind"], spec["a"], spec["g"]
        for blk in row_blocks(len(i), 2 * self.X.shape[1] + 64, chunk_mb=self.chunk_mb):
            ii, jj = i[blk], j[blk]
            mi = self.masks(case[ii], kind[ii], a[ii], g[ii]) & self.neq[case[ii]]
            mj = self.masks(case[jj], kind[jj], a[jj], g[jj]) & self.neq[case[jj]]
            out[blk] = (mi == mj).all(axis=1)
        return out


def _spec(case, key, kind, a, g) -> dict[str, np.ndarray]:
    n = len(case)
    full = lambda v, dt: np.full(n, v, dtype=dt) if np.ndim(v) == 0 else np.asarray(v, dtype=dt)  # noqa: E731
    return {"case": np.asarray(case, dtype=np.intp), "key": full(key, float), "kind": full(kind, np.int8),
            "a": full(a, np.intp), "g": full(g, np.intp)}


def _cat(*specs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {f: np.concatenate([s[f] for s in specs]) for f in ("case", "key", "kind", "a", "g")}


def _resolve(ch: _Chunk, spec: dict[str, np.ndarray], exact: bool) -> np.ndarray:
    """For each entry, the first entry with the same case and set (earlier entries lead their group)."""
    case, key = spec["case"], spec["key"]
    if exact and len(ch.X) < 2 ** _CASE_BITS:
        srt = np.argsort((case.astype(np.uint64) << np.uint64(_EXACT_BITS)) | key.astype(np.uint64), kind="stable")
    else:
        srt = np.lexsort((key, case))  # stable
    sc, sk = case[srt], key[srt]
    start = np.ones(len(srt), dtype=bool)
    start[1:] = (sc[1:] != sc[:-1]) | (sk[1:] != sk[:-1])
    rep = np.empty(len(srt), dtype=np.intp)
    rep[srt] = srt[np.maximum.accumulate(np.where(start, np.arange(len(srt)), 0))]
    if not exact:
        dup = np.flatnonzero(rep != np.arange(len(rep)))
        if len(dup):
            ok = ch.same_sets(dup, rep[dup], spec)
            rep[dup[~ok]] = dup[~ok]  # a key collision: predicted on its own
    return rep


def _stage1(ch: _Chunk, hg: np.ndarray):
    """Each case and its single-group removals that change it, case-major → p0, ŷ, margins, labels."""
    n = len(ch.X)
    G = ch.ctx.proto.n_groups
    ii, gg = np.nonzero(hg > 0)  # row-major: case-major, groups ascending
    counts = np.bincount(ii, minlength=n) + 1
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    case = np.repeat(np.arange(n), counts)
    g = np.full(len(case), -1, dtype=np.intp)
    is_x = np.zeros(len(case), dtype=bool)
    is_x[start] = True
    g[~is_x] = gg
    spec = _spec(case, 0.0, 0, 0, g)
    spec["key"][~is_x] = hg[ii, gg]
    p1 = ch.predict(lambda blk, out: ch.build_removals(out, case[blk], spec["kind"][blk], spec["a"][blk], g[blk]),
                    len(case))
    p0, _, y_hat = margins_labels(p1[is_x], np.zeros(n, dtype=np.intp))
    _, m1, lab1 = margins_labels(p1, y_hat[case], with_q=False)
    m_all = np.repeat(m1[is_x][None, :], G + 1, axis=0)
    m_all[gg + 1, ii] = m1[~is_x]
    lab_all = np.repeat(lab1[is_x][None, :], G + 1, axis=0)
    lab_all[gg + 1, ii] = lab1[~is_x]
    return spec, m1, lab1, p0, y_hat, m_all, lab_all


def certify_chunk_distinct(ctx: Ctx, X: np.ndarray, pos: np.ndarray, *, chunk_mb: float | None = None) -> dict[str, Any]:
    """Certificates of a chunk on distinct rows; bit-identical to :func:`.generic.certify_chunk_generic`."""
    proto = ctx.proto
    X = np.ascontiguousarray(X, dtype=float)
    n, F = X.shape
    G, K = proto.n_groups, proto.k
    ch = _Chunk(ctx, X, chunk_mb)
    exact_all = F <= _EXACT_BITS
    w = np.ldexp(1.0, np.arange(F)) if exact_all else key_weights(F)
    hg = (ch.neq * w) @ ctx.member.T.astype(float)  # (n, G) key of each single-group removal; 0 = changes nothing
    s1, m1, lab1, p0, y_hat, m_all, lab_all = _stage1(ch, hg)
    m0, delta, order = stage1_summary(m_all)
    # ---- removal path groups (adaptive: candidates resolved against every row predicted so far)
    eye = np.eye(G, dtype=bool)
    rows_n = np.arange(n)
    path_groups = np.empty((n, K), dtype=order.dtype)
    if proto.path == "random":
        assert ctx.random_keys is not None  # the engine draws them when proto.path == "random"
        path_groups[:] = np.argsort(ctx.random_keys[pos], axis=1, kind="stable")[:, :K]
    else:
        path_groups[:] = order[:, :K]
    known, known_m, known_lab = s1, m1, lab1
    prefix_m = np.zeros((n, K + 1))
    prefix_lab = np.zeros((n, K + 1), dtype=np.intp)
    ch.set_prefix(1, eye[path_groups[:, 0]])
    prefix_key = np.zeros((n, K + 1))
    prefix_key[:, 1] = hg[rows_n, path_groups[:, 0]]
    for step in range(1, K):
        if proto.path == "adaptive":
            gi, ci = np.nonzero(~ch.prefix[:, step].T)  # candidates (g, case), G-major like the generic layout
            n_old = len(known["case"])
            spec = _cat(known, _spec(ci, prefix_key[ci, step] + hg[ci, gi], 1, step, gi))
            rep = _resolve(ch, spec, exact_all)
            m, lab = _predict_reps(ch, spec, rep, n_old, y_hat, known_m, known_lab)
            known, known_m, known_lab = spec, m, lab
            mm = np.full((G, n), np.inf)
            mm[gi, ci] = m[n_old:]
            pick = mm.argmin(axis=0)
            path_groups[:, step] = pick
            prefix_m[:, step + 1] = mm[pick, rows_n]
            lab_c = np.zeros((G, n), dtype=np.intp)
            lab_c[gi, ci] = lab[n_old:]
            prefix_lab[:, step + 1] = lab_c[pick, rows_n]
        ch.set_prefix(step + 1, ch.prefix[:, step] | eye[path_groups[:, step]])
        prefix_key[:, step + 1] = prefix_key[:, step] + hg[rows_n, path_groups[:, step]]
    m2, lab2 = _stage2(ch, path_groups, y_hat, m_all, lab_all, prefix_m, prefix_lab)
    out = finish(proto, p0=p0, y_hat=y_hat, m0=m0, delta=delta, order=order, path_groups=path_groups,
                 m2=m2, lab2=lab2)
    out["_n_predicted"] = ch.n_predicted
    return out


def _predict_reps(ch: _Chunk, spec, rep, n_old, y_hat, m_old, lab_old) -> tuple[np.ndarray, np.ndarray]:
    """Predict the new entries that lead their group (case-major); margins and labels of every entry."""
    idx = np.arange(len(rep))
    new = np.flatnonzero((rep == idx) & (idx >= n_old))
    new = new[np.argsort(spec["case"][new], kind="stable")]
    c, k, a, g = (spec[f][new] for f in ("case", "kind", "a", "g"))
    p = ch.predict(lambda blk, out: ch.build_removals(out, c[blk], k[blk], a[blk], g[blk]), len(new))
    _, m_new, lab_new = margins_labels(p, y_hat[c], with_q=False)
    m = np.empty(len(rep))
    lab = np.empty(len(rep), dtype=np.intp)
    m[:n_old], lab[:n_old] = m_old, lab_old
    m[new], lab[new] = m_new, lab_new
    return m[rep], lab[rep]


def _layout(ch: _Chunk, spans, lam) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, list]:
    """Stage-2 layout rows by how they are computed: removal-type (row, kind, a), interpolate below 1, noise."""
    ctx, F = ch.ctx, ch.X.shape[1]
    K = ctx.proto.k
    no_neg_zero = not bool((np.signbit(ctx.baseline) & (ctx.baseline == 0)).any())
    rm: list[tuple[int, int, int]] = [(k, 1, k + 1) for k in range(K)]
    interp, noise = [], []
    dmask: list[np.ndarray] = []
    for fam in ctx.proto.families:
        a0, _, R = spans[fam]
        for li, lv in enumerate(lam):
            for r in range(R):
                row = a0 + li * R + r
                if fam == "dropout":
                    rm.append((row, 2, len(dmask)))
                    dmask.append(ctx.draws[fam][r] < lv)
                elif fam == "interpolate" and lv == 1.0 and no_neg_zero:
                    rm.append((row, 1, K))  # (1-1)·x + 1·x̄ is x̄ bit for bit
                elif fam == "interpolate":
                    interp.append((row, float(lv)))
                else:
                    noise.append((row, li, r))
    ch.dmask = np.array(dmask, dtype=bool).reshape(-1, F)
    arr = np.array(rm, dtype=np.intp).reshape(-1, 3)
    return arr[:, 0], arr[:, 1].astype(np.int8), arr[:, 2], interp, noise


def _stage2(ch: _Chunk, path_groups, y_hat, m_all, lab_all, prefix_m, prefix_lab) -> tuple[np.ndarray, np.ndarray]:
    """Stage-2 margins and labels ``(rows, n)``: path, then each family on the top-``K`` groups."""
    ctx, X = ch.ctx, ch.X
    proto = ctx.proto
    n, F = X.shape
    K = proto.k
    spans, n_rows2 = stage2_spans(proto)
    rows_n = np.arange(n)
    top = ch.pcols[:, K]
    top_eff = top & ch.neq
    exact = int(top_eff.sum(axis=1).max(initial=0)) <= _EXACT_BITS
    wl = _exact_weights(top_eff) if exact else top_eff * key_weights(F)  # key weights of the top columns
    gkey = wl @ ctx.member.T.astype(float)  # (n, G)
    pkey = np.concatenate([np.zeros((n, 1)), np.cumsum(gkey[rows_n[:, None], path_groups], axis=1)], axis=1)
    lam = np.asarray(proto.grid)
    rm_row, rm_kind, rm_a, interp, noise = _layout(ch, spans, lam)
    # known rows first: the case, the single-group removals of the path groups, the adaptive prefix rows
    old = [_spec(rows_n, 0.0, 0, 0, -1)] + [_spec(rows_n, gkey[rows_n, path_groups[:, k]], 0, 0, path_groups[:, k])
                                            for k in range(K)]
    m_old = [m_all[0]] + [m_all[path_groups[:, k] + 1, rows_n] for k in range(K)]
    lab_old = [lab_all[0]] + [lab_all[path_groups[:, k] + 1, rows_n] for k in range(K)]
    if proto.path == "adaptive":
        old += [_spec(rows_n, pkey[:, k], 1, k, -1) for k in range(2, K + 1)]
        m_old += [prefix_m[:, k] for k in range(2, K + 1)]
        lab_old += [prefix_lab[:, k] for k in range(2, K + 1)]
    # then the removal-type requests, case-major
    n_rm = len(rm_row)
    ci = np.repeat(rows_n, n_rm)
    kk, aa = np.tile(rm_kind, n), np.tile(rm_a, n)
    key = np.empty(len(ci))
    k1 = kk == 1
    key[k1] = pkey[ci[k1], aa[k1]]
    if (~k1).any():
        key[~k1] = (wl @ ch.dmask.T.astype(float))[ci[~k1], aa[~k1]]
    spec = _cat(*old, _spec(ci, key, kk, aa, -1))
    n_old = len(spec["case"]) - len(ci)
    rep = _resolve(ch, spec, exact)
    idx = np.arange(len(rep))
    new = np.flatnonzero((rep == idx) & (idx >= n_old))  # case-major already
    m2 = np.empty((n_rows2, n))
    lab2 = np.empty((n_rows2, n), dtype=np.intp)
    m_ent = np.empty(len(rep))
    lab_ent = np.empty(len(rep), dtype=np.intp)
    m_ent[:n_old], lab_ent[:n_old] = np.concatenate(m_old), np.concatenate(lab_old)
    _predict_stage2(ch, spec, new, y_hat, top, interp, noise, lam, m_ent, lab_ent, m2, lab2)
    m2[np.tile(rm_row, n), ci] = m_ent[rep[n_old:]]
    lab2[np.tile(rm_row, n), ci] = lab_ent[rep[n_old:]]
    return m2, lab2


def _predict_stage2(ch, spec, new, y_hat, top, interp, noise, lam, m_ent, lab_ent, m2, lab2) -> None:
    """Predict the new removal rows and every interpolate (< 1) and noise row, in blocks of whole cases.

    Within a block the rows are the new removal rows (case-major), then the
    interpolate rows and the noise rows (each case-major).
    """
    ctx, X = ch.ctx, ch.X
    n, F = X.shape
    n_int, n_noise = len(interp), len(noise)
    a_int = 1.0 - np.array([lv for _, lv in interp])
    b_int = np.array([lv for _, lv in interp])[:, None] * ctx.baseline[None, :]
    v_noise = (np.stack([(lam[li] * ctx.scale) * ctx.draws["noise"][r] for _, li, r in noise])
               if n_noise else np.zeros((0, F)))
    # x + v·1 = x + v and x + v·0 = x (exact) unless x holds a negative zero or v is not finite
    additive = bool(np.isfinite(v_noise).all()) and not bool((np.signbit(X) & (X == 0)).any())
    int_rows = np.array([row for row, _ in interp], dtype=np.intp)
    noise_rows = np.array([row for row, _, _ in noise], dtype=np.intp)
    new_case = spec["case"][new]
    per_case = np.bincount(new_case, minlength=n)
    new_start = np.concatenate([[0], np.cumsum(per_case)])
    rows_case = per_case + n_int + n_noise
    cum = np.concatenate([[0], np.cumsum(rows_case)])
    budget = rows_in_budget(8 * F + 64, chunk_mb=ch.chunk_mb)
    lo = 0
    while lo < n:
        hi = max(lo + 1, int(np.searchsorted(cum, cum[lo] + budget, side="right")) - 1)
        hi = min(hi, n)
        nb = hi - lo
        j = new[new_start[lo]:new_start[hi]]
        n_rm = len(j)
        total = n_rm + nb * (n_int + n_noise)
        buf = ctx.buffer(total, F)
        if n_rm:
            ch.build_removals(buf[:n_rm], spec["case"][j], spec["kind"][j], spec["a"][j], spec["g"][j])
        xb = X[lo:hi][:, None, :]
        if n_int:
            part = buf[n_rm:n_rm + nb * n_int].reshape(nb, n_int, F)
            np.multiply(a_int[None, :, None], xb, out=part)
            part += b_int[None]
            np.copyto(part, xb, where=~top[lo:hi][:, None, :])
        if n_noise:
            part = buf[n_rm + nb * n_int:total].reshape(nb, n_noise, F)
            if additive:
                np.multiply(top[lo:hi][:, None, :], v_noise[None], out=part)
                part += xb
            else:
                np.add(xb, v_noise[None], out=part)
                np.copyto(part, xb, where=~top[lo:hi][:, None, :])
        p = predict_buffer(ctx.raw_predict, buf, total)
        ch.n_predicted += total
        yb = np.concatenate([y_hat[spec["case"][j]], np.repeat(y_hat[lo:hi], n_int), np.repeat(y_hat[lo:hi], n_noise)])
        _, mb, lb = margins_labels(p, yb, with_q=False)
        m_ent[j], lab_ent[j] = mb[:n_rm], lb[:n_rm]
        off = n_rm
        for rows, cnt in ((int_rows, n_int), (noise_rows, n_noise)):
            if cnt:
                m2[rows[:, None], np.arange(lo, hi)[None, :]] = mb[off:off + nb * cnt].reshape(nb, cnt).T
                lab2[rows[:, None], np.arange(lo, hi)[None, :]] = lb[off:off + nb * cnt].reshape(nb, cnt).T
                off += nb * cnt
        lo = hi
