"""The reference certification path and what every engine shares.

:func:`certify_chunk_generic` is the original engine, kept as the reference the
faster engines are tested against (``FragilityConfig(engine="generic")``):

1. **One predict call** on ``n · (1 + G)`` rows: the cases and every
   single-group removal. This gives ``ŷ``, ``m0``, ``Δ_g`` and ``π``.
2. **One predict call** on ``n · (K + L · (1 + R · s))`` rows (``s`` stochastic
   families): the removal path and every severity/draw of every family applied
   jointly to the top-``K`` groups, block-major (all cases of one perturbation,
   then the next). The ``adaptive`` path adds ``K - 1`` calls of ``n · G`` rows.

Every engine fills the same arrays (the stage-1 margins ``(G+1, n)`` and the
stage-2 margins and labels ``(rows, n)`` in the layout of :func:`stage2_spans`)
and hands them to :func:`finish`, which computes ``k*``, RCMA, the curves,
``j*``, ``d`` and FDS. Predict calls go through :func:`.work.padded`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from audit_core.models.probs import EPS_PROB, clip_probs, margin_of, pseudo_logits

from .certificate import CertificateSettings
from .operators import STOCHASTIC, degrade, draw_uniforms, group_mask
from .work import PAD_ROWS, padded

__all__ = ["Ctx", "make_context", "certify_chunk_generic", "stage2_spans", "stage1_summary", "finish",
           "margins_labels", "binary_margins", "as_predict"]


def _final_estimator(model: Any) -> Any:
    """The estimator that predicts: inside a FittedModel and at the end of a Pipeline."""
    model = getattr(model, "estimator", model)
    steps = getattr(model, "steps", None)
    return steps[-1][1] if steps else model


_OPENMP = None


def _one_openmp_thread(predict: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``predict`` run with OpenMP limited to one thread (the results do not depend on the thread count).

    scikit-learn's histogram gradient boosting predicts with one OpenMP
    parallel loop per tree, so a call costs ``n_trees`` fork–join barriers.
    Measured in CPU time (``benchmarks/bench_fragility.py``, 2 cores shared
    with other work), those barriers made certification 1.8–2.6× its
    one-call limit; on one thread the same certificates cost about as much
    as the limit. Each row's prediction is a sum over trees in a fixed order
    whatever the thread count, so the outputs are bit-identical.
    """
    global _OPENMP
    if _OPENMP is None:
        from threadpoolctl import ThreadpoolController

        _OPENMP = ThreadpoolController()  # library discovery once

    def run(X: np.ndarray) -> np.ndarray:
        with _OPENMP.limit(limits=1, user_api="openmp"):
            return predict(X)

    return run


def _forest_trees(model: Any) -> Callable[[np.ndarray], np.ndarray] | None:
    """A scikit-learn forest's ``predict_proba`` as one loop over its trees, or None when it does not apply.

    ``ForestClassifier.predict_proba`` converts the rows to float32, then
    runs each tree through joblib and adds its leaf probabilities into one
    array, in tree order when ``n_jobs`` is 1, and divides by the number of
    trees. Every call also pays a fixed cost per tree (the joblib task, a
    config context and warning filters, fitted checks): about 27 ms of CPU for
    200 trees on 32 rows, where the trees' own traversal takes about 4 ms
    (``docs/fragility.md``), paid again by each of the engine's
    calls. This loop does the same conversion, sums and division in the same
    order, so the probabilities are bit-identical, without that fixed cost.
    It applies to a bare single-output forest (or one inside a FittedModel)
    predicting on one job; a Pipeline's forest, ``n_jobs > 1`` (whose threads
    add in any order) and a subclass with its own ``predict_proba`` use
    ``predict_proba`` itself.
    """
    # a FittedModel holds its estimator in .estimator; a forest's own .estimator is its tree template
    forest = model.estimator if hasattr(model, "predict_proba_transformed") else model
    try:
        from sklearn.ensemble._forest import ForestClassifier
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        return None
    if not isinstance(forest, ForestClassifier) or type(forest).predict_proba is not ForestClassifier.predict_proba \
            or getattr(forest, "n_outputs_", 0) != 1 or forest.n_jobs not in (None, 1) \
            or not hasattr(forest, "estimators_"):
        return None
    trees = [(e.tree_, int(e.n_classes_)) for e in forest.estimators_]
    n_classes = int(forest.n_classes_)

    def run(X: np.ndarray) -> np.ndarray:
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        out = np.zeros((X32.shape[0], n_classes))
        for tree, c in trees:
            out += tree.predict(X32)[:, :c]
        out /= len(trees)
        return out

    return run


def as_predict(model: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``predict_proba`` on the transformed matrix for a FittedModel, estimator or callable.

    For scikit-learn's histogram gradient boosting it runs on one OpenMP
    thread (:func:`_one_openmp_thread`); a scikit-learn forest is predicted
    by one loop over its trees with the same bits (:func:`_forest_trees`).
    """
    forest = _forest_trees(model) if hasattr(model, "predict_proba") else None
    if forest is not None:
        return forest
    if hasattr(model, "predict_proba_transformed"):
        predict = model.predict_proba_transformed
    elif hasattr(model, "predict_proba"):
        predict = model.predict_proba
    else:
        return model
    if type(_final_estimator(model)).__name__.startswith("HistGradientBoosting"):
        return _one_openmp_thread(predict)
    return predict


@dataclass
class Ctx:
    """What a chunk needs besides its cases: protocol, padded predict, group membership, draws."""

    proto: CertificateSettings
    predict: Callable[[np.ndarray], np.ndarray]
    member: np.ndarray  # (G, F) bool
    colgroup: np.ndarray | None  # (F,) group of each column, None when the groups do not partition the columns
    baseline: np.ndarray
    scale: np.ndarray
    draws: dict = field(default_factory=dict)
    random_keys: np.ndarray | None = None
    model: Any = None
    raw_predict: Callable[[np.ndarray], np.ndarray] | None = None  # unpadded, for :func:`.work.predict_buffer`
    _scratch: np.ndarray | None = None

    def buffer(self, n_rows: int, n_features: int) -> np.ndarray:
        """A reused row buffer of ``n_rows`` rows plus the padding of :func:`.work.predict_buffer`.

        Reusing one buffer across blocks and chunks saves the page faults of a
        fresh allocation per predict call (a large part of building rows).
        """
        need = int(n_rows) + (-int(n_rows)) % PAD_ROWS
        s = self._scratch
        if s is None or s.shape[1] != n_features or s.shape[0] < need:
            s = self._scratch = np.empty((max(need, int(1.25 * (0 if s is None else s.shape[0]))), n_features))
        return s[:need]

    def margins(self, rows: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Margins of class ``y`` and labels; rows (..., F), y broadcastable to rows.shape[:-1]."""
        shape = rows.shape[:-1]
        p = clip_probs(self.predict(rows.reshape(-1, rows.shape[-1])))
        p = p.reshape(shape + (p.shape[-1],))
        return margin_of(pseudo_logits(p), y), p.argmax(axis=-1)

    def fmask(self, sel: np.ndarray) -> np.ndarray:
        """Column mask of group selections ``(..., G)`` → ``(..., F)``."""
        if self.colgroup is not None:
            return np.asarray(sel, dtype=bool)[..., self.colgroup]
        return group_mask(self.proto.columns, sel)


def make_context(model: Any, proto: CertificateSettings, n_features: int, random_keys: np.ndarray | None) -> Ctx:
    member = np.zeros((proto.n_groups, n_features), dtype=bool)
    for g, cols in enumerate(proto.columns):
        member[g, cols] = True
    partition = bool((member.sum(axis=0) == 1).all())
    raw = as_predict(model)
    return Ctx(
        proto=proto,
        predict=padded(raw),
        raw_predict=raw,
        member=member,
        colgroup=member.argmax(axis=0) if partition else None,
        baseline=np.asarray(proto.baseline, dtype=float),
        scale=np.asarray(proto.scale, dtype=float),
        draws={f: draw_uniforms(f, n_draws=proto.n_draws, n_features=n_features, seed=proto.seed)
               for f in proto.families},
        random_keys=random_keys,
        model=model,
    )


_BLOCK = 32_768  # rows per pass: temporaries stay small (no page faults of fresh large arrays), same results


def margins_labels(p_raw: np.ndarray, y: np.ndarray, *, with_q: bool = True) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Clipped probabilities, margin of class ``y`` and argmax label of raw probabilities ``(N, C)``.

    The same floating-point operations as ``margin_of(pseudo_logits(clip_probs(p)), y)`` and
    ``clip_probs(p).argmax(-1)``, row by row. For two classes they run on the two columns as 1-D
    arrays: the row sum of two values is one addition and the mean of two log-probabilities is
    their sum over 2, as NumPy's reductions compute them, and the margin is ``z_y - z_{1-y}``, the
    subtraction ``margin_of`` makes (tested bit for bit against the general functions). Rows are
    processed in blocks of 32,768. ``q`` is None when ``with_q`` is False.
    """
    p_raw = np.asarray(p_raw, dtype=float)
    y = np.broadcast_to(np.asarray(y), p_raw.shape[:1])
    N, C = p_raw.shape
    q = np.empty((N, C)) if with_q else None
    m = np.empty(N)
    lab = np.empty(N, dtype=np.intp)
    for lo in range(0, N, _BLOCK):
        blk = slice(lo, min(N, lo + _BLOCK))
        if C != 2:
            qb = clip_probs(p_raw[blk])
            m[blk] = margin_of(pseudo_logits(qb), y[blk])
            lab[blk] = qb.argmax(axis=-1)
            if q is not None:
                q[blk] = qb
            continue
        a = np.clip(p_raw[blk, 0], EPS_PROB, 1.0)
        b = np.clip(p_raw[blk, 1], EPS_PROB, 1.0)
        binary_margins(a, b, y[blk], m[blk], lab[blk], q=None if q is None else q[blk])
    return q, m, lab


def binary_margins(a: np.ndarray, b: np.ndarray, y: np.ndarray, m: np.ndarray, lab: np.ndarray,
                   q: np.ndarray | None = None) -> None:
    """The two-class core of :func:`margins_labels` on clipped columns ``a``, ``b`` (overwritten).

    Writes the margins of class ``y`` into ``m``, the labels into ``lab`` and,
    when given, the clipped probabilities into ``q`` ``(N, 2)``.
    """
    s = a + b
    a /= s
    b /= s
    if q is not None:
        q[:, 0], q[:, 1] = a, b
    np.greater(b, a, out=lab)
    np.clip(a, EPS_PROB, 1.0, out=a)
    np.clip(b, EPS_PROB, 1.0, out=b)
    np.add(a, b, out=s)
    a /= s
    b /= s
    np.log(a, out=a)
    np.log(b, out=b)
    np.add(a, b, out=s)
    s /= 2
    a -= s
    b -= s
    np.subtract(b, a, out=s)
    m[:] = np.where(y == 1, s, np.subtract(a, b, out=a))


def stage2_spans(proto: CertificateSettings) -> tuple[dict[str, tuple[int, int, int]], int]:
    """Row spans of each family in the stage-2 layout and the layout's row count.

    The layout is: ``K`` path rows, then per family ``L`` (deterministic) or
    ``L · R`` (stochastic, severity-major) rows.
    """
    L = len(proto.grid)
    spans = {}
    start = proto.k
    for fam in proto.families:
        R = proto.n_draws if fam in STOCHASTIC else 1
        spans[fam] = (start, start + L * R, R)
        start += L * R
    return spans, start


def stage1_summary(m_all: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``m0``, ``Δ`` ``(n, G)`` and the order ``π`` from the stage-1 margins ``(G+1, n)``."""
    m0 = m_all[0]
    delta = (m0[None, :] - m_all[1:]).T
    return m0, delta, np.argsort(-delta, axis=1, kind="stable")


def finish(
    proto: CertificateSettings, *, p0: np.ndarray, y_hat: np.ndarray, m0: np.ndarray, delta: np.ndarray, order: np.ndarray,
    path_groups: np.ndarray, m2: np.ndarray, lab2: np.ndarray,
) -> dict[str, Any]:
    """Certificate arrays of a chunk from the stage-2 margins and labels ``(rows, n)``."""
    n = len(m0)
    K, L = proto.k, len(proto.grid)
    spans, _ = stage2_spans(proto)
    path_margins = np.column_stack([m0, m2[:K].T])
    path_labels = np.column_stack([y_hat, lab2[:K].T])
    flipped = path_labels[:, 1:] != y_hat[:, None]
    k_star = np.where(flipped.any(axis=1), flipped.argmax(axis=1) + 1, K + 1)
    rcma = np.maximum(0.0, m0[:, None] - path_margins[:, 1:]).sum(axis=1) / K / (np.abs(m0) + proto.eps)
    curves, rates, j_star, d_fam = {}, {}, {}, {}
    for fam in proto.families:
        a, b, R = spans[fam]
        mm = m2[a:b].reshape(L, R, n)
        ff = (lab2[a:b] != y_hat[None, :]).reshape(L, R, n)
        curves[fam] = mm.mean(axis=1).T
        rates[fam] = ff.mean(axis=1).T
        hit = rates[fam] >= 0.5 if fam in STOCHASTIC else rates[fam] > 0
        j = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, L + 1)
        j_star[fam] = j
        d_fam[fam] = (L + 1 - j) / L
    d = np.mean([d_fam[f] for f in proto.families], axis=0) if proto.families else np.zeros(n)
    w1, w2, w3 = proto.weights
    fds = w1 * (K + 1 - k_star) / K + w2 * (1 - np.exp(-rcma)) + w3 * d
    return dict(
        p0=p0, y_hat=y_hat, p_hat=p0[np.arange(n), y_hat], m0=m0, delta=delta, order=order,
        path_groups=path_groups, path_margins=path_margins, path_labels=path_labels,
        k_star=k_star, rcma=rcma, curves=curves, flip_rates=rates, j_star=j_star, d_family=d_fam,
        d=d, fds=fds,
    )


def certify_chunk_generic(ctx: Ctx, X: np.ndarray, pos: np.ndarray) -> dict[str, Any]:
    """The reference engine: every perturbed row built and predicted, block-major."""
    proto = ctx.proto
    n, F = X.shape
    G, K, L = proto.n_groups, proto.k, len(proto.grid)
    eye = np.eye(G, dtype=bool)
    # ---- stage 1: the case and every single-group removal, one call
    stage1 = np.empty((G + 1, n, F))
    stage1[0] = X
    stage1[1:] = np.where(ctx.member[:, None, :], ctx.baseline, X[None])
    p_all = clip_probs(ctx.predict(stage1.reshape(-1, F))).reshape(G + 1, n, -1)
    p0 = p_all[0]
    y_hat = p0.argmax(axis=1)
    m_all = margin_of(pseudo_logits(p_all), y_hat[None, :])  # (G+1, n)
    m0, delta, order = stage1_summary(m_all)
    # ---- removal path groups
    if proto.path == "static":
        path_groups = order[:, :K]
    elif proto.path == "random":
        assert ctx.random_keys is not None  # the engine draws them when proto.path == "random"
        path_groups = np.argsort(ctx.random_keys[pos], axis=1, kind="stable")[:, :K]
    else:  # adaptive: re-rank given what is removed, one call per step after the first
        path_groups = np.empty((n, K), dtype=int)
        path_groups[:, 0] = order[:, 0]
        removed = eye[order[:, 0]]  # (n, G)
        for step in range(1, K):
            cand = removed[None, :, :] | eye[:, None, :]  # (G, n, G)
            rows = np.where(ctx.fmask(cand), ctx.baseline, X[None])
            m, _ = ctx.margins(rows, y_hat[None, :])  # (G, n)
            m = np.where(removed.T, np.inf, m)
            pick = m.argmin(axis=0)  # largest margin cost, ties -> lowest index
            path_groups[:, step] = pick
            removed = removed | eye[pick]
    cum = np.cumsum(eye[path_groups], axis=1) > 0  # (n, K, G)
    top_mask = ctx.fmask(cum[:, -1, :])  # (n, F)
    # ---- stage 2: path + all degradations, one call
    blocks = [np.where(ctx.fmask(cum).transpose(1, 0, 2), ctx.baseline, X[None])]  # (K, n, F)
    lam = np.asarray(proto.grid)
    for fam in proto.families:
        if fam in STOCHASTIC:
            u = ctx.draws[fam]  # (R, F)
            R = u.shape[0]
            lam_rows = np.repeat(lam, R * n)  # (L*R*n,)
            Xr = np.broadcast_to(X, (L, R, n, F)).reshape(-1, F)
            ur = np.broadcast_to(u[None, :, None, :], (L, R, n, F)).reshape(-1, F)
            mr = np.broadcast_to(top_mask, (L, R, n, F)).reshape(-1, F)
            rows = degrade(fam, Xr, mask=mr, lam=lam_rows, baseline=ctx.baseline, scale=ctx.scale, u=ur)
            blocks.append(rows.reshape(L * R, n, F))
        else:
            Xr = np.broadcast_to(X, (L, n, F)).reshape(-1, F)
            mr = np.broadcast_to(top_mask, (L, n, F)).reshape(-1, F)
            rows = degrade(fam, Xr, mask=mr, lam=np.repeat(lam, n), baseline=ctx.baseline)
            blocks.append(rows.reshape(L, n, F))
    m2, lab2 = ctx.margins(np.concatenate(blocks, axis=0), y_hat[None, :])  # (rows, n)
    return finish(proto, p0=p0, y_hat=y_hat, m0=m0, delta=delta, order=order, path_groups=path_groups,
                  m2=m2, lab2=lab2)
