"""Batched certification (SPEC §1, "Certificate").

Cases are processed in chunks. For a chunk of ``n`` cases with ``G`` groups:

1. **One predict call** on ``n · (1 + G)`` rows: the cases and every
   single-group removal. This gives ``ŷ``, ``m0``, ``Δ_g`` and ``π``.
2. **One predict call** on ``n · (K + L · (1 + R · s))`` rows (``s`` stochastic
   families): the removal path and every severity/draw of every family applied
   jointly to the top-``K`` groups. (The path depends on ``π``, so two calls
   per chunk is the minimum.) The ``adaptive`` path adds ``K - 1`` calls of
   ``n · G`` rows, one per re-ranking step.

There is no Python loop over cases; chunks are sized by ``chunk_rows`` (rows
per predict call) so memory stays bounded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np

from audit_core.data.groups import Grouping
from audit_core.errors import fail, register_messages
from audit_core.models.probs import clip_probs, margin_of, pseudo_logits

from .certificate import CertificateBatch, Protocol
from .operators import FAMILIES, STOCHASTIC, degrade, draw_uniforms, group_mask

__all__ = [
    "FragilityConfig", "CertificateChunk", "certify", "certify_chunk_job", "certificate_chunks",
    "as_predict", "column_scale", "protocol_for",
]

register_messages(
    {
        "FR_BAD_K": "The audit depth K must be between 1 and the number of groups ({n_groups}); got {k}.",
        "FR_BAD_PATH": "Path mode {path!r} is not one of static, adaptive, random.",
        "FR_BAD_GRID": "The severity grid must be increasing values in (0, 1]; got {grid}.",
        "FR_BAD_WEIGHTS": "FDS weights must be three non-negative numbers summing to 1; got {weights}.",
        "FR_SHAPE": "The case matrix has {n_columns} columns but the grouping has {n_features} features.",
        "FR_NO_CASES": "There are no cases to certify.",
        "FR_NON_FINITE": "The case matrix contains missing or infinite values; transform the cases with the fitted preprocessing first.",
    }
)

PathMode = Literal["static", "adaptive", "random"]


@dataclass(frozen=True, kw_only=True)
class FragilityConfig:
    """Options of a certification run.

    Attributes
    ----------
    k : int or None
        Audit depth ``K``; ``None`` means ``min(5, G)``.
    path : {"static", "adaptive", "random"}
    families : tuple of str
        Operator families for ``d``.
    grid : tuple of float
        Severity grid ``Λ`` (default ``0.1, …, 1.0``).
    n_draws : int
        ``R`` draws for the stochastic families (default 10).
    seed : int
    weights : tuple of 3 float
        FDS weights ``(ω1, ω2, ω3)``, default equal.
    chunk_rows : int
        Upper bound on rows per predict call.
    """

    k: int | None = None
    path: PathMode = "static"
    families: tuple[str, ...] = FAMILIES
    grid: tuple[float, ...] = tuple(round(0.1 * i, 10) for i in range(1, 11))
    n_draws: int = 10
    seed: int = 0
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    chunk_rows: int = 200_000

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k, "path": self.path, "families": list(self.families), "grid": list(self.grid),
            "n_draws": self.n_draws, "seed": self.seed, "weights": list(self.weights),
            "chunk_rows": self.chunk_rows,
        }


def as_predict(model: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``predict_proba`` on the transformed matrix for a FittedModel, estimator or callable."""
    if hasattr(model, "predict_proba_transformed"):
        return model.predict_proba_transformed
    if hasattr(model, "predict_proba"):
        return model.predict_proba
    return model


def column_scale(X_train: np.ndarray) -> np.ndarray:
    """Training standard deviation per column (``ddof=0``), the ``s_g`` of ``noise``."""
    return np.asarray(X_train, dtype=float).std(axis=0)


def protocol_for(
    grouping: Grouping,
    *,
    baseline: np.ndarray,
    scale: np.ndarray,
    baseline_kind: str,
    config: FragilityConfig,
) -> Protocol:
    """Validate the options and freeze them into a :class:`Protocol`."""
    G = grouping.n_groups
    k = min(5, G) if config.k is None else int(config.k)
    if not 1 <= k <= G:
        raise fail("FR_BAD_K", n_groups=G, k=config.k)
    if config.path not in ("static", "adaptive", "random"):
        raise fail("FR_BAD_PATH", path=config.path)
    for f in config.families:
        if f not in FAMILIES:
            raise fail("FR_UNKNOWN_FAMILY", family=f)
    grid = tuple(float(v) for v in config.grid)
    if not grid or any(not (0 < v <= 1) for v in grid) or any(b <= a for a, b in zip(grid, grid[1:])):
        raise fail("FR_BAD_GRID", grid=list(grid))
    w = tuple(float(v) for v in config.weights)
    if len(w) != 3 or min(w) < 0 or abs(sum(w) - 1) > 1e-9:
        raise fail("FR_BAD_WEIGHTS", weights=list(config.weights))
    return Protocol(
        grouping_hash=grouping.hash,
        group_names=tuple(grouping.names),
        group_columns=tuple(tuple(int(i) for i in c) for c in grouping.index),
        baseline_kind=str(baseline_kind),
        baseline=tuple(float(v) for v in np.asarray(baseline, dtype=float)),
        scale=tuple(float(v) for v in np.asarray(scale, dtype=float)),
        k=k,
        path=config.path,
        families=tuple(config.families),
        grid=grid,
        n_draws=int(config.n_draws),
        seed=int(config.seed),
        weights=w,  # type: ignore[arg-type]
    )


@dataclass
class _Ctx:
    proto: Protocol
    predict: Callable[[np.ndarray], np.ndarray]
    member: np.ndarray  # (G, F) bool
    baseline: np.ndarray
    scale: np.ndarray
    draws: dict = field(default_factory=dict)
    random_keys: np.ndarray | None = None

    def margins(self, rows: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Margins of class ``y`` and labels; rows (..., F), y broadcastable to rows.shape[:-1]."""
        shape = rows.shape[:-1]
        p = clip_probs(self.predict(rows.reshape(-1, rows.shape[-1])))
        p = p.reshape(shape + (p.shape[-1],))
        return margin_of(pseudo_logits(p), y), p.argmax(axis=-1)

    def fmask(self, sel: np.ndarray) -> np.ndarray:
        return group_mask(self.proto.columns, sel)


def _random_keys(n: int, G: int, seed: int) -> np.ndarray:
    """Uniform keys whose per-row argsort is each case's random group order (ablation)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7919]))
    return rng.random((n, G))


def _certify_chunk(ctx: _Ctx, X: np.ndarray, pos: np.ndarray) -> dict[str, Any]:
    proto = ctx.proto
    n, F = X.shape
    G, K, L = proto.n_groups, proto.k, len(proto.grid)
    eye = np.eye(G, dtype=bool)
    # ---- stage 1: the case and every single-group removal, one call
    single = ctx.member  # (G, F)
    stage1 = np.empty((G + 1, n, F))
    stage1[0] = X
    stage1[1:] = np.where(single[:, None, :], ctx.baseline, X[None])
    p_all = clip_probs(ctx.predict(stage1.reshape(-1, F))).reshape(G + 1, n, -1)
    p0 = p_all[0]
    y_hat = p0.argmax(axis=1)
    z_all = pseudo_logits(p_all)
    m_all = margin_of(z_all, y_hat[None, :])  # (G+1, n)
    m0 = m_all[0]
    delta = (m0[None, :] - m_all[1:]).T  # (n, G)
    order = np.argsort(-delta, axis=1, kind="stable")
    # ---- removal path groups
    if proto.path == "static":
        path_groups = order[:, :K]
    elif proto.path == "random":
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
    spans = {}
    start = K
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
            spans[fam] = (start, start + L * R, R)
            start += L * R
        else:
            Xr = np.broadcast_to(X, (L, n, F)).reshape(-1, F)
            mr = np.broadcast_to(top_mask, (L, n, F)).reshape(-1, F)
            rows = degrade(fam, Xr, mask=mr, lam=np.repeat(lam, n), baseline=ctx.baseline)
            blocks.append(rows.reshape(L, n, F))
            spans[fam] = (start, start + L, 1)
            start += L
    m2, lab2 = ctx.margins(np.concatenate(blocks, axis=0), y_hat[None, :])  # (rows, n)
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


def _context(model: Any, proto: Protocol, n_features: int, random_keys: np.ndarray | None) -> _Ctx:
    member = np.zeros((proto.n_groups, n_features), dtype=bool)
    for g, cols in enumerate(proto.columns):
        member[g, cols] = True
    return _Ctx(
        proto=proto,
        predict=as_predict(model),
        member=member,
        baseline=np.asarray(proto.baseline),
        scale=np.asarray(proto.scale),
        draws={f: draw_uniforms(f, n_draws=proto.n_draws, n_features=n_features, seed=proto.seed)
               for f in proto.families},
        random_keys=random_keys,
    )


#: ``map_chunks(func, items, *, progress)``, e.g. :meth:`audit_core.runs.plugin.ExecutionOptions.map`.
MapChunks = Callable[..., list]


@dataclass(frozen=True, kw_only=True, eq=False)
class CertificateChunk:
    """One work item of batched certification: everything it needs, seeds included.

    Attributes
    ----------
    model : FittedModel, estimator or callable
        Must be picklable for the ``processes`` / ``dask`` backends.
    X : ndarray of shape (n, n_features)
        The chunk's transformed cases.
    protocol : Protocol
        The frozen protocol (its ``seed`` fixes the stochastic draws).
    random_keys : ndarray of shape (n, G) or None
        The chunk's rows of the random-order keys (``path="random"`` only).
    """

    model: Any
    X: np.ndarray
    protocol: Protocol
    random_keys: np.ndarray | None = None


def certify_chunk_job(item: CertificateChunk) -> dict[str, Any]:
    """Certify one chunk; a module-level function so every backend can run it.

    Returns
    -------
    dict
        The chunk's certificate arrays (concatenated by the caller).
    """
    X = np.asarray(item.X, dtype=float)
    ctx = _context(item.model, item.protocol, X.shape[1], item.random_keys)
    return _certify_chunk(ctx, X, np.arange(len(X)))


def certificate_chunks(
    model: Any, X: np.ndarray, proto: Protocol, *, step: int, random_keys: np.ndarray | None = None,
) -> list[CertificateChunk]:
    """Split cases into :class:`CertificateChunk` items of ``step`` cases."""
    return [
        CertificateChunk(model=model, X=X[lo:lo + step], protocol=proto,
                         random_keys=None if random_keys is None else random_keys[lo:lo + step])
        for lo in range(0, len(X), step)
    ]


def rows_per_case(proto: Protocol) -> int:
    """Rows per case in the largest predict call of a chunk."""
    L = len(proto.grid)
    stage2 = proto.k + sum(L * (proto.n_draws if f in STOCHASTIC else 1) for f in proto.families)
    return max(proto.n_groups + 1, stage2)


def certify(
    model: Any,
    X: np.ndarray,
    *,
    grouping: Grouping,
    baseline: np.ndarray,
    scale: np.ndarray,
    baseline_kind: str = "mean",
    config: FragilityConfig = FragilityConfig(),
    keys: np.ndarray | None = None,
    chunk_cases: int | None = None,
    map_chunks: MapChunks | None = None,
    progress: Callable[[float, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CertificateBatch:
    """Certify a batch of cases.

    Parameters
    ----------
    model : FittedModel, estimator or callable
        Anything with ``predict_proba`` on the transformed matrix.
    X : ndarray of shape (n, n_features)
        Transformed cases.
    grouping : Grouping
    baseline : ndarray of shape (n_features,)
    scale : ndarray of shape (n_features,)
        Training standard deviation per column (see :func:`column_scale`).
    baseline_kind : str
        Recorded in the protocol.
    config : FragilityConfig
    keys : ndarray of shape (n,), optional
        Sample keys; default ``0..n-1``.
    chunk_cases : int, optional
        At most this many cases per chunk (the chunk is also bounded by
        ``config.chunk_rows``).
    map_chunks : callable(func, items, *, progress) -> list, optional
        Runs the chunks (batch work), e.g. ``context.execution.map``; see
        :func:`certify_with_protocol`. Default: an in-process loop.
    progress : callable(fraction, message), optional
    should_stop : callable() -> bool, optional
        Polled between chunks; when it returns True the run stops and the
        batch is returned with ``complete=False``.

    Returns
    -------
    CertificateBatch
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(grouping.features):
        raise fail("FR_SHAPE", n_columns=X.shape[-1], n_features=len(grouping.features))
    if len(X) == 0:
        raise fail("FR_NO_CASES")
    if not np.isfinite(X).all():
        raise fail("FR_NON_FINITE")
    proto = protocol_for(grouping, baseline=baseline, scale=scale, baseline_kind=baseline_kind, config=config)
    return certify_with_protocol(
        model, X, proto, keys=keys, chunk_rows=config.chunk_rows, chunk_cases=chunk_cases, map_chunks=map_chunks,
        progress=progress, should_stop=should_stop,
    )


def certify_with_protocol(
    model: Any,
    X: np.ndarray,
    proto: Protocol,
    *,
    keys: np.ndarray | None = None,
    chunk_rows: int = 200_000,
    chunk_cases: int | None = None,
    map_chunks: MapChunks | None = None,
    progress: Callable[[float, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CertificateBatch:
    """Certify under a frozen protocol (used by :func:`certify` and ``verify``).

    With ``map_chunks`` (e.g. :meth:`audit_core.runs.plugin.ExecutionOptions.map`)
    the chunks are :class:`CertificateChunk` items run by
    :func:`certify_chunk_job` wherever ``map_chunks`` sends them; every item
    carries the frozen protocol (hence its seed) and its slice of the
    random-order keys, so the batch is identical on every backend and equal
    to the in-process loop with the same chunking. ``should_stop`` is not
    polled then (the app's cancellable path is the in-process loop).
    """
    X = np.asarray(X, dtype=float)
    n, F = X.shape
    random_keys = _random_keys(n, proto.n_groups, proto.seed) if proto.path == "random" else None
    keys = np.arange(n) if keys is None else np.asarray(keys)
    step = max(1, int(chunk_rows) // rows_per_case(proto))
    if chunk_cases is not None:
        step = max(1, min(step, int(chunk_cases)))
    if map_chunks is not None:
        items = certificate_chunks(model, X, proto, step=step, random_keys=random_keys)
        done_parts = map_chunks(
            certify_chunk_job, items,
            progress=None if progress is None else (lambda d, t: progress(d / max(t, 1), f"Certified {d:,} of {t:,} chunks")),
        )
        cat = _concat(list(done_parts), proto.families)
        return CertificateBatch(protocol=proto, keys=keys, complete=True, n_requested=n, **cat)
    ctx = _context(model, proto, F, random_keys)
    parts = []
    done = 0
    complete = True
    for lo in range(0, n, step):
        if should_stop is not None and should_stop():
            complete = False
            break
        hi = min(n, lo + step)
        parts.append(_certify_chunk(ctx, X[lo:hi], np.arange(lo, hi)))
        done = hi
        if progress is not None:
            progress(done / n, f"Certified {done:,} of {n:,} cases")
    if not parts:
        parts = [_empty(proto, F)]
    cat = _concat(parts, proto.families)
    return CertificateBatch(protocol=proto, keys=keys[:done], complete=complete, n_requested=n, **cat)


def _concat(parts: list[dict[str, Any]], families: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in parts[0].items():
        if isinstance(v, dict):
            out[name] = {f: np.concatenate([p[name][f] for p in parts]) for f in families}
        else:
            out[name] = np.concatenate([p[name] for p in parts])
    return out


def _empty(proto: Protocol, F: int) -> dict[str, Any]:
    G, K, L = proto.n_groups, proto.k, len(proto.grid)
    z = np.zeros(0)
    zi = np.zeros(0, dtype=int)
    fam = {f: np.zeros((0, L)) for f in proto.families}
    return dict(
        p0=np.zeros((0, 2)), y_hat=zi, p_hat=z, m0=z, delta=np.zeros((0, G)), order=np.zeros((0, G), dtype=int),
        path_groups=np.zeros((0, K), dtype=int), path_margins=np.zeros((0, K + 1)),
        path_labels=np.zeros((0, K + 1), dtype=int), k_star=zi, rcma=z, curves=fam,
        flip_rates={f: np.zeros((0, L)) for f in proto.families},
        j_star={f: zi for f in proto.families}, d_family={f: z for f in proto.families}, d=z, fds=z,
    )
