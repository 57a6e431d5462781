"""Calibration statistics beyond ECE-15, on validated arrays (SPEC §2, stage 4).

The public, validating functions are in :mod:`audit_core.metrics` (``ace``,
``mce``, ``spiegelhalter_z``); this module holds their arithmetic on arrays
that :func:`~audit_core.metrics.check_binary_inputs` has already checked:
``y`` (n,) in {0, 1}, ``q`` (n,) in [0, 1] and ``w`` (n,) non-negative with a
positive sum. Both bootstraps of :mod:`audit_core.transport` reuse the bin
rules defined here, so a replicate is binned exactly as the metric bins it.

Definitions
-----------
* **ACE** (adaptive calibration error) uses equal-*mass* bins: sort the
  scores, and put a record in bin ``b = ⌊B · W_<(q) / W⌋`` (at most
  ``B − 1``), where ``W_<(q)`` is the weight of the records with a score
  *strictly* below its own and ``W`` the total weight. Tied scores therefore
  share a bin, and with ``n`` distinct unweighted scores and ``B`` dividing
  ``n`` every bin holds ``n / B`` records. ``ACE = Σ_b |Σ_{i∈b} w_i (q_i −
  y_i)| / W``, the same mass-weighted sum as ECE-15 over these bins (with
  exactly equal masses this is the plain mean over bins of Nixon et al.).
  A floor allowance of ``1e-9`` keeps a record whose ``W_< / W`` is a bin
  edge up to rounding (``2 / 30`` summed in another order) in the upper bin.
* **MCE** (maximum calibration error) is ``max_b |ȳ_b − q̄_b|`` over the
  non-empty equal-width bins of ECE-15 (same right-closed edges).
* **Spiegelhalter's z** tests ``H0: P(Y = 1 | q) = q``:
  ``z = Σ w (y − q)(1 − 2q) / sqrt(Σ w² (1 − 2q)² q (1 − q))``. Its null
  variance uses the squared weights (the variance of a weighted sum of
  independent terms), so ``z`` does not change when every weight is scaled,
  but a record of weight 2 is *not* the same evidence as two records of
  weight 1 (``z`` grows like ``√n``). ``nan`` when the variance is 0 (every
  ``q`` in {0, ½, 1}).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ACE_FLOOR_ALLOWANCE", "equal_mass_bins", "ace_arrays", "mce_arrays", "spiegelhalter_terms",
           "spiegelhalter_arrays"]

#: added to ``B · W_< / W`` before the floor of :func:`equal_mass_bins`.
ACE_FLOOR_ALLOWANCE = 1e-9


def equal_mass_bins(below, total, n_bins: int):
    """Equal-mass bin of each level: ``min(B − 1, ⌊B · below / total + 1e-9⌋)``.

    Parameters
    ----------
    below : ndarray of shape (..., L)
        Weight strictly below each level (score).
    total : ndarray of shape (...) or float
        Total weight.
    n_bins : int

    Returns
    -------
    ndarray of int, shape of ``below``.

    Examples
    --------
    >>> equal_mass_bins(np.array([0.0, 1.0, 2.0, 3.0]), 4.0, 2).tolist()
    [0, 0, 1, 1]
    """
    frac = np.asarray(below, dtype=float) / np.asarray(total, dtype=float)[..., None]
    return np.minimum(np.floor(n_bins * frac + ACE_FLOOR_ALLOWANCE), n_bins - 1).astype(np.intp)


def ace_arrays(y: np.ndarray, q: np.ndarray, w: np.ndarray, n_bins: int) -> float:
    """ACE on validated arrays (module docstring)."""
    order = np.argsort(q, kind="stable")
    s, ws, rs = q[order], w[order], (w * (q - y))[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    below = (np.cumsum(ws) - ws)[starts]
    b = equal_mass_bins(below, np.float64(ws.sum()), n_bins)
    res = np.bincount(b, weights=np.add.reduceat(rs, starts), minlength=n_bins)
    return float(np.abs(res).sum() / w.sum())


def mce_arrays(y: np.ndarray, q: np.ndarray, w: np.ndarray, bins: np.ndarray, n_bins: int) -> float:
    """MCE on validated arrays; ``bins`` (n,) are the ECE-15 bin ids."""
    W = np.bincount(bins, weights=w, minlength=n_bins)
    r = np.bincount(bins, weights=w * (q - y), minlength=n_bins)
    live = W > 0
    return float(np.max(np.abs(r[live]) / W[live]))


def spiegelhalter_terms(y: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-record numerator ``(y − q)(1 − 2q)`` and null variance ``(1 − 2q)² q (1 − q)``, each (n,)."""
    c = 1.0 - 2.0 * q
    return (y - q) * c, c * c * q * (1.0 - q)


def spiegelhalter_arrays(y: np.ndarray, q: np.ndarray, w: np.ndarray) -> float:
    """Spiegelhalter's z on validated arrays (module docstring)."""
    u, v = spiegelhalter_terms(y, q)
    den = float(np.dot(w * w, v))
    if not den > 0:
        return float("nan")
    return float(np.dot(w, u) / np.sqrt(den))
