"""Every bootstrap interval contains its estimate.

The rule (:func:`audit_core.transport.intervals.change_interval`) is the
median-centred percentile interval. Before it, the verdicts used the plain
percentile interval, which missed the estimate for statistics that
resampling biases: on the toy below (a small ID test, calibrated
probabilities) the change in ECE lies above its whole percentile interval,
under both mappings (seed 2: raw −0.0716 against [−0.1645, −0.0836]).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.transport import TransportAudit, TransportConfig
from audit_core.transport.changes import replicates
from audit_core.transport.bootstrap import percentile_interval
from audit_core.transport.intervals import change_interval

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(finite, min_size=1, max_size=60), finite, st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_the_interval_contains_the_estimate_and_keeps_the_percentile_width(reps, estimate, level):
    lo, hi = change_interval(np.array(reps), estimate, level)
    assert lo <= estimate <= hi
    plo, phi = percentile_interval(np.array(reps), level)
    assert hi - lo == pytest.approx(phi - plo, rel=1e-9, abs=1e-6 * (1 + abs(estimate)))


def test_replicates_centred_on_the_estimate_give_the_percentile_interval():
    reps = np.array([-2.0, -1.0, 0.0, 1.5, 3.0])  # median 0 = the estimate
    assert change_interval(reps, 0.0, 0.5) == percentile_interval(reps, 0.5)
    assert change_interval(np.array([np.nan, np.nan]), 0.1) != change_interval(np.array([np.nan, np.nan]), 0.1)  # NaN
    assert change_interval(reps, float("nan"), 0.5) == percentile_interval(reps, 0.5)


def _toy(seed=2, n_src=600, n_tgt=4000):
    rng = np.random.default_rng(seed)
    n = n_src + n_tgt
    x = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-1.5 * x))).astype(int)
    k = rng.choice(["a", "b"], n)
    z = (x + rng.normal(size=n) > 0.5).astype(int)  # a second target definition
    return pd.DataFrame({"x": x, "k": k, "y": y, "z": z, "dom": ["s"] * n_src + ["t"] * n_tgt})


@pytest.mark.parametrize("exact", [False, True])
def test_every_interval_of_a_run_contains_its_estimate(exact):
    cfg = TransportConfig(
        targets=({"kind": "class", "name": "y", "column": "y", "positive": 1},
                 {"kind": "class", "name": "z", "column": "z", "positive": 1}),
        numeric=("x",), categorical=("k",), domain_column="dom", source_value="s", target_value="t", n_refits=2,
        n_bootstrap=200, stresses=("target_definition",), mappings=("raw", "platt"), exact_bootstrap=exact)
    audit = TransportAudit(cfg)
    res = audit.run(_toy())
    v = res.verdicts
    assert len(v) > 30 and (v["ci_low"] <= v["delta"]).all() and (v["delta"] <= v["ci_high"]).all()
    # the case is a hard one: the plain percentile interval misses the ECE estimate
    reps = replicates(audit.state)
    ece = v[v["metric"] == "ece"].set_index("mapping")
    for mp in ("raw", "platt"):
        lo, hi = percentile_interval(np.nanmean(reps[("logistic_regression", mp, "unweighted", "metrics", "ece",
                                                      np.nan, np.nan)], axis=0), cfg.level)
        assert not lo <= ece.loc[mp, "delta"] <= hi
    # per-refit intervals contain that refit's change
    t = res.table.fillna({"alpha": -1.0, "selection_rate": -1.0})
    ch = t[t["domain"].eq("ood-id") & t["condition"].eq("clean")]
    keys = ["analysis", "model", "mapping", "refit", "metric", "weighting", "alpha", "selection_rate"]
    iv = t[t["analysis"].str.startswith("change:")].assign(analysis=lambda d: d["analysis"].str[len("change:"):])
    wide = iv.set_index(keys + ["condition"])["value"].unstack("condition").reset_index()
    merged = wide.merge(ch, on=keys, how="inner")
    assert len(merged) == len(wide) > 0
    assert (merged["bootstrap_ci_low"] <= merged["value"]).all() and (merged["value"] <= merged["bootstrap_ci_high"]).all()
    # target-definition decomposition: the pooled interval contains the refit-mean D_Y / D_P
    dec = t[t["analysis"] == "target_decomposition"]
    pts = dec[dec["refit"] >= 0].groupby(["condition", "domain", "metric"])["value"].mean()
    ci = dec[dec["refit"] == -1]
    for (cond, dom, metric), value in pts.items():
        lo = ci[(ci["condition"] == cond) & (ci["domain"] == dom) & (ci["metric"] == f"{metric}:ci_low")]["value"].item()
        hi = ci[(ci["condition"] == cond) & (ci["domain"] == dom) & (ci["metric"] == f"{metric}:ci_high")]["value"].item()
        if np.isfinite(value):
            assert lo <= value <= hi, (cond, dom, metric)
