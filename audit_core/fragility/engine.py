"""Batched certification (SPEC §1, "Certificate"): chunks, engines and the assembled batch.

Cases are processed in chunks sized by bytes (:mod:`.work`): the cases of a
chunk and their perturbed rows fit the budget ``chunk_mb`` whatever the
number of columns, and a case too wide for the budget alone is built and
predicted in blocks. Three engines compute the same certificates:

``linear``
    (:mod:`.linear`) analytic logits of a linear model; no perturbed row is
    built. Used by ``engine="auto"`` when the model's link reproduces its
    ``predict_proba`` bit for bit.
``distinct``
    (:mod:`.distinct`) each distinct perturbed row of a case predicted once,
    case-major; bit-identical to ``generic``. The ``auto`` choice for every
    other model.
``generic``
    (:mod:`.generic`) the reference: every perturbed row, block-major.

The outputs are allocated once for all cases and each chunk is written into
them (no concatenation, so a chunk's arrays are not held twice). Curves and
flip rates are float64 unless ``curve_dtype="float32"`` (halves the largest
arrays of a million-case run; ``j*`` and ``d`` are computed before the cast).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from audit_core.data.groups import Grouping
from audit_core.errors import fail, register_messages

from .certificate import CertificateBatch, CertificateSettings
from .distinct import certify_chunk_distinct, row_bytes
from .generic import as_predict, certify_chunk_generic, make_context, stage2_spans
from .linear import LinearForm, certify_chunk_linear, linear_bytes_per_case, linear_form
from .operators import FAMILIES
from .work import DEFAULT_CHUNK_MB, cases_per_chunk

__all__ = [
    "FragilityConfig", "CertificateChunk", "certify", "certify_with_protocol", "certify_chunk_job",
    "certificate_chunks", "as_predict", "column_scale", "protocol_for", "rows_per_case", "certificate_cells",
    "ENGINES",
]

ENGINES: tuple[str, ...] = ("auto", "linear", "distinct", "generic")

register_messages(
    {
        "FR_BAD_K": "The audit depth K must be between 1 and the number of groups ({n_groups}); got {k}.",
        "FR_BAD_PATH": "Path mode {path!r} is not one of static, adaptive, random.",
        "FR_BAD_GRID": "The severity grid must be increasing values in (0, 1]; got {grid}.",
        "FR_BAD_WEIGHTS": "FDS weights must be three non-negative numbers summing to 1; got {weights}.",
        "FR_SHAPE": "The case matrix has {n_columns} columns but the grouping has {n_features} features.",
        "FR_NO_CASES": "There are no cases to certify.",
        "FR_NON_FINITE": "The case matrix contains missing or infinite values; transform the cases with the fitted preprocessing first.",
        "FR_BAD_ENGINE": "Certificate engine {engine!r} is not one of auto, linear, distinct, generic.",
        "FR_NOT_LINEAR": (
            "The linear certificate engine needs a linear model whose predict_proba is its link applied to its "
            "decision_function; {model} is not one. Use engine 'auto' or 'distinct'."
        ),
        "FR_BAD_CURVE_DTYPE": "curve_dtype must be float64 or float32; got {value!r}.",
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
    engine : {"auto", "linear", "distinct", "generic"}
        How certificates are computed (module docstring); ``auto`` picks
        ``linear`` for a linear model, else ``distinct``.
    chunk_mb : float
        Byte budget (MiB) of one chunk's perturbed rows.
    chunk_rows : int or None
        Optional upper bound on rows per predict call (tests of chunking).
    curve_dtype : {"float64", "float32"}
        Storage of the curves and flip rates.
    """

    k: int | None = None
    path: PathMode = "static"
    families: tuple[str, ...] = FAMILIES
    grid: tuple[float, ...] = tuple(round(0.1 * i, 10) for i in range(1, 11))
    n_draws: int = 10
    seed: int = 0
    weights: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    engine: str = "auto"
    chunk_mb: float = DEFAULT_CHUNK_MB
    chunk_rows: int | None = None
    curve_dtype: str = "float64"

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k, "path": self.path, "families": list(self.families), "grid": list(self.grid),
            "n_draws": self.n_draws, "seed": self.seed, "weights": list(self.weights), "engine": self.engine,
            "chunk_mb": self.chunk_mb, "chunk_rows": self.chunk_rows, "curve_dtype": self.curve_dtype,
        }


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
) -> CertificateSettings:
    """Validate the options and freeze them into a :class:`CertificateSettings`."""
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
    if not grid or any(not (0 < v <= 1) for v in grid) or any(b <= a for a, b in itertools.pairwise(grid)):
        raise fail("FR_BAD_GRID", grid=list(grid))
    w = tuple(float(v) for v in config.weights)
    if len(w) != 3 or min(w) < 0 or abs(sum(w) - 1) > 1e-9:
        raise fail("FR_BAD_WEIGHTS", weights=list(config.weights))
    return CertificateSettings(
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
        weights=w,
    )


#: ``map_chunks(func, items, *, progress)``, e.g. :meth:`audit_core.runs.plugin.ExecutionOptions.map`.
MapChunks = Callable[..., list]


def rows_per_case(proto: CertificateSettings) -> int:
    """Rows per case in the largest predict call of a chunk (generic layout)."""
    return max(proto.n_groups + 1, stage2_spans(proto)[1])


def certificate_cells(proto: CertificateSettings, n_cases: int, n_features: int, *, engine: str = "distinct") -> int:
    """Values the certificates of ``n_cases`` compute: the up-front size of the work.

    Row engines: every perturbed row (stage 1, the adaptive candidates, stage
    2) times ``n_features``. Linear engine: the contributions it multiplies
    (``n_features`` × (groups + severities × draws) per case).
    """
    G, rows2 = proto.n_groups, stage2_spans(proto)[1]
    adaptive = (proto.k - 1) * G if proto.path == "adaptive" else 0
    if engine == "linear":
        per_case = n_features * (G + len(proto.grid) * proto.n_draws + 1) + (G + 1 + rows2 + adaptive) * 8
    else:
        per_case = (G + 1 + rows2 + adaptive) * n_features
    return int(n_cases) * int(per_case)


def _bytes_per_case(engine: str, proto: CertificateSettings, n_features: int) -> int:
    rows2 = stage2_spans(proto)[1]
    adaptive_k = proto.k if proto.path == "adaptive" else 0
    if engine == "linear":
        return linear_bytes_per_case(proto.n_groups, n_features, rows2, 2, adaptive_k=adaptive_k)
    if engine == "generic":  # every row of the larger call, plus its temporaries
        return rows_per_case(proto) * (4 * 8 * n_features + 64)
    return rows_per_case(proto) * row_bytes(n_features) // 2 + 64 * (proto.n_groups + rows2)


@dataclass(frozen=True, kw_only=True, eq=False)
class CertificateChunk:
    """One work item of batched certification: everything it needs, seeds included.

    Attributes
    ----------
    model : FittedModel, estimator or callable
        Must be picklable for the ``processes`` / ``dask`` backends.
    X : ndarray of shape (n, n_features)
        The chunk's transformed cases.
    protocol : CertificateSettings
        The frozen protocol (its ``seed`` fixes the stochastic draws).
    random_keys : ndarray of shape (n, G) or None
        The chunk's rows of the random-order keys (``path="random"`` only).
    engine : {"linear", "distinct", "generic"}
        Resolved by :func:`certify_with_protocol`; ``linear`` falls back to
        ``distinct`` if the chunk's own check fails.
    chunk_mb : float
        Byte budget of the row blocks inside the chunk.
    """

    model: Any
    X: np.ndarray
    protocol: CertificateSettings
    random_keys: np.ndarray | None = None
    engine: str = "distinct"
    chunk_mb: float = DEFAULT_CHUNK_MB


def _run_chunk(ctx, engine: str, X: np.ndarray, pos: np.ndarray, chunk_mb: float, form: LinearForm | None = None):
    if engine == "linear":
        form = form or linear_form(ctx.model, X, ctx.predict)
        if form is not None:
            return certify_chunk_linear(ctx, form, X, pos)
        engine = "distinct"
    if engine == "distinct" and ctx.colgroup is not None:
        return certify_chunk_distinct(ctx, X, pos, chunk_mb=chunk_mb)
    return certify_chunk_generic(ctx, X, pos)


def certify_chunk_job(item: CertificateChunk) -> dict[str, Any]:
    """Certify one chunk; a module-level function so every backend can run it.

    Returns
    -------
    dict
        The chunk's certificate arrays (written into the batch by the caller).
    """
    X = np.ascontiguousarray(item.X, dtype=float)
    ctx = make_context(item.model, item.protocol, X.shape[1], item.random_keys)
    return _run_chunk(ctx, item.engine, X, np.arange(len(X)), item.chunk_mb)


def certificate_chunks(
    model: Any, X: np.ndarray, proto: CertificateSettings, *, step: int, random_keys: np.ndarray | None = None,
    engine: str = "distinct", chunk_mb: float = DEFAULT_CHUNK_MB,
) -> list[CertificateChunk]:
    """Split cases into :class:`CertificateChunk` items of ``step`` cases."""
    return [
        CertificateChunk(model=model, X=X[lo:lo + step], protocol=proto, engine=engine, chunk_mb=chunk_mb,
                         random_keys=None if random_keys is None else random_keys[lo:lo + step])
        for lo in range(0, len(X), step)
    ]


def resolve_engine(engine: str, model: Any, X: np.ndarray, proto: CertificateSettings) -> tuple[str, LinearForm | None]:
    """The engine ``auto`` stands for (and the linear form when it is ``linear``)."""
    if engine not in ENGINES:
        raise fail("FR_BAD_ENGINE", engine=engine)
    if engine in ("distinct", "generic"):
        return engine, None
    ctx = make_context(model, proto, X.shape[1], None)
    form = linear_form(model, X[: min(len(X), 256)], ctx.predict)
    if form is not None:
        return "linear", form
    if engine == "linear":
        raise fail("FR_NOT_LINEAR", model=type(getattr(model, "estimator", model)).__name__)
    return "distinct", None


_INT_FIELDS = ("y_hat", "order", "path_groups", "path_labels", "k_star")


class _Outputs:
    """The batch's arrays, allocated on the first chunk and filled chunk by chunk."""

    def __init__(self, n: int, families: tuple[str, ...], curve_dtype: str) -> None:
        if curve_dtype not in ("float64", "float32"):
            raise fail("FR_BAD_CURVE_DTYPE", value=curve_dtype)
        self.n, self.families, self.curve_dtype = n, families, np.dtype(curve_dtype)
        self.arrays: dict[str, Any] | None = None
        self.n_predicted = 0

    def _alloc(self, part: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, v in part.items():
            if name.startswith("_"):
                continue
            if isinstance(v, dict):
                dt = {f: (self.curve_dtype if name in ("curves", "flip_rates") else v[f].dtype) for f in v}
                out[name] = {f: np.empty((self.n,) + v[f].shape[1:], dtype=dt[f]) for f in v}
            else:
                out[name] = np.empty((self.n,) + v.shape[1:], dtype=np.intp if name in _INT_FIELDS else v.dtype)
        return out

    def write(self, lo: int, part: dict[str, Any]) -> None:
        if self.arrays is None:
            self.arrays = self._alloc(part)
        hi = lo + len(part["m0"])
        self.n_predicted += int(part.get("_n_predicted", 0))
        for name, dst in self.arrays.items():
            v = part[name]
            if isinstance(dst, dict):
                for f in dst:
                    dst[f][lo:hi] = v[f]
            else:
                dst[lo:hi] = v

    def result(self, done: int, proto: CertificateSettings, n_features: int) -> dict[str, Any]:
        if self.arrays is None:
            return _empty(proto, n_features)
        if done == self.n:
            return self.arrays
        return {k: ({f: a[:done].copy() for f, a in v.items()} if isinstance(v, dict) else v[:done].copy())
                for k, v in self.arrays.items()}


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
        ``config.chunk_mb`` and ``config.chunk_rows``).
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
        progress=progress, should_stop=should_stop, engine=config.engine, chunk_mb=config.chunk_mb,
        curve_dtype=config.curve_dtype,
    )


def certify_with_protocol(
    model: Any,
    X: np.ndarray,
    proto: CertificateSettings,
    *,
    keys: np.ndarray | None = None,
    chunk_rows: int | None = None,
    chunk_cases: int | None = None,
    map_chunks: MapChunks | None = None,
    progress: Callable[[float, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    engine: str = "auto",
    chunk_mb: float = DEFAULT_CHUNK_MB,
    curve_dtype: str = "float64",
) -> CertificateBatch:
    """Certify under a frozen protocol (used by :func:`certify` and ``verify``).

    With ``map_chunks`` (e.g. :meth:`audit_core.runs.plugin.ExecutionOptions.map`)
    the chunks are :class:`CertificateChunk` items run by
    :func:`certify_chunk_job` wherever ``map_chunks`` sends them; every item
    carries the frozen protocol (hence its seed), the resolved engine and its
    slice of the random-order keys, so the batch is identical on every backend
    and equal to the in-process loop with the same chunking. ``should_stop``
    is not polled then (the app's cancellable path is the in-process loop).
    """
    X = np.ascontiguousarray(X, dtype=float)
    n, F = X.shape
    random_keys = _random_keys(n, proto.n_groups, proto.seed) if proto.path == "random" else None
    keys = np.arange(n) if keys is None else np.asarray(keys)
    engine, form = resolve_engine(engine, model, X, proto)
    step = cases_per_chunk(_bytes_per_case(engine, proto, F), chunk_mb=chunk_mb, rows_per_case=rows_per_case(proto),
                           chunk_rows=chunk_rows, chunk_cases=chunk_cases)
    out = _Outputs(n, proto.families, curve_dtype)
    if map_chunks is not None:
        items = certificate_chunks(model, X, proto, step=step, random_keys=random_keys, engine=engine, chunk_mb=chunk_mb)
        done_parts = map_chunks(
            certify_chunk_job, items,
            progress=None if progress is None else (lambda d, t: progress(d / max(t, 1), f"Certified {d:,} of {t:,} chunks")),
        )
        for i, part in enumerate(done_parts):
            out.write(i * step, part)
        return CertificateBatch(protocol=proto, keys=keys, complete=True, n_requested=n, engine=engine,
                                n_predicted=out.n_predicted, **out.result(n, proto, F))
    ctx = make_context(model, proto, F, random_keys)
    done = 0
    complete = True
    for lo in range(0, n, step):
        if should_stop is not None and should_stop():
            complete = False
            break
        hi = min(n, lo + step)
        out.write(lo, _run_chunk(ctx, engine, X[lo:hi], np.arange(lo, hi), chunk_mb, form))
        done = hi
        if progress is not None:
            progress(done / n, f"Certified {done:,} of {n:,} cases")
    return CertificateBatch(protocol=proto, keys=keys[:done], complete=complete, n_requested=n, engine=engine,
                            n_predicted=out.n_predicted, **out.result(done, proto, F))


def _random_keys(n: int, G: int, seed: int) -> np.ndarray:
    """Uniform keys whose per-row argsort is each case's random group order (ablation)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7919]))
    return rng.random((n, G))


def _empty(proto: CertificateSettings, F: int) -> dict[str, Any]:
    G, K, L = proto.n_groups, proto.k, len(proto.grid)
    z = np.zeros(0)
    zi = np.zeros(0, dtype=np.intp)
    fam = {f: np.zeros((0, L)) for f in proto.families}
    return dict(
        p0=np.zeros((0, 2)), y_hat=zi, p_hat=z, m0=z, delta=np.zeros((0, G)), order=np.zeros((0, G), dtype=np.intp),
        path_groups=np.zeros((0, K), dtype=np.intp), path_margins=np.zeros((0, K + 1)),
        path_labels=np.zeros((0, K + 1), dtype=np.intp), k_star=zi, rcma=z, curves=fam,
        flip_rates={f: np.zeros((0, L)) for f in proto.families},
        j_star={f: zi for f in proto.families}, d_family={f: z for f in proto.families}, d=z, fds=z,
    )
