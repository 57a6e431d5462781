"""The interval of a bootstrapped change, used for every verdict (exact and binned bootstraps alike).

Rule: the **median-centred percentile interval**. For an estimate ``θ̂`` and
bootstrap replicates ``θ*_b`` with quantiles ``q_p``:

``[θ̂ + (q_{α/2} − q_{0.5}),  θ̂ + (q_{1−α/2} − q_{0.5})]``.

It is the percentile interval moved so that the replicates' median sits on
the estimate: it keeps the percentile interval's width and skew, and drops
the shift that resampling itself adds to the replicates. It contains ``θ̂``
by construction (``q_{α/2} ≤ q_{0.5} ≤ q_{1−α/2}``), for every statistic and
every replicate distribution.

Why not the plain percentile interval: for statistics that resampling
biases, its interval can miss the estimate. ECE is the main case: the ECE of
a resample is larger than the sample's on average (resampling noise adds to
the binned calibration gaps), and more so on the smaller ID test, so the
replicates of the change OOD − ID sit below the estimate (loan, Platt:
0.0248 against [−0.0058, 0.0236]).

Why not the basic (reverse-percentile) or the BCa interval: neither
contains the estimate in that case. The basic interval
``[2θ̂ − q_{1−α/2}, 2θ̂ − q_{α/2}]`` is the percentile interval reflected
through ``θ̂``, so it contains ``θ̂`` exactly when the percentile interval
does. The bias-corrected interval (BC, acceleration 0) uses the levels
``Φ(2 z0 ± z_{1−α/2})`` with ``z0 = Φ⁻¹(share of replicates below θ̂)``;
it contains ``θ̂`` iff ``|z0| ≤ z_{1−α/2}``, which is again the percentile
interval's condition, and BCa stays within the replicates' range.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["change_interval"]


def change_interval(replicates: np.ndarray, estimate: float, level: float = 0.95) -> tuple[float, float]:
    """The median-centred percentile interval of ``estimate`` from ``replicates`` (module docstring).

    Parameters
    ----------
    replicates : ndarray of shape (B,)
        Bootstrap replicates of the statistic; non-finite values are ignored.
    estimate : float
        The full-sample estimate. When it is not finite, the plain percentile
        interval of the replicates is returned.
    level : float

    Returns
    -------
    (low, high) : tuple of float
        ``NaN`` when no replicate is finite.

    Examples
    --------
    Replicates shifted below the estimate (as resampling does to a change in ECE):

    >>> reps = np.array([-0.006, 0.0, 0.005, 0.01, 0.015, 0.02, 0.024])
    >>> [round(v, 4) for v in change_interval(reps, 0.0248, level=0.5)]
    [0.0173, 0.0323]
    """
    v = np.asarray(replicates, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    lo, med, hi = np.quantile(v, [a, 0.5, 1 - a])
    if estimate is None or not math.isfinite(float(estimate)):
        return float(lo), float(hi)
    e = float(estimate)
    return e + float(lo - med), e + float(hi - med)
