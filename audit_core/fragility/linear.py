"""The exact linear path: certificates of a linear model without building perturbed rows.

A linear model's decision is ``z(x) = W x + b``, additive in the columns, so
every perturbation's logits follow from the case's own logits ``z0`` and the
per-column contributions ``A_j = W_j (x_j - x̄_j)``:

* removing a set ``S`` of groups: ``z0 - Σ_{j∈S} A_j`` (stage 1, the path and
  every adaptive candidate are sums of per-group contributions);
* ``interpolate`` at ``λ``: ``z0 - λ · Σ_{j∈top} A_j``;
* ``dropout`` draw ``r`` at ``λ``: ``z0 - Σ_{j∈top, u_rj<λ} A_j``, one small
  matrix product for all draws and severities;
* ``noise`` draw ``r`` at ``λ``: ``z0 + λ · Σ_{j∈top} W_j s_j u_rj``.

The logits then go through the model's own link (the same function
scikit-learn applies: ``expit`` for a binary model, ``softmax`` for a
multinomial one, normalised ``expit`` one-vs-rest) and the engine's probability
conventions (clip, pseudo-logits, margins), exactly as the generic engine
treats ``predict_proba``. :func:`linear_form` accepts a model only when that
link applied to its ``decision_function`` reproduces its ``predict_proba`` bit
for bit on the cases being certified; otherwise the distinct-row engine runs.

The cases' own probabilities, ``ŷ`` and ``m0`` are the model's bits. Perturbed
logits differ from a matrix product over the built row by rounding only
(about ``1e-15 · Σ_j |W_j x_j|``): orders, ``k*``, ``j*`` and flip rates
equal the generic engine's, continuous outputs agree to about ``1e-12`` (tested
within ``1e-9``), except where two groups' drops coincide to within that
rounding, where the generic order is itself an artefact of summation order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from audit_core.models.probs import EPS_PROB

from .generic import Ctx, binary_margins, finish, margins_labels, stage1_summary, stage2_spans
from .work import PAD_ROWS

__all__ = ["LinearForm", "linear_form", "certify_chunk_linear", "linear_bytes_per_case"]


def _expit2(z: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    p = expit(z[:, 0])
    return np.stack([1 - p, p], axis=1)


def _softmax(z: np.ndarray) -> np.ndarray:
    from sklearn.utils.extmath import softmax

    return softmax(z, copy=True)


def _ovr(z: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    prob = expit(z)
    s = prob.sum(axis=1)
    zero = s == 0
    if zero.any():
        prob[zero, :] = 1
        s[zero] = prob.shape[1]
    prob /= s.reshape((prob.shape[0], -1))
    return prob


_LINKS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"expit": _expit2, "softmax": _softmax, "ovr": _ovr}


@dataclass(frozen=True, eq=False)
class LinearForm:
    """A model's linear decision ``X @ coef.T + intercept`` and the link giving its probabilities."""

    estimator: Any
    coef: np.ndarray  # (C', F)
    link: str

    def decision(self, X: np.ndarray) -> np.ndarray:
        """The estimator's own ``decision_function`` as ``(n, C')``, on a call padded like predict calls."""
        est = self.estimator
        n = len(X)
        extra = (-n) % PAD_ROWS
        Xp = np.concatenate([X, np.broadcast_to(X[:1], (extra, X.shape[1]))]) if extra else X
        if hasattr(est, "feature_names_in_"):
            import pandas as pd

            z = np.asarray(est.decision_function(pd.DataFrame(Xp, columns=list(est.feature_names_in_))), dtype=float)[:n]
        else:
            z = np.asarray(est.decision_function(Xp), dtype=float)[:n]
        return z.reshape(n, -1)

    def probs(self, z: np.ndarray) -> np.ndarray:
        return _LINKS[self.link](z)


def linear_form(model: Any, X: np.ndarray, predict: Callable[[np.ndarray], np.ndarray]) -> LinearForm | None:
    """The model's :class:`LinearForm` when its link reproduces ``predict`` bit for bit on ``X``, else None.

    ``model`` is a FittedModel (its ``estimator`` is inspected) or an
    estimator; ``predict`` is the engine's padded predict on transformed rows.
    """
    est = getattr(model, "estimator", model) if hasattr(model, "predict_proba_transformed") else model
    coef = getattr(est, "coef_", None)
    if coef is None or not hasattr(est, "decision_function") or not hasattr(est, "intercept_"):
        return None
    try:
        coef = np.asarray(coef, dtype=float)
        if coef.ndim != 2 or coef.shape[1] != X.shape[1] or not np.isfinite(coef).all():
            return None
        n_classes = len(getattr(est, "classes_", ()))
        p_model = np.asarray(predict(X), dtype=float)
        links = ["expit"] if coef.shape[0] == 1 and n_classes == 2 else (
            ["softmax", "ovr"] if coef.shape[0] == n_classes > 2 else [])
        for link in links:
            form = LinearForm(estimator=est, coef=coef, link=link)
            p = form.probs(form.decision(X))
            if p.shape == p_model.shape and np.array_equal(p, p_model):
                return form
    except (TypeError, ValueError, AttributeError):  # not a linear model we can read: use the row engines
        return None
    return None


def linear_bytes_per_case(n_groups: int, n_features: int, rows2: int, n_classes: int, *, adaptive_k: int = 0) -> int:
    """Working bytes of one case on the linear path (logit and probability arrays, contributions)."""
    C = max(2, int(n_classes))
    rows = n_groups + 1 + rows2 + max(0, adaptive_k - 1) * n_groups
    return int(rows * C * 8 * 8 + n_features * 8 * (3 + C) + n_groups * C * 16)


_BLOCK = 32_768


def _probs_margins(form: LinearForm, z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Margins and labels of logits ``(..., C')`` for classes ``y`` (broadcast to ``z.shape[:-1]``), by blocks."""
    shape = z.shape[:-1]
    flat = z.reshape(-1, z.shape[-1])
    yy = np.broadcast_to(y, shape).reshape(-1)
    m = np.empty(len(flat))
    lab = np.empty(len(flat), dtype=np.intp)
    binary = form.link == "expit"
    for lo in range(0, len(flat), _BLOCK):
        blk = slice(lo, lo + _BLOCK)
        if binary:  # scikit-learn's [1 - expit(z), expit(z)], clipped, without stacking the two columns
            from scipy.special import expit

            p1 = expit(flat[blk, 0])
            a = np.clip(1 - p1, EPS_PROB, 1.0)
            np.clip(p1, EPS_PROB, 1.0, out=p1)
            binary_margins(a, p1, yy[blk], m[blk], lab[blk])
        else:
            _, m[blk], lab[blk] = margins_labels(form.probs(flat[blk]), yy[blk], with_q=False)
    return m.reshape(shape), lab.reshape(shape)


def _group_sums(ctx: Ctx, A: np.ndarray) -> np.ndarray:
    """``Σ_{j∈g} A[:, j]`` for every group: ``(n, F)`` → ``(n, G)`` (column sums, no BLAS call)."""
    if ctx.colgroup is None:
        return A @ ctx.member.T.astype(float)
    perm = np.argsort(ctx.colgroup, kind="stable")
    starts = np.searchsorted(ctx.colgroup[perm], np.arange(ctx.proto.n_groups))
    return np.add.reduceat(A[:, perm], starts, axis=1)


def _dropout_shifts(tc: np.ndarray, u: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``Σ_{j: u_rj < λ_l} tc[i, j]`` as ``(L, R, n)``: cumulative sums over each draw's columns sorted by ``u``."""
    n, F = tc.shape
    order = np.argsort(u, axis=1, kind="stable")  # (R, F)
    cs = np.zeros((n, u.shape[0], F + 1))
    np.cumsum(tc[:, order], axis=2, out=cs[:, :, 1:])
    counts = np.stack([np.searchsorted(np.sort(u[r]), lam, side="left") for r in range(u.shape[0])], axis=1)  # (L, R)
    r_idx = np.broadcast_to(np.arange(u.shape[0])[None, :], counts.shape)
    return cs[:, r_idx, counts].transpose(1, 2, 0)


def certify_chunk_linear(ctx: Ctx, form: LinearForm, X: np.ndarray, pos: np.ndarray) -> dict[str, Any]:
    """Certificates of a chunk from analytic logits (see the module docstring)."""
    proto = ctx.proto
    X = np.ascontiguousarray(X, dtype=float)
    n, F = X.shape
    G, K, L = proto.n_groups, proto.k, len(proto.grid)
    W = form.coef  # (C', F)
    Dx = X - ctx.baseline  # (n, F)
    z0 = form.decision(X)  # (n, C')
    # per-group contributions cg[i, g, c] = Σ_{j∈g} W_cj (x_ij - x̄_j)
    cg = np.stack([_group_sums(ctx, Dx * W[c]) for c in range(W.shape[0])], axis=-1)  # (n, G, C')
    # ---- stage 1
    q0, _, y_hat = margins_labels(form.probs(z0), np.zeros(n, dtype=np.intp))
    assert q0 is not None  # with_q=True
    z1 = np.concatenate([z0[None], z0[None] - cg.transpose(1, 0, 2)], axis=0)  # (G+1, n, C')
    m_all, _ = _probs_margins(form, z1, y_hat[None, :])
    m0, delta, order = stage1_summary(m_all)
    # ---- path
    eye = np.eye(G, dtype=bool)
    rows_n = np.arange(n)
    if proto.path == "static":
        path_groups = order[:, :K].copy()
    elif proto.path == "random":
        assert ctx.random_keys is not None  # the engine draws them when proto.path == "random"
        path_groups = np.argsort(ctx.random_keys[pos], axis=1, kind="stable")[:, :K]
    else:
        path_groups = np.empty((n, K), dtype=order.dtype)
        path_groups[:, 0] = order[:, 0]
        removed = eye[order[:, 0]]
        acc = cg[rows_n, order[:, 0]]  # (n, C')
        for step in range(1, K):
            zc = (z0 - acc)[None] - cg.transpose(1, 0, 2)  # (G, n, C')
            m, _ = _probs_margins(form, zc, y_hat[None, :])
            m = np.where(removed.T, np.inf, m)
            pick = m.argmin(axis=0)
            path_groups[:, step] = pick
            removed = removed | eye[pick]
            acc = acc + cg[rows_n, pick]
    steps = cg[rows_n[:, None], path_groups]  # (n, K, C')
    cum = np.cumsum(steps, axis=1)
    top = ctx.fmask(np.cumsum(eye[path_groups], axis=1)[:, -1, :] > 0)  # (n, F)
    spans, n_rows2 = stage2_spans(proto)
    z2 = np.empty((n_rows2, n, W.shape[0]))
    z2[:K] = (z0[:, None, :] - cum).transpose(1, 0, 2)
    lam = np.asarray(proto.grid)
    top_contrib = (Dx * top)  # (n, F): x_j - x̄_j on the top groups, 0 elsewhere
    for fam in proto.families:
        a, b, R = spans[fam]
        if fam == "interpolate":
            z2[a:b] = z0[None] - lam[:, None, None] * cum[:, -1][None]
        elif fam == "dropout":
            shift = np.stack([_dropout_shifts(top_contrib * W[c], ctx.draws[fam], lam) for c in range(W.shape[0])],
                             axis=-1)  # (L, R, n, C')
            z2[a:b] = z0[None] - shift.reshape(L * R, n, -1)
        else:  # noise: x + λ s u on the top groups
            u = ctx.draws[fam]  # (R, F)
            gain = np.stack([np.einsum("nf,rf->rn", top * (W[c] * ctx.scale), u) for c in range(W.shape[0])],
                            axis=-1)  # (R, n, C')
            z2[a:b] = (z0[None, None] + lam[:, None, None, None] * gain[None]).reshape(L * R, n, -1)
    m2, lab2 = _probs_margins(form, z2, y_hat[None, :])
    return finish(proto, p0=q0, y_hat=y_hat, m0=m0, delta=delta, order=order, path_groups=path_groups,
                  m2=m2, lab2=lab2)
