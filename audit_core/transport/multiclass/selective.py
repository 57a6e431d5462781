"""Selective prediction on the maximum probability, C ≥ 2 classes (stage 5).

Confidence is ``c = max_c P_c`` and the decision is the arg-max class (the
first maximal column on a tie); an error is ``ŷ ≠ y``. A record is accepted
(answered) when ``c ≥ τ``. The threshold ``τ_s`` for a declared selection
rate ``s`` is the binary rule's weighted empirical quantile
(:func:`audit_core.transport.selective.selection_threshold`) on the source
selection partition: the largest observed confidence whose weighted share
``W(c ≥ t)/W`` is at least ``s``. It is then applied unchanged to the ID test
and the target; ties can make the achieved share exceed ``s``.

Reported per test set: the accepted share ``rate``, the accepted error
``risk`` (weighted error among the accepted; ``nan`` when none is) and
``hcep = rate × risk``; the same at fixed confidence thresholds; AURC and
excess AURC of the risk–selection curve (stable sort, ties kept), all by the
binary module's arithmetic on this confidence and error.
"""
from __future__ import annotations

import numpy as np

from audit_core.errors import fail

from .. import selective as sl
from .metrics import top_label

__all__ = ["mc_confidence", "mc_errors", "fit_thresholds", "selective_rows"]


def mc_confidence(P: np.ndarray) -> np.ndarray:
    """``max_c P_c``; shape (n,)."""
    return top_label(np.asarray(P, dtype=float))[1]


def mc_errors(y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """0/1 error of the arg-max decision; shape (n,)."""
    return (top_label(np.asarray(P, dtype=float))[0] != np.asarray(y)).astype(float)


def fit_thresholds(P_sel: np.ndarray, rates, *, sample_weight=None) -> dict[float, float]:
    """Selection rate ``s`` → ``τ_s`` from the selection partition's probabilities ``P_sel`` (n, C)."""
    c = mc_confidence(P_sel)
    out = {}
    for s in rates:
        if not 0 < float(s) <= 1:
            raise fail("MULTICLASS_RATE", rate=s)
        out[float(s)] = sl.selection_threshold(c, float(s), sample_weight=sample_weight)
    return out


def selective_rows(y, P, thresholds: dict[float, float], hcep_thresholds=(), *, sample_weight=None,
                   weighting: str = "unweighted") -> list[dict]:
    """Long-form rows (``analysis="selective"``) for one test set.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
    P : ndarray of shape (n, C)
    thresholds : dict
        From :func:`fit_thresholds` (source selection partition only).
    hcep_thresholds : sequence of float
        Fixed confidence thresholds.
    """
    y = np.asarray(y).astype(int)
    c, e = mc_confidence(P), mc_errors(y, P)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    stats = iter(sl.stats_from(c, e, w, list(thresholds.values()) + [float(t) for t in hcep_thresholds]))
    rows = []
    for s in thresholds:
        st = next(stats)
        rows += [dict(analysis="selective", metric=k, value=st[k], weighting=weighting, selection_rate=s)
                 for k in ("rate", "risk", "hcep")]
    for t in hcep_thresholds:
        st = next(stats)
        rows += [dict(analysis="selective", metric=f"{k}_at_{float(t):.2f}", value=st[k], weighting=weighting)
                 for k in ("rate", "risk", "hcep")]
    a, ex = sl.aurc_pair(c, e, w)
    rows += [dict(analysis="selective", metric="aurc", value=a, weighting=weighting),
             dict(analysis="selective", metric="excess_aurc", value=ex, weighting=weighting)]
    return rows
