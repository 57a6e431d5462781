"""Known answers, worked out by hand, for the forecast core (docs/forecast.md)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.forecast import (bbse_prevalence, class_weights, clip_weights, density_ratio, em_prevalence, ess_floor,
                                 kish_ess, overlap_check, weighted_coverage, weighted_quantile)
from audit_core.forecast.estimates import METHODS, forecast_target, tolerance_for
from audit_core.forecast.quantities import fit_rules, label_free_quantities, labelled_quantities
from audit_core.transport.conformal import conformal_quantile


def test_weighted_quantile_on_five_points() -> None:
    s = [0.1, 0.2, 0.3, 0.4, 0.5]
    # weights 2, 1, 1, 1, 1 and a test weight of 1: total 7, cumulative 2, 3, 4, 5, 6
    assert weighted_quantile(s, [2, 1, 1, 1, 1], 1.0, 0.3) == 0.4  # 0.7 · 7 = 4.9 → 5 at 0.4
    assert weighted_quantile(s, [2, 1, 1, 1, 1], 1.0, 0.2) == 0.5  # 5.6 → 6 at 0.5
    assert weighted_quantile(s, [2, 1, 1, 1, 1], 1.0, 0.1) == np.inf  # 6.3 > 6: the atom at infinity
    # a heavy test point pushes the quantile up: test weight 3, total 9, 0.5 · 9 = 4.5 → 0.4
    assert weighted_quantile(s, [2, 1, 1, 1, 1], 3.0, 0.5) == 0.4
    # many test weights at once, as a vector
    np.testing.assert_array_equal(weighted_quantile(s, [2, 1, 1, 1, 1], np.array([1.0, 3.0]), 0.5), [0.3, 0.4])


def test_weighted_quantile_with_equal_weights_is_the_order_statistic() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 9, 19, 50, 101):
        s = rng.random(n)
        for alpha in (0.05, 0.1, 0.2):
            assert weighted_quantile(s, np.ones(n), 1.0, alpha) == conformal_quantile(s, alpha)
    assert weighted_quantile([], [], 1.0, 0.1) == np.inf


def test_density_ratio_clip_and_ess() -> None:
    assert density_ratio(np.array([0.5]), 200, 100)[0] == pytest.approx(2.0)  # odds 1 × 200/100
    assert kish_ess(np.ones(10)) == 10.0
    assert kish_ess(np.array([3.0, 1.0])) == pytest.approx(1.6)  # 16 / 10
    w = np.r_[np.ones(99), 100.0]  # mean 1.99: the big one is 50.25× the mean; cap = min(q99, 20)
    ws, wt, cap, n_clipped = clip_weights(w, np.array([1.0, 1000.0]))
    v = w / w.mean()
    assert cap == pytest.approx(min(np.quantile(v, 0.99), 20.0))
    assert n_clipped == 1 and ws.mean() == pytest.approx(1.0) and ws.max() == pytest.approx(cap / np.minimum(v, cap).mean())
    assert wt[1] == pytest.approx(ws.max())  # the target record is capped with the source constants


def test_overlap_rule() -> None:
    assert ess_floor(100) == 30 and ess_floor(10_000) == 500
    assert overlap_check(0.7, 400, 1000).ok
    bad = overlap_check(0.96, 20, 1000)
    assert not bad.ok and "domain AUROC 0.960" in bad.reason and "effective sample size 20 < floor 50" in bad.reason


def test_em_and_bbse_on_a_two_level_toy() -> None:
    # x takes two levels; P(H | y=1) = 0.8, P(H | y=0) = 0.2, balanced source: P(y=1 | H) = 0.8, P(y=1 | L) = 0.2.
    # A target with π = 0.75 shows H with share 0.75·0.8 + 0.25·0.2 = 0.65; the MLE matches the share: π = (0.65 − 0.2)/0.6.
    P_t = np.array([[0.2, 0.8]] * 13 + [[0.8, 0.2]] * 7)
    np.testing.assert_allclose(em_prevalence(P_t, [0.5, 0.5]), [0.25, 0.75], atol=1e-6)
    # BBSE: source 10 of each class, y=1: 8 H + 2 L, y=0: 2 H + 8 L → M = [[.4, .1], [.1, .4]], μ = (.35, .65), r = (.5, 1.5)
    y_s = np.r_[np.ones(10), np.zeros(10)].astype(int)
    P_s = np.array([[0.2, 0.8]] * 8 + [[0.8, 0.2]] * 2 + [[0.2, 0.8]] * 2 + [[0.8, 0.2]] * 8)
    np.testing.assert_allclose(bbse_prevalence(y_s, P_s, P_t, n_classes=2), [0.25, 0.75], atol=1e-12)
    np.testing.assert_allclose(class_weights(np.array([0, 1]), [0.5, 0.5], [0.25, 0.75]), [0.5, 1.5])


def test_weighted_coverage_by_hand() -> None:
    y = np.array([0, 0, 1, 1])
    sets = np.array([[True, False], [False, True], [True, True], [True, False]])  # covered: 1, 0, 1, 0
    out = weighted_coverage(y, sets, np.array([1.0, 3.0, 1.0, 1.0]), n_classes=2)
    assert out["coverage"] == pytest.approx(2 / 6)
    assert out["coverage_class0"] == pytest.approx(1 / 4) and out["coverage_class1"] == pytest.approx(1 / 2)
    assert out["worst_class_coverage"] == pytest.approx(1 / 4)


def test_label_free_quantities_agree_with_the_labelled_ones() -> None:
    rng = np.random.default_rng(0)
    p = rng.random(300)
    P, y = np.c_[1 - p, p], (rng.random(300) < p).astype(int)
    rules = fit_rules(P[:150], y[:150], w_cal=np.ones(150))
    free = label_free_quantities(P[150:], rules)
    full = labelled_quantities(y[150:], P[150:], rules)
    assert all(full[k] == pytest.approx(v) for k, v in free.items() if k != "mean_confidence")
    # unit weights: the weighted sets are the transported ones
    assert full["weighted_marginal:coverage@a=0.1"] == full["marginal:coverage@a=0.1"]


def test_tolerances_by_quantity_name() -> None:
    assert tolerance_for("marginal:worst_class_coverage@a=0.1") == 0.05
    assert tolerance_for("hcep@tau=0.9") == 0.03 and tolerance_for("brier") == 0.03 and tolerance_for("prevalence") == 0.03


def test_multiclass_label_shift_runs_end_to_end() -> None:
    from audit_core.forecast import forecast_target

    rng = np.random.default_rng(5)
    means = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])

    def draw(n, pi):
        y = rng.choice(3, n, p=pi)
        x = means[y] + rng.normal(0, 1, (n, 2))
        logits = -0.5 * ((x[:, None, :] - means[None]) ** 2).sum(axis=2)  # the exact posterior under equal priors
        P = np.exp(logits - logits.max(axis=1, keepdims=True))
        return y, P / P.sum(axis=1, keepdims=True)

    (yc, Pc), (ye, Pe), (yt, Pt) = draw(1500, [1 / 3] * 3), draw(1500, [1 / 3] * 3), draw(3000, [0.6, 0.3, 0.1])
    res = forecast_target(y_cal=yc, P_cal=Pc, y_test=ye, P_test=Pe, P_target=Pt, n_bootstrap=20, alphas=(0.1,))
    np.testing.assert_allclose(res.prevalence["em"], np.bincount(yt) / len(yt), atol=0.03)
    real = labelled_quantities(yt, Pt, fit_rules(Pc, yc, alphas=(0.1,)))
    for q in ("prevalence_class0", "brier", "label_conditional:worst_class_coverage@a=0.1"):
        f = res.get(q, "label:em")
        assert abs(f.value - real[q]) <= abs(res.naive[q] - real[q]) + 0.01, (q, f, real[q])


def test_a_map_without_a_finite_fit_gives_unknown_forecasts_not_a_crash() -> None:
    """Breast cancer split by texture: the calibration records were separable, the weighted Platt refit of
    ``covariate:cbpe_refit`` diverged, and the NaN expected outcomes crashed the whole forecast. Now that
    method's forecasts are unknown with the reason, and the other methods are untouched."""
    rng = np.random.default_rng(3)
    y_cal = np.r_[np.zeros(20, int), np.ones(20, int)]
    p_cal = np.where(y_cal == 1, rng.uniform(0.9, 0.99, 40), rng.uniform(0.01, 0.1, 40))  # perfectly separable
    y_test = rng.integers(0, 2, 60)
    p_test, p_t = rng.uniform(0.05, 0.95, 60), rng.uniform(0.05, 0.95, 50)
    two = lambda p: np.c_[1 - p, p]  # noqa: E731
    kw = dict(y_cal=y_cal, P_cal=two(p_cal), y_test=y_test, P_test=two(p_test), P_target=two(p_t), n_bootstrap=5)
    res = forecast_target(**kw)
    refit = [f for f in res.forecasts if f.method == "covariate:cbpe_refit"]
    assert refit and all(f.status == "unknown" and np.isnan(f.value) for f in refit)
    assert all("no finite fit on the calibration records" in f.reason for f in refit)
    others = forecast_target(**kw, methods=tuple(m for m in METHODS if m != "covariate:cbpe_refit"))
    kept = res.to_frame().query("method != 'covariate:cbpe_refit'").reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, others.to_frame())  # the other methods do not depend on the broken one


def test_a_forecast_that_is_not_a_number_is_unknown_with_the_reason() -> None:
    """The 50% rule's confidence cut-off is fitted on calibration confidences in [0.5, 0.9]; every evidence record's
    confidence is below 0.55, so none clears it and the selective risk is not defined: the forecast is unknown and
    says why, never a "forecast" with the value nan."""
    rng = np.random.default_rng(5)
    two = lambda p: np.c_[1 - p, p]  # noqa: E731
    y_cal, y_test = rng.integers(0, 2, 80), rng.integers(0, 2, 60)
    res = forecast_target(y_cal=y_cal, P_cal=two(rng.uniform(0.1, 0.9, 80)), y_test=y_test,
                          P_test=two(rng.uniform(0.45, 0.55, 60)), P_target=two(rng.uniform(0.45, 0.55, 50)),
                          n_bootstrap=5, selection_rates=(0.5,), hcep_thresholds=(0.95,),
                          methods=("covariate:weighted", "label:em"))
    frame = res.to_frame()
    assert frame.loc[frame["status"] == "forecast", "value"].notna().all()
    undefined = frame[frame["value"].isna()]
    assert set(undefined["quantity"]) >= {"risk@s=0.5"} and set(undefined["status"]) == {"unknown"}
    assert undefined["reason"].str.contains("not defined on the evidence").all()
