"""Stage 5b of the protocol: paired OOD − ID changes, their bootstrap intervals and verdicts.

:func:`classify_changes` takes the replicate changes from whichever bootstrap
produced them (the default binned-cell bootstrap of
:mod:`~audit_core.transport.replicates`, or the exact record bootstrap
:func:`exact_bootstrap`, ``exact_bootstrap=True``), and applies one interval
rule to all of them, :func:`~audit_core.transport.intervals.change_interval`:
per refit around that refit's change, and pooled around the refit-mean
change (the verdict's interval). Every interval therefore contains its
estimate.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .blas import serial_blas
from .bootstrap import replicate_changes
from .columns import RESULT_COLUMNS
from .evaluation import bootstrap_spec
from .intervals import change_interval
from .results import paired_changes
from .state import Tick, TransportState, no_tick, result_rows
from .verdicts import change_direction, classify_change, good_direction

__all__ = ["classify", "classify_changes", "exact_bootstrap", "replicates"]

_KEY = ["model", "mapping", "analysis", "metric", "weighting", "alpha", "selection_rate"]


def classify(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Stage 5b: paired OOD − ID changes, bootstrap intervals and verdicts (the ``verdicts`` table).

    The multi-class run judges its changes against its own tolerances (``state.kind.tolerances``).
    """
    with serial_blas():
        rows, verdicts = classify_changes(state, tolerances=state.kind.tolerances, tick=tick)
    return replace(state.with_rows(result_rows(state.config, rows)), tables={**state.tables, "verdicts": verdicts})


def replicates(state: TransportState, *, tick: Tick = no_tick) -> dict:
    """Replicate changes OOD − ID, shape (R, B) per statistic (record resamples, fixed pipelines).

    The default binned-cell bootstrap (:mod:`.replicates`), the exact one (``exact_bootstrap=True``), or the
    multi-class one (:mod:`.multiclass.bootstrap`); all three draw the same replicates.
    """
    if state.kind.multiclass:
        from .multiclass.bootstrap import multiclass_bootstrap

        return multiclass_bootstrap(state, tick=tick)
    if not state.config.exact_bootstrap:  # the default: the same replicates, binned-cell arithmetic
        from .replicates import binned_bootstrap

        return binned_bootstrap(state, tick=tick)
    return exact_bootstrap(state, tick=tick)


def classify_changes(state: TransportState, *, tolerances=None, tick: Tick = no_tick) -> tuple[list[dict], pd.DataFrame]:
    """Rows of paired changes and per-refit intervals, and the verdict table.

    ``tolerances`` (metric → δ) replaces the config's, for the multi-class
    run whose metric names the binary config does not know.

    Returns
    -------
    rows : list of dict
        Paired changes (``domain="ood-id"``, one per refit) and the per-refit
        intervals (``analysis="change:<analysis>"``, ``condition``
        ``bootstrap_ci_low`` / ``bootstrap_ci_high``).
    verdicts : pandas.DataFrame
        One row per (model, mapping, analysis, metric, weighting, alpha,
        selection rate): ID and OOD levels (refit means), the mean change,
        its interval, tolerance, verdict and direction.
    """
    c = state.config
    table = pd.DataFrame(list(state.rows), columns=list(RESULT_COLUMNS))
    changes = paired_changes(table)
    out = changes.to_dict("records")
    if state.target is None:
        return out, pd.DataFrame()
    deltas = replicates(state, tick=tick)
    ck = changes.fillna({"alpha": -1.0, "selection_rate": -1.0})
    point = ck.groupby(_KEY)["value"].mean()
    per_refit = ck.set_index(_KEY + ["refit"])["value"]
    per_refit = per_refit[~per_refit.index.duplicated()]
    lv = table[table["domain"].isin(["id", "ood"]) & (table["condition"] == "clean")
               & (table["target_definition"] == c.primary_target)].fillna({"alpha": -1.0, "selection_rate": -1.0})
    levels = lv.groupby(_KEY + ["domain"])["value"].mean()
    vrows = []
    for key, arr in deltas.items():
        m, mp, weighting, analysis, metric, alpha, s = key
        a_, s_ = (-1.0 if pd.isna(alpha) else alpha), (-1.0 if pd.isna(s) else s)
        k = (m, mp, analysis, metric, weighting, a_, s_)
        for r in range(arr.shape[0]):
            lo, hi = change_interval(arr[r], per_refit.get(k + (r,), np.nan), c.level)
            for nm, v in (("ci_low", lo), ("ci_high", hi)):
                out.append(dict(analysis=f"change:{analysis}", condition=f"bootstrap_{nm}", domain="ood-id", model=m,
                                mapping=mp, refit=r, metric=metric, value=v, weighting=weighting, alpha=alpha,
                                selection_rate=s))
        d = float(point.get(k, np.nan))
        lo, hi = change_interval(np.nanmean(arr, axis=0), d, c.level)
        tol = (c.tolerances if tolerances is None else tolerances).get(metric)
        v_id, v_ood = (float(levels.get(k + (dom,), np.nan)) for dom in ("id", "ood"))
        verdict = "no tolerance declared" if tol is None else classify_change(lo, hi, tol)
        vrows.append(dict(model=m, mapping=mp, analysis=analysis, metric=metric, weighting=weighting,
                          alpha=alpha, selection_rate=s, id_value=v_id, ood_value=v_ood, delta=d,
                          ci_low=lo, ci_high=hi, tolerance=np.nan if tol is None else tol, verdict=verdict,
                          direction=change_direction(verdict, metric, lo=lo, hi=hi, id_value=v_id,
                                                     ood_value=v_ood, alpha=alpha, selection_rate=s),
                          good_direction=good_direction(metric, alpha=alpha, selection_rate=s)[2],
                          n_refits=int(arr.shape[0]), n_bootstrap=int(arr.shape[1])))
    return out, pd.DataFrame(vrows).fillna({"alpha": np.nan}).reset_index(drop=True)


def exact_bootstrap(state: TransportState, *, tick: Tick = no_tick) -> dict:
    """Replicate changes OOD − ID, shape (R, B) per statistic, record by record (``exact_bootstrap=True``)."""
    c = state.config
    specs, orders = {}, {}
    for (r, m) in state.pipes:
        for dom, y, _w, _ in state.test_sets(r):
            raw = state.pipes[(r, m)]["raw"]["id_test" if dom == "id" else "ood"]
            o = np.argsort(raw, kind="stable")  # score order: monotone mappings keep it
            orders[(r, m, dom)] = o
            for mp in c.mappings:
                extra = {k: v[o] for k, v in state.extra(r, m, mp, dom).items()}
                specs[(r, m, mp, dom)] = bootstrap_spec(y[o], state.mapped(r, m, mp, dom)[o],
                                                        state.rules[(r, m, mp)], n_bins=c.n_bins, extra=extra)

    def changes(r, m, mp, ids, oods):
        (W_id, Q_id), (W_ood, Q_ood) = ids, oods
        o_id, o_ood = orders[(r, m, "id")], orders[(r, m, "ood")]
        bm_id, keys = specs[(r, m, mp, "id")]
        bm_ood, _ = specs[(r, m, mp, "ood")]
        s_id, s_ood = bm_id.compute(W_id[:, o_id], Q_id[:, o_id]), bm_ood.compute(W_ood[:, o_ood], Q_ood[:, o_ood])
        return {key: s_ood[name] - s_id[name] for name, key in keys.items()}

    return replicate_changes(state, c.mappings, changes, tick=tick)
