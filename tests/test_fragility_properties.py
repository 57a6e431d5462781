"""Property tests: certificate invariants (hypothesis) and one registry-style test
over every operator family and every brittleness score."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_core.data.groups import Grouping
from audit_core.fragility import (
    FAMILIES,
    Certificate,
    FragilityConfig,
    beam_min_flip,
    certify,
    degrade,
    draw_uniforms,
    exact_min_flip,
    remove,
    verify,
)
from audit_core.fragility.evaluation import SCORES, brittleness_scores
from audit_core.metrics import auroc_by_row
from audit_core.fragility.stressors import brittle_labels, donor_replacement

from test_fragility_certificates import Linear

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def problem(seed: int, n_groups: int, n_cases: int = 6):
    """Binary LR-style linear model on disjoint groups of 1-3 columns."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, size=n_groups)
    group_of = tuple(f"g{g}" for g, s in enumerate(sizes) for _ in range(s))
    feats = tuple(f"f{i}" for i in range(len(group_of)))
    grouping = Grouping(feats, feats, group_of, tuple(dict.fromkeys(group_of)))
    F = len(feats)
    model = Linear(rng.normal(size=F), rng.normal())
    X = rng.normal(size=(n_cases, F))
    return model, X, grouping, rng.normal(size=F) * 0.3, np.abs(rng.normal(size=F)) + 0.1


@SETTINGS
@given(seed=st.integers(0, 10_000), G=st.integers(1, 7), k=st.integers(1, 7), path=st.sampled_from(["static", "adaptive"]))
def test_certificate_ranges_and_exact_bound(seed, G, k, path):
    model, X, grouping, base, scale = problem(seed, G)
    K = min(k, G)
    b = certify(model, X, grouping=grouping, baseline=base, scale=scale,
                config=FragilityConfig(k=K, path=path, n_draws=3, seed=seed))
    assert ((b.k_star >= 1) & (b.k_star <= K + 1)).all()
    assert (b.rcma >= 0).all()
    assert ((b.fds >= 0) & (b.fds <= 1 + 1e-12)).all()
    assert ((b.d >= 0) & (b.d <= 1)).all()
    ex = exact_min_flip(model, X, b.protocol, budget=10_000)
    assert ex.complete.all()
    assert (ex.min_size <= b.k_star).all()
    beam = beam_min_flip(model, X, b.protocol, width=2)
    assert (ex.min_size <= beam.min_size).all()


@SETTINGS
@given(seed=st.integers(0, 10_000), G=st.integers(2, 7))
def test_static_equals_adaptive_for_linear_model_on_disjoint_groups(seed, G):
    # Removal effects add up in the logit of a linear model, so re-ranking never changes the order.
    model, X, grouping, base, scale = problem(seed, G)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    s = certify(model, X, config=FragilityConfig(path="static", n_draws=3), **kw)
    a = certify(model, X, config=FragilityConfig(path="adaptive", n_draws=3), **kw)
    assert (s.path_groups == a.path_groups).all()
    assert (s.k_star == a.k_star).all()
    np.testing.assert_allclose(s.path_margins, a.path_margins, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.fds, a.fds, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(seed=st.integers(0, 10_000), G=st.integers(1, 6), path=st.sampled_from(["static", "adaptive"]))
def test_verify_round_trip(seed, G, path):
    model, X, grouping, base, scale = problem(seed, G, n_cases=3)
    b = certify(model, X, grouping=grouping, baseline=base, scale=scale, config=FragilityConfig(path=path, n_draws=4, seed=seed))
    for i in range(len(b)):
        c = Certificate.from_json(b.certificate(i).to_json())
        assert c == b.certificate(i)
        assert verify(c, model, X[i], grouping=grouping).ok


@SETTINGS
@given(seed=st.integers(0, 10_000), chunk=st.integers(30, 400))
def test_deterministic_under_seeds_and_chunking(seed, chunk):
    model, X, grouping, base, scale = problem(seed, 4, n_cases=9)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    a = certify(model, X, config=FragilityConfig(seed=seed, n_draws=4), **kw)
    b = certify(model, X, config=FragilityConfig(seed=seed, n_draws=4, chunk_rows=chunk), **kw)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    d1 = donor_replacement(model, X, X * 0.5, group_columns=grouping.index, n_draws=5, seed=seed)
    d2 = donor_replacement(model, X, X * 0.5, group_columns=grouping.index, n_draws=5, seed=seed)
    assert (d1.flip_rate == d2.flip_rate).all()


# ---------------------------------------------------------------------------
# Registry-style: every operator family and every score, every property.
# ---------------------------------------------------------------------------

OPERATORS = {
    "remove": lambda X, mask, lam, base, scale, u: remove(X, base, mask),
    **{
        fam: (lambda fam: lambda X, mask, lam, base, scale, u: degrade(
            fam, X, mask=mask, lam=lam, baseline=base, scale=scale, u=u))(fam)
        for fam in FAMILIES
    },
}
#: operators with a severity (λ = 0 is the identity)
GRADED = set(FAMILIES)
#: operators that are idempotent at any fixed draw
IDEMPOTENT = {"remove"}
#: operators that equal removal at λ = 1
FULL_IS_REMOVAL = {"interpolate", "dropout"}


def test_every_family_is_classified():
    assert set(OPERATORS) == {"remove", *FAMILIES}
    assert GRADED | {"remove"} == set(OPERATORS)


def _op_inputs(seed=0, n=5, F=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, F))
    mask = rng.random((n, F)) < 0.5
    base = rng.normal(size=F)
    scale = rng.random(F) + 0.1
    return X, mask, base, scale


def _draws(name, F, seed=0):
    return draw_uniforms(name, n_draws=1, n_features=F, seed=seed)[0] if name in ("dropout", "noise") else None


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_batch_equals_per_row(name):
    X, mask, base, scale = _op_inputs()
    u = _draws(name, X.shape[1])
    batch = OPERATORS[name](X, mask, np.full(len(X), 0.6), base, scale, u)
    rows = np.vstack([OPERATORS[name](X[i : i + 1], mask[i], np.array([0.6]), base, scale, u) for i in range(len(X))])
    np.testing.assert_array_equal(batch, rows)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_leaves_unmasked_columns_alone(name):
    X, mask, base, scale = _op_inputs()
    out = OPERATORS[name](X, mask, np.full(len(X), 0.7), base, scale, _draws(name, X.shape[1]))
    np.testing.assert_array_equal(out[~mask], X[~mask])
    np.testing.assert_array_equal(OPERATORS[name](X, np.zeros_like(mask), 0.7, base, scale, _draws(name, X.shape[1])), X)


@pytest.mark.parametrize("name", sorted(GRADED))
def test_graded_operator_at_zero_is_identity(name):
    X, mask, base, scale = _op_inputs()
    np.testing.assert_array_equal(OPERATORS[name](X, mask, 0.0, base, scale, _draws(name, X.shape[1])), X)


@pytest.mark.parametrize("name", sorted(IDEMPOTENT))
def test_idempotent(name):
    X, mask, base, scale = _op_inputs()
    once = OPERATORS[name](X, mask, 1.0, base, scale, None)
    np.testing.assert_array_equal(OPERATORS[name](once, mask, 1.0, base, scale, None), once)


@pytest.mark.parametrize("name", sorted(FULL_IS_REMOVAL))
def test_full_severity_is_removal(name):
    X, mask, base, scale = _op_inputs()
    np.testing.assert_allclose(OPERATORS[name](X, mask, 1.0, base, scale, _draws(name, X.shape[1])), remove(X, base, mask))


def test_noise_is_bounded_by_scale():
    X, mask, base, scale = _op_inputs()
    out = OPERATORS["noise"](X, mask, 0.5, base, scale, _draws("noise", X.shape[1]))
    assert (np.abs(out - X) <= 0.5 * scale + 1e-12).all()


# Scores: each is order-equivariant and finite; the registry must name them all.
SCORE_PROPERTIES = {name: {"equivariant", "finite"} for name in SCORES}


def test_every_score_is_classified():
    assert set(SCORE_PROPERTIES) == set(SCORES)


def _score_frame(order=None):
    model, X, grouping, base, scale = problem(3, 4, n_cases=12)
    if order is not None:
        X = X[order]
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    b = certify(model, X, config=FragilityConfig(n_draws=3), **kw)
    r = certify(model, X, config=FragilityConfig(n_draws=3, path="random"), **kw)
    extra = np.arange(len(X), dtype=float) if order is None else np.asarray(order, dtype=float)
    return brittleness_scores(b, random_order=r, perm=extra, shap_score=extra)


@pytest.mark.parametrize("name", SCORES)
def test_score_properties(name):
    base = _score_frame()
    assert name in base.columns
    if "finite" in SCORE_PROPERTIES[name]:
        assert np.isfinite(base[name]).all()
    if "equivariant" in SCORE_PROPERTIES[name] and name != "fds_random_order":
        order = np.random.default_rng(1).permutation(12)
        perm = _score_frame(order)
        np.testing.assert_allclose(perm[name].to_numpy(), base[name].to_numpy()[order], rtol=1e-9, atol=1e-12)


def test_binary_confidence_scores_rank_identically():
    s = _score_frame()
    labels = np.arange(12) % 3 == 0
    vals = [auroc_by_row(labels[None], s[c].to_numpy()[None])[0] for c in ("max_softmax", "neg_entropy", "margin", "neg_energy")]
    assert np.allclose(vals, vals[0])


def test_auroc_by_hand_and_brittle_labels():
    # scores 0.1 0.4 0.35 0.8 with labels 0 0 1 1: pairs (pos, neg): (0.35>0.1 yes, 0.35>0.4 no, 0.8>both) = 3/4
    assert auroc_by_row(np.array([[0, 0, 1, 1]]), np.array([[0.1, 0.4, 0.35, 0.8]]))[0] == pytest.approx(0.75)
    lab = brittle_labels(np.array([0.0, 0.05, 0.25, 0.5]))
    assert lab["brittle_any"].tolist() == [False, True, True, True]
    assert lab["brittle_0.25"].tolist() == [False, False, True, True]
    assert lab["brittle_0.5"].tolist() == [False, False, False, True]
