"""Stage 5a of Transport: the source-fitted selective and conformal rules applied unchanged (SPEC §2).

The thresholds and conformal quantiles fitted on the source *selection*
partition (:mod:`.fitting`) are applied as they are to the ID test and to
the target; nothing is refitted on either.
"""
from __future__ import annotations

from .blas import serial_blas
from .evaluation import evaluate_pipeline
from .state import Tick, TransportState, no_tick, result_rows

__all__ = ["transport"]


def transport(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Apply the source-fitted selective and conformal rules unchanged to the ID test and the OOD test."""
    c = state.config
    out = []
    with serial_blas():
        for r, m, mp, dom, y, w, p in state.each_test_set(tick, "Transporting rules, refit {refit}"):
            rows = evaluate_pipeline(y, p, state.rules[(r, m, mp)], weights=w, n_bins=c.n_bins, metrics=False)
            out += result_rows(c, rows, domain=dom, model=m, mapping=mp, refit=r)
    return state.with_rows(out)
