"""Synthetic shifts with known answers: weighted conformal validity, label shift, and concept shift's blind spot.

* Covariate shift: source ``x ~ N(0, 1)``, target ``x ~ N(0, 0.4²)`` (the
  uncertain middle), ``P(y = 1 | x) = σ(4x)`` in both and the model's
  probabilities exact, so the density ratio is known in closed form.
* Label shift: ``x | y ~ N(±1, 1)``, source prevalence 0.5, target 0.2.
* Concept shift: the same ``x`` in both domains, ``P(y = 1 | x)`` flattened on
  the target (``σ(4x)`` → ``σ(0.7x)``).
"""
from __future__ import annotations

import numpy as np
from scipy.stats import norm

from audit_core.forecast import (forecast_from_features, forecast_target, importance_weights, membership,
                                 set_quantiles)
from audit_core.forecast.quantities import fit_rules, labelled_quantities

ALPHA = 0.1
N_TRIALS = 200


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _covariate(seed: int, n_cal: int = 500, n_test: int = 500, n_t: int = 2000, sd_t: float = 0.4):
    rng = np.random.default_rng(seed)
    xs, xe, xt = rng.normal(0, 1, n_cal), rng.normal(0, 1, n_test), rng.normal(0, sd_t, n_t)
    P = [np.c_[1 - _sigmoid(4 * x), _sigmoid(4 * x)] for x in (xs, xe, xt)]
    y = [(rng.random(len(x)) < p[:, 1]).astype(int) for x, p in zip((xs, xe, xt), P, strict=True)]
    ratio = [norm.pdf(x, 0, sd_t) / norm.pdf(x, 0, 1) for x in (xs, xe, xt)]
    return (xs, xe, xt), P, y, ratio


def _coverage(P_cal, y_cal, P_t, y_t, w_cal=None, w_t=None) -> float:
    q = set_quantiles(P_cal, y_cal, ALPHA, n_classes=2, method="marginal", w_cal=w_cal, w_test=w_t)
    return float(membership(P_t, q)[np.arange(len(y_t)), y_t].mean())


def test_weighted_conformal_is_valid_under_known_covariate_shift_and_transported_sets_are_not() -> None:
    cov_w, cov_u, max_share = [], [], []
    for seed in range(N_TRIALS):
        _, (Ps, _, Pt), (ys, _, yt), (ws, _, wt) = _covariate(seed)
        cov_w.append(_coverage(Ps, ys, Pt, yt, ws, wt))
        cov_u.append(_coverage(Ps, ys, Pt, yt))
        max_share.append(ws.max() / ws.sum())
    cw, cu = np.array(cov_w), np.array(cov_u)
    se = cw.std(ddof=1) / np.sqrt(N_TRIALS)
    # finite-sample band: 1 − α ≤ E coverage ≤ 1 − α + E max_i p_i (Tibshirani et al. 2019), ± 3 SE of the trial mean
    lo, hi = 1 - ALPHA - 3 * se, 1 - ALPHA + float(np.mean(max_share)) + 3 * se
    assert lo <= cw.mean() <= hi, (cw.mean(), lo, hi)
    assert cu.mean() < 1 - ALPHA - 0.05, cu.mean()  # the unweighted transported sets miss it (about 0.82)


def test_estimated_weights_match_true_weights() -> None:
    diffs, cov_est, fc = [], [], []
    for seed in range(12):
        (xs, xe, xt), (Ps, Pe, Pt), (ys, ye, yt), (ws, we, wt) = _covariate(1000 + seed)
        iw = importance_weights(np.r_[xs, xe][:, None], xt[:, None], n_folds=3, seed=seed)
        w_cal, w_test = iw.source[:len(xs)], iw.source[len(xs):]
        cov_est.append(_coverage(Ps, ys, Pt, yt, w_cal, iw.target))
        diffs.append(cov_est[-1] - _coverage(Ps, ys, Pt, yt, ws, wt))
        opts = dict(y_cal=ys, P_cal=Ps, y_test=ye, P_test=Pe, P_target=Pt, n_bootstrap=0, alphas=(ALPHA,),
                    selection_rates=(0.8,), hcep_thresholds=(0.9,), methods=("covariate:weighted",))
        true = forecast_target(w_cal=ws, w_test=we, w_target=wt, **opts)
        est = forecast_target(w_cal=w_cal, w_test=w_test, w_target=iw.target, **opts)
        real = labelled_quantities(yt, Pt, fit_rules(Ps, ys, alphas=(ALPHA,), selection_rates=(0.8,)))
        for q in ("marginal:coverage@a=0.1", "risk@s=0.8", "brier"):
            t, e = true.get(q, "covariate:weighted").value, est.get(q, "covariate:weighted").value
            fc.append((q, t, e, real[q], true.naive[q]))
    assert abs(np.mean(diffs)) < 0.015 and np.mean(cov_est) > 1 - ALPHA - 0.02, (np.mean(diffs), np.mean(cov_est))
    for q in ("marginal:coverage@a=0.1", "risk@s=0.8", "brier"):
        rows = np.array([r[1:] for r in fc if r[0] == q])
        t, e, real, naive = rows.T
        # estimated-weight forecasts sit near the true-weight ones, and both beat "unchanged from source"
        assert np.mean(np.abs(e - t)) < 0.5 * np.mean(np.abs(naive - real)), q
        assert np.mean(np.abs(e - real)) < 0.6 * np.mean(np.abs(naive - real)), q


def _label_shift(seed: int, pi_t: float, n: int = 2000):
    rng = np.random.default_rng(seed)

    def draw(m, pi):
        y = (rng.random(m) < pi).astype(int)
        x = rng.normal(2 * y - 1, 1)
        p = _sigmoid(2 * x)  # the exact posterior at prevalence 0.5
        return x[:, None], y, np.c_[1 - p, p]

    return draw(n, 0.5), draw(n, 0.5), draw(n, pi_t)


def test_label_shift_prevalence_is_recovered_and_the_covariate_forecast_is_not() -> None:
    (xc, yc, Pc), (xe, ye, Pe), (xt, yt, Pt) = _label_shift(7, 0.2)
    res, iw = forecast_from_features(X_cal=xc, y_cal=yc, P_cal=Pc, X_test=xe, y_test=ye, P_test=Pe, X_target=xt,
                                     P_target=Pt, n_bootstrap=40, n_folds=3, alphas=(ALPHA,))
    truth = yt.mean()
    assert abs(res.prevalence["em"][1] - truth) <= 0.03
    assert abs(res.prevalence["bbse"][1] - truth) <= 0.03
    assert abs(res.get("prevalence", "label:em").value - truth) <= 0.03
    assert abs(res.get("prevalence", "covariate:weighted").value - truth) > 0.03
    assert abs(res.get("prevalence", "covariate:cbpe").value - truth) > 0.03
    # the two assumptions disagree on the prevalence, so neither is trusted there
    assert res.get("prevalence", "label:em").status == "unknown" and "differ" in res.get("prevalence", "label:em").reason


def test_concept_shift_is_invisible_to_every_method() -> None:
    rng = np.random.default_rng(11)
    x = [rng.normal(0, 1, n) for n in (1000, 1000, 3000)]
    P = [np.c_[1 - _sigmoid(4 * v), _sigmoid(4 * v)] for v in x]
    slope = (4, 4, 0.7)  # the target's P(y | x) is flatter: the model is over-confident there
    y = [(rng.random(len(v)) < _sigmoid(k * v)).astype(int) for v, k in zip(x, slope, strict=True)]
    res, iw = forecast_from_features(X_cal=x[0][:, None], y_cal=y[0], P_cal=P[0], X_test=x[1][:, None], y_test=y[1],
                                     P_test=P[1], X_target=x[2][:, None], P_target=P[2], n_bootstrap=40, n_folds=3,
                                     alphas=(ALPHA,))
    real = labelled_quantities(y[2], P[2], fit_rules(P[0], y[0], alphas=(ALPHA,)))
    assert iw.verdict.ok and not [c for c in res.checks if not c.ok]  # nothing label-free looks wrong
    for q in ("brier", "risk@s=0.8", "marginal:coverage@a=0.1"):
        assert abs(real[q] - res.naive[q]) > 0.05  # the target really changed
        assert {res.get(q, m).status for m in ("covariate:weighted", "covariate:cbpe", "label:em")} == {"forecast"}
        for f in res.forecasts:
            if f.quantity == q:
                assert not (f.low <= real[q] <= f.high), (q, f)  # every interval misses the realised value
