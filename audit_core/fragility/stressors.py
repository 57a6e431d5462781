"""Held-out stressors and brittle labels (SPEC §1, "Does the certificate predict …").

The stressors are disjoint from the certificate's channel (moving groups to
the baseline ``x̄``):

* :func:`donor_replacement` — in each of ``R`` seeded draws, ``m ~ U{1..M}``
  random groups take their (transformed) values from one random *training*
  row.
* :func:`natural_unavailability` — in each draw, a random non-empty subset of
  the fields that the data shows as missing, unknown or special-coded (each
  field with probability 1/2; one at random if none was picked) is set to
  missing in the *raw* record, which then goes through the fitted
  preprocessing (its imputers decide what "missing" becomes). Fields are
  found by :func:`unavailable_fields`.

A case's flip rate is the share of draws whose ``argmax`` differs from the
unperturbed ``ŷ``; :func:`brittle_labels` thresholds it at ``q`` ("any",
0.25, 0.5).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages
from audit_core.models.probs import clip_probs

from .generic import as_predict
from .operators import group_mask
from .work import Progress, StopCheck, check_stop, item_blocks, padded

__all__ = [
    "StressResult",
    "donor_replacement",
    "unavailable_fields",
    "natural_unavailability",
    "brittle_labels",
    "Q_LEVELS",
]

Q_LEVELS: tuple[str, ...] = ("any", "0.25", "0.5")

register_messages(
    {
        "FR_NO_UNAVAILABLE_FIELDS": (
            "The data has no missing, unknown or special-coded fields, so the natural-unavailability stressor cannot run."
        ),
    }
)


@dataclass(frozen=True, eq=False)
class StressResult:
    """Flip rates of one stressor.

    Attributes
    ----------
    name : str
    flip_rate : ndarray of shape (n,)
    n_draws : int
    detail : dict
    """

    name: str
    flip_rate: np.ndarray
    n_draws: int
    detail: Mapping[str, Any]

    def labels(self) -> pd.DataFrame:
        return brittle_labels(self.flip_rate, prefix=self.name)


def brittle_labels(flip_rate: np.ndarray, *, prefix: str = "brittle") -> pd.DataFrame:
    """Brittle labels at ``q`` = any flip, 0.25 and 0.5.

    Returns
    -------
    DataFrame of bool with columns ``{prefix}_any``, ``{prefix}_0.25``, ``{prefix}_0.5``.
    """
    r = np.asarray(flip_rate, dtype=float)
    return pd.DataFrame({f"{prefix}_any": r > 0, f"{prefix}_0.25": r >= 0.25, f"{prefix}_0.5": r >= 0.5})


def donor_replacement(
    model: Any,
    X: np.ndarray,
    X_train: np.ndarray,
    *,
    group_columns: Sequence[np.ndarray],
    max_groups: int = 3,
    n_draws: int = 20,
    seed: int = 0,
    chunk_mb: float | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> StressResult:
    """Donor replacement of ``m ~ U{1..M}`` random groups from a random training row.

    Rows are built in blocks of at most ``chunk_mb`` MiB; ``should_stop`` is
    polled between blocks (:class:`.work.FragilityStopped`).

    Parameters
    ----------
    model : FittedModel, estimator or callable
    X : ndarray of shape (n, n_features)
    X_train : ndarray of shape (n_train, n_features)
    group_columns : sequence of int arrays (``Grouping.index``)
    max_groups : int
        ``M``.
    n_draws : int
        ``R``.
    seed : int

    Returns
    -------
    StressResult
    """
    predict = padded(as_predict(model))
    X = np.asarray(X, dtype=float)
    Xtr = np.asarray(X_train, dtype=float)
    n, F = X.shape
    G = len(group_columns)
    M = max(1, min(int(max_groups), G))
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 104729]))
    m = rng.integers(1, M + 1, size=(n, n_draws))
    sel = np.empty((n, n_draws, G), dtype=bool)  # m random groups per draw, drawn in blocks of cases
    for cs, _ in item_blocks(n, 1, n_draws * G * 8 * 3 + 64, chunk_mb=chunk_mb):  # same stream as one draw
        rank = np.argsort(rng.random((cs.stop - cs.start, n_draws, G)), axis=-1).argsort(axis=-1)
        sel[cs] = rank < m[cs, :, None]
    donor = rng.integers(0, len(Xtr), size=(n, n_draws))
    y_hat = clip_probs(predict(X)).argmax(axis=1)
    flips = np.zeros((n, n_draws), dtype=bool)
    for cs, rs in item_blocks(n, n_draws, 3 * 8 * F + G + 64, chunk_mb=chunk_mb):
        check_stop(should_stop)
        mask = group_mask(tuple(group_columns), sel[cs, rs])  # (c, r, F)
        rows = np.where(mask, Xtr[donor[cs, rs]], X[cs, None, :])
        lab = clip_probs(predict(rows.reshape(-1, F))).argmax(axis=1).reshape(mask.shape[:2])
        flips[cs, rs] = lab != y_hat[cs, None]
        if progress is not None:
            progress(cs.stop / n, f"Donor replacement: {cs.stop:,} of {n:,} cases")
    return StressResult("donor", flips.mean(axis=1), int(n_draws), {"max_groups": M, "seed": int(seed)})


def unavailable_fields(frame: pd.DataFrame, missing_codes: Mapping[str, Sequence[Any]] | None = None) -> list[str]:
    """Raw fields the data shows as missing, unknown or special-coded.

    A field qualifies when it has a missing value in ``frame`` or one of its
    ``missing_codes`` (e.g. ``SampleInfo.missing_codes``) occurs in it.
    """
    codes = dict(missing_codes or {})
    out = []
    for col in frame.columns:
        s = frame[col]
        has = bool(s.isna().any())
        if not has and col in codes:
            vals = list(codes[col])
            has = bool(s.isin(vals).any() or s.astype(str).isin([str(v) for v in vals]).any())
        if has:
            out.append(col)
    return out


def natural_unavailability(
    model: Any,
    frame: pd.DataFrame,
    *,
    fields: Sequence[str],
    n_draws: int = 20,
    seed: int = 0,
) -> StressResult:
    """Set random subsets of the unavailable-able fields to missing in raw records.

    Parameters
    ----------
    model : FittedModel
        Needs ``transform`` (the fitted preprocessing) and ``predict_proba_transformed``.
    frame : pandas.DataFrame of shape (n, n_raw)
        The raw cases.
    fields : sequence of str
        From :func:`unavailable_fields`, restricted to the model's inputs.
    n_draws, seed : int

    Returns
    -------
    StressResult
    """
    fields = [f for f in fields if f in set(getattr(model, "input_columns", frame.columns))]
    if not fields:
        raise fail("FR_NO_UNAVAILABLE_FIELDS")
    n = len(frame)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1299709]))
    pick = rng.random((n_draws, n, len(fields))) < 0.5
    none = ~pick.any(axis=-1)
    forced = rng.integers(0, len(fields), size=(n_draws, n))
    pick[none, forced[none]] = True
    base = model.transform(frame)
    y_hat = clip_probs(model.predict_proba_transformed(base)).argmax(axis=1)
    rep = frame.iloc[np.tile(np.arange(n), n_draws)].reset_index(drop=True)
    flat = pick.reshape(-1, len(fields))
    for j, col in enumerate(fields):
        s = rep[col]
        if pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            s = s.astype(float)
        rep[col] = s.mask(flat[:, j])
    lab = clip_probs(model.predict_proba_transformed(model.transform(rep))).argmax(axis=1).reshape(n_draws, n)
    flips = (lab != y_hat[None, :]).mean(axis=0)
    return StressResult("unavailable", flips, int(n_draws), {"fields": list(fields), "seed": int(seed)})
