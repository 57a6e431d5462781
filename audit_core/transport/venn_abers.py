"""Inductive Venn-Abers predictors for binary scores (Vovk, Petej and Fedorova, 2015).

For a test score ``s`` and a calibration set ``(s_i, y_i)``, ``p0(s)`` is the
value at ``s`` of the isotonic regression of the labels on the scores with
the test object added as ``(s, 0)``, and ``p1(s)`` the same with ``(s, 1)``.
The pair ``[p0, p1]`` is the multiprobability prediction; the point
prediction is the merged ``p = p1 / (1 − p0 + p1)`` (the minimiser of the
worst-case log loss over the pair).

How it is computed
------------------
Isotonic regression of points sorted by score is the slope of the greatest
convex minorant of the cumulative sum diagram (CSD): the points
``C_j = (W_j, S_j)``, the cumulative weight and weighted label sum of the
first ``j`` distinct calibration scores (tied scores pool into one group, as
in :class:`sklearn.isotonic.IsotonicRegression`). Adding one test object of
weight 1 and label ``y`` after the first ``a`` groups (merged into group
``a`` when ``s`` equals that group's score) and moving the left part of the
diagram by ``(−1, −y)`` instead of the right part by ``(+1, +y)`` leaves two
fixed sets of points: the prefix ``C_0 … C_a`` (moved) and the suffix
``C_b … C_K`` with ``b = a`` (between scores) or ``b = a + 1`` (tied). The
fitted value of the test object is the slope of the lower common tangent
(the *bridge*) of the two sets' lower convex hulls.

Every prefix hull and every suffix hull is stored at once as a linked list
(each point's predecessor in its prefix hull, successor in its suffix hull):
a point's link never changes once set, so ``O(K)`` memory holds all
``2K + 2`` hulls. Each bridge is then found by the merge-hull walk from the
two hulls' inner ends, vectorised over all ``2K + 1`` score positions
(``K + 1`` between scores, ``K`` on them). A walk is as long as the test
object's block reaches past its neighbours, a few hull vertices on real
scores, and never longer than the two hulls. Predicting ``m`` test scores is
then one ``searchsorted``, ``O(m log K)``, whatever ``m``.

Weights
-------
With survey or sample weights the calibration records enter the isotonic
fits with their weights, rescaled to mean 1 on the calibration partition, and
the test object enters with weight 1: it counts as one average calibration
record. With equal weights this is exactly the unweighted predictor. The
validity guarantee of Venn-Abers (exchangeable, equally weighted records) is
not established for this weighted variant; see ``docs/transport.md``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["VennAbers", "fit_venn_abers"]


def _cross(ax, ay, bx, by, cx, cy):
    """``(b − a) × (c − a)``: positive for a counter-clockwise turn a → b → c."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def _hull_links(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Predecessor of each point in its prefix lower hull, successor in its suffix lower hull.

    A point with no predecessor (successor) links to itself.
    """
    x, y = X.tolist(), Y.tolist()
    n = len(x)
    prv, nxt = list(range(n)), list(range(n))
    st: list[int] = []
    for j in range(n):  # prefix hulls, left to right: keep strict counter-clockwise turns
        while len(st) >= 2 and _cross(x[st[-2]], y[st[-2]], x[st[-1]], y[st[-1]], x[j], y[j]) <= 0:
            st.pop()
        if st:
            prv[j] = st[-1]
        st.append(j)
    st = []
    for k in range(n - 1, -1, -1):  # suffix hulls, right to left
        while len(st) >= 2 and _cross(x[k], y[k], x[st[-1]], y[st[-1]], x[st[-2]], y[st[-2]]) <= 0:
            st.pop()
        if st:
            nxt[k] = st[-1]
        st.append(k)
    return np.asarray(prv, dtype=np.intp), np.asarray(nxt, dtype=np.intp)


class _Diagram:
    """The calibration CSD ``(X, Y)`` (K + 1,) with the links of all its prefix and suffix lower hulls."""

    def __init__(self, X: np.ndarray, Y: np.ndarray) -> None:
        self.X, self.Y = X, Y
        self.prv, self.nxt = _hull_links(X, Y)

    def bridge_slopes(self, a: np.ndarray, b: np.ndarray, dy: float) -> np.ndarray:
        """Fitted value of a test object of label ``dy`` placed between prefix ``a`` and suffix ``b``.

        The bridge is found by the merge-hull walk, vectorised over the
        queries: from the last point of the moved prefix hull and the first of
        the suffix hull, step the right end forward while its successor lies
        strictly below the line through both ends, and the left end back while
        its predecessor does, until neither moves. Each query walks at most
        the lengths of its two hulls.
        """
        X, Y, prv, nxt = self.X, self.Y, self.prv, self.nxt
        lx, ly = X - 1.0, Y - dy  # the prefix, moved by (−1, −dy)
        le, r = np.array(a, dtype=np.intp), np.array(b, dtype=np.intp)
        idx = np.arange(len(le))
        while idx.size:
            li, ri = le[idx], r[idx]
            n = nxt[ri]
            move_r = (n != ri) & (_cross(lx[li], ly[li], X[ri], Y[ri], X[n], Y[n]) < 0)
            ri = np.where(move_r, n, ri)
            p = prv[li]
            move_l = (p != li) & (_cross(lx[p], ly[p], lx[li], ly[li], X[ri], Y[ri]) < 0)
            li = np.where(move_l, p, li)
            le[idx], r[idx] = li, ri
            idx = idx[move_r | move_l]
        return (Y[r] - ly[le]) / (X[r] - lx[le])


@dataclass(frozen=True, eq=False)
class VennAbers:
    """A fitted inductive Venn-Abers predictor.

    Attributes
    ----------
    scores : ndarray of shape (K,)
        Distinct calibration scores, ascending.
    p0_between, p1_between : ndarray of shape (K + 1,)
        ``p0``, ``p1`` of a test score strictly between scores ``a − 1`` and ``a``.
    p0_tied, p1_tied : ndarray of shape (K,)
        ``p0``, ``p1`` of a test score equal to score ``a``.
    """

    scores: np.ndarray
    p0_between: np.ndarray
    p1_between: np.ndarray
    p0_tied: np.ndarray
    p1_tied: np.ndarray

    def interval(self, s) -> tuple[np.ndarray, np.ndarray]:
        """``(p0, p1)`` of test scores ``s`` (m,), each of shape (m,)."""
        s = np.asarray(s, dtype=float)
        a = np.searchsorted(self.scores, s, side="left")
        tied = np.searchsorted(self.scores, s, side="right") > a
        g = np.minimum(a, len(self.scores) - 1)
        p0 = np.where(tied, self.p0_tied[g], self.p0_between[a])
        p1 = np.where(tied, self.p1_tied[g], self.p1_between[a])
        return p0, p1

    def predict(self, s) -> np.ndarray:
        """Merged probabilities ``p1 / (1 − p0 + p1)`` of test scores ``s`` (m,)."""
        p0, p1 = self.interval(s)
        return p1 / (1.0 - p0 + p1)


def fit_venn_abers(s, y, *, sample_weight=None) -> VennAbers:
    """Fit the inductive Venn-Abers predictor on calibration scores ``s`` (n,) and labels ``y`` (n,) in {0, 1}.

    ``sample_weight`` (n,), optional, non-negative: records of weight 0 are
    left out; the rest are rescaled to mean 1 (see the module docstring).
    """
    s = np.asarray(s, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones(len(s)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    keep = w > 0
    s, y, w = s[keep], y[keep], w[keep]
    w = w * (len(w) / w.sum())
    u, inv = np.unique(s, return_inverse=True)
    K = len(u)
    W = np.r_[0.0, np.cumsum(np.bincount(inv, weights=w, minlength=K))]
    S = np.r_[0.0, np.cumsum(np.bincount(inv, weights=w * y, minlength=K))]
    d = _Diagram(W, S)
    between = np.arange(K + 1, dtype=np.intp)
    tied = np.arange(K, dtype=np.intp)
    return VennAbers(scores=u,
                     p0_between=d.bridge_slopes(between, between, 0.0),
                     p1_between=d.bridge_slopes(between, between, 1.0),
                     p0_tied=d.bridge_slopes(tied, tied + 1, 0.0),
                     p1_tied=d.bridge_slopes(tied, tied + 1, 1.0))
