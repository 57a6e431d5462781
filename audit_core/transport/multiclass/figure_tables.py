"""The tables the multi-class figures are drawn from (every refit): top-label reliability bins and risk–selection curves.

Both read the same quantities as the metrics and rules of :mod:`.metrics`
and :mod:`.selective`: the confidence ``max_c P_c`` and the event "the
arg-max class is right" (the first maximal column wins a tie).

* ``reliability`` — the binary reliability table
  (:func:`audit_core.metrics.calibration_bins`: equal-width, right-closed
  bins) of ``(1[ŷ = y], max_c P_c)``, so ``frac_pos`` is each bin's accuracy
  and ``Σ count · |mean_p − frac_pos| / n`` is ``ece_top``; with the 95 %
  record-bootstrap band of each bin's accuracy (``frac_pos_low``,
  ``frac_pos_high``, seeded ``seed + 31`` as in the binary run);
* ``curves`` — coverage and selective risk of the arg-max answer, most
  confident first (stable order), read at 100 coverages, as the binary
  run's ``curves``.

As in the binary run, the bins pool the records of all R refits and the
curves are the means over refits of each refit's curve (column ``refits`` =
R), the headline aggregation. Rows carry ``domain`` (``id``, ``ood``),
``model`` and ``mapping``, the binary tables' columns, so the saved run holds
them under the same names.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core.calibration_error import frequency_band
from audit_core.metrics import bin_ids, calibration_bins

from .. import selective as sl
from ..results import mean_curve
from ..state import TransportState
from .metrics import top_label

__all__ = ["multiclass_figure_tables", "top_label_bins", "top_label_curve"]

_GRID = np.linspace(0.01, 1.0, 100)


def top_label_bins(y, P, *, n_bins: int = 15, seed: int = 0) -> pd.DataFrame:
    """Top-label reliability table of one test set.

    Parameters
    ----------
    y : ndarray of int, shape (n,)
    P : ndarray of shape (n, C)

    Returns
    -------
    DataFrame with ``n_bins`` rows: :func:`audit_core.metrics.calibration_bins`'s
    columns (``frac_pos`` = accuracy in the bin) and ``frac_pos_low, frac_pos_high``.
    """
    yhat, conf = top_label(np.asarray(P, dtype=float))
    right = (yhat == np.asarray(y).astype(int)).astype(float)
    b = calibration_bins(right, conf, n_bins=n_bins)
    b["frac_pos_low"], b["frac_pos_high"] = frequency_band(bin_ids(conf, n_bins), right, n_bins, seed=seed)
    return b


def _curve(y, P) -> tuple[np.ndarray, np.ndarray]:
    yhat, conf = top_label(np.asarray(P, dtype=float))
    e = (yhat != np.asarray(y).astype(int)).astype(float)
    return sl.ordered_curve(e, np.ones(len(e)), np.argsort(-conf, kind="stable"))


def top_label_curve(y, P) -> pd.DataFrame:
    """Risk–selection curve of the arg-max answer, read at 100 coverages; columns ``coverage, risk``."""
    return mean_curve([_curve(y, P)], _GRID)


def multiclass_figure_tables(state: TransportState) -> dict[str, pd.DataFrame]:
    """``{"reliability": …, "curves": …}`` over every refit, every model and multi-class mapping, ID and OOD."""
    c = state.config
    rel, curves = [], []
    for m in c.models:
        for mp in state.kind.mappings:
            for dom in state.domains():
                ys, Ps = [], []
                for r in range(c.n_refits):
                    (_, y, _, _), = [t for t in state.test_sets(r) if t[0] == dom]
                    ys.append(np.asarray(y))
                    Ps.append(state.mapped(r, m, mp, dom))
                ids = dict(domain=dom, model=m, mapping=mp, refits=c.n_refits)
                rel.append(top_label_bins(np.concatenate(ys), np.concatenate(Ps), n_bins=c.n_bins,
                                          seed=int(c.seed) + 31).assign(**ids))
                curves.append(mean_curve([_curve(y, P) for y, P in zip(ys, Ps, strict=True)], _GRID).assign(**ids))
    return {"reliability": pd.concat(rel, ignore_index=True), "curves": pd.concat(curves, ignore_index=True)}
