"""Temperature scaling and beta calibration: from-definition fits (scipy optimiser), monotonicity, protocol use."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from audit_core.transport.config import TransportConfig
from audit_core.transport.mappings import DEFAULT_MAPPINGS, MAPPINGS, fit_mapping


def _cal_data(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1.2, n)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.3 + 0.6 * x)))).astype(float)
    p = 1 / (1 + np.exp(-1.7 * x))  # over-confident scores
    return p, y, rng.uniform(0.3, 2.5, n)


def _nll(z, y, w):
    return float(np.sum(w * (np.logaddexp(0, z) - y * z)))


@pytest.mark.parametrize("weighted", [False, True])
def test_temperature_equals_the_mle_by_a_general_optimiser(weighted):
    p, y, w = _cal_data()
    w = w if weighted else np.ones(len(y))
    lg = np.log(p) - np.log1p(-p)
    res = minimize(lambda t: _nll(lg / t[0], y, w), x0=[1.0], method="Nelder-Mead",
                   options=dict(xatol=1e-10, fatol=1e-12, maxiter=4000))
    m = fit_mapping("temperature", p, y, sample_weight=w)
    assert m.params["T"] == pytest.approx(res.x[0], rel=1e-6) and not m.params["fallback"]
    assert m.params["T"] > 1  # over-confident scores are softened
    assert np.allclose(m(p), 1 / (1 + np.exp(-lg / res.x[0])), atol=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
def test_beta_calibration_equals_its_definition(weighted):
    p, y, w = _cal_data(1)
    w = w if weighted else np.ones(len(y))
    f1, f2 = np.log(p), -np.log1p(-p)
    res = minimize(lambda t: _nll(t[0] + t[1] * f1 + t[2] * f2, y, w), x0=[0.0, 1.0, 1.0], method="BFGS",
                   options=dict(gtol=1e-9))
    m = fit_mapping("beta", p, y, sample_weight=w)
    assert [m.params["c"], m.params["a"], m.params["b"]] == pytest.approx(list(res.x), abs=1e-4)
    q = m(p)
    assert np.allclose(q, 1 / (1 + np.exp(-(res.x[0] + res.x[1] * f1 + res.x[2] * f2))), atol=1e-5)


def test_beta_drops_a_negative_shape_and_stays_monotone():
    # labels that fall with p at the top: the unconstrained fit has b < 0 (non-monotone); the rule drops it
    rng = np.random.default_rng(4)
    p = rng.uniform(0.01, 0.99, 4000)
    truth = np.where(p < 0.5, p, 0.5 + 0.2 * (p - 0.5))
    y = (rng.uniform(size=len(p)) < truth).astype(float)
    f1, f2 = np.log(p), -np.log1p(-p)
    free = minimize(lambda t: _nll(t[0] + t[1] * f1 + t[2] * f2, y, np.ones(len(y))), x0=[0, 1, 1], method="BFGS").x
    assert free[2] < 0  # the unconstrained fit is not monotone
    m = fit_mapping("beta", p, y)
    assert m.params["b"] == 0.0 and m.params["a"] > 0
    grid = np.linspace(0.001, 0.999, 500)
    assert np.all(np.diff(m(grid)) >= 0)


def test_separated_calibration_falls_back_to_identity():
    p = np.array([0.1, 0.2, 0.8, 0.9])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    for kind, key in (("temperature", "T"), ("beta", "a")):
        m = fit_mapping(kind, p, y)
        assert m.params["fallback"] and np.allclose(m(p), p)


def test_new_mappings_are_declarable_but_not_default():
    assert {"temperature", "beta"} <= set(MAPPINGS) and DEFAULT_MAPPINGS == ("raw", "platt", "isotonic")
    base = dict(targets=({"kind": "class", "name": "t", "column": "y", "positive": 1},), numeric=("x",))
    assert TransportConfig(**base).mappings == DEFAULT_MAPPINGS
    assert TransportConfig(**base, mappings=("temperature", "beta")).mappings == ("temperature", "beta")
