"""Calibration error: ACE, MCE, Spiegelhalter's z and smooth ECE arithmetic on validated arrays (SPEC §2, stage 4).

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
* **Smooth ECE** (Błasiok and Nakkiran, 2023): with a Gaussian kernel of
  width ``σ`` reflected at 0 and 1, ``smECE_σ = ∫₀¹ |Σ w K_σ(t, q)(q − y)| dt
  / ∫₀¹ Σ w K_σ(t, q) dt`` (the kernel-smoothed residual, weighted by the
  kernel density of the scores). The bandwidth is chosen automatically as
  the fixed point ``σ* = smECE_σ*`` (``smECE_σ`` falls as ``σ`` grows), found
  by bisection on ``[0.001, 1]`` to ``1e-6``. The integrals are sums over a
  grid of :data:`SMOOTH_GRID` points; each record's mass is split linearly
  between its two grid neighbours, and the reflected convolution is one FFT.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ACE_FLOOR_ALLOWANCE", "equal_mass_bins", "ace_arrays", "mce_arrays", "spiegelhalter_terms",
           "spiegelhalter_arrays", "SMOOTH_GRID", "smooth_ece_at", "smooth_ece_arrays", "frequency_band"]

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


#: grid points on [0, 1] for the smooth-ECE integrals (spacing 1/4096, a quarter of the smallest σ).
SMOOTH_GRID = 4097


def _deposit(q: np.ndarray, v: np.ndarray, G: int) -> np.ndarray:
    """Mass ``v`` at positions ``q`` split linearly between the two nearest of ``G`` grid points on [0, 1]."""
    x = q * (G - 1)
    i = np.minimum(np.floor(x).astype(np.intp), G - 2)
    f = x - i
    return np.bincount(i, v * (1 - f), minlength=G) + np.bincount(i + 1, v * f, minlength=G)


def _reflected_smooth(grid_mass: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian convolution of grid masses along the last axis, reflected at 0 and 1 (mass never leaves [0, 1]).

    ``grid_mass`` is (G,) or (k, G); each row is smoothed on its own. Mirroring the masses at 0 and at 1
    makes them periodic with period 2 (``2(G − 1)`` grid steps), so the reflected convolution is a
    circular one over one period: one real FFT of the masses and one of the kernel (sampled to ±6σ,
    normalised, wrapped onto the period). Every mirror image within 6σ is counted.
    """
    from scipy.fft import irfft, rfft

    G = grid_mass.shape[-1]
    period = 2 * (G - 1)
    h = 1.0 / (G - 1)
    mirrored = np.concatenate([grid_mass, grid_mass[..., -2:0:-1]], axis=-1)  # [0, 2): one period
    half = int(np.ceil(6 * sigma / h))
    offsets = np.arange(-half, half + 1)
    ker = np.exp(-0.5 * (offsets * h / sigma) ** 2)
    wrapped = np.bincount(offsets % period, weights=ker / ker.sum(), minlength=period)
    out = irfft(rfft(mirrored, axis=-1) * rfft(wrapped), n=period, axis=-1)
    return out[..., :G]


def _smooth_masses(y: np.ndarray, q: np.ndarray, w: np.ndarray, grid: int) -> np.ndarray:
    """The residual and weight masses on the grid, (2, grid): what every bandwidth smooths."""
    return np.stack([_deposit(q, w * (q - y), grid), _deposit(q, w, grid)])


def _smooth_ece_masses(masses: np.ndarray, sigma: float) -> float:
    r, d = _reflected_smooth(masses, sigma)
    return float(np.abs(r).sum() / d.sum())


def smooth_ece_at(y: np.ndarray, q: np.ndarray, w: np.ndarray, sigma: float, *, grid: int = SMOOTH_GRID) -> float:
    """``smECE_σ`` on validated arrays at a fixed bandwidth ``σ`` (module docstring)."""
    return _smooth_ece_masses(_smooth_masses(y, q, w, grid), sigma)


def smooth_ece_arrays(y: np.ndarray, q: np.ndarray, w: np.ndarray, *, grid: int = SMOOTH_GRID) -> tuple[float, float]:
    """Smooth ECE with its automatic bandwidth on validated arrays: ``(smECE, σ*)``.

    ``σ*`` is the fixed point ``smECE_σ = σ`` on ``[1e-3, 1]``; ``smECE_σ − σ`` falls strictly as ``σ``
    grows, so Brent's method finds its root to ``1e-6``. The grid masses do not depend on ``σ`` and
    are deposited once.
    """
    from scipy.optimize import brentq

    masses = _smooth_masses(y, q, w, grid)
    lo, hi = 1e-3, 1.0
    at_lo = _smooth_ece_masses(masses, lo)
    if at_lo <= lo:
        return at_lo, lo
    at_hi = _smooth_ece_masses(masses, hi)
    if at_hi >= hi:  # cannot happen for probabilities (smECE ≤ 1)
        return at_hi, hi
    sigma = float(brentq(lambda s: _smooth_ece_masses(masses, s) - s, lo, hi, xtol=1e-6))
    return _smooth_ece_masses(masses, sigma), sigma


def frequency_band(bins: np.ndarray, y: np.ndarray, n_bins: int, *, n_boot: int = 200, seed: int = 0,
                   level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap band of each bin's observed frequency (the reliability diagram's band).

    A record bootstrap of ``frac_pos_b`` depends only on how many draws land in
    each (bin, class) cell, so the replicates are multinomial draws of the
    ``2 · n_bins`` cell counts: exactly the record bootstrap, in O(cells).

    Parameters
    ----------
    bins : ndarray of int, shape (n,)
        Bin of each record.
    y : ndarray, shape (n,)
        Labels in {0, 1}.

    Returns
    -------
    low, high : ndarray of shape (n_bins,)
        Percentile band; ``nan`` for an empty bin.
    """
    cell = 2 * np.asarray(bins, dtype=np.intp) + np.asarray(y, dtype=np.intp)
    cnt = np.bincount(cell, minlength=2 * n_bins)
    n = int(cnt.sum())
    draws = np.random.default_rng(seed).multinomial(n, cnt / n, size=n_boot)  # (B, 2 · n_bins)
    tot = draws[:, 0::2] + draws[:, 1::2]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(tot > 0, draws[:, 1::2] / np.where(tot > 0, tot, 1), np.nan)
    a = 100 * (1 - level) / 2
    empty = cnt[0::2] + cnt[1::2] == 0
    low, high = np.full(n_bins, np.nan), np.full(n_bins, np.nan)
    if (~empty).any():
        low[~empty] = np.nanpercentile(frac[:, ~empty], a, axis=0)
        high[~empty] = np.nanpercentile(frac[:, ~empty], 100 - a, axis=0)
    return low, high
