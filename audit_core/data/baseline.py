"""Baseline vectors ``x̄`` in the transformed space (SPEC §0).

The baseline is computed on the training partition only.

``mean`` (default)
    Column means: the "typical" value of each standardised coordinate.
``median``
    Column medians.
``mode``
    For each group, the most frequent *pattern* of its discrete coordinates
    (at most 20 distinct training values: one-hot levels, indicators, codes)
    across training rows, ties broken by the lexicographically smallest
    pattern, so a one-hot group is replaced by a real category rather than a
    blend. Continuous coordinates, whose patterns would all be unique, take
    their median among the training rows that show the modal pattern (all
    rows when the group has no discrete coordinate).
``zero``
    All zeros: the training mean for standardised numerics, "no category" for
    one-hot columns.
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from audit_core.errors import fail, register_messages

from .groups import Grouping

__all__ = ["BaselineKind", "BASELINE_KINDS", "compute_baseline"]

BaselineKind = Literal["mean", "median", "mode", "zero"]
BASELINE_KINDS: tuple[BaselineKind, ...] = ("mean", "median", "mode", "zero")
_DISCRETE_MAX = 20

register_messages(
    {
        "BASELINE_UNKNOWN_KIND": "Baseline kind {kind!r} is not one of mean, median, mode, zero.",
        "BASELINE_SHAPE": (
            "The training matrix has {n_columns} columns but the grouping has {n_features} features."
        ),
    }
)


def compute_baseline(X_train: np.ndarray, grouping: Grouping, *, kind: BaselineKind = "mean") -> np.ndarray:
    """Compute the baseline vector.

    Parameters
    ----------
    X_train : ndarray of shape (n_train, n_features)
        The transformed training matrix.
    grouping : Grouping
        Needed for ``mode``, which works per group.
    kind : {"mean", "median", "mode", "zero"}

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from audit_core.data.groups import Grouping
    >>> g = Grouping(("a", "b"), ("a", "b"), ("g", "g"), ("g",))
    >>> compute_baseline(np.array([[0., 1.], [1., 0.], [1., 0.]]), g, kind="mode")
    array([1., 0.])
    """
    X = np.asarray(X_train, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(grouping.features):
        raise fail("BASELINE_SHAPE", n_columns=X.shape[-1], n_features=len(grouping.features))
    if kind == "mean":
        return X.mean(axis=0)
    if kind == "median":
        return np.median(X, axis=0)
    if kind == "zero":
        return np.zeros(X.shape[1])
    if kind == "mode":
        out = np.empty(X.shape[1])
        for idx in grouping.index:
            discrete = np.array([np.unique(X[:, j]).size <= _DISCRETE_MAX for j in idx])
            rows = np.ones(X.shape[0], dtype=bool)
            if discrete.any():
                d_idx = idx[discrete]
                patterns, inverse, counts = np.unique(
                    X[:, d_idx], axis=0, return_inverse=True, return_counts=True
                )
                top = int(np.argmax(counts))  # np.unique sorts: first max = smallest pattern
                out[d_idx] = patterns[top]
                rows = inverse.ravel() == top
            if (~discrete).any():
                c_idx = idx[~discrete]
                out[c_idx] = np.median(X[rows][:, c_idx], axis=0)
        return out
    raise fail("BASELINE_UNKNOWN_KIND", kind=kind)
