"""Record-bootstrap replicates of multi-class changes OOD − ID (fixed pipelines).

Each replicate draws the ID test and the target records again, stratified by
class (:func:`audit_core.transport.bootstrap.stratified_counts`, the binary
protocol's seeds: ``[seed + 7919, chunk, refit]`` for the ID test and
``[seed + 7919, chunk, 10**6]`` for the target), and recomputes every
statistic with the resampling counts as weights (times the record weights in
the ``weighted`` scheme). Statistics linear in the weights (Brier, log loss,
accuracy, accepted shares, HCEP, coverage, set size) and the binned ECEs are
matrix products over the replicates; the macro AUROC is recomputed replicate
by replicate.
"""
from __future__ import annotations

import numpy as np

from audit_core.logistic import EPS_LOGIT
from audit_core.metrics import auroc, bin_ids

from ..bootstrap import replicate_changes
from ..state import Tick, TransportState, no_tick
from . import conformal as mcf
from .metrics import top_label
from .selective import mc_confidence, mc_errors

__all__ = ["replicate_columns", "replicate_values", "multiclass_bootstrap"]


def _binned(value: np.ndarray, score: np.ndarray, n_bins: int) -> np.ndarray:
    """(n, n_bins) matrix whose weighted column sums are the per-bin gaps ``Σ w (y − p)`` of one ECE."""
    M = np.zeros((len(value), n_bins))
    M[np.arange(len(value)), bin_ids(score, n_bins)] = value
    return M


def replicate_columns(y, P, rules, *, n_bins: int = 15) -> dict:
    """Per-record columns of every bootstrapped statistic, keyed ``(analysis, metric, alpha, selection_rate)``.

    Returns
    -------
    dict with ``linear`` (key → (n,)), ``ratio`` (key → ((n,), (n,))),
    ``ece`` (key → list of (n, n_bins) matrices, averaged) and ``P``, ``y``.
    """
    y = np.asarray(y).astype(int)
    n, k = P.shape
    onehot = np.eye(k)[y]
    yhat, conf = top_label(P)
    lin = {("metrics", "accuracy", None, None): (yhat == y).astype(float),
           ("metrics", "brier_multiclass", None, None): ((P - onehot) ** 2).sum(axis=1),
           ("metrics", "log_loss_multiclass", None, None): -np.log(np.maximum(P[np.arange(n), y], EPS_LOGIT))}
    ece = {("metrics", "ece_top", None, None): [_binned((yhat == y) - conf, conf, n_bins)],
           ("metrics", "ece_classwise", None, None): [_binned(onehot[:, c] - P[:, c], P[:, c], n_bins) for c in range(k)]}
    c, e = mc_confidence(P), mc_errors(y, P)
    ratio = {}
    for s, tau in rules.thresholds.items():
        a = (c >= tau).astype(float)
        lin[("selective", "rate", None, s)] = a
        ratio[("selective", "risk", None, s)] = (a * e, a)
    for t in rules.hcep_thresholds:
        lin[("selective", f"hcep_at_{t:.2f}", None, None)] = (c >= t) * e
    for spec in rules.scores:
        stats = mcf.class_scores(P, spec)[0]
        for al, q in rules.qhat[spec.name].items():
            for method in ("marginal", "label_conditional"):
                sets = mcf.prediction_sets(P, q[method], spec, stats=stats)
                lin[(f"conformal_{method}", f"{spec.name}:coverage", al, None)] = sets[np.arange(n), y].astype(float)
                lin[(f"conformal_{method}", f"{spec.name}:mean_set_size", al, None)] = sets.sum(axis=1).astype(float)
    return {"linear": lin, "ratio": ratio, "ece": ece, "P": P, "y": y, "n_bins": n_bins}


def replicate_values(cols: dict, W: np.ndarray) -> dict:
    """Every statistic for replicate weights ``W`` of shape (B, n); each value of shape (B,)."""
    tot = W.sum(axis=1)
    out = {key: (W @ v) / tot for key, v in cols["linear"].items()}
    with np.errstate(invalid="ignore", divide="ignore"):
        for key, (num, den) in cols["ratio"].items():
            d = W @ den
            out[key] = np.where(d > 0, (W @ num) / np.where(d > 0, d, 1.0), np.nan)
    for key, mats in cols["ece"].items():
        out[key] = np.mean([np.abs(W @ M).sum(axis=1) / tot for M in mats], axis=0)
    y, P = cols["y"], cols["P"]
    per = np.full((len(W), P.shape[1]), np.nan)
    for c in range(P.shape[1]):
        yc = (y == c).astype(float)
        for b in range(len(W)):
            per[b, c] = auroc(yc, P[:, c], sample_weight=W[b]) if W[b].sum() > 0 else np.nan
    ok = np.isfinite(per)  # classes without an AUROC are left out of the mean, as in auroc_macro
    out[("metrics", "auroc_macro", None, None)] = np.where(
        ok.any(axis=1), np.where(ok, per, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1), np.nan)
    return out


def multiclass_bootstrap(state: TransportState, *, tick: Tick = no_tick) -> dict:
    """Replicate changes, shape (R, B) per ``(model, mapping, weighting, analysis, metric, alpha, rate)``."""
    c = state.config
    mappings = state.kind.mappings
    cols = {}
    for (r, m) in state.pipes:
        for mp in mappings:
            for dom, y, _, _ in state.test_sets(r):
                cols[(r, m, mp, dom)] = replicate_columns(y, state.mapped(r, m, mp, dom), state.rules[(r, m, mp)],
                                                          n_bins=c.n_bins)

    def changes(r, m, mp, ids, oods):
        v_id = replicate_values(cols[(r, m, mp, "id")], ids[0])
        v_ood = replicate_values(cols[(r, m, mp, "ood")], oods[0])
        return {key: v_ood[key] - val for key, val in v_id.items()}

    return replicate_changes(state, mappings, changes, tick=tick)
