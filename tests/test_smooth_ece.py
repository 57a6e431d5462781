"""Smooth ECE: from the definition, against relplot (peer oracle), weights; the reliability band."""
from __future__ import annotations

import math

import numpy as np
import pytest
import relplot  # test-only peer oracle, pinned in requirements-test.txt

from audit_core.calibration_error import frequency_band, smooth_ece_at
from audit_core.errors import AuditInputError
from audit_core.metrics import bin_ids, calibration_bins, smooth_ece


def _data(seed, n=2000, slope=1.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1.5, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x))).astype(int)
    return y, 1 / (1 + np.exp(-(slope * x + 0.2)))


def ref_smooth_ece_at(y, p, w, sigma, m=4001):
    """The definition on a fine grid, kernel summed over the record and its two mirror images (no binning)."""
    t = np.linspace(0, 1, m)[:, None]

    def phi(d):
        return np.exp(-0.5 * (d / sigma) ** 2)

    K = phi(t - p[None, :]) + phi(t + p[None, :]) + phi(t - (2 - p[None, :]))
    num = np.abs(K @ (w * (p - y)))
    den = K @ w
    return float(np.trapezoid(num, dx=1 / (m - 1)) / np.trapezoid(den, dx=1 / (m - 1)))


@pytest.mark.parametrize("sigma", [0.01, 0.05, 0.2])
def test_fixed_bandwidth_equals_the_definition(sigma):
    y, p = _data(1, n=300)
    w = np.random.default_rng(2).uniform(0.3, 3, len(y))
    for ww in (np.ones(len(y)), w):
        assert smooth_ece_at(y.astype(float), p, ww, sigma) == pytest.approx(
            ref_smooth_ece_at(y, p, ww, sigma), rel=2e-3, abs=2e-5)


@pytest.mark.parametrize("seed,n,slope", [(0, 200, 1.0), (1, 2000, 0.6), (2, 2000, 1.6), (3, 20000, 1.0)])
def test_automatic_bandwidth_agrees_with_relplot(seed, n, slope):
    y, p = _data(seed, n, slope)
    ours, sigma = smooth_ece(y, p, return_bandwidth=True)
    theirs, their_sigma = relplot.smECE(p, y, return_width=True)
    # relplot bisects σ to 2^-10 and keeps the upper end; ours to 1e-6
    assert abs(sigma - their_sigma) <= 2 ** -10 + 1e-6
    assert ours == pytest.approx(theirs, abs=3e-4)
    # at relplot's own bandwidth the two smoothers agree to its grid (about 1000 points; ours 4097)
    assert smooth_ece_at(y.astype(float), p, np.ones(n), their_sigma) == pytest.approx(
        relplot.smECE_sigma(p, y, their_sigma), abs=2e-4)
    # the bandwidth is the fixed point smECE_σ = σ
    assert ours == pytest.approx(sigma, abs=1e-5)


def test_weights_equal_weights_repetition_and_order():
    y, p = _data(4, n=400)
    v = smooth_ece(y, p)
    assert smooth_ece(y, p, sample_weight=np.full(len(y), 2.5)) == pytest.approx(v, abs=1e-12)
    w = np.random.default_rng(5).integers(1, 4, len(y))
    assert smooth_ece(y, p, sample_weight=w) == pytest.approx(smooth_ece(np.repeat(y, w), np.repeat(p, w)), abs=1e-9)
    perm = np.random.default_rng(6).permutation(len(y))
    assert smooth_ece(y[perm], p[perm], sample_weight=w[perm]) == pytest.approx(
        smooth_ece(y, p, sample_weight=w), abs=1e-12)


def test_calibrated_model_scores_low_and_a_miscalibrated_one_high():
    rng = np.random.default_rng(7)
    p = rng.uniform(0, 1, 20000)
    y = (rng.uniform(size=len(p)) < p).astype(int)
    assert smooth_ece(y, p) < 0.02
    assert smooth_ece(y, np.clip(0.5 + 1.8 * (p - 0.5), 0, 1)) > 0.1


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_refused(bad):
    y, p = _data(8, n=20)
    p[3] = bad
    with pytest.raises(AuditInputError) as ei:
        smooth_ece(y, p)
    assert ei.value.code == "METRIC_NOT_FINITE"


# ------------------------------------------------------------ reliability band
def test_frequency_band_matches_the_binomial_spread_and_marks_empty_bins():
    rng = np.random.default_rng(9)
    p = rng.uniform(0.0, 0.6, 6000)  # bins above 0.6 of 10 stay empty
    y = (rng.uniform(size=len(p)) < p).astype(int)
    b = bin_ids(p, 10)
    lo, hi = frequency_band(b, y, 10, n_boot=2000, seed=1)
    tab = calibration_bins(y, p, n_bins=10)
    live = tab["count"].to_numpy() > 0
    assert live.sum() == 6 and np.isnan(lo[~live]).all() and np.isnan(hi[~live]).all()
    f, n = tab["frac_pos"].to_numpy()[live], tab["count"].to_numpy()[live]
    assert ((lo[live] <= f) & (f <= hi[live])).all()
    # width ≈ 2 · 1.96 · sqrt(f (1 − f) / n_b): the bootstrap of a proportion
    want = 2 * 1.96 * np.sqrt(f * (1 - f) / n)
    assert np.allclose(hi[live] - lo[live], want, rtol=0.15)
    # seeded
    lo2, hi2 = frequency_band(b, y, 10, n_boot=2000, seed=1)
    assert np.array_equal(lo, lo2, equal_nan=True) and np.array_equal(hi, hi2, equal_nan=True)
    assert not math.isnan(lo[0])


def test_reliability_figure_draws_the_band_and_names_the_smooth_ece():
    import pandas as pd

    from components.figures.transport import reliability_figure

    rows = []
    for dom, shift in (("id", 0.0), ("ood", 0.1)):
        rng = np.random.default_rng(10 if dom == "id" else 11)
        p = rng.uniform(0, 1, 3000)
        y = (rng.uniform(size=len(p)) < np.clip(p + shift, 0, 1)).astype(int)
        b = calibration_bins(y, p, n_bins=10)
        b["frac_pos_low"], b["frac_pos_high"] = frequency_band(bin_ids(p, 10), y, 10, seed=3)
        b["smooth_ece"] = smooth_ece(y, p)
        b["domain"], b["model"], b["mapping"] = dom, "m", "raw"
        rows.append(b)
    bins = pd.concat(rows, ignore_index=True)
    fig = reliability_figure(bins, model="m", mapping="raw", smooth=True)
    bands = [t for t in fig.data if t.name and "bootstrap band" in t.name]
    assert len(bands) == 2 and all(t.fill == "toself" for t in bands)
    # the band's polygon: upper edge left to right, then the lower edge back
    ood = bins[bins["domain"] == "ood"]
    assert np.allclose(bands[1].y[:10], ood["frac_pos_high"]) and np.allclose(bands[1].y[10:], ood["frac_pos_low"][::-1])
    # the smooth ECE is another estimator than the headline ECE-15: stated beside the diagram, labelled so, and
    # never in a legend entry where it could be read as the ECE of the sentences
    assert not [t.name for t in fig.data if t.name and "smooth ECE" in t.name]
    assert not [a for a in reliability_figure(bins, model="m", mapping="raw").layout.annotations
                if "smooth ECE" in a.text]  # only when asked (the first figure states the headline ECE alone)
    notes = [a.text for a in fig.layout.annotations if "smooth ECE" in a.text]
    assert notes == [f"Another estimator, smooth ECE (kernel, pooled records): ID {bins['smooth_ece'].iloc[0]:.3f}, "
                     f"OOD {ood['smooth_ece'].iloc[0]:.3f}"]
    # a saved run from before the band still draws (no band columns)
    old = reliability_figure(bins.drop(columns=["frac_pos_low", "frac_pos_high", "smooth_ece"]), model="m",
                             mapping="raw")
    assert not [t for t in old.data if t.name and "band" in t.name]
