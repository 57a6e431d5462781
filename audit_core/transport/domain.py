"""Domain classifiers: how well the features tell target records from source records (cross-fitted AUROC).

* **Joint**: a histogram gradient-boosting classifier (scikit-learn's
  ``HistGradientBoostingClassifier`` on one thread: ``n_trees`` trees (default 50; a Transport run uses
  30 over 3 folds, :data:`~audit_core.transport.shift_link.CLASSIFIER_TREES`) of at most 15 leaves, no early
  stopping, seeded; categoricals as native categories, the 250 most frequent
  levels kept and the rest pooled; missing values handled by the trees) on all
  the features, fitted with the record weights (none when they are all
  equal); the AUROC uses the record weights.
* **Per feature**: a cross-fitted histogram classifier on that feature alone,
  binned like PSI (:func:`~audit_core.transport.shift.shift_bins`) but with
  the quantiles of the training folds' records of *both* domains (each domain
  weighted to the same total), so values outside the source range get bins of
  their own: a record's score is ``t_b / (t_b + s_b)``, the weighted target
  and source shares of its bin on the training folds (0.5 for a bin neither
  holds).

Folds: ``K`` folds stratified by domain (a seeded permutation within each
domain, fold = position mod K). Every record is scored by the model fitted
on the other folds, and the AUROC is computed on these out-of-fold scores
(pooled; per fold for the joint model). Above ``max_rows`` records per
domain a seeded sample is used. 0.5 means the domains cannot be told apart
(an out-of-fold AUROC can fall a little below 0.5 by chance); 1.0 means
they are separable.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core.data.preprocess import category_text
from audit_core.metrics import auroc

from .shift import numeric_values, shift_bins

__all__ = ["domain_aurocs", "domain_folds"]

_MAX_LEVELS = 250


def domain_folds(is_target: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """Fold of each record (n,): stratified by domain, seeded."""
    rng = np.random.default_rng([seed, 29])
    folds = np.empty(is_target.size, dtype=int)
    for v in (False, True):
        idx = np.flatnonzero(is_target == v)
        folds[idx[rng.permutation(idx.size)]] = np.arange(idx.size) % n_folds
    return folds


def _balanced(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weights scaled so that both domains have the same total (n / 2 each)."""
    return np.where(y, w / w[y].sum(), w / w[~y].sum()) * len(w) / 2


def _histogram_scores(values: np.ndarray, kind: str, y: np.ndarray, w: np.ndarray, folds: np.ndarray,
                      n_bins: int) -> np.ndarray:
    """Out-of-fold bin scores ``t_b / (t_b + s_b)`` of one feature (n,)."""
    scores = np.empty(values.size)
    balanced = _balanced(y, w)
    if kind == "numeric":
        values = numeric_values(values)  # once, not per fold
    else:  # the levels of every fold's training records together are all the levels: one coding
        _, codes, labels = shift_bins(values, values, kind=kind)
    for k in np.unique(folds):
        tr = folds != k
        src = tr & ~y
        if kind == "numeric":
            _, codes, labels = shift_bins(values[tr], values, kind=kind, n_bins=n_bins, source_weight=balanced[tr])
        nb = len(labels)
        s = np.bincount(codes[src], weights=w[src], minlength=nb) / max(w[src].sum(), 1e-300)
        tgt = tr & y
        t = np.bincount(codes[tgt], weights=w[tgt], minlength=nb) / max(w[tgt].sum(), 1e-300)
        score = np.divide(t, s + t, out=np.full(nb, 0.5), where=(s + t) > 0)
        scores[~tr] = score[codes[~tr]]
    return scores


def _encode(frame: pd.DataFrame, feats) -> tuple[np.ndarray, np.ndarray]:
    cols, is_cat = [], []
    for f, kind in feats:
        if kind == "numeric":
            cols.append(numeric_values(frame[f].to_numpy()))
            is_cat.append(False)
            continue
        text = category_text(frame[f].reset_index(drop=True))
        counts = text.value_counts()
        keep = sorted(counts.index[:_MAX_LEVELS], key=lambda v: (-counts[v], str(v)))
        lookup = {v: i for i, v in enumerate(keep)}
        other = float(len(keep))
        cols.append(np.array([np.nan if not isinstance(v, str) else float(lookup.get(v, other)) for v in text]))
        is_cat.append(True)
    return np.column_stack(cols), np.array(is_cat)


def _joint_scores(X, is_cat, y, w, folds, seed, n_trees: int = 50) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    # record weights only when they differ: scikit-learn's binning of weighted data is far slower
    fit_w = None if np.all(w == w[0]) else w
    scores = np.empty(len(y))
    for k in np.unique(folds):
        tr = folds != k
        clf = HistGradientBoostingClassifier(max_iter=n_trees, max_leaf_nodes=15, learning_rate=0.1, early_stopping=False,
                                             categorical_features=is_cat if is_cat.any() else None, random_state=seed)
        with threadpool_limits(limits=1, user_api="openmp"):  # one thread: fast on a shared machine, fixed order
            clf.fit(X[tr], y[tr].astype(int), sample_weight=None if fit_w is None else fit_w[tr])
            scores[~tr] = clf.predict_proba(X[~tr])[:, 1]
    return scores


def domain_aurocs(source: pd.DataFrame, target: pd.DataFrame, feats, ws: np.ndarray, wt: np.ndarray, *, n_bins: int,
                  n_folds: int, seed: int, max_rows: int, n_trees: int = 50):
    """Joint and per-feature cross-fitted domain AUROCs.

    Parameters
    ----------
    source, target : pandas.DataFrame, shapes (n, ·) and (m, ·)
    feats : sequence of (name, kind)
    ws, wt : ndarray, shapes (n,) and (m,)
        Record weights.
    n_bins, n_folds, seed, max_rows, n_trees : int
        See :func:`~audit_core.transport.shift_link.feature_shift`.

    Returns
    -------
    joint : float
        Pooled out-of-fold AUROC of the joint classifier.
    fold_auroc : tuple of float, length K
    per_feature : dict of str to float
    n_rows : int
        Records used (both domains).
    """
    rng = np.random.default_rng([seed, 31])
    take = []
    for frame, w in ((source, ws), (target, wt)):
        idx = np.arange(len(frame))
        if idx.size > max_rows:
            idx = np.sort(rng.choice(idx.size, max_rows, replace=False))
        take.append((frame.iloc[idx].reset_index(drop=True), w[idx]))
    both = pd.concat([take[0][0], take[1][0]], ignore_index=True)
    y = np.r_[np.zeros(len(take[0][0]), bool), np.ones(len(take[1][0]), bool)]
    w = np.r_[take[0][1], take[1][1]]
    folds = domain_folds(y, n_folds, seed)
    per = {f: auroc(y.astype(int), _histogram_scores(both[f].to_numpy(), kind, y, w, folds, n_bins), sample_weight=w)
           for f, kind in feats}
    X, is_cat = _encode(both, feats)
    s = _joint_scores(X, is_cat, y, w, folds, seed, n_trees)
    fold_auc = tuple(auroc(y[folds == k].astype(int), s[folds == k], sample_weight=w[folds == k])
                     for k in range(n_folds))
    return auroc(y.astype(int), s, sample_weight=w), fold_auc, per, int(len(y))
