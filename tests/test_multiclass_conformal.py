"""Multi-class conformal sets (LAC, APS, RAPS; marginal and by class): by hand, and against MAPIE (peer oracle)."""
from __future__ import annotations

import numpy as np
import pytest
from mapie.classification import SplitConformalClassifier  # test-only peer oracle, pinned in requirements-test.txt
from mapie.conformity_scores.sets.aps import APSConformityScore
from mapie.conformity_scores.sets.raps import RAPSConformityScore
from mapie.utils import _compute_classification_quantile
from sklearn.base import BaseEstimator, ClassifierMixin

from audit_core.errors import AuditInputError
from audit_core.transport import conformal as bcf
from audit_core.transport.multiclass.conformal import (
    ScoreSpec,
    calibrate,
    class_scores,
    prediction_sets,
    set_report,
    true_scores,
)

LAC, APS = ScoreSpec("lac"), ScoreSpec("aps")
P3 = np.array([[0.5, 0.3, 0.2], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7]])


# ------------------------------------------------------------------ by hand
def test_scores_by_hand():
    y = np.array([1, 1, 0])
    assert true_scores(y, P3, LAC) == pytest.approx([0.7, 0.6, 0.9])
    # APS: mass down to and including the true class' tie block: .5+.3; the tie .4/.4 counts whole; .7+.2+.1
    assert true_scores(y, P3, APS) == pytest.approx([0.8, 0.8, 1.0])
    # RAPS k_reg = 1, λ = 0.1: + λ (rank − 1)⁺ with ranks 2, 2 (tie block), 3
    assert true_scores(y, P3, ScoreSpec("raps", k_reg=1, lam=0.1)) == pytest.approx([0.9, 0.9, 1.2])
    # the inclusion statistic is the regularised mass strictly above each class
    A, _ = class_scores(P3, ScoreSpec("raps", k_reg=1, lam=0.1))
    assert A[0] == pytest.approx([0.0, 0.5, 0.8 + 0.1])
    assert A[1] == pytest.approx([0.0, 0.0, 0.8 + 0.1])


def test_sets_by_hand():
    # APS with q̂ = 0.6: row 0 needs .5 then .3 (mass above class 1 is .5 < .6, above class 2 is .8): {0, 1};
    # row 1: both tied classes (mass above 0), class 2 has .8 above: {0, 1}; row 2: .7 ≥ .6 already: {2}
    assert prediction_sets(P3, 0.6, APS).tolist() == [[True, True, False], [True, True, False], [False, False, True]]
    # LAC with q̂ = 0.6: classes with p ≥ 0.4 (the tie 1 − 0.4 = 0.6 included)
    assert prediction_sets(P3, 0.6, LAC).tolist() == [[True, False, False], [True, True, False], [False, False, True]]
    # class-conditional q̂ per class
    assert prediction_sets(P3, np.array([0.6, 0.0, np.inf]), LAC).tolist() == [
        [True, False, True], [True, False, True], [False, False, True]]


def test_quantile_rule_and_unbounded():
    y = np.array([0, 1, 2, 1])
    P = np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1]])
    # LAC scores .4, .3, .6, .6; α = 0.2: k = ⌈5·0.8⌉ = 4 → q̂ = .6; α = 0.1: k = 5 > 4 → ∞
    assert calibrate(y, P, 0.2, LAC)["marginal"] == pytest.approx(0.6)
    assert calibrate(y, P, 0.1, LAC)["marginal"] == np.inf
    assert prediction_sets(P, np.inf, APS).all() and prediction_sets(P, np.inf, LAC).all()
    # class-conditional: one record of class 0 and of class 2 → k = ⌈2·0.8⌉ = 2 > 1 → ∞; class 1: .3, .6, k = ⌈3·.8⌉ = 3 > 2
    assert np.isinf(calibrate(y, P, 0.2, LAC)["label_conditional"]).all()


def test_report_by_hand():
    y = np.array([0, 1, 2, 1])
    sets = np.array([[1, 0, 0], [1, 0, 1], [0, 0, 1], [0, 1, 1]], dtype=bool)
    r = set_report(y, sets, sample_weight=np.array([1.0, 3.0, 1.0, 1.0]))
    assert r["coverage"] == 0.75 and r["coverage_weighted"] == 0.5
    assert r["coverage_class1"] == 0.5 and r["coverage_class0"] == 1.0 and r["worst_class_coverage"] == 0.5
    assert r["mean_set_size"] == 1.5 and r["mean_set_size_class1"] == 2.0 and r["singleton_rate"] == 0.5


def test_two_class_lac_equals_the_binary_sets():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 500)
    y = (rng.uniform(size=500) < p).astype(int)
    P = np.column_stack([1 - p, p])
    for a in (0.05, 0.1, 0.2):
        q, qb = calibrate(y[:300], P[:300], a, LAC), bcf.calibrate(y[:300], p[:300], a)
        assert q["marginal"] == qb["marginal"]
        assert np.array_equal(q["label_conditional"], qb["label_conditional"])
        for m in ("marginal", "label_conditional"):
            assert np.array_equal(prediction_sets(P[300:], q[m], LAC), bcf.prediction_sets(p[300:], qb[m]))


def test_bad_specs_are_named():
    with pytest.raises(AuditInputError, match="'thr'.*lac, aps, raps"):
        ScoreSpec("thr")
    with pytest.raises(AuditInputError, match="k_reg=0.*λ=-1"):
        ScoreSpec("raps", k_reg=0, lam=-1)
    with pytest.raises(AuditInputError, match="alpha.*1.5"):
        calibrate([0], P3[:1], 1.5, LAC)


# ------------------------------------------------------------------ MAPIE, the peer oracle
class _Fixed(ClassifierMixin, BaseEstimator):
    """A prefit classifier whose probabilities are the rows of ``P`` indexed by ``X[:, 0]``."""

    def __init__(self, P=None):
        self.P = P

    def fit(self, X, y):
        self.classes_ = np.arange(self.P.shape[1])
        return self

    def predict_proba(self, X):
        return self.P[X[:, 0].astype(int)]

    def predict(self, X):
        return self.predict_proba(X).argmax(axis=1)


class _ZeroUniform(np.random.RandomState):
    """MAPIE's APS calibration scores subtract ``u · p_y`` with ``u ~ U(0, 1)``; ``u = 0`` is the non-randomised score."""

    def uniform(self, low=0.0, high=1.0, size=None):
        return np.zeros(size)


def _problem(seed, n_cal=400, n_test=300, k=4):
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1.5, (n_cal + n_test, k))
    P = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = np.minimum((P.cumsum(axis=1) < rng.uniform(size=(len(P), 1))).sum(axis=1), k - 1)
    return P, y, n_cal


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("score", ["lac", "aps"])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2])
def test_marginal_quantiles_and_sets_equal_mapie(seed, score, alpha):
    P, y, n = _problem(seed)
    X = np.arange(len(P), dtype=float)[:, None]
    peer = SplitConformalClassifier(estimator=_Fixed(P).fit(X, y), confidence_level=1 - alpha, conformity_score=score,
                                    prefit=True, random_state=_ZeroUniform())
    peer.conformalize(X[:n], y[:n])
    _, sets = peer.predict_set(X[n:], conformity_score_params={"include_last_label": True})
    spec = ScoreSpec(score)
    q = calibrate(y[:n], P[:n], alpha, spec)["marginal"]
    assert q == peer._mapie_classifier.conformity_score_function_.quantiles_[0]
    assert np.array_equal(prediction_sets(P[n:], q, spec), sets[:, :, 0])


def _mapie_raps_sets(P, qhat, k_reg, lam):
    """MAPIE's RAPS prediction sets at a given quantile, k_star = k_reg and λ (its own tuning bypassed)."""
    s = RAPSConformityScore()
    s.classes, s.k_star, s.lambda_star, s.quantiles_ = np.arange(P.shape[1]), np.array([k_reg]), np.array([lam]), np.array([qhat])
    Pr = P[:, :, None]
    return s.get_prediction_sets(Pr, None, np.array([0.1]), "prefit", include_last_label=True)[:, :, 0]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k_reg,lam", [(1, 0.01), (2, 0.1), (3, 0.5)])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2])
def test_raps_with_declared_k_and_lambda_equals_mapie(seed, k_reg, lam, alpha):
    P, y, n = _problem(seed, k=6)
    cum, cutoff = APSConformityScore.get_true_label_cumsum_proba(y[:n], P[:n], np.arange(P.shape[1]))
    reg = RAPSConformityScore._regularize_conformity_score(np.array([k_reg]), np.array([lam]), cum, cutoff)
    peer_q = _compute_classification_quantile(reg, np.array([alpha]))
    spec = ScoreSpec("raps", k_reg=k_reg, lam=lam)
    np.testing.assert_array_equal(true_scores(y[:n], P[:n], spec), reg[:, 0, 0])
    q = calibrate(y[:n], P[:n], alpha, spec)["marginal"]
    assert q == float(np.ravel(peer_q)[0])
    assert np.array_equal(prediction_sets(P[n:], q, spec), _mapie_raps_sets(P[n:], q, k_reg, lam))


@pytest.mark.parametrize("score", ["lac", "aps", "raps"])
def test_class_conditional_equals_mapie_per_class(score):
    """Mondrian by class: MAPIE's quantile on each class' calibration records, its sets judged class by class."""
    P, y, n = _problem(3, n_cal=800)
    spec = ScoreSpec(score, k_reg=2, lam=0.05) if score == "raps" else ScoreSpec(score)
    for alpha in (0.05, 0.1, 0.2):
        qc = calibrate(y[:n], P[:n], alpha, spec)["label_conditional"]
        ours = prediction_sets(P[n:], qc, spec)
        s = true_scores(y[:n], P[:n], spec)
        for c in range(P.shape[1]):
            assert qc[c] == float(np.ravel(_compute_classification_quantile(s[y[:n] == c][:, None], np.array([alpha])))[0])
            if score == "raps":
                peer = _mapie_raps_sets(P[n:], qc[c], 2, 0.05)
            elif score == "aps":
                peer = _mapie_raps_sets(P[n:], qc[c], 1, 0.0)  # λ = 0: APS
            else:
                peer = (1 - P[n:]) <= qc[c] + 1e-8
            assert np.array_equal(ours[:, c], peer[:, c])


def test_mapie_refuses_what_we_make_unbounded():
    """Too few calibration records (k > n): MAPIE's np.quantile level exceeds 1 and raises; ours is q̂ = ∞, all classes in."""
    P, y, _ = _problem(4, n_cal=10, n_test=5)
    s = true_scores(y[:10], P[:10], APS)
    with pytest.raises(ValueError):
        _compute_classification_quantile(s[:, None], np.array([0.05]))
    assert calibrate(y[:10], P[:10], 0.05, APS)["marginal"] == np.inf


def test_tie_convention_differs_from_mapie_on_exact_ties():
    """Equal probabilities: MAPIE's APS score depends on its sort order among the tie, ours counts the tie block whole."""
    P = np.array([[0.4, 0.4, 0.2]])
    cum, _ = APSConformityScore.get_true_label_cumsum_proba(np.array([1]), P, np.arange(3))
    assert cum[0, 0] == pytest.approx(0.4)  # MAPIE ranks class 1 first (np.fliplr of argsort)
    cum0, _ = APSConformityScore.get_true_label_cumsum_proba(np.array([0]), P, np.arange(3))
    assert cum0[0, 0] == pytest.approx(0.8)
    assert true_scores([1], P, APS)[0] == pytest.approx(0.8) == true_scores([0], P, APS)[0]


def test_marginal_coverage_holds_on_average_over_seeded_trials():
    """E[coverage] ≥ 1 − α for exchangeable records (split conformal's finite-sample guarantee)."""
    alpha, covs = 0.1, {"lac": [], "aps": [], "raps": []}
    for t in range(200):
        P, y, n = _problem(100 + t, n_cal=99, n_test=200, k=5)
        for name in covs:
            spec = ScoreSpec(name, k_reg=2, lam=0.1) if name == "raps" else ScoreSpec(name)
            q = calibrate(y[:n], P[:n], alpha, spec)["marginal"]
            covs[name].append(set_report(y[n:], prediction_sets(P[n:], q, spec))["coverage"])
    for name, c in covs.items():
        # mean of 200 trials; the SD of one trial's coverage is about 0.035 here, so 3 SE ≈ 0.0075
        assert np.mean(c) >= 1 - alpha - 0.0075, name


@pytest.mark.parametrize("score", ["lac", "aps", "raps"])
def test_class_conditional_coverage_is_the_exact_order_statistic_rate(score):
    """Given n_c calibration records of class c (continuous scores), ``S(x, c) ≤ q̂_c`` has probability
    ⌈(n_c+1)(1−α)⌉ / (n_c + 1) exactly.

    LAC's sets are exactly that event: over 400 seeded trials the mean per-class coverage matches the mean of
    that rate within 4 standard errors (dividing by n_c instead, or an off-by-one k, moves it by about
    1/n_c ≈ 0.02, several standard errors). APS and RAPS also include the class that crosses q̂, a superset:
    their coverage may only be higher.
    """
    import math

    alpha, k = 0.1, 4
    spec = ScoreSpec(score, k_reg=2, lam=0.1) if score == "raps" else ScoreSpec(score)
    got, want = {c: [] for c in range(k)}, {c: [] for c in range(k)}
    for t in range(400):
        P, y, n = _problem(1000 + t, n_cal=200, n_test=200, k=k)
        q = calibrate(y[:n], P[:n], alpha, spec)["label_conditional"]
        sets = prediction_sets(P[n:], q, spec)
        for c in range(k):
            n_c, m = int((y[:n] == c).sum()), y[n:] == c
            if not m.any() or not np.isfinite(q[c]):
                continue
            got[c].append(sets[m, c].mean())
            want[c].append(math.ceil(round((n_c + 1) * (1 - alpha), 9)) / (n_c + 1))
    for c in range(k):
        g = np.asarray(got[c])
        se = g.std(ddof=1) / math.sqrt(len(g))
        if score == "lac":
            assert abs(g.mean() - np.mean(want[c])) < 4 * se, (c, g.mean(), np.mean(want[c]), se)
        else:
            assert g.mean() > np.mean(want[c]) - 4 * se, (c, g.mean(), np.mean(want[c]), se)
