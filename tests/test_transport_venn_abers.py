"""Venn-Abers: by hand, from the definition (one isotonic refit per test score), against venn-abers (peer oracle),
weights, and its use in the protocol (the mapping, the width metric and its verdict, the reliability band)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.isotonic import IsotonicRegression
from venn_abers import VennAbers as PeerVennAbers  # test-only peer oracle, pinned in requirements-test.txt

from audit_core.transport.mappings import DEFAULT_MAPPINGS, MAPPINGS, fit_mapping
from audit_core.transport.venn_abers import fit_venn_abers
from audit_core.transport.verdicts import DEFAULT_TOLERANCES, GOOD_DIRECTION


# ------------------------------------------------------------ by hand
# Calibration scores 0.1, 0.3, 0.5, 0.7 with labels 0, 1, 0, 1. The isotonic fit pools adjacent violators.
# s = 0.4 (between 0.3 and 0.5):
#   p0: labels in score order 0, 1, [0], 0, 1 → pool 1, 0, 0 → 1/3        → p0 = 1/3
#   p1: labels 0, 1, [1], 0, 1 → pool 1, 1, 0 → 2/3                        → p1 = 2/3
#   p = (2/3) / (1 − 1/3 + 2/3) = 1/2
# s = 0.7 (tied with the calibration score 0.7, label 1: the test object joins its group):
#   p0: 0, 1, 0, {1, 0} → 0 | (1, 0) = 1/2 | {1, 0} = 1/2: no violation   → p0 = 1/2
#   p1: 0, 1, 0, {1, 1} → 0 | 1/2 | 1                                     → p1 = 1
#   p = 1 / (1 − 1/2 + 1) = 2/3
# s = 0.0 (below every score):
#   p0: [0], 0, 1, 0, 1 → 0, 0, 1/2, 1                                    → p0 = 0
#   p1: [1], 0, 1, 0, 1 → (1, 0) = 1/2, (1, 0) = 1/2, 1                   → p1 = 1/2
#   p = (1/2) / (1 − 0 + 1/2) = 1/3
# s = 0.9 (above every score):
#   p0: 0, 1, 0, 1, [0] → 0, 1/2, (1, 0) = 1/2                            → p0 = 1/2
#   p1: 0, 1, 0, 1, [1] → 0, 1/2, 1, 1                                    → p1 = 1
#   p = 1 / (1 − 1/2 + 1) = 2/3
HAND = [(0.4, 1 / 3, 2 / 3, 1 / 2), (0.7, 1 / 2, 1.0, 2 / 3), (0.0, 0.0, 1 / 2, 1 / 3), (0.9, 1 / 2, 1.0, 2 / 3)]


def test_hand_computed_toy():
    va = fit_venn_abers([0.1, 0.3, 0.5, 0.7], [0, 1, 0, 1])
    s = np.array([h[0] for h in HAND])
    p0, p1 = va.interval(s)
    np.testing.assert_allclose(p0, [h[1] for h in HAND], atol=1e-15)
    np.testing.assert_allclose(p1, [h[2] for h in HAND], atol=1e-15)
    np.testing.assert_allclose(va.predict(s), [h[3] for h in HAND], atol=1e-15)


# ------------------------------------------------------------ from the definition
def _by_definition(sc, yc, wc, st):
    """p0, p1 by one weighted isotonic refit per test score and label (the test object has weight 1)."""
    out = np.empty((2, len(st)))
    for i, s in enumerate(st):
        for lab in (0, 1):
            iso = IsotonicRegression().fit(np.r_[sc, s], np.r_[yc, lab], sample_weight=np.r_[wc, 1.0])
            out[lab, i] = iso.predict([s])[0]
    return out[0], out[1]


def _case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    decimals = [None, 1, 2][seed % 3]  # rounded scores: ties in the calibration set and with the test scores
    sc = rng.uniform(size=n)
    yc = (rng.uniform(size=n) < sc).astype(float)
    st = np.r_[rng.uniform(size=12), sc[:6], -0.2, 1.2]
    if decimals is not None:
        sc, st = np.round(sc, decimals), np.round(st, decimals)
    return rng, sc, yc, st


@pytest.mark.parametrize("seed", range(60))
def test_equals_an_isotonic_refit_per_test_score(seed):
    rng, sc, yc, st = _case(seed)
    va = fit_venn_abers(sc, yc)
    p0, p1 = va.interval(st)
    d0, d1 = _by_definition(sc, yc, np.ones(len(sc)), st)
    np.testing.assert_allclose(p0, d0, atol=1e-12)
    np.testing.assert_allclose(p1, d1, atol=1e-12)
    assert np.all(p0 <= p1) and np.all(np.diff(va.predict(np.sort(st))) >= 0)  # the merged p is monotone


@pytest.mark.parametrize("seed", range(30))
def test_weighted_equals_a_weighted_refit_with_the_test_object_as_one_average_record(seed):
    rng, sc, yc, st = _case(seed)
    w = rng.uniform(0.2, 3.0, len(sc))
    p0, p1 = fit_venn_abers(sc, yc, sample_weight=w).interval(st)
    d0, d1 = _by_definition(sc, yc, w * len(w) / w.sum(), st)  # calibration weights rescaled to mean 1
    np.testing.assert_allclose(p0, d0, atol=1e-12)
    np.testing.assert_allclose(p1, d1, atol=1e-12)


def test_equal_weights_give_the_unweighted_predictor_and_zero_weights_drop_records():
    rng, sc, yc, st = _case(7)
    plain = fit_venn_abers(sc, yc).interval(st)
    for got in (fit_venn_abers(sc, yc, sample_weight=np.full(len(sc), 3.7)).interval(st),):
        np.testing.assert_allclose(got, plain, atol=1e-12)
    w = np.ones(len(sc) + 3)
    w[-3:] = 0.0
    dropped = fit_venn_abers(np.r_[sc, 0.5, 0.6, 0.7], np.r_[yc, 1, 0, 1], sample_weight=w).interval(st)
    np.testing.assert_allclose(dropped, plain, atol=1e-12)


# ------------------------------------------------------------ peer oracle
def _peer(sc, yc, st):
    peer = PeerVennAbers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the peer's own all-NaN slice warning
        peer.fit(np.c_[1 - sc, sc], yc.astype(int))
        p_prime, p01 = peer.predict_proba(np.c_[1 - st, st])
    return p01[:, 0], p01[:, 1], p_prime[:, 1]


@pytest.mark.parametrize("seed", range(40))
def test_agrees_with_venn_abers_package(seed):
    rng, sc, yc, st = _case(seed)
    if yc.min() == yc.max():
        yc[0] = 1 - yc[0]
    va = fit_venn_abers(sc, yc)
    q0, q1, q = _peer(sc, yc, st)
    p0, p1 = va.interval(st)
    np.testing.assert_allclose(p0, q0, atol=1e-12)
    np.testing.assert_allclose(p1, q1, atol=1e-12)
    np.testing.assert_allclose(va.predict(st), q, atol=1e-12)


def test_agrees_with_venn_abers_package_on_large_data_with_ties():
    rng = np.random.default_rng(11)
    sc = np.round(rng.beta(2, 5, 20_000), 3)  # 3-decimal scores: heavy ties, and every test score tied
    yc = (rng.uniform(size=len(sc)) < sc).astype(float)
    st = np.r_[np.round(rng.beta(2, 4, 5_000), 3), rng.beta(2, 4, 5_000)]
    va = fit_venn_abers(sc, yc)
    q0, q1, q = _peer(sc, yc, st)
    p0, p1 = va.interval(st)
    assert max(np.abs(p0 - q0).max(), np.abs(p1 - q1).max(), np.abs(va.predict(st) - q).max()) < 1e-12


# ------------------------------------------------------------ the mapping and the registry
def test_mapping_is_declarable_not_default_and_its_width_has_a_tolerance_and_direction():
    assert "venn_abers" in MAPPINGS and "venn_abers" not in DEFAULT_MAPPINGS
    assert DEFAULT_TOLERANCES["venn_abers_width"] > 0 and GOOD_DIRECTION["venn_abers_width"] == "lower"
    m = fit_mapping("venn_abers", np.array([0.1, 0.3, 0.5, 0.7]), np.array([0, 1, 0, 1]))
    s = np.array([h[0] for h in HAND])
    np.testing.assert_allclose(m(s), [h[3] for h in HAND], atol=1e-15)
    np.testing.assert_allclose(m.extra_metrics(s)["venn_abers_width"], [h[2] - h[1] for h in HAND], atol=1e-15)
    assert fit_mapping("platt", s, np.array([0, 1, 0, 1])).extra_metrics(s) == {}


# ------------------------------------------------------------ in the protocol
@pytest.fixture(scope="module")
def weighted_loan_runs():
    """The weighted loan sample under isotonic and Venn-Abers, binned and exact bootstraps."""
    from dataclasses import replace

    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample
    from audit_core.transport import TransportAudit, TransportConfig

    frame, info = load_sample("loan_synthetic")
    frame = frame.assign(survey_weight=0.5 + (frame["application_id"].rank() % 7) / 4)
    ds = build_dataset(frame, DatasetConfig(
        name="loan", targets=info.target_definitions[:1], domain_column="year", source_domain=2019,
        target_domain=2023, group_column="branch_id", key_column="application_id", strata_columns=("region",),
        weight_column="survey_weight", roles={c: "ignore" for c in info.exclude_columns + ("survey_weight",)}))
    cfg = TransportConfig.from_dataset(ds, n_refits=2, n_bootstrap=60, stresses=(), mappings=("isotonic", "venn_abers"),
                                       models=("logistic_regression",))
    binned = TransportAudit(cfg)
    binned.run(ds.frame)
    exact = TransportAudit(replace(cfg, exact_bootstrap=True)).run(ds.frame)
    return binned, exact


def test_width_and_metrics_come_from_the_calibration_partition_fit(weighted_loan_runs):
    # the mapping is fitted on the calibration partition with its weights (fit_venn_abers is checked against
    # the definition and the peer above); the width rows are the plain and the weighted test means of p1 − p0
    audit, _ = weighted_loan_runs
    t = audit.result().table
    c = audit.config
    for r in range(c.n_refits):
        raw = audit.state.pipes[(r, "logistic_regression")]["raw"]
        cal = audit.state.source_rows(r, "calibration")
        va = fit_venn_abers(raw["calibration"], audit.state.y_source[c.primary_target][cal], sample_weight=audit.state.w_source[cal])
        for dom, y, w, _ in audit.state.test_sets(r):
            s = raw["id_test" if dom == "id" else "ood"]
            p0, p1 = va.interval(s)
            pick = (t.analysis == "metrics") & (t.domain == dom) & (t.refit == r) & (t.condition == "clean") & (
                t.mapping == "venn_abers")
            for weighting, want in (("unweighted", np.mean(p1 - p0)), ("weighted", np.sum(w * (p1 - p0)) / w.sum())):
                got = t[pick & (t.metric == "venn_abers_width") & (t.weighting == weighting)]["value"]
                assert len(got) == 1 and got.iloc[0] == pytest.approx(float(want), abs=1e-12)
            brier = t[pick & (t.metric == "brier_score") & (t.weighting == "unweighted")]["value"]
            assert brier.iloc[0] == pytest.approx(float(np.mean((va.predict(s) - y) ** 2)), abs=1e-12)
    rows = t[t.metric == "venn_abers_width"]
    assert set(rows["mapping"]) == {"venn_abers"} and set(rows["weighting"]) == {"unweighted", "weighted"}


def test_width_gets_a_verdict_and_the_binned_bootstrap_gives_the_exact_interval(weighted_loan_runs):
    audit, exact = weighted_loan_runs
    vb, ve = audit.result().verdicts, exact.verdicts
    sel = (vb["metric"] == "venn_abers_width").to_numpy()
    assert sel.sum() == 2 and set(vb.loc[sel, "weighting"]) == {"unweighted", "weighted"}
    assert (vb.loc[sel, "tolerance"] == DEFAULT_TOLERANCES["venn_abers_width"]).all()
    assert vb.loc[sel, "verdict"].isin(["transport-stable", "transport-sensitive", "indeterminate"]).all()
    # (p0, p1) is a step function of the merged p̂, so the width is a step column: identical replicates
    np.testing.assert_allclose(vb.loc[sel, ["ci_low", "ci_high"]].to_numpy(float),
                               ve.loc[sel, ["ci_low", "ci_high"]].to_numpy(float), atol=1e-12)
    assert (vb["verdict"] == ve["verdict"]).all()


def test_reliability_band_is_each_bins_mean_interval_and_is_drawn(weighted_loan_runs):
    from audit_core.metrics import bin_ids
    from components.figures.transport import reliability_figure

    audit, _ = weighted_loan_runs
    rel = audit.result().extras["reliability"]
    iso = rel[rel.mapping == "isotonic"]
    assert iso["va_p0"].isna().all()  # other mappings have no interval
    b = rel[(rel.mapping == "venn_abers") & (rel.domain == "ood")]
    # the figure table pools the records of every refit: each refit's own Venn-Abers fit, its OOD records binned
    q0, q1, ids = [], [], []
    for r in range(audit.config.n_refits):
        raw = audit.state.pipes[(r, "logistic_regression")]["raw"]
        cal = audit.state.source_rows(r, "calibration")
        va = fit_venn_abers(raw["calibration"], audit.state.y_source[audit.config.primary_target][cal],
                            sample_weight=audit.state.w_source[cal])
        (a, b1), q = va.interval(raw["ood"]), va.predict(raw["ood"])
        q0.append(a), q1.append(b1), ids.append(bin_ids(q, audit.config.n_bins))
    q0, q1, ids = np.concatenate(q0), np.concatenate(q1), np.concatenate(ids)
    for _, row in b[b["count"] > 0].iterrows():
        k = ids == row["bin"]
        assert row["va_p0"] == pytest.approx(q0[k].mean(), abs=1e-12)
        assert row["va_p1"] == pytest.approx(q1[k].mean(), abs=1e-12)
    fig = reliability_figure(rel, model="logistic_regression", mapping="venn_abers")
    bands = [t for t in fig.data if "Venn-Abers" in (t.name or "")]
    assert len(bands) == 2  # ID and OOD
    nz = b[b["count"] > 0]
    ood = [t for t in bands if t.name.startswith("OOD")][0]
    np.testing.assert_allclose(ood.y, np.r_[nz["va_p1"], nz["va_p0"][::-1]])
    np.testing.assert_allclose(ood.x, np.r_[nz["mean_p"], nz["mean_p"][::-1]])
    assert not [t for t in reliability_figure(rel, model="logistic_regression", mapping="isotonic").data
                if "Venn-Abers" in (t.name or "")]
