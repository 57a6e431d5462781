"""Mondrian conformal sets by a declared subgroup column: per-subgroup coverage in its exact band."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from audit_core.transport import conformal as cf


def test_mondrian_quantiles_and_sets_by_hand():
    # group a: scores of the true class .1 .2 .3 (n = 3, alpha .25: k = ceil(4 * .75) = 3 -> .3)
    # group b: scores .5 .6 (n = 2, alpha .25: k = ceil(2.25) = 3 > 2 -> inf)
    y = np.array([1, 1, 0, 1, 0])
    p = np.array([0.9, 0.8, 0.3, 0.5, 0.6])  # true-class scores: .1 .2 .3 .5 .6
    g = np.array(["a", "a", "a", "b", "b"])
    q = cf.mondrian_calibrate(y, p, g, 0.25)
    assert q["a"] == pytest.approx(0.3, abs=1e-15) and math.isinf(q["b"])
    sets = cf.mondrian_sets(np.array([0.75, 0.75, 0.5]), np.array(["a", "b", "c"]), q)
    # a: class 1 in iff 1 - p <= .3 (p >= .7): {1}; b: q = inf: both; c unseen in calibration: both
    assert sets.tolist() == [[False, True], [True, True], [True, True]]
    rep = cf.subgroup_coverage(np.array([1, 0, 0]), sets, np.array(["a", "b", "c"]))
    assert rep == [{"level": "a", "n": 1, "coverage": 1.0, "mean_set_size": 1.0},
                   {"level": "b", "n": 1, "coverage": 1.0, "mean_set_size": 2.0},
                   {"level": "c", "n": 1, "coverage": 1.0, "mean_set_size": 2.0}]


def test_subgroup_coverage_inside_beta_binomial_band():
    """200 seeded trials: each subgroup's covered count lies in its exact Beta-binomial band.

    Two subgroups with different score distributions (the model is wrong on b) and calibration sizes. With continuous
    scores, the coverage of a subgroup given its calibration set is Beta(k, n + 1 − k), so its
    covered test count is BetaBinomial(n_test, k, n_cal + 1 − k), as in the class-conditional test.
    """
    alpha, trials = 0.1, 200
    sizes = {"a": (59, 80), "b": (29, 60)}  # (calibration, test) records per subgroup
    totals = {g: 0 for g in sizes}
    outside = {g: 0 for g in sizes}
    marginal_total_b = 0
    bands = {}
    for g, (n_cal, n_test) in sizes.items():
        k = math.ceil((n_cal + 1) * (1 - alpha))
        bands[g] = (stats.betabinom(n_test, k, n_cal + 1 - k), n_test)
    for t in range(trials):
        rng = np.random.default_rng(7000 + t)
        parts = []
        for g, (n_cal, n_test) in sizes.items():
            n = n_cal + n_test
            # the model is wrong on subgroup b (its labels follow 1 − p̂): one marginal q̂ under-covers it
            p = rng.uniform(0, 1, n)
            y = (rng.uniform(size=n) < (p if g == "a" else 1 - p)).astype(int)
            parts.append((g, y[:n_cal], p[:n_cal], y[n_cal:], p[n_cal:]))
        gc = np.concatenate([[g] * len(yc) for g, yc, _, _, _ in parts])
        yc = np.concatenate([x[1] for x in parts])
        pc = np.concatenate([x[2] for x in parts])
        gt = np.concatenate([[g] * len(x[3]) for g, *x in parts])
        yt = np.concatenate([x[3] for x in parts])
        pt = np.concatenate([x[4] for x in parts])
        q = cf.mondrian_calibrate(yc, pc, gc, alpha)
        rep = {r["level"]: r for r in cf.subgroup_coverage(yt, cf.mondrian_sets(pt, gt, q), gt)}
        for g, (bb, n_test) in bands.items():
            cnt = int(round(rep[g]["coverage"] * n_test))
            totals[g] += cnt
            outside[g] += not (bb.ppf(0.005) <= cnt <= bb.ppf(0.995))
        qm = cf.calibrate(yc, pc, alpha)["marginal"]
        mrep = {r["level"]: r for r in cf.subgroup_coverage(yt, cf.prediction_sets(pt, qm), gt)}
        marginal_total_b += mrep["b"]["coverage"] * sizes["b"][1]
    for g, (bb, n_test) in bands.items():
        z = (totals[g] - bb.mean() * trials) / math.sqrt(bb.var() * trials)
        assert abs(z) < 3.5, (g, totals[g], bb.mean() * trials, z)
        assert outside[g] <= 8, (g, outside[g])  # each trial leaves its 99 % band about 1 % of the time
        assert totals[g] / (trials * n_test) >= 1 - alpha - 3.5 * math.sqrt(bb.var() * trials) / (trials * n_test)
    # the contrast: one marginal q̂ under-covers the hard subgroup
    assert marginal_total_b / (trials * sizes["b"][1]) < 1 - alpha - 0.02


# ------------------------------------------------------------ release-gate ground
def _result_rows(rows):
    import pandas as pd

    base = dict(analysis="heterogeneity", target_definition="t", model="m", mapping="raw", weighting="unweighted",
                alpha=0.1, selection_rate=np.nan, metric="mondrian_worst_coverage@alpha=0.1")
    return pd.DataFrame([{**base, **r} for r in rows])


def test_worst_subgroup_coverage_ground_by_hand():
    from types import SimpleNamespace

    from audit_core.runs.grounds import GROUND_SPECS

    spec = {g.name: g for g in GROUND_SPECS}["worst_subgroup_coverage_90"]
    t = _result_rows([
        dict(domain="ood", condition="region", refit=0, value=0.82),
        dict(domain="ood", condition="branch", refit=0, value=0.78),  # refit 0: worst column 0.78
        dict(domain="ood", condition="region", refit=1, value=0.80),
        dict(domain="ood", condition="branch", refit=1, value=0.86),  # refit 1: 0.80
        dict(domain="id", condition="region", refit=0, value=0.10),  # the ID test is not read
        dict(domain="ood", condition="region", refit=0, value=0.20, mapping="platt"),  # nor another mapping
        dict(domain="ood", condition="region", refit=-1, value=0.30),  # nor a pooled row
    ])
    run = SimpleNamespace(manifest={"config": {"models": ["m"], "mappings": ["raw"], "targets": [{"name": "t"}]}},
                          config={}, tables={"results": t})
    value, detail, invalid = spec.read(run)
    assert not invalid and value == pytest.approx((0.78 + 0.80) / 2, abs=1e-15) and "mean over 2 refit(s)" in detail
    empty = SimpleNamespace(manifest=run.manifest, config={}, tables={"results": t[t["domain"] == "id"]})
    value, detail, _ = spec.read(empty)
    assert value is None and "declared no subgroup column" in detail
