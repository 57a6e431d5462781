"""The project's one AUROC and one logit agree with scikit-learn and SciPy on toy data with ties and weights."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logit as scipy_logit
from sklearn.metrics import roc_auc_score

from audit_core.logistic import EPS_LOGIT, logit
from audit_core.metrics import auroc, auroc_by_row


def _toy(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = np.round(rng.normal(size=n) + 0.8 * y, 1)  # one decimal: many ties, also across classes
    w = rng.gamma(2.0, size=n)
    return y, score, w


@pytest.mark.parametrize("seed", range(5))
def test_auroc_equals_sklearn_with_ties_and_weights(seed):
    y, s, w = _toy(seed)
    assert len(np.unique(s)) < len(s) / 3
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc(y, s, sample_weight=w) == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)


def test_auroc_by_hand_on_a_tie_across_classes():
    # pairs (pos, neg): 0.5 vs 0.5 is a tie (1/2), 0.9 beats both negatives, 0.5 beats 0.1: (1/2 + 1 + 1 + 1) / 4
    assert auroc([1, 1, 0, 0], [0.5, 0.9, 0.5, 0.1]) == pytest.approx(3.5 / 4)
    # weight 3 on the tied negative: (3/2 + 3 + 1 + 1) / (2 * 4)
    assert auroc([1, 1, 0, 0], [0.5, 0.9, 0.5, 0.1], sample_weight=[1, 1, 3, 1]) == pytest.approx(6.5 / 8)


def test_auroc_by_row_equals_sklearn_row_by_row_and_the_scalar_exactly():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, (6, 80))
    S = np.round(rng.normal(size=(3, 6, 80)), 1)
    got = auroc_by_row(y[None], S)
    assert got.shape == (3, 6)
    for i in range(3):
        for j in range(6):
            assert got[i, j] == pytest.approx(roc_auc_score(y[j], S[i, j]), abs=1e-12)
            assert got[i, j] == auroc(y[j], S[i, j])  # the same arithmetic, to the bit
    one_class = auroc_by_row(np.ones((1, 5)), np.arange(5.0)[None])
    assert np.isnan(one_class).all()
    assert np.isnan(auroc_by_row([[0, 1, 1]], [[0.1, np.nan, 0.3]])).all()


def test_logit_equals_scipy_inside_the_clip_and_clips_outside():
    p = np.array([1e-6, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-6])
    assert np.allclose(logit(p), scipy_logit(p), rtol=1e-12, atol=1e-12)
    edge = logit([0.0, 1.0])
    assert np.isfinite(edge).all()
    assert edge == pytest.approx(scipy_logit([EPS_LOGIT, 1 - EPS_LOGIT]), rel=1e-9)
    assert logit(np.full((2, 3), 0.5)).shape == (2, 3)


def test_the_logistic_fit_equals_sklearn_unpenalised_with_weights():
    from sklearn.linear_model import LogisticRegression

    from audit_core.logistic import fit_logistic, fit_logistic_1d

    rng = np.random.default_rng(3)
    n = 400
    X = rng.normal(size=(n, 2))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.3 + X @ [1.2, -0.7])))).astype(float)
    w = rng.gamma(2.0, size=n)
    peer = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(X, y, sample_weight=w)
    got = fit_logistic(X, y, w)
    assert got == pytest.approx(np.r_[peer.intercept_, peer.coef_[0]], abs=1e-6)
    # batched over weight rows, row by row the same fit (a row that has converged may take one more step)
    W = np.stack([w, np.ones(n)])
    both = fit_logistic(X, y, W)
    assert both.shape == (2, 3)
    assert both[0] == pytest.approx(got, rel=1e-12) and both[1] == pytest.approx(fit_logistic(X, y, np.ones(n)), rel=1e-12)
    # the one-feature entry is the same fit
    a, b = fit_logistic_1d(X[:, 0], y, w)
    assert np.array_equal([a, b], fit_logistic(X[:, :1], y, w))
    # without an intercept, and separated data (no MLE) give nan
    assert fit_logistic(X[:, :1], y, w, intercept=False).shape == (1,)
    assert np.isnan(fit_logistic_1d(np.arange(6.0), np.array([0, 0, 0, 1, 1, 1.0]), np.ones(6))).all()
