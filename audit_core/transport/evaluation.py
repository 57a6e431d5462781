"""Point evaluation of one fixed pipeline on one test set (stages 4, 5, 7), and stage 4 itself.

:func:`evaluate_pipeline` returns long-form rows (dicts) for the metric
registry, the transported selective rules and both conformal methods; the
stages add the identifying columns (:func:`~.state.result_rows`).
:func:`evaluate` is stage 4: the metric registry on the ID test and the OOD
test. :func:`bootstrap_spec` builds the batched statistics used by the
bootstrap for the same quantities.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..metrics import METRICS, metric_values
from . import conformal as cf
from . import selective as sl
from .blas import serial_blas
from .bootstrap import BatchedMetrics
from .state import Tick, TransportState, no_tick, result_rows

__all__ = ["Rules", "fit_rules", "evaluate", "evaluate_pipeline", "bootstrap_columns", "bootstrap_spec", "CORE_METRICS"]

CORE_METRICS = tuple(METRICS)


@dataclass(frozen=True)
class Rules:
    """Operating rules fitted on the source selection partition.

    Attributes
    ----------
    thresholds : dict of float to float
        Desired selection rate ``s`` → confidence threshold ``τ_s``.
    qhat : dict of float to dict
        ``α`` → ``{"marginal": float, "label_conditional": ndarray (2,)}``.
    hcep_thresholds : tuple of float
        Fixed confidence thresholds for HCEP.
    """

    thresholds: dict
    qhat: dict
    hcep_thresholds: tuple

    def rows(self) -> list[dict]:
        out = [dict(analysis="selective", metric="threshold", value=t, selection_rate=s) for s, t in self.thresholds.items()]
        for a, q in self.qhat.items():
            out.append(dict(analysis="conformal_marginal", metric="qhat", value=q["marginal"], alpha=a))
            # 1 when too few calibration records: q̂ = ∞, the class is in every set (no guarantee lost silently)
            out.append(dict(analysis="conformal_marginal", metric="qhat_unbounded",
                            value=float(cf.unbounded(q["marginal"])), alpha=a))
            for c in (0, 1):
                out.append(
                    dict(analysis="conformal_label_conditional", metric=f"qhat_class{c}", value=float(q["label_conditional"][c]), alpha=a)
                )
                out.append(dict(analysis="conformal_label_conditional", metric=f"qhat_class{c}_unbounded",
                                value=float(cf.unbounded(q["label_conditional"][c])), alpha=a))
        return out


def fit_rules(y_sel, p_sel, *, selection_rates, alphas, hcep_thresholds, sample_weight=None) -> Rules:
    """Thresholds and conformal quantiles from the selection partition only."""
    c = sl.confidence(p_sel)
    thr = {float(s): sl.selection_threshold(c, s, sample_weight=sample_weight) for s in selection_rates}
    q = {float(a): cf.calibrate(y_sel, p_sel, a) for a in alphas}
    return Rules(thr, q, tuple(float(t) for t in hcep_thresholds))


def _metric_rows(y, p, w, weighting, n_bins, order=None) -> list[dict]:
    vals = metric_values(y, p, sample_weight=w, n_bins=n_bins, order=order)
    return [dict(analysis="metrics", metric=k, value=v, weighting=weighting) for k, v in vals.items()]


def _mean(v, w) -> float:
    return float(np.mean(v)) if w is None else float(np.dot(w, v) / np.sum(w))


def evaluate_pipeline(y, p, rules: Rules | None, *, weights=None, n_bins: int = 15, metrics: bool = True,
                      extra=None, order=None) -> list[dict]:
    """Rows for one pipeline on one test set.

    Parameters
    ----------
    y : ndarray of shape (n,)
    p : ndarray of shape (n,)
        Mapped positive-class probabilities.
    rules : Rules or None
        ``None`` reports only the metric registry (stage 4).
    metrics : bool
        Include the metric registry rows.
    weights : ndarray of shape (n,), optional
        When given, metrics and selective quantities are also reported with
        ``weighting="weighted"``.
    extra : dict of str to ndarray (n,), optional
        Per-record columns of mapping-specific metrics (the Venn-Abers
        interval width): each is reported, with the registry, as its (weighted) mean.
    order : ndarray (n,), optional
        ``np.argsort(p, kind="stable")``, when the caller has it.
    """
    y = np.asarray(y).astype(int)
    p = np.asarray(p, dtype=float)
    rows: list[dict] = []
    schemes = [("unweighted", None)] + ([("weighted", weights)] if weights is not None else [])
    for weighting, w in schemes:
        if metrics:
            rows += _metric_rows(y, p, w, weighting, n_bins, order)
            rows += [dict(analysis="metrics", metric=k, value=_mean(v, w), weighting=weighting)
                     for k, v in (extra or {}).items()]
        if rules is None:
            continue
        stats = iter(sl.selective_stats_many(y, p, list(rules.thresholds.values()) + list(rules.hcep_thresholds),
                                             sample_weight=w))
        for s in rules.thresholds:
            st = next(stats)
            for k in ("rate", "risk", "hcep"):
                rows.append(dict(analysis="selective", metric=k, value=st[k], weighting=weighting, selection_rate=s))
        for t in rules.hcep_thresholds:
            st = next(stats)
            for k in ("rate", "risk", "hcep"):
                rows.append(dict(analysis="selective", metric=f"{k}_at_{t:.2f}", value=st[k], weighting=weighting))
        a, ex = sl.aurc_and_excess(y, p, sample_weight=w)
        rows.append(dict(analysis="selective", metric="aurc", value=a, weighting=weighting))
        rows.append(dict(analysis="selective", metric="excess_aurc", value=ex, weighting=weighting))
    scores = cf.class_scores(p) if rules is not None else None
    for a, q in (rules.qhat.items() if rules is not None else ()):
        for method in ("marginal", "label_conditional"):
            rep = cf.set_report(y, cf.prediction_sets(p, q[method], scores=scores), sample_weight=weights)
            for k, v in rep.items():
                if k == "coverage_weighted":
                    if weights is not None:
                        rows.append(dict(analysis=f"conformal_{method}", metric="coverage", value=v, weighting="weighted", alpha=a))
                    continue
                rows.append(dict(analysis=f"conformal_{method}", metric=k, value=v, weighting="unweighted", alpha=a))
    return rows


def bootstrap_columns(y, p, rules: Rules, extra=None):
    """Per-record columns of the transported rules' statistics, and their row keys.

    Every column is a step function of ``p̂`` within each class (selection
    indicators, errors of the 0.5 decision, set membership and size), which
    the binned bootstrap relies on. ``extra`` (name → column (n,), as in
    :func:`evaluate_pipeline`) adds mapping-specific metrics as means; the
    Venn-Abers width qualifies: ``(p0, p1)`` is a function of the merged
    ``p̂``, which rises strictly whenever either of them does.

    Returns
    -------
    linear : dict of str to ndarray (n,)
        Statistics ``Σ w v / Σ w``. The 0/1 and count steps (selection
        indicators, coverage, set size) are boolean or ``int8``: the same
        values as floats, read without a float copy of the column.
    ratios : dict of str to (ndarray (n,), ndarray (n,))
        Statistics ``Σ w num / Σ w den``.
    keys : dict
        Statistic name (including the metric registry's) to
        ``(analysis, metric, alpha, selection_rate)``.
    """
    y = np.asarray(y).astype(int)
    p = np.asarray(p, dtype=float)
    c = sl.confidence(p)
    e = sl.errors(y, p)
    lin, ratios, keys = {}, {}, {}
    for m in CORE_METRICS:
        keys[m] = ("metrics", m, None, None)
    for k, v in (extra or {}).items():
        lin[k] = np.asarray(v, dtype=float)
        keys[k] = ("metrics", k, None, None)
    for s, tau in rules.thresholds.items():
        a = c >= tau  # 0/1 steps stay boolean (or integer): the layout packs them without a float pass
        lin[f"rate_s{s}"] = a
        keys[f"rate_s{s}"] = ("selective", "rate", None, s)
        ratios[f"risk_s{s}"] = (a * e, a)
        keys[f"risk_s{s}"] = ("selective", "risk", None, s)
    for t in rules.hcep_thresholds:
        lin[f"hcep_t{t}"] = (c >= t) * e
        keys[f"hcep_t{t}"] = ("selective", f"hcep_at_{t:.2f}", None, None)
    scores = cf.class_scores(p)
    for al, q in rules.qhat.items():
        for method in ("marginal", "label_conditional"):
            sets = cf.prediction_sets(p, q[method], scores=scores)
            nm = f"cov_{method}_{al}"
            lin[nm] = np.where(y == 1, sets[:, 1], sets[:, 0])
            keys[nm] = (f"conformal_{method}", "coverage", al, None)
            lin[f"size_{method}_{al}"] = sets.sum(axis=1, dtype=np.int8)
            keys[f"size_{method}_{al}"] = (f"conformal_{method}", "mean_set_size", al, None)
    return lin, ratios, keys


def bootstrap_spec(y, p, rules: Rules, *, n_bins: int = 15, extra=None):
    """Batched statistics for the exact record bootstrap, keyed ``(analysis, metric, alpha, selection_rate)``.

    Returns
    -------
    BatchedMetrics, dict mapping its statistic names to row keys
    """
    lin, ratios, keys = bootstrap_columns(y, p, rules, extra)
    return BatchedMetrics(np.asarray(y).astype(int), np.asarray(p, dtype=float), n_bins=n_bins, linear=lin,
                          ratios=ratios), keys


def evaluate(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Stage 4: the metric registry on the ID test and the OOD test (weighted when weights exist).

    Each test set's score order (stable ascending ``p̂``) is sorted once here and kept in
    ``state.orders`` for the bootstrap's cell layouts (:mod:`.replicates`).
    """
    c = state.config
    out = []
    orders = {}
    with serial_blas():
        for r, m, mp, dom, y, w, p in state.each_test_set(tick, "Evaluating refit {refit}"):
            order = orders[(r, m, mp, dom)] = np.argsort(p, kind="stable")
            rows = evaluate_pipeline(y, p, None, weights=w, n_bins=c.n_bins, extra=state.extra(r, m, mp, dom),
                                     order=order)
            out += result_rows(c, rows, domain=dom, model=m, mapping=mp, refit=r)
    return replace(state.with_rows(out), orders=orders)
