"""Verdicts with a direction, and degradation percentiles read in one direction.

Before: a change was only stable / sensitive / indeterminate, so an
improvement beyond tolerance (adult, sex Male → Female: Brier −0.06) was a
red "transport-sensitive"; and the degradation percentile was the share of
random sets with a *lower* value, which reads "low is bad" for AUROC and
"high is bad" for Brier (South German credit: 7 % for AUROC, 92 % for Brier).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.transport import TransportConfig, run_transport
from audit_core.transport.stress import harm_percentile
from audit_core.transport.verdicts import change_direction, good_direction


@pytest.mark.parametrize("metric,lo,hi,id_value,ood_value,expected", [
    ("auroc", 0.03, 0.05, 0.7, 0.74, "better"),
    ("auroc", -0.05, -0.03, 0.74, 0.7, "worse"),
    ("brier_score", -0.07, -0.05, 0.2, 0.14, "better"),
    ("ece", 0.03, 0.05, 0.02, 0.06, "worse"),
    ("calibration_slope", 0.2, 0.4, 0.8, 1.1, "better"),  # |1.1 - 1| < |0.8 - 1|
    ("calibration_slope", 0.2, 0.4, 1.0, 1.3, "worse"),
    ("calibration_intercept", -0.5, -0.3, 0.4, 0.0, "better"),
    ("prevalence", 0.1, 0.1, 0.2, 0.3, "shifted"),
])
def test_sensitive_changes_get_the_direction_of_the_metric(metric, lo, hi, id_value, ood_value, expected):
    assert change_direction("transport-sensitive", metric, lo=lo, hi=hi, id_value=id_value,
                            ood_value=ood_value) == expected


def test_coverage_and_rate_are_better_closer_to_their_nominal_values():
    assert good_direction("coverage", alpha=0.1)[:2] == ("target", 0.9)
    assert good_direction("rate", selection_rate=0.8)[:2] == ("target", 0.8)
    assert change_direction("transport-sensitive", "coverage", lo=0.04, hi=0.06, id_value=0.84, ood_value=0.89,
                            alpha=0.1) == "better"
    assert change_direction("transport-sensitive", "coverage", lo=0.04, hi=0.06, id_value=0.9, ood_value=0.95,
                            alpha=0.1) == "worse"  # over-coverage: the sets no longer mean 90 %
    assert change_direction("transport-stable", "auroc", lo=-0.01, hi=0.01, id_value=0.7, ood_value=0.7) == "within tolerance"
    assert change_direction("indeterminate", "auroc", lo=-0.03, hi=0.01, id_value=0.7, ood_value=0.69) == "undetermined"


def test_harm_percentile_reads_the_same_way_for_every_metric():
    rnd = np.array([0.80, 0.82, 0.79, 0.81])
    assert harm_percentile(0.70, rnd, "auroc") == 100.0  # lower AUROC than every random set
    assert harm_percentile(0.30, np.array([0.1, 0.12, 0.11, 0.13]), "brier_score") == 100.0
    assert harm_percentile(0.80, np.array([0.88, 0.86, 0.7, 0.9]), "coverage", alpha=0.1) == 75.0
    assert np.isnan(harm_percentile(0.3, rnd, "prevalence"))


def test_targeted_deletion_of_the_one_informative_feature_is_the_most_harmful_on_every_metric():
    rng = np.random.default_rng(0)
    n = 4000
    X = pd.DataFrame({f"noise{i}": rng.normal(size=n) for i in range(6)})
    X["signal"] = rng.normal(size=n)
    X["y"] = (rng.random(n) < 1 / (1 + np.exp(-2.5 * X["signal"]))).astype(int)
    X["dom"] = np.where(np.arange(n) < 2500, "s", "t")
    cfg = TransportConfig(targets=({"kind": "class", "name": "y", "column": "y", "positive": 1},),
                          numeric=tuple(c for c in X.columns if c.startswith(("noise", "signal"))),
                          domain_column="dom", source_value="s", target_value="t", n_refits=1, n_bootstrap=10,
                          stresses=("degradation",), degradation_m=1, n_random_sets=10, mappings=("platt",))
    res = run_transport(X, config=cfg)
    p = res.extras["degradation_percentiles"].set_index(["analysis", "metric", "domain"])["value"]
    for metric in ("auroc", "average_precision", "brier_score", "log_loss"):
        for dom in ("id", "ood"):
            assert p[("degradation_percentile:metrics", metric, dom)] >= 80, (metric, dom)
    assert np.isnan(p[("degradation_percentile:metrics", "prevalence", "id")])
