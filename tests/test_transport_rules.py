"""Selective, conformal, verdict and stress building blocks: hand-computed toys
and a real statistical test of split-conformal coverage."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from audit_core.metrics import METRICS
from audit_core.transport import conformal as cf
from audit_core.transport import selective as sl
from audit_core.transport.bootstrap import BatchedMetrics, stratified_counts
from audit_core.transport.splits import four_way_split
from audit_core.transport.stress import (
    corrupt,
    decomposition,
    mcar_fixed_count,
    oracle_replace,
    percentile_within,
)
from audit_core.transport.verdicts import classify_change


# ------------------------------------------------------------ selective
def test_threshold_hand():
    # c = 0.6, 0.7, 0.8, 0.9; s = 0.5 -> W(c>=0.8)=2/4 >= .5, W(c>=0.9)=1/4 < .5 -> tau = 0.8
    assert sl.selection_threshold(np.array([0.6, 0.7, 0.8, 0.9]), 0.5) == 0.8
    # s = 0.8 -> W(c>=0.7)=3/4 < .8, W(c>=0.6)=1 -> tau = 0.6
    assert sl.selection_threshold(np.array([0.6, 0.7, 0.8, 0.9]), 0.8) == 0.6


def test_threshold_ties_and_weights():
    # c = 0.7, 0.8, 0.8, 0.9 ; s = 0.5: W(c>=0.9)=1/4, W(c>=0.8)=3/4 (ties enter together) -> 0.8
    assert sl.selection_threshold(np.array([0.7, 0.8, 0.8, 0.9]), 0.5) == 0.8
    # weights 1,1,1,5 (total 8): W(c>=0.9)=5/8 >= 0.5 -> 0.9
    assert sl.selection_threshold(np.array([0.7, 0.8, 0.8, 0.9]), 0.5, sample_weight=np.array([1, 1, 1, 5.0])) == 0.9


def test_selective_stats_hand():
    # p: 0.95 (y1 ok), 0.1 (y1 wrong, c=.9), 0.85 (y0 wrong), 0.6 (y1 ok, c=.6)
    y = np.array([1, 1, 0, 1])
    p = np.array([0.95, 0.1, 0.85, 0.6])
    st = sl.selective_stats(y, p, 0.8)
    # selected: c = .95, .9, .85 -> rate 3/4; errors among them: 2 -> risk 2/3; hcep = 2/4
    assert st["rate"] == pytest.approx(0.75)
    assert st["risk"] == pytest.approx(2 / 3)
    assert st["hcep"] == pytest.approx(0.5)
    st = sl.selective_stats(y, p, 0.99)
    assert st["rate"] == 0 and math.isnan(st["risk"]) and st["hcep"] == 0


def test_aurc_hand_stable_ties():
    # confidences 0.9, 0.9, 0.6 with errors [1, 0, 0] in input order.
    # stable sort keeps input order among ties: risks 1/1, 1/2, 1/3 -> AURC = (1 + .5 + 1/3)/3 = 11/18
    y = np.array([0, 1, 1])
    p = np.array([0.9, 0.9, 0.6])
    assert sl.aurc(y, p) == pytest.approx(11 / 18)
    # correct-first: risks 0, 0, 1/3 -> 1/9; excess = 11/18 - 2/18 = 1/2
    assert sl.excess_aurc(y, p) == pytest.approx(0.5)
    cov, risk = sl.risk_selection_curve(y, p)
    np.testing.assert_allclose(cov, [1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(risk, [1, 0.5, 1 / 3])


# ------------------------------------------------------------ conformal
def _independent_quantile(scores, alpha):
    # written from the formula: k = ceil((n+1)(1-alpha)), q = k-th smallest; infinite when k > n
    n = len(scores)
    k = int(np.ceil((n + 1) * (1 - alpha) - 1e-9))
    return float("inf") if k > n else sorted(scores)[k - 1]


def test_conformal_quantile_hand_with_ties():
    s = [0.2, 0.1, 0.4, 0.4, 0.3, 0.4, 0.05, 0.2, 0.6]  # n = 9
    # alpha .1: k = min(9, ceil(10*.9)=9) = 9 -> largest = 0.6
    assert cf.conformal_quantile(np.array(s), 0.1) == 0.6
    # alpha .2: k = ceil(10*.8) = 8 -> sorted .05 .1 .2 .2 .3 .4 .4 .4 .6 -> 8th = 0.4
    assert cf.conformal_quantile(np.array(s), 0.2) == 0.4
    # alpha .5: k = ceil(5) = 5 -> 0.3
    assert cf.conformal_quantile(np.array(s), 0.5) == 0.3
    for a in (0.05, 0.1, 0.2, 0.33, 0.5):
        assert cf.conformal_quantile(np.array(s), a) == _independent_quantile(s, a)
    # alpha .05: k = ceil(10*.95) = 10 > 9: no order statistic is high enough -> q = inf
    # (it was clamped to the largest score, 0.6, which loses the guarantee; this assertion failed then)
    assert cf.conformal_quantile(np.array(s), 0.05) == float("inf")


def test_small_calibration_class_is_in_every_set_and_noted():
    # class 1 has 5 calibration records: at alpha .1, k = ceil(6 * .9) = 6 > 5 -> q_1 = inf
    rng = np.random.default_rng(3)
    p = np.r_[rng.uniform(0.0, 0.6, 60), rng.uniform(0.3, 0.9, 5)]
    y = np.r_[np.zeros(60, int), np.ones(5, int)]
    q = cf.calibrate(y, p, 0.1)
    assert math.isinf(q["label_conditional"][1]) and math.isfinite(q["label_conditional"][0])
    sets = cf.prediction_sets(np.array([0.0, 0.01, 0.5, 1.0]), q["label_conditional"])
    assert sets[:, 1].all()  # class 1 in every set, even at p = 0
    assert cf.unbounded(q["label_conditional"]).tolist() == [False, True]
    from audit_core.transport.evaluation import Rules

    rows = Rules({}, {0.1: q}, ()).rows()
    flags = {r["metric"]: r["value"] for r in rows if r["metric"].endswith("_unbounded")}
    assert flags == {"qhat_unbounded": 0.0, "qhat_class0_unbounded": 0.0, "qhat_class1_unbounded": 1.0}
    # the guarantee at 5 records: a class always in the set is always covered
    rep = cf.set_report(np.ones(50, int), cf.prediction_sets(rng.uniform(size=50), q["label_conditional"]))
    assert rep["coverage_class1"] == 1.0


def test_marginal_and_class_quantiles_match_independent_computation():
    # hand-made probabilities with repeated values -> tied scores
    y = np.array([1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1])
    p = np.array([0.9, 0.7, 0.7, 0.2, 0.4, 0.4, 0.3, 0.8, 0.7, 0.2, 0.6])
    # scores 1 - p_y: y=1 -> 1-p ; y=0 -> p
    s = np.where(y == 1, 1 - p, p)
    q = cf.calibrate(y, p, 0.2)
    assert q["marginal"] == pytest.approx(_independent_quantile(list(s), 0.2))
    for c in (0, 1):
        assert q["label_conditional"][c] == pytest.approx(_independent_quantile(list(s[y == c]), 0.2))
    # by hand: class-1 scores .1 .3 .3 .7 .3 .4 (n=6), alpha .2: k = ceil(7*.8)=ceil(5.6)=6 -> .7
    assert q["label_conditional"][1] == pytest.approx(0.7)
    # class-0 scores .2 .4 .4 .8 .2 (n=5), k = ceil(6*.8)=ceil(4.8)=5 -> .8
    assert q["label_conditional"][0] == pytest.approx(0.8)


def test_sets_include_ties_no_randomisation():
    # qhat = 0.3: class 1 in set iff 1-p <= .3 (p >= .7); class 0 iff p <= .3
    p = np.array([0.7, 0.3, 0.5, 0.95])
    sets = cf.prediction_sets(p, 0.3)
    assert sets.tolist() == [[False, True], [True, False], [False, False], [False, True]]
    # qhat = 0.5 -> p = 0.5 gets both classes (tie included)
    assert cf.prediction_sets(np.array([0.5]), 0.5).tolist() == [[True, True]]


def test_set_report_hand():
    y = np.array([1, 0, 1, 0])
    sets = np.array([[False, True], [True, True], [False, False], [False, True]])
    rep = cf.set_report(y, sets, sample_weight=np.array([1, 1, 1, 3.0]))
    # covered: yes, yes, no, no -> 2/4 ; weighted (1+1)/6
    assert rep["coverage"] == 0.5 and rep["coverage_weighted"] == pytest.approx(2 / 6)
    assert rep["mean_set_size"] == pytest.approx((1 + 2 + 0 + 1) / 4)
    assert (rep["singleton_rate"], rep["two_class_rate"], rep["empty_rate"]) == (0.5, 0.25, 0.25)
    # class 1 records: #0 covered, #2 not -> 1/2; class 0: #1 covered, #3 not -> 1/2
    assert rep["coverage_class1"] == 0.5 and rep["coverage_class0"] == 0.5
    # singleton {1}: records 0 (y=1) and 3 (y=0) -> accuracy 1/2; no singleton {0}
    assert rep["singleton_accuracy_class1"] == 0.5 and math.isnan(rep["singleton_accuracy_class0"])


def test_marginal_coverage_inside_beta_binomial_band():
    """200 seeded trials on exchangeable data: the total covered count must lie
    in the exact finite-sample band of its Beta-binomial distribution."""
    n_cal, n_test, alpha, trials = 99, 100, 0.1, 200
    k = min(n_cal, math.ceil((n_cal + 1) * (1 - alpha)))  # 90
    # with continuous scores the conditional coverage is Beta(k, n+1-k), so the
    # covered count of one trial is BetaBinomial(n_test, k, n_cal + 1 - k)
    bb = stats.betabinom(n_test, k, n_cal + 1 - k)
    total = 0
    per_trial_outside = 0
    lo1, hi1 = bb.ppf(0.005), bb.ppf(0.995)
    for t in range(trials):
        rng = np.random.default_rng(1000 + t)
        p = rng.uniform(size=n_cal + n_test)
        y = (rng.uniform(size=n_cal + n_test) < p).astype(int)
        q = cf.calibrate(y[:n_cal], p[:n_cal], alpha)["marginal"]
        cnt = int(cf.set_report(y[n_cal:], cf.prediction_sets(p[n_cal:], q))["coverage"] * n_test + 0.5)
        total += cnt
        per_trial_outside += not (lo1 <= cnt <= hi1)
    mean, var = bb.mean() * trials, bb.var() * trials
    z = (total - mean) / math.sqrt(var)
    assert abs(z) < 3.5, (total, mean, z)
    # each trial falls outside its 99% band about 1% of the time
    assert per_trial_outside <= 8
    # and the guarantee itself: mean coverage >= 1 - alpha - 3.5 SD
    assert total / (trials * n_test) >= 1 - alpha - 3.5 * math.sqrt(var) / (trials * n_test)


def test_label_conditional_coverage_per_class():
    alpha, trials = 0.2, 100
    cov = {0: [], 1: []}
    for t in range(trials):
        rng = np.random.default_rng(5000 + t)
        n = 300
        p = rng.beta(2, 5, size=n)
        y = (rng.uniform(size=n) < p).astype(int)
        q = cf.calibrate(y[:150], p[:150], alpha)["label_conditional"]
        rep = cf.set_report(y[150:], cf.prediction_sets(p[150:], q))
        cov[0].append(rep["coverage_class0"])
        cov[1].append(rep["coverage_class1"])
    for c in (0, 1):
        # per-class guarantee >= 1 - alpha; mean over trials within noise
        assert np.nanmean(cov[c]) >= 1 - alpha - 0.03


# ------------------------------------------------------------ bootstrap
def test_batched_metrics_equal_registry():
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    p = np.clip(np.round(0.3 * y + rng.uniform(0, 0.7, n), 2), 0.01, 0.99)
    W = stratified_counts(y, 4, rng) * rng.uniform(0.5, 2, n)
    out = BatchedMetrics(y, p).compute(W)
    for b in range(4):
        for name, f in METRICS.items():
            assert out[name][b] == pytest.approx(f(y, p, sample_weight=W[b]), rel=1e-7, abs=1e-9), name


def test_stratified_counts_keep_class_counts():
    y = np.array([0] * 7 + [1] * 3)
    C = stratified_counts(y, 50, np.random.default_rng(1))
    assert (C[:, y == 0].sum(axis=1) == 7).all() and (C[:, y == 1].sum(axis=1) == 3).all()


# ------------------------------------------------------------ verdicts, stress
def test_verdicts_hand():
    assert classify_change(-0.01, 0.01, 0.02) == "transport-stable"
    assert classify_change(0.03, 0.05, 0.02) == "transport-sensitive"
    assert classify_change(-0.05, -0.021, 0.02) == "transport-sensitive"
    assert classify_change(0.01, 0.03, 0.02) == "indeterminate"
    assert classify_change(float("nan"), 0.0, 0.02) == "indeterminate"


def test_decomposition_hand():
    # M_UU=.8, M_UC=.7, M_CU=.6, M_CC=.75
    # D_Y = ½[(.8-.6)+(.7-.75)] = ½[.2-.05] = .075 ; D_P = ½[(.8-.7)+(.6-.75)] = ½[.1-.15] = -.025
    dy, dp = decomposition(0.8, 0.7, 0.6, 0.75)
    assert dy == pytest.approx(0.075) and dp == pytest.approx(-0.025)


def test_percentile_within_hand():
    # 2 below, 1 tie, of 5 -> (2 + .5)/5 = 50%
    assert percentile_within(0.5, np.array([0.1, 0.2, 0.5, 0.7, 0.9])) == 50.0


def _toy_frame(n=500, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.integers(0, 10, n), "c": rng.normal(size=n),
        "k": rng.choice(["x", "y", "z"], n),
    })


def test_mcar_exactly_m_missing_per_record():
    X = _toy_frame()
    out = mcar_fixed_count(X, ["a", "b", "c", "k"], 2, np.random.default_rng(0))
    assert (out.isna().sum(axis=1) == 2).all()


def test_corruption_properties():
    X = _toy_frame(2000)
    out = corrupt(X, X, ["a", "b"], ["k"], rate=0.2, sd=0.2, rng=np.random.default_rng(1))
    changed = (out["a"] != X["a"]).mean()
    assert 0.15 < changed < 0.25
    assert out["a"].between(X["a"].min(), X["a"].max()).all()
    assert (out["b"] == np.round(out["b"])).all()  # integer column rounded
    kc = out["k"] != X["k"]
    assert 0.15 < kc.mean() < 0.25  # a *different* category each time it is hit


def test_oracle_uses_opposite_class_donors():
    X = _toy_frame(300)
    y = np.random.default_rng(2).integers(0, 2, 300)
    train = _toy_frame(300, seed=9)
    ytr = np.r_[np.zeros(150, int), np.ones(150, int)]
    train["a"] = np.where(ytr == 1, 100.0, -100.0)  # donor class visible in the value
    out = oracle_replace(X, y, train, ytr, ["a"], rate=0.3, rng=np.random.default_rng(3))
    hit = out["a"].abs() == 100
    assert 0.2 < hit.mean() < 0.4
    assert ((out["a"][hit] > 0) == (y[hit.to_numpy()] == 0)).all()


def test_four_way_split_grouped_and_stratified():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 2000)
    g = rng.integers(0, 300, 2000)
    p = four_way_split(y, groups=g, seed=3)
    assert pd.Series(p).groupby(g).nunique().max() == 1
    share = np.bincount(p, minlength=4) / 2000
    np.testing.assert_allclose(share, [0.6, 0.15, 0.10, 0.15], atol=0.03)
    p2 = four_way_split(y, seed=3)
    for c in (0, 1):
        np.testing.assert_allclose(np.bincount(p2[y == c], minlength=4) / (y == c).sum(), [0.6, 0.15, 0.1, 0.15], atol=0.003)


def test_batched_metrics_presorted_path_equals_registry():
    # records passed in score order take the no-gather path; ties included
    rng = np.random.default_rng(4)
    n = 300
    y = rng.integers(0, 2, n)
    p = np.clip(np.round(0.3 * y + rng.uniform(0, 0.7, n), 2), 0.01, 0.99)
    o = np.argsort(p, kind="stable")
    y, p = y[o], p[o]
    W = stratified_counts(y, 3, rng)
    bm = BatchedMetrics(y, p)
    assert bm.presorted
    out = bm.compute(W)
    for b in range(3):
        for name, f in METRICS.items():
            assert out[name][b] == pytest.approx(f(y, p, sample_weight=W[b]), rel=1e-7, abs=1e-9), name


@pytest.mark.parametrize("name", ["selective", "conformal", "verdicts", "stress", "cells"])
def test_transport_doctests(name):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(f"audit_core.transport.{name}"))
    assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize("presorted", [True, False])
def test_batched_metrics_untied_fast_path_equals_registry(presorted):
    # continuous scores: no ties, so AUROC/AP take the positives-only cumulative-sum path
    rng = np.random.default_rng(11)
    n = 2000
    x = rng.normal(0, 1.5, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x))).astype(int)
    p = 1 / (1 + np.exp(-(0.8 * x + 0.2)))
    if presorted:
        o = np.argsort(p, kind="stable")
        y, p = y[o], p[o]
    bm = BatchedMetrics(y, p)
    assert bm.presorted == presorted and len(bm.starts) == n
    W = stratified_counts(y, 5, rng) * rng.uniform(0.5, 2, n)
    out = bm.compute(W)
    for b in range(5):
        for name, f in METRICS.items():
            assert out[name][b] == pytest.approx(f(y, p, sample_weight=W[b]), rel=1e-7, abs=1e-9), name


def test_taylor_start_gives_the_same_calibration_fit_as_plain_newton():
    from audit_core.transport.bootstrap import _newton_warm

    rng = np.random.default_rng(12)
    n = 5000
    x = rng.normal(0, 2, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.3 + 0.7 * x)))).astype(int)
    p = 1 / (1 + np.exp(-x))
    bm = BatchedMetrics(y, p)
    W = stratified_counts(y, 16, rng)
    out = bm.compute(W)
    a, b = _newton_warm(bm.x, bm.y, W, bm.start, steps=50, tol=1e-12)  # plain Newton from the full-sample fit
    assert np.allclose(out["calibration_intercept"], a, rtol=0, atol=1e-9)
    assert np.allclose(out["calibration_slope"], b, rtol=0, atol=1e-9)
