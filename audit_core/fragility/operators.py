"""Evidence operators of SPEC §1, batched over a matrix of cases.

All operators act in the transformed feature space and take a boolean column
mask of shape ``(n, n_features)`` (or ``(n_features,)``, broadcast to every
row) saying which coordinates belong to the groups being acted on.

* :func:`remove` — ``R(x, S)``: the coordinates of ``S`` take the baseline.
* :func:`degrade` — ``A_λ(x, g)`` in three families:

  ``interpolate``
      ``x_g ← (1-λ) x_g + λ x̄_g``.
  ``dropout``
      each coordinate is set to the baseline when its uniform draw
      ``u ~ U(0, 1)`` is below ``λ`` (probability ``λ``).
  ``noise``
      ``x_g ← x_g + λ · s_g · u`` with ``u ~ U(-1, 1)`` and ``s_g`` the
      training standard deviation of each column (bounded noise).

Random draws are *common random numbers*: :func:`draw_uniforms` makes one
``(R, n_features)`` array per family from the protocol seed, shared by every
case and every severity. Hence (i) a batch gives exactly the per-row result,
(ii) results do not depend on chunking, and (iii) dropout sets are nested in
``λ`` (a coordinate dropped at ``λ`` stays dropped at any larger ``λ``), so the
severity curves are monotone in the perturbation applied.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import fail, register_messages

__all__ = [
    "FAMILIES",
    "STOCHASTIC",
    "Family",
    "remove",
    "degrade",
    "draw_uniforms",
    "group_mask",
]

Family = Literal["interpolate", "dropout", "noise"]
FAMILIES: tuple[str, ...] = ("interpolate", "dropout", "noise")
STOCHASTIC: frozenset[str] = frozenset({"dropout", "noise"})

register_messages(
    {
        "FR_UNKNOWN_FAMILY": "Operator family {family!r} is not one of interpolate, dropout, noise.",
        "FR_BAD_SEVERITY": "Severity {value} is outside [0, 1].",
        "FR_DRAWS_MISSING": "The {family} operator is stochastic and needs uniform draws.",
    }
)


def group_mask(group_columns: tuple[np.ndarray, ...], selected: np.ndarray) -> np.ndarray:
    """Column mask of selected groups.

    Parameters
    ----------
    group_columns : tuple of int arrays, length n_groups
        Column indices of each group (``Grouping.index``).
    selected : bool ndarray of shape (..., n_groups)

    Returns
    -------
    bool ndarray of shape (..., n_features)
    """
    n_features = int(sum(len(c) for c in group_columns))
    sel = np.asarray(selected, dtype=bool)
    colgroup = np.full(n_features, -1)
    for g, cols in enumerate(group_columns):
        colgroup[cols] = np.where(colgroup[cols] < 0, g, -2)
    if (colgroup >= 0).all():  # the groups partition the columns: a gather, O(n_features) per selection
        return sel[..., colgroup]
    member = np.zeros((len(group_columns), n_features), dtype=bool)
    for g, cols in enumerate(group_columns):
        member[g, cols] = True
    return (sel.astype(np.uint8) @ member.astype(np.uint8)) > 0


def remove(X: np.ndarray, baseline: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Removal ``R(x, S)``: masked coordinates take the baseline.

    Parameters
    ----------
    X : ndarray of shape (n, n_features)
    baseline : ndarray of shape (n_features,)
    mask : bool ndarray of shape (n, n_features) or (n_features,)

    Returns
    -------
    ndarray of shape (n, n_features), a new array.

    Examples
    --------
    >>> remove(np.array([[1., 2.]]), np.array([0., 0.]), np.array([True, False]))
    array([[0., 2.]])
    """
    X = np.asarray(X, dtype=float)
    return np.where(np.broadcast_to(mask, X.shape), np.broadcast_to(baseline, X.shape), X)


def draw_uniforms(family: str, *, n_draws: int, n_features: int, seed: int) -> np.ndarray | None:
    """Common random numbers for a family: ``(n_draws, n_features)`` or ``None``.

    ``dropout`` draws ``U(0, 1)``; ``noise`` draws ``U(-1, 1)``; the
    deterministic ``interpolate`` needs none. Each family has its own stream
    (``SeedSequence([seed, family index])``).
    """
    if family not in FAMILIES:
        raise fail("FR_UNKNOWN_FAMILY", family=family)
    if family not in STOCHASTIC:
        return None
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), FAMILIES.index(family)]))
    u = rng.random((int(n_draws), int(n_features)))
    return u if family == "dropout" else 2.0 * u - 1.0


def degrade(
    family: str,
    X: np.ndarray,
    *,
    mask: np.ndarray,
    lam: float | np.ndarray,
    baseline: np.ndarray,
    scale: np.ndarray | None = None,
    u: np.ndarray | None = None,
) -> np.ndarray:
    """Graded degradation ``A_λ`` of the masked coordinates.

    Parameters
    ----------
    family : {"interpolate", "dropout", "noise"}
    X : ndarray of shape (n, n_features)
    mask : bool ndarray of shape (n, n_features) or (n_features,)
    lam : float or ndarray of shape (n,)
        Severity in ``[0, 1]``, per row when an array.
    baseline : ndarray of shape (n_features,)
    scale : ndarray of shape (n_features,), needed for ``noise``
        Training standard deviation of each column.
    u : ndarray of shape (n, n_features) or (n_features,), needed for stochastic families
        One draw from :func:`draw_uniforms` per row.

    Returns
    -------
    ndarray of shape (n, n_features)
    """
    X = np.asarray(X, dtype=float)
    lam_arr = np.asarray(lam, dtype=float)
    if lam_arr.size and (lam_arr.min() < 0 or lam_arr.max() > 1):
        raise fail("FR_BAD_SEVERITY", value=float(lam_arr.min() if lam_arr.min() < 0 else lam_arr.max()))
    lam_col = lam_arr.reshape(-1, 1) if lam_arr.ndim == 1 else lam_arr
    m = np.broadcast_to(mask, X.shape)
    if family == "interpolate":
        target = (1.0 - lam_col) * X + lam_col * baseline
        return np.where(m, target, X)
    if family not in STOCHASTIC:
        raise fail("FR_UNKNOWN_FAMILY", family=family)
    if u is None:
        raise fail("FR_DRAWS_MISSING", family=family)
    if family == "dropout":
        drop = m & (np.broadcast_to(u, X.shape) < lam_col)
        return np.where(drop, np.broadcast_to(baseline, X.shape), X)
    s = np.ones(X.shape[1]) if scale is None else np.asarray(scale, dtype=float)
    return np.where(m, X + lam_col * s * u, X)
