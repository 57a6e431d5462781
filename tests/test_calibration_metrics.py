"""ACE, MCE and Spiegelhalter's z: hand toys, from-definition implementations, verdict registration.

The reference implementations below are written from the definitions (plain
Python loops over records, no code shared with :mod:`audit_core.calibration_error`).
"""
from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import audit_core.calibration_error as cal
from audit_core.errors import AuditInputError
from audit_core.metrics import (
    METRICS,
    adaptive_calibration_error,
    maximum_calibration_error,
    metric_values,
    spiegelhalter_z,
)
from audit_core.transport.verdicts import DEFAULT_TOLERANCES, GOOD_DIRECTION, good_direction

NEW = ("ace", "mce", "spiegelhalter_z")


# ------------------------------------------------------------ from the definitions
def ref_ace(y, p, w=None, n_bins=15):
    """Equal-mass bins: a record's bin is floor(B · (weight of strictly lower scores) / total)."""
    n = len(y)
    w = [1.0] * n if w is None else [float(v) for v in w]
    total = sum(w)
    num = [0.0] * n_bins
    for i in range(n):
        below = sum(w[j] for j in range(n) if p[j] < p[i])
        b = min(n_bins - 1, math.floor(n_bins * below / total + 1e-9))
        num[b] += w[i] * (p[i] - y[i])
    return sum(abs(v) for v in num) / total


def ref_mce(y, p, w=None, n_bins=15):
    """Equal-width bins (i/B, (i+1)/B], the first also holding 0; the largest |mean y − mean p|."""
    n = len(y)
    w = [1.0] * n if w is None else [float(v) for v in w]
    gaps = []
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        members = [i for i in range(n) if (lo < p[i] <= hi) or (b == 0 and p[i] == 0.0)]
        W = sum(w[i] for i in members)
        if W > 0:
            gaps.append(abs(sum(w[i] * y[i] for i in members) / W - sum(w[i] * p[i] for i in members) / W))
    return max(gaps)


def ref_spiegelhalter(y, p, w=None):
    n = len(y)
    w = [1.0] * n if w is None else [float(v) for v in w]
    num = sum(w[i] * (y[i] - p[i]) * (1 - 2 * p[i]) for i in range(n))
    var = sum(w[i] ** 2 * (1 - 2 * p[i]) ** 2 * p[i] * (1 - p[i]) for i in range(n))
    return num / math.sqrt(var)


def _data(seed, n=150, ties=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.clip(0.3 * y + rng.uniform(0, 0.7, n), 0.01, 0.99)
    if ties:
        p = np.round(p, 1)
    return y, p, rng.uniform(0.2, 3.0, n)


# ------------------------------------------------------------ hand toys
def test_module_doctests():
    assert doctest.testmod(cal).failed == 0


def test_ace_hand_equal_mass_bins():
    # 6 records, 3 bins of 2 by score: {0.1, 0.2} y = 0, 1; {0.3, 0.5} y = 0, 0; {0.8, 0.9} y = 1, 1
    y = [0, 1, 0, 0, 1, 1]
    p = [0.1, 0.2, 0.3, 0.5, 0.8, 0.9]
    # bin residuals Σ(p − y): (0.3 − 1) = −0.7; 0.8; (1.7 − 2) = −0.3; ACE = (0.7 + 0.8 + 0.3) / 6
    assert adaptive_calibration_error(y, p, n_bins=3) == pytest.approx(1.8 / 6, abs=1e-12)


def test_ace_ties_share_a_bin_and_weights_move_the_edges():
    # scores 0.2, 0.2, 0.2, 0.6 in 2 bins: the three ties all sit in bin 0 (nothing strictly below)
    y, p = [0, 0, 1, 1], [0.2, 0.2, 0.2, 0.6]
    # bin 0: Σ(p − y) = 0.6 − 1 = −0.4; bin 1: 0.6 − 1 = −0.4; ACE = 0.8 / 4
    assert adaptive_calibration_error(y, p, n_bins=2) == pytest.approx(0.2, abs=1e-12)
    # weight 3 on the first of four distinct scores: W = 6, W_< = 0, 3, 4, 5 -> bins 0, 1, 1, 1
    y, p, w = [0, 1, 0, 1], [0.1, 0.4, 0.6, 0.9], [3, 1, 1, 1]
    # bin 0: 3·0.1 = 0.3; bin 1: (0.4 − 1) + 0.6 + (0.9 − 1) = −0.1; ACE = 0.4 / 6
    assert adaptive_calibration_error(y, p, n_bins=2, sample_weight=w) == pytest.approx(0.4 / 6, abs=1e-12)


def test_mce_hand_and_right_closed_edges():
    # 2 bins, edge 0.5 belongs to bin 0: {0.2 (y 0), 0.5 (y 0)} gap |0 − 0.35| = 0.35; {0.9 (y 1)} gap 0.1
    assert maximum_calibration_error([0, 0, 1], [0.2, 0.5, 0.9], n_bins=2) == pytest.approx(0.35, abs=1e-12)


def test_spiegelhalter_hand_weighted():
    # p = 0.25, 0.75 with y = 1, 1 and weights 1, 2: terms (1 − 2p) = 0.5, −0.5
    # num = 1·0.75·0.5 + 2·0.25·(−0.5) = 0.125; var = (1 + 4)·0.25·0.1875 = 0.234375
    z = spiegelhalter_z([1, 1], [0.25, 0.75], sample_weight=[1, 2])
    assert z == pytest.approx(0.125 / math.sqrt(0.234375), abs=1e-12)
    # all scores at ½: the null variance is 0 and z is undefined
    assert math.isnan(spiegelhalter_z([0, 1], [0.5, 0.5]))


# ------------------------------------------------------------ against the definitions
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_new_metrics_equal_their_definitions(seed, ties, weighted):
    y, p, w = _data(seed, ties=ties)
    w = w if weighted else None
    yl, pl = y.tolist(), p.tolist()
    for n_bins in (5, 15):
        assert adaptive_calibration_error(y, p, n_bins=n_bins, sample_weight=w) == pytest.approx(
            ref_ace(yl, pl, w, n_bins), rel=1e-10, abs=1e-13)
        assert maximum_calibration_error(y, p, n_bins=n_bins, sample_weight=w) == pytest.approx(
            ref_mce(yl, pl, w, n_bins), rel=1e-10, abs=1e-13)
    assert spiegelhalter_z(y, p, sample_weight=w) == pytest.approx(ref_spiegelhalter(yl, pl, w), rel=1e-10)


def test_ace_equals_ece_when_every_equal_mass_bin_is_an_equal_width_bin():
    # 4 records per equal-width bin of 5 (one score each): both binnings are the same partition
    p = np.repeat([0.1, 0.3, 0.5, 0.7, 0.9], 4)
    y = np.tile([0, 1, 1, 0], 5)
    assert adaptive_calibration_error(y, p, n_bins=5) == pytest.approx(METRICS["ece"](y, p, n_bins=5), abs=1e-12)


def test_spiegelhalter_is_near_standard_normal_for_a_calibrated_model():
    # 400 seeded trials of 300 records drawn from their own probabilities: mean ~ 0, sd ~ 1
    rng = np.random.default_rng(5)
    z = []
    for _ in range(400):
        p = rng.uniform(0.02, 0.98, 300)
        z.append(spiegelhalter_z((rng.uniform(size=300) < p).astype(int), p))
    z = np.asarray(z)
    assert abs(z.mean()) < 0.2 and 0.85 < z.std() < 1.15
    # a model that is too confident is flagged: p pushed away from ½
    p = rng.uniform(0.02, 0.98, 3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    sharp = np.clip(0.5 + 1.6 * (p - 0.5), 0.001, 0.999)
    assert spiegelhalter_z(y, sharp) > 3


def test_metric_values_matches_the_registry_for_the_new_metrics():
    y, p, w = _data(9, ties=True)
    vals = metric_values(y, p, NEW, sample_weight=w, n_bins=10)
    # (metric_values normalises the weights once more: equal up to rounding)
    assert vals["ace"] == pytest.approx(adaptive_calibration_error(y, p, n_bins=10, sample_weight=w), rel=1e-12)
    assert vals["mce"] == pytest.approx(maximum_calibration_error(y, p, n_bins=10, sample_weight=w), rel=1e-12)
    assert vals["spiegelhalter_z"] == pytest.approx(spiegelhalter_z(y, p, sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("f", [adaptive_calibration_error, maximum_calibration_error])
def test_bad_bins_refused(f):
    with pytest.raises(AuditInputError) as ei:
        f([0, 1], [0.2, 0.8], n_bins=0)
    assert ei.value.code == "METRIC_BAD_BINS"


# ------------------------------------------------------------ verdict registration
def test_new_metrics_have_tolerances_and_good_directions():
    for m in NEW:
        assert DEFAULT_TOLERANCES[m] > 0 and m in GOOD_DIRECTION
    assert good_direction("ace")[:2] == ("lower", None)
    assert good_direction("mce")[:2] == ("lower", None)
    assert good_direction("spiegelhalter_z")[:2] == ("target", 0.0)
