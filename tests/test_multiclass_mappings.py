"""Multi-class mappings: temperature is the weighted NLL minimum, vector scaling nests it, fits are deterministic."""
from __future__ import annotations

import numpy as np
import pytest

from audit_core.errors import AuditInputError
from audit_core.transport.multiclass.mappings import (
    fit_multiclass_mapping,
    fit_temperature,
    fit_vector_scaling,
    pseudo_logits,
    softmax,
    weighted_nll,
)


def _draw(rng, Q):
    """One class per row of ``Q`` (n, C): the first class whose cumulative probability passes a uniform draw."""
    return np.minimum((Q.cumsum(axis=1) < rng.uniform(size=(len(Q), 1))).sum(axis=1), Q.shape[1] - 1)


def _data(seed=0, n=2000, k=4, sharp=2.5, bias=None):
    """Over-confident probabilities: the true model is softmax(z), the reported one softmax(sharp · z + bias)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1, (n, k))
    y = _draw(rng, softmax(z))
    b = np.zeros(k) if bias is None else np.asarray(bias)
    return softmax(sharp * z + b), y, rng.uniform(0.3, 3, n)


def _nll_T(P, y, w, T):
    return weighted_nll(pseudo_logits(P) / T, y, w)


@pytest.mark.parametrize("seed", [0, 1])
def test_fitted_temperature_minimises_weighted_nll(seed):
    P, y, w = _data(seed)
    m = fit_multiclass_mapping("temperature", P, y, sample_weight=w)
    T = m.params["T"]
    assert not m.params["fallback"]
    assert T == pytest.approx(2.5, rel=0.15)  # the over-confidence put in
    best = _nll_T(P, y, w, T)
    for eps in (1e-2, 1e-3, 1e-4):
        assert best <= _nll_T(P, y, w, T * (1 + eps))
        assert best <= _nll_T(P, y, w, T * (1 - eps))
    # the weights matter: the unweighted fit is a different minimum
    assert fit_multiclass_mapping("temperature", P, y).params["T"] != pytest.approx(T, rel=1e-9)
    # and the mapped probabilities are exactly softmax(z / T)
    assert np.array_equal(m(P), softmax(pseudo_logits(P) / T))


def test_equal_weights_give_the_unweighted_temperature():
    P, y, _ = _data(2)
    assert fit_multiclass_mapping("temperature", P, y, sample_weight=np.full(len(y), 4.0)).params["T"] == pytest.approx(
        fit_multiclass_mapping("temperature", P, y).params["T"], rel=1e-10)


def test_vector_scaling_minimises_nll_and_nests_temperature_with_bias():
    P, y, w = _data(3, bias=[0.0, 0.8, -0.5, 0.2])
    z = pseudo_logits(P)
    a, b, ok = fit_vector_scaling(z, y, w)
    at, bt, okt = fit_vector_scaling(z, y, w, tie_scales=True)
    assert ok and okt and b[0] == 0 and bt[0] == 0
    assert np.ptp(at) == 0  # tied: one shared scale
    nll_v, nll_tb = weighted_nll(z * a + b, y, w), weighted_nll(z * at + bt, y, w)
    T = fit_temperature(z, y, w)
    nll_t = weighted_nll(z / T, y, w)
    # nested models: vector ⊇ temperature-with-bias ⊇ temperature
    assert nll_v <= nll_tb + 1e-12 <= nll_t + 2e-12
    # the optimum: no coordinate perturbation of (a, b) lowers the NLL
    for j in range(len(a)):
        for d in (1e-3, -1e-3):
            e = np.zeros(len(a)); e[j] = d
            assert nll_v <= weighted_nll(z * (a + e) + b, y, w)
            if j:
                assert nll_v <= weighted_nll(z * a + b + e, y, w)
    # with equal scales vector scaling IS temperature with bias: same function of P
    m = fit_multiclass_mapping("vector", P, y, sample_weight=w)
    from audit_core.transport.multiclass.mappings import MulticlassMapping

    tied = MulticlassMapping("vector", {"scale": tuple(at), "bias": tuple(bt)})
    np.testing.assert_allclose(tied(P), softmax(pseudo_logits(P) / (1 / at[0]) + bt), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m(P), softmax(z * a + b), rtol=1e-12, atol=1e-15)


def test_tied_vector_without_bias_equals_temperature():
    """Temperature with no bias is the tied model at b = 0: its fitted 1/T is the tied scale when the true bias is 0."""
    P, y, w = _data(4, n=20000, sharp=1.8)
    z = pseudo_logits(P)
    at, bt, _ = fit_vector_scaling(z, y, w, tie_scales=True)
    T = fit_temperature(z, y, w)
    assert at[0] == pytest.approx(1 / T, rel=0.02)
    assert np.abs(bt).max() < 0.05


def test_vector_scaling_recovers_per_class_scales_on_data_built_with_them():
    rng = np.random.default_rng(5)
    n, k = 30000, 3
    z = rng.normal(0, 1, (n, k))
    z -= z.mean(axis=1, keepdims=True)
    true_a, true_b = np.array([0.5, 1.0, 2.0]), np.array([0.0, 0.5, -0.5])
    y = _draw(rng, softmax(z * true_a + true_b))
    a, b, ok = fit_vector_scaling(z, y, np.ones(n))
    assert ok
    np.testing.assert_allclose(a, true_a, atol=0.1)  # sampling error only (n = 30000)
    np.testing.assert_allclose(b, true_b, atol=0.1)
    # the MLE is at least as likely as the truth
    assert weighted_nll(z * a + b, y, np.ones(n)) <= weighted_nll(z * true_a + true_b, y, np.ones(n))


def test_fits_are_deterministic_and_raw_is_identity():
    P, y, w = _data(6, n=500)
    for kind in ("temperature", "vector"):
        m1 = fit_multiclass_mapping(kind, P, y, sample_weight=w)
        m2 = fit_multiclass_mapping(kind, P, y, sample_weight=w)
        assert m1.params == m2.params
        assert np.array_equal(m1(P), m2(P))
        np.testing.assert_allclose(m1(P).sum(axis=1), 1.0, rtol=0, atol=1e-12)
    raw = fit_multiclass_mapping("raw", P, y)
    assert raw(P) is not None and np.array_equal(raw(P), P)


def test_unknown_mapping_is_named():
    P, y, _ = _data(7, n=50)
    with pytest.raises(AuditInputError, match="'platt'.*raw, temperature, vector"):
        fit_multiclass_mapping("platt", P, y)
