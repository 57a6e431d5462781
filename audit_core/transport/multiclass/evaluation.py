"""Stages 4 and 5a of the multi-class Transport run: metrics and the transported rules on the test sets.

:func:`evaluate` applies :mod:`.metrics` to the ID test and the target,
unweighted and (with weights) weighted; :func:`transport` applies the
source-fitted max-probability thresholds (:mod:`.selective`) and conformal
quantiles (:mod:`.conformal`) unchanged.
"""
from __future__ import annotations

from ..blas import serial_blas
from ..state import Tick, TransportState, no_tick, result_rows
from . import conformal as mcf
from .metrics import multiclass_metric_values
from .selective import selective_rows

__all__ = ["conformal_rows", "evaluate", "transport"]


def evaluate(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Stage 4: the multi-class metrics on the ID test and the OOD test."""
    c = state.config
    out = []
    with serial_blas():
        for r, m, mp, dom, y, w, P in state.each_test_set(tick, "Evaluating refit {refit}"):
            for weighting, ww in [("unweighted", None)] + ([("weighted", w)] if w is not None else []):
                vals = multiclass_metric_values(y, P, sample_weight=ww, n_bins=c.n_bins)
                out += result_rows(c, [dict(analysis="metrics", metric=k, value=v, weighting=weighting)
                                       for k, v in vals.items()], domain=dom, model=m, mapping=mp, refit=r)
    return state.with_rows(out)


def transport(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Stage 5a: the source-fitted thresholds and conformal quantiles applied unchanged."""
    c = state.config
    out = []
    with serial_blas():
        for r, m, mp, dom, y, w, P in state.each_test_set(tick, "Transporting rules, refit {refit}"):
            rules = state.rules[(r, m, mp)]
            rows = []
            for weighting, ww in [("unweighted", None)] + ([("weighted", w)] if w is not None else []):
                rows += selective_rows(y, P, rules.thresholds, rules.hcep_thresholds, sample_weight=ww,
                                       weighting=weighting)
            rows += conformal_rows(y, P, w, rules, scores=state.kind.scores)
            out += result_rows(c, rows, domain=dom, model=m, mapping=mp, refit=r)
    return state.with_rows(out)


def conformal_rows(y, P, w, rules, *, scores) -> list[dict]:
    """Coverage and set-size rows of every score, ``α`` and method (marginal, by class) on one test set."""
    rows = []
    for spec in scores:
        stats = mcf.class_scores(P, spec)[0]
        for a, q in rules.qhat[spec.name].items():
            for method in ("marginal", "label_conditional"):
                rep = mcf.set_report(y, mcf.prediction_sets(P, q[method], spec, stats=stats), sample_weight=w)
                for k, v in rep.items():
                    if k == "coverage_weighted":
                        if w is not None:
                            rows.append(dict(analysis=f"conformal_{method}", metric=f"{spec.name}:coverage", value=v,
                                             weighting="weighted", alpha=a))
                        continue
                    rows.append(dict(analysis=f"conformal_{method}", metric=f"{spec.name}:{k}", value=v, alpha=a))
    return rows
