"""Per-feature shift (PSI, KS, χ², Wasserstein) and the domain classifiers.

Known answers worked by hand on toy data; independent implementations from
the definitions (numpy quantiles + pandas cuts for PSI, scipy for KS, χ² and
Wasserstein); property tests: equal weights equal no weights, integer
weights equal repeated rows, order invariance, NaN handling.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from audit_core.errors import AuditInputError
from audit_core.transport.shift import chi2_test, ks_test, psi, shift_bins, wasserstein, weighted_quantile_edges
from audit_core.transport.shift_link import SHIFT_COLUMNS, feature_shift

FLOOR = 1e-4


# ------------------------------------------------------------------ known answers by hand
def test_psi_categorical_by_hand():
    # shares over (a, b, <missing>): source (1/2, 1/2, 0), target (1/4, 3/4, 0); the empty bin adds 0
    expected = (0.25 - 0.5) * math.log(0.25 / 0.5) + (0.75 - 0.5) * math.log(0.75 / 0.5)
    assert psi(["a", "a", "b", "b"], ["a", "b", "b", "b"], kind="categorical") == pytest.approx(expected, abs=1e-12)


def test_psi_numeric_by_hand_with_missing_bin():
    # source 1..4, two bins: the median edge is 2 -> (-inf, 2], (2, inf), <missing>
    # source shares (2/4, 2/4, 0 -> floor); target [1, 3, 4, nan]: (1/4, 2/4, 1/4)
    codes_s, codes_t, labels = shift_bins([1, 2, 3, 4], [1, 3, 4, np.nan], kind="numeric", n_bins=2)
    assert labels == ["(-inf, 2]", "(2, inf]", "<missing>"]
    assert codes_s.tolist() == [0, 0, 1, 1] and codes_t.tolist() == [0, 1, 1, 2]
    expected = (0.25 - 0.5) * math.log(0.25 / 0.5) + 0.0 + (0.25 - FLOOR) * math.log(0.25 / FLOOR)
    assert psi([1, 2, 3, 4], [1, 3, 4, np.nan], kind="numeric", n_bins=2) == pytest.approx(expected, abs=1e-12)


def test_ks_wasserstein_chi2_by_hand():
    # CDFs of {1,2,3} and {2,3,4} differ by 1/3 on [1,4); the area between them is 3 · 1/3 = 1
    d, _ = ks_test([1, 2, 3], [2, 3, 4])
    assert d == pytest.approx(1 / 3)
    assert wasserstein([1, 2, 3], [2, 3, 4]) == pytest.approx(1.0)
    assert wasserstein([0, 1], [1, 2]) == pytest.approx(1.0)
    # 2x2 table [[3, 1], [1, 3]]: expected 2 everywhere -> χ² = 4 · (1²/2) = 2, dof 1
    stat, p, dof = chi2_test(["a", "a", "a", "b"], ["a", "b", "b", "b"])
    assert (stat, dof) == (pytest.approx(2.0), 1)
    assert p == pytest.approx(stats.chi2.sf(2.0, 1))


def test_weighted_quantile_edges_equal_weights_are_numpy_inverted_cdf():
    x = np.random.default_rng(3).normal(size=101)
    want = np.unique(np.quantile(x, np.arange(1, 10) / 10, method="inverted_cdf"))
    np.testing.assert_array_equal(weighted_quantile_edges(x, np.ones(101), 10), want)


# ------------------------------------------------------------------ independent implementations
def _psi_definition(s, t, n_bins=10):
    """PSI from the definition: numpy inverted-CDF source quantiles, pandas right-closed cuts, missing its own bin."""
    s, t = np.asarray(s, float), np.asarray(t, float)
    edges = np.unique(np.quantile(s[~np.isnan(s)], np.arange(1, n_bins) / n_bins, method="inverted_cdf"))
    bins = np.r_[-np.inf, edges, np.inf]

    def shares(x):
        c = pd.cut(pd.Series(x), bins, right=True).cat.codes.to_numpy()  # NaN -> -1
        c = np.where(c < 0, len(bins) - 1, c)
        return np.bincount(c, minlength=len(bins)) / len(x)

    a, b = np.maximum(shares(s), FLOOR), np.maximum(shares(t), FLOOR)
    return float(np.sum((b - a) * np.log(b / a)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_definitions_and_scipy(seed):
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=400), 1)
    t = np.round(rng.normal(0.3, 1.2, size=300), 1)
    t[:7] = np.nan
    assert psi(s, t, kind="numeric") == pytest.approx(_psi_definition(s, t), abs=1e-12)
    ref = stats.ks_2samp(s, t[7:], method="asymp")
    d, p = ks_test(s, t)
    assert d == pytest.approx(ref.statistic, abs=1e-12) and p == pytest.approx(ref.pvalue, rel=1e-9)
    ws, wt = rng.uniform(0.1, 3, 400), rng.uniform(0.1, 3, 300)
    assert wasserstein(s, t, source_weight=ws, target_weight=wt) == pytest.approx(
        stats.wasserstein_distance(s, t[7:], u_weights=ws, v_weights=wt[7:]), abs=1e-12)
    cs, ct = rng.choice(list("pqrs"), 500), rng.choice(list("pqrst"), 450, p=[.3, .3, .2, .1, .1])
    table = pd.crosstab(np.r_[np.zeros(500), np.ones(450)], np.r_[cs, ct]).to_numpy()
    ref = stats.chi2_contingency(table, correction=False)
    stat, p, dof = chi2_test(cs, ct)
    assert (stat, dof) == (pytest.approx(ref.statistic, rel=1e-12), ref.dof)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)


# ------------------------------------------------------------------ properties
_values = st.lists(st.one_of(st.integers(-5, 5).map(float), st.just(float("nan"))), min_size=3, max_size=40)


def _all(s, t, **kw):
    ks = ks_test(s, t, **kw)
    return (psi(s, t, kind="numeric", n_bins=4, **kw), ks[0], wasserstein(s, t, **kw),
            chi2_test(s, t, **kw)[0], psi(s, t, kind="categorical", **kw))


def _close(a, b):
    for x, y in zip(a, b):
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_values, _values, st.floats(0.01, 50), st.randoms(use_true_random=False))
def test_properties_equal_weights_order_and_repeats(s, t, c, rnd):
    base = _all(s, t)
    _close(_all(s, t, source_weight=np.full(len(s), c), target_weight=np.full(len(t), c)), base)
    ps, pt = list(s), list(t)
    rnd.shuffle(ps)
    rnd.shuffle(pt)
    _close(_all(ps, pt), base)
    # integer weights are repeated rows (for every statistic that does not use the effective size)
    k = np.array([rnd.randint(1, 3) for _ in s])
    rep = np.repeat(np.asarray(s, float), k)
    a = _all(s, t, source_weight=k.astype(float))
    b = _all(rep, t)
    _close([a[0], a[1], a[2], a[4]], [b[0], b[1], b[2], b[4]])


def test_nan_is_its_own_bin_and_left_out_of_ks_and_wasserstein():
    s, t = [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, np.nan, np.nan, 3.0, 4.0]
    assert ks_test(s, t)[0] == 0.0 and wasserstein(s, t) == 0.0
    assert psi(s, t, kind="numeric", n_bins=2) > 0.5  # a third of the target is missing, none of the source
    assert all(math.isnan(v) for v in ks_test(s, [np.nan, np.nan])) and math.isnan(wasserstein(s, [np.nan]))


def test_bad_weights_refused_with_message():
    with pytest.raises(AuditInputError, match="expected 3 finite non-negative weights"):
        psi([1, 2, 3], [1, 2], kind="numeric", source_weight=[1, -1, 1])


# ------------------------------------------------------------------ domain classifiers and ranking
def _domains(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    s = pd.DataFrame({"same": rng.normal(size=n), "moved": rng.normal(size=n), "cat": rng.choice(list("abc"), n),
                      "split": rng.uniform(0, 1, n)})
    t = pd.DataFrame({"same": rng.normal(size=n), "moved": rng.normal(1.0, size=n),
                      "cat": rng.choice(list("abc"), n, p=[.6, .3, .1]), "split": rng.uniform(2, 3, n)})
    return s, t


def test_feature_shift_ranks_and_domain_aurocs():
    s, t = _domains()
    r = feature_shift(s, t, numeric=["same", "moved", "split"], categorical=["cat"], seed=1, n_folds=3)
    assert tuple(r.table.columns) == SHIFT_COLUMNS
    assert r.top(2) == ["split", "moved"] and r.table["feature"].iloc[-1] == "same"
    auc = r.table.set_index("feature")["domain_auroc"]
    assert auc["split"] == pytest.approx(1.0, abs=2e-3)  # disjoint ranges: separable (held-out extremes aside)
    assert abs(auc["same"] - 0.5) < 0.05  # same distribution: chance
    assert 0.6 < auc["moved"] < 0.8  # unit mean shift: Φ(1/√2) ≈ 0.76 for the best univariate rule
    assert r.domain_auroc == pytest.approx(1.0, abs=1e-3) and len(r.fold_auroc) == 3
    again = feature_shift(s, t, numeric=["same", "moved", "split"], categorical=["cat"], seed=1, n_folds=3)
    pd.testing.assert_frame_equal(r.table, again.table)
    assert r.table.set_index("feature").loc["cat", "test"] == "chi2"


def test_joint_classifier_sees_an_interaction_the_marginals_miss():
    # the same marginals in both domains, but x and z are equal in the source and independent in the target
    rng = np.random.default_rng(5)
    x = rng.normal(size=2000)
    s = pd.DataFrame({"x": x, "z": x})
    t = pd.DataFrame({"x": rng.normal(size=2000), "z": rng.normal(size=2000)})
    r = feature_shift(s, t, numeric=["x", "z"], n_folds=3)
    assert r.table["domain_auroc"].max() < 0.56
    assert r.domain_auroc > 0.8


def test_unknown_feature_named():
    s, t = _domains(50)
    with pytest.raises(AuditInputError, match="The feature column 'moved' is not in the target table"):
        feature_shift(s, t.drop(columns="moved"), numeric=["same", "moved"], classifier=False)
