"""Tests for audit_core.metrics: hand-computed toys, agreement with
scikit-learn, and one property test across the whole registry."""
from __future__ import annotations

import doctest
import math

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve

import audit_core.metrics as am
from audit_core.errors import AuditInputError
from audit_core.transport.verdicts import GOOD_DIRECTION
from audit_core.metrics import (
    METRICS,
    auroc,
    average_precision,
    brier_score,
    calibration_bins,
    calibration_intercept_slope,
    expected_calibration_error,
    log_loss,
    pr_skill,
    prevalence,
)

# ---------------------------------------------------------------- toy data
# y = [0, 0, 1, 1, 1], p = [0.1, 0.6, 0.4, 0.6, 0.9]
Y = np.array([0, 0, 1, 1, 1])
P = np.array([0.1, 0.6, 0.4, 0.6, 0.9])


def test_doctests():
    res = doctest.testmod(am)
    assert res.failed == 0 and res.attempted > 0


def test_prevalence_hand():
    # 3 positives of 5 -> 0.6; with weights [1,1,1,1,4]: (1+1+4)/8 = 0.75
    assert prevalence(Y, P) == pytest.approx(0.6)
    assert prevalence(Y, P, sample_weight=[1, 1, 1, 1, 4]) == pytest.approx(0.75)


def test_auroc_hand_with_tie():
    # pairs (pos, neg): negatives 0.1, 0.6; positives 0.4, 0.6, 0.9
    # 0.4>0.1 yes, 0.4>0.6 no; 0.6>0.1 yes, 0.6 vs 0.6 tie=1/2; 0.9 beats both
    # (1 + 0 + 1 + 0.5 + 1 + 1) / 6 = 4.5/6 = 0.75
    assert auroc(Y, P) == pytest.approx(0.75)


def test_average_precision_hand_with_tie():
    # thresholds desc: 0.9 -> TP1 FP0 (P=1, R=1/3); 0.6 (tie: one pos one neg)
    # -> TP2 FP1 (P=2/3, R=2/3); 0.4 -> TP3 FP1 (P=3/4, R=1); 0.1 -> R unchanged
    # AP = 1/3*1 + 1/3*2/3 + 1/3*3/4 = (12 + 8 + 9)/36 = 29/36
    assert average_precision(Y, P) == pytest.approx(29 / 36)


def test_pr_skill_hand():
    # (29/36 - 0.6) / 0.4 = (29/36 - 21.6/36)/0.4 = (7.4/36)/0.4 = 0.513888...
    assert pr_skill(Y, P) == pytest.approx((29 / 36 - 0.6) / 0.4)


def test_brier_hand():
    # (0.01 + 0.36 + 0.36 + 0.16 + 0.01) / 5 = 0.9/5 = 0.18
    assert brier_score(Y, P) == pytest.approx(0.18)


def test_log_loss_hand():
    # -(ln .9 + ln .4 + ln .4 + ln .6 + ln .9)/5
    expect = -(2 * math.log(0.9) + 2 * math.log(0.4) + math.log(0.6)) / 5
    assert log_loss(Y, P) == pytest.approx(expect)


def test_ece_hand():
    # 2 bins (0, .5], (.5, 1]: bin0 = {0.1 (y0), 0.4 (y1)}: mean p .25, mean y .5
    # bin1 = {0.6 (y0), 0.6 (y1), 0.9 (y1)}: mean p 0.7, mean y 2/3
    # ECE = 2/5*0.25 + 3/5*(0.7-2/3) = 0.1 + 0.02 = 0.12
    assert expected_calibration_error(Y, P, n_bins=2) == pytest.approx(0.12)


def test_ece_edge_goes_to_lower_bin():
    # p = 0.5 exactly belongs to bin (0, .5] like calibration_curve
    tab = calibration_bins([1], [0.5], n_bins=2)
    assert tab["count"].tolist() == [1, 0]


def test_calibration_intercept_slope_perfect():
    # data generated exactly from p: the MLE on the expected counts is a=0, b=1.
    # Use weights equal to the expected counts: for each p, a record y=1 with
    # weight p and a record y=0 with weight 1-p.
    p = np.array([0.2, 0.5, 0.7, 0.9])
    y = np.r_[np.ones(4), np.zeros(4)]
    pp = np.r_[p, p]
    w = np.r_[p, 1 - p]
    a, b = calibration_intercept_slope(y, pp, sample_weight=w)
    assert a == pytest.approx(0.0, abs=1e-8)
    assert b == pytest.approx(1.0, abs=1e-8)


def test_calibration_separation_is_nan():
    a, b = calibration_intercept_slope([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8])
    assert math.isnan(a) and math.isnan(b)


def test_one_class_gives_nan():
    assert math.isnan(auroc([1, 1], [0.2, 0.3]))
    assert math.isnan(pr_skill([1, 1], [0.2, 0.3]))


# ------------------------------------------------ agreement with sklearn
@pytest.fixture(scope="module")
def rand():
    rng = np.random.default_rng(7)
    n = 3000
    y = rng.integers(0, 2, n)
    p = np.clip(np.round(rng.uniform(0, 1, n), 2), 0.01, 0.99)  # rounding creates ties
    w = rng.uniform(0.1, 3.0, n)
    return y, p, w


@pytest.mark.parametrize("weighted", [False, True])
def test_agree_with_sklearn(rand, weighted):
    y, p, w = rand
    sw = w if weighted else None
    assert auroc(y, p, sample_weight=sw) == pytest.approx(skm.roc_auc_score(y, p, sample_weight=sw), abs=1e-12)
    assert average_precision(y, p, sample_weight=sw) == pytest.approx(
        skm.average_precision_score(y, p, sample_weight=sw), abs=1e-12
    )
    assert brier_score(y, p, sample_weight=sw) == pytest.approx(
        skm.brier_score_loss(y, p, sample_weight=sw), abs=1e-12
    )
    assert log_loss(y, p, sample_weight=sw) == pytest.approx(skm.log_loss(y, p, sample_weight=sw), abs=1e-12)


def test_ece_bins_match_calibration_curve(rand):
    y, p, _ = rand
    prob_true, prob_pred = calibration_curve(y, p, n_bins=15, strategy="uniform")
    tab = calibration_bins(y, p, n_bins=15)
    nonempty = tab[tab["count"] > 0]
    np.testing.assert_allclose(nonempty["frac_pos"], prob_true, atol=1e-12)
    np.testing.assert_allclose(nonempty["mean_p"], prob_pred, atol=1e-12)
    expect = float((nonempty["count"] / len(y) * (nonempty["frac_pos"] - nonempty["mean_p"]).abs()).sum())
    assert expected_calibration_error(y, p) == pytest.approx(expect, abs=1e-12)


def test_intercept_slope_agree_with_sklearn_unpenalised(rand):
    from sklearn.linear_model import LogisticRegression

    y, p, w = rand
    rng = np.random.default_rng(3)
    x = rng.normal(size=len(y))
    q = 1 / (1 + np.exp(-x))
    yy = (rng.uniform(size=len(y)) < 1 / (1 + np.exp(-(0.3 + 0.7 * x)))).astype(int)
    a, b = calibration_intercept_slope(yy, q, sample_weight=w)
    m = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(x[:, None], yy, sample_weight=w)
    assert a == pytest.approx(m.intercept_[0], abs=1e-6)
    assert b == pytest.approx(m.coef_[0, 0], abs=1e-6)


# ------------------------------------------- registry-wide properties
#: each registered metric must be classified here.
ORDER_INVARIANT = set(METRICS)
WEIGHT_AWARE = set(METRICS)
#: a test statistic is not a mean: a record of weight 2 is not the evidence of two records (its null
#: variance takes the squared weights), so Spiegelhalter's z is left out of the repetition property.
REPETITION_INVARIANT = set(METRICS) - {"spiegelhalter_z"}
REFUSES_NONFINITE = set(METRICS)
PROBABILITY_FREE = {"prevalence"}


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.clip(0.3 * y + rng.uniform(0, 0.7, n), 0.01, 0.99)
    return y, p


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", sorted(ORDER_INVARIANT))
def test_sample_order_invariance(name):
    f = METRICS[name]
    y, p = _data()
    perm = np.random.default_rng(1).permutation(len(y))
    assert _close(f(y, p), f(y[perm], p[perm]))
    w = np.random.default_rng(2).uniform(0.5, 2, len(y))
    assert _close(f(y, p, sample_weight=w), f(y[perm], p[perm], sample_weight=w[perm]))


@pytest.mark.parametrize("name", sorted(WEIGHT_AWARE))
def test_equal_weights_equal_no_weights(name):
    f = METRICS[name]
    y, p = _data(3)
    assert _close(f(y, p), f(y, p, sample_weight=np.full(len(y), 3.7)))


@pytest.mark.parametrize("name", sorted(REPETITION_INVARIANT))
def test_integer_weights_equal_repetition(name):
    f = METRICS[name]
    y, p = _data(4, n=60)
    w = np.random.default_rng(5).integers(1, 4, len(y))
    assert _close(f(y, p, sample_weight=w), f(np.repeat(y, w), np.repeat(p, w)))


@pytest.mark.parametrize("name", sorted(METRICS))
def test_list_array_series_equivalent(name):
    f = METRICS[name]
    y, p = _data(6)
    ref = f(y, p)
    assert _close(ref, f(y.tolist(), p.tolist()))
    assert _close(ref, f(pd.Series(y), pd.Series(p)))
    assert _close(ref, f(y.astype(bool), p))


@pytest.mark.parametrize("name", sorted(REFUSES_NONFINITE))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["y", "p", "w"])
def test_nonfinite_refused(name, bad, where):
    f = METRICS[name]
    y, p = _data(7, n=20)
    y, p, w = y.astype(float), p.copy(), np.ones(len(y))
    if where == "p" and name in PROBABILITY_FREE:
        # prevalence ignores p's value but still validates it
        pass
    {"y": y, "p": p, "w": w}[where][3] = bad
    with pytest.raises(AuditInputError) as ei:
        f(y, p, sample_weight=w)
    assert ei.value.code == "METRIC_NOT_FINITE"


@pytest.mark.parametrize("name", sorted(METRICS))
def test_multiclass_refused(name):
    with pytest.raises(AuditInputError, match="binary-only"):
        METRICS[name]([0, 1, 2], [0.1, 0.5, 0.9])


def test_every_metric_classified():
    classified = ORDER_INVARIANT & WEIGHT_AWARE & REFUSES_NONFINITE
    assert set(METRICS) == classified, f"unclassified metrics: {set(METRICS) - classified}"
    assert set(METRICS) <= set(GOOD_DIRECTION)
