"""Stage 3 of the multi-class Transport run: pipelines and rules fitted on the source partitions.

Preprocessing and the model on *train* (the scored model of a run on
scores); the multi-class mappings (:mod:`.mappings`: raw, temperature,
vector) on *calibration*; the max-probability thresholds (:mod:`.selective`)
and the conformal quantiles (:mod:`.conformal`: LAC, APS, RAPS; marginal and
by class) on *selection*. Probabilities are clipped to ``[1e-8, 1]`` and
renormalised (SPEC §0).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from audit_core.models.zoo import ModelSpec, train_model

from ..blas import serial_blas
from ..state import Fitted, Tick, TransportState, no_tick, result_rows
from . import conformal as mcf
from .mappings import fit_multiclass_mapping
from .selective import fit_thresholds

__all__ = ["MulticlassRules", "clip_probabilities", "fit"]


@dataclass(frozen=True)
class MulticlassRules:
    """Operating rules fitted on the source selection partition.

    Attributes
    ----------
    thresholds : dict of float to float
        Selection rate ``s`` → max-probability threshold ``τ_s``.
    qhat : dict
        Score name → ``α`` → ``{"marginal": float, "label_conditional": ndarray (C,)}``.
    hcep_thresholds : tuple of float
    scores : tuple of ScoreSpec
    """

    thresholds: dict
    qhat: dict
    hcep_thresholds: tuple
    scores: tuple

    def rows(self) -> list[dict]:
        out = [dict(analysis="selective", metric="threshold", value=t, selection_rate=s) for s, t in self.thresholds.items()]
        for spec in self.scores:
            for a, q in self.qhat[spec.name].items():
                out.append(dict(analysis="conformal_marginal", metric=f"{spec.name}:qhat", value=q["marginal"], alpha=a))
                out.append(dict(analysis="conformal_marginal", metric=f"{spec.name}:qhat_unbounded",
                                value=float(np.isinf(q["marginal"])), alpha=a))
                for c, v in enumerate(q["label_conditional"]):
                    out.append(dict(analysis="conformal_label_conditional", metric=f"{spec.name}:qhat_class{c}",
                                    value=float(v), alpha=a))
                    out.append(dict(analysis="conformal_label_conditional", metric=f"{spec.name}:qhat_class{c}_unbounded",
                                    value=float(np.isinf(v)), alpha=a))
        return out


def clip_probabilities(P: np.ndarray) -> np.ndarray:
    """SPEC §0: clip to [1e-8, 1] and renormalise; shape (n, C)."""
    Q = np.clip(np.asarray(P, dtype=float), 1e-8, 1.0)
    return Q / Q.sum(axis=1, keepdims=True)


def fit(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Fit model on train, mappings on calibration, thresholds and conformal quantiles on selection.

    Returns
    -------
    TransportState
        With its :class:`~audit_core.transport.state.Fitted` (rules: :class:`MulticlassRules`) and the fitted rows.
    """
    c = state.config
    y = state.y_source[c.primary_target]
    src, wsrc, scores = state.source, state.w_source, state.kind.scores
    pipes, rules_of, out = {}, {}, []
    units = [(r, m) for r in range(c.n_refits) for m in c.models]

    def w(idx):
        return None if wsrc is None else wsrc[idx]

    for i, (r, m) in enumerate(units):
        tick(i / len(units), f"Fitting {m}, refit {r + 1} of {c.n_refits}")
        tr, cal, sel = (state.source_rows(r, p) for p in ("train", "calibration", "selection"))
        spec = ModelSpec(kind=m, seed=state.split.seeds[r], params=c.model_params.get(m, {}))
        if c.on_scores:
            assert state.model is not None  # the scored model, made from the score columns in declare()
            fm = state.model
        else:
            fm = train_model(src.iloc[tr], y[tr], spec=spec, numeric=c.numeric, categorical=c.categorical,
                             missing_indicators=c.missing_indicators, sample_weight=w(tr),
                             classes=[str(x) for x in state.classes])
        raw = {"calibration": clip_probabilities(fm.predict_proba(src.iloc[cal])),
               "selection": clip_probabilities(fm.predict_proba(src.iloc[sel])),
               "id_test": clip_probabilities(fm.predict_proba(src.iloc[state.source_rows(r, "id_test")]))}
        if state.target is not None:
            raw["ood"] = clip_probabilities(fm.predict_proba(state.target))
        with serial_blas():
            maps = {mp: fit_multiclass_mapping(mp, raw["calibration"], y[cal], sample_weight=w(cal))
                    for mp in state.kind.mappings}
        pipes[(r, m)] = {"model": fm, "raw": raw, "maps": maps}
        for mp, f in maps.items():
            Psel = f(raw["selection"])
            rules = MulticlassRules(
                thresholds=fit_thresholds(Psel, c.selection_rates, sample_weight=w(sel)),
                qhat={s.name: {float(a): mcf.calibrate(y[sel], Psel, a, s) for a in c.alphas} for s in scores},
                hcep_thresholds=tuple(float(x) for x in c.hcep_thresholds), scores=scores)
            rules_of[(r, m, mp)] = rules
            ids = dict(domain="source", model=m, mapping=mp, refit=r)
            out += result_rows(c, rules.rows(), **ids)
            out += result_rows(c, [dict(analysis="fitted", metric=f"mapping_{k}", value=v)
                                   for k, v in {**f.flat_params(), **({"fallback": float(f.params["fallback"])}
                                                                       if "fallback" in f.params else {})}.items()],
                               **ids)
    return replace(state, fitted=Fitted(pipes=pipes, rules=rules_of)).with_rows(out)
