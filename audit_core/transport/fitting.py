"""Stage 3 of Transport: pipelines fitted on the source partitions (SPEC §2).

For every refit and model: preprocessing and the model on *train* (or the
given model, used as it is), the probability mappings on *calibration*, and
the selective thresholds and conformal quantiles (:func:`~.evaluation.fit_rules`)
on *selection*. Target records are only ever scored (:func:`predict`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.models.zoo import FittedModel, ModelSpec, train_model

from .blas import serial_blas
from .evaluation import fit_rules
from .mappings import fit_mapping
from .state import Fitted, Tick, TransportState, no_tick, result_rows

__all__ = ["fit", "fit_pipeline", "predict", "stress_features"]


def predict(state: TransportState, fm: FittedModel, frame: pd.DataFrame, what: str) -> np.ndarray:
    """Positive-class probabilities of ``frame`` (n,); a fixed model that cannot score it is a declared error."""
    if state.model is None:
        return fm.predict_proba(frame)[:, 1]
    try:
        return np.asarray(fm.predict_proba(frame), dtype=float)[:, 1]
    except (ValueError, TypeError, KeyError) as exc:
        raise fail("TRANSPORT_MODEL_CANNOT_SCORE", label=state.config.fixed_model, what=what,
                   detail=" ".join(str(exc).split())[:300].rstrip(".")) from None


def stress_features(state: TransportState) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(numeric, categorical)`` features the stresses degrade: the declared ones the model reads."""
    c = state.config
    if state.model is None:
        return c.numeric, c.categorical
    reads = set(state.model.input_columns)
    return tuple(f for f in c.numeric if f in reads), tuple(f for f in c.categorical if f in reads)


def fit_pipeline(state: TransportState, refit: int, model: str, target: str) -> dict:
    """Model + mappings for one refit and label definition (source only).

    Returns
    -------
    dict
        ``{"model": FittedModel, "raw": {partition or "ood": scores (n,)}, "maps": {mapping: fitted mapping}}``.
    """
    c = state.config
    tr = state.source_rows(refit, "train")
    cal = state.source_rows(refit, "calibration")
    y = state.y_source[target]
    src, wsrc = state.source, state.w_source
    wtr = wsrc[tr] if wsrc is not None else None
    if state.model is not None:  # audited as it is: never refitted
        fm = state.model
    else:
        spec = ModelSpec(kind=model, seed=state.split.seeds[refit], params=c.model_params.get(model, {}))
        fm = train_model(src.iloc[tr], y[tr], spec=spec, numeric=c.numeric, categorical=c.categorical,
                         missing_indicators=c.missing_indicators, sample_weight=wtr)
    # one predict_proba call over the three held-out partitions (row-wise,
    # so identical to three separate calls), then split by partition
    held = {part: state.source_rows(refit, part) for part in ("calibration", "selection", "id_test")}
    rows = np.concatenate(list(held.values()))
    p_all = predict(state, fm, src.iloc[rows], "source records")
    bounds = np.cumsum([0] + [len(v) for v in held.values()])
    raw = {part: p_all[bounds[i]:bounds[i + 1]] for i, part in enumerate(held)}
    if state.target is not None:
        raw["ood"] = predict(state, fm, state.target, "target records")
    wcal = wsrc[cal] if wsrc is not None else None
    with serial_blas():
        maps = {m: fit_mapping(m, raw["calibration"], y[cal], sample_weight=wcal) for m in c.mappings}
    return {"model": fm, "raw": raw, "maps": maps}


def fit(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Fit preprocessing + model on train, mappings on calibration, rules on selection.

    Returns
    -------
    TransportState
        With its :class:`~.state.Fitted` and the rows of the fitted rules and mapping parameters.
    """
    c = state.config
    pipes, rules_of, out = {}, {}, []
    units = [(r, m) for r in range(c.n_refits) for m in c.models]
    for i, (r, m) in enumerate(units):
        tick(i / len(units), f"Fitting {m}, refit {r + 1} of {c.n_refits}")
        pipe = fit_pipeline(state, r, m, c.primary_target)
        pipes[(r, m)] = pipe
        sel = state.source_rows(r, "selection")
        ysel = state.y_source[c.primary_target][sel]
        wsel = state.w_source[sel] if state.w_source is not None else None
        for mp, f in pipe["maps"].items():
            with serial_blas():
                rules = fit_rules(ysel, f(pipe["raw"]["selection"]), selection_rates=c.selection_rates,
                                  alphas=c.alphas, hcep_thresholds=c.hcep_thresholds, sample_weight=wsel)
            rules_of[(r, m, mp)] = rules
            ids = dict(domain="source", model=m, mapping=mp, refit=r)
            out += result_rows(c, rules.rows(), **ids)
            out += result_rows(c, [dict(analysis="fitted", metric=f"mapping_{k}", value=float(v))
                                   for k, v in f.params.items()], **ids)
    return replace(state, fitted=Fitted(pipes=pipes, rules=rules_of)).with_rows(out)
