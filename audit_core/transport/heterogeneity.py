"""Stage 7 of Transport: heterogeneity by class and declared subgroup, then the feature shift (SPEC §2).

On the ID test and the target, for every refit, model and mapping: the
metric registry's core metrics, the selective rule at the middle selection
rate and the marginal conformal coverage at the middle ``α``, per class and
per level of each declared subgroup column (levels with at least
``min_subgroup`` records); Mondrian conformal coverage by subgroup (q̂ per
level from the source selection partition). With two domains, the
per-feature shift between them, linked to the stress results
(:mod:`.shift_link`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from audit_core.data.preprocess import category_text
from audit_core.metrics import METRICS

from . import conformal as cf
from . import selective as sl
from .blas import serial_blas
from .shift_link import shift_tables
from .state import Tick, TransportState, no_tick, result_rows

__all__ = ["heterogeneity", "heterogeneity_rows"]


def heterogeneity(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Metrics by class and by declared subgroup on ID test and OOD; then the feature shift (two domains)."""
    with serial_blas():
        state = state.with_rows(heterogeneity_rows(state))
        if state.target is not None and state.config.features:
            tick(0.5, "Feature shift between the domains")
            tables, options = shift_tables(state)
            state = replace(state, tables={**state.tables, **tables},
                            manifest={**state.manifest, "feature_shift": options})
    return state


def heterogeneity_rows(state: TransportState) -> list[dict]:
    """Result rows of the per-class and per-subgroup metrics for every refit, model and mapping."""
    c = state.config
    out: list[dict] = []
    s_mid = sorted(c.selection_rates)[len(c.selection_rates) // 2]
    a_mid = sorted(c.alphas)[len(c.alphas) // 2]
    for (r, mk) in state.pipes:
        for mp in c.mappings:
            rules = state.rules[(r, mk, mp)]
            for dom, y, w, idx in state.test_sets(r):
                p = state.mapped(r, mk, mp, dom)
                frame = state.source.iloc[idx] if idx is not None else state.target
                assert frame is not None  # the OOD test set exists only with a target
                sets = cf.prediction_sets(p, rules.qhat[a_mid]["marginal"])
                cov = sets[np.arange(len(y)), y]
                groups = [("class", np.where(y == 1, "1", "0"))]
                groups += [(col, category_text(frame[col]).fillna("<NA>").to_numpy()) for col in c.subgroup_columns or ()]
                rows = []
                for col, vals in groups:
                    for level in pd.unique(vals):
                        mk_ = vals == level
                        n = int(mk_.sum())
                        if n < (1 if col == "class" else c.min_subgroup):
                            continue
                        ww = w[mk_] if w is not None else None
                        yy, pp = y[mk_], p[mk_]
                        st = sl.selective_stats(yy, pp, rules.thresholds[s_mid], sample_weight=ww)
                        vals_ = {"n": n, "prevalence": METRICS["prevalence"](yy, pp, sample_weight=ww),
                                 "mean_p": float(np.average(pp, weights=ww)),
                                 "auroc": METRICS["auroc"](yy, pp, sample_weight=ww),
                                 "brier_score": METRICS["brier_score"](yy, pp, sample_weight=ww),
                                 "ece": METRICS["ece"](yy, pp, sample_weight=ww),
                                 f"selective_rate@s={s_mid}": st["rate"], f"selective_risk@s={s_mid}": st["risk"],
                                 f"marginal_coverage@alpha={a_mid}": float(cov[mk_].mean())}
                        rows += [dict(analysis="heterogeneity", condition=f"{col}={level}", metric=k, value=v)
                                 for k, v in vals_.items()]
                rows += _mondrian_rows(state, r, mk, mp, p, y, frame, a_mid)
                out += result_rows(c, rows, domain=dom, model=mk, mapping=mp, refit=r)
    return out


def _mondrian_rows(state: TransportState, r, mk, mp, p, y, frame, alpha) -> list[dict]:
    """Mondrian conformal by each declared subgroup column (q̂_g from the source selection partition).

    Per level with at least ``min_subgroup`` records: coverage and mean set size; per column, the
    worst level's coverage (condition = the column name), the release gate's ``worst_subgroup_coverage``.
    """
    c = state.config
    if not c.subgroup_columns:
        return []
    pipe = state.pipes[(r, mk)]
    sel = state.source_rows(r, "selection")
    y_sel, p_sel = state.y_source[c.primary_target][sel], pipe["maps"][mp](pipe["raw"]["selection"])
    out = []
    for col in c.subgroup_columns:
        g_sel = category_text(state.source.iloc[sel][col]).fillna("<NA>").to_numpy()
        g = category_text(frame[col]).fillna("<NA>").to_numpy()
        q = cf.mondrian_calibrate(y_sel, p_sel, g_sel, alpha)
        rep = [x for x in cf.subgroup_coverage(y, cf.mondrian_sets(p, g, q), g) if x["n"] >= c.min_subgroup]
        for x in rep:
            out += [dict(analysis="heterogeneity", condition=f"{col}={x['level']}",
                         metric=f"mondrian_{k}@alpha={alpha}", value=x[k], alpha=alpha)
                    for k in ("coverage", "mean_set_size")]
        if rep:
            out.append(dict(analysis="heterogeneity", condition=col, metric=f"mondrian_worst_coverage@alpha={alpha}",
                            value=min(x["coverage"] for x in rep), alpha=alpha))
    return out
