"""Certificates worked out by hand on a tiny linear model, plus JSON and verify.

The model is a binary logistic model ``p_1 = σ(s)`` with ``s = w·x + b``. Its
pseudo-logits are ``z = log p - mean(log p)``, so the margin of class 1 is
``z_1 - z_0 = log p_1 - log p_0 = s`` and the margin of class 0 is ``-s``.
Every quantity below follows from that by hand.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from audit_core.data.groups import Grouping
from audit_core.errors import AuditInputError
from audit_core.fragility import (
    Certificate,
    FragilityConfig,
    beam_min_flip,
    certify,
    compare_search,
    exact_min_flip,
    verify,
)


class Linear:
    """predict_proba of σ(w·x + b) for a binary task."""

    def __init__(self, w, b):
        self.w, self.b = np.asarray(w, float), float(b)

    def predict_proba(self, X):
        s = np.asarray(X, float) @ self.w + self.b
        p1 = 1 / (1 + np.exp(-s))
        return np.column_stack([1 - p1, p1])


def one_per_group(n: int) -> Grouping:
    names = tuple(f"g{i}" for i in range(n))
    return Grouping(features=names, raw_columns=names, group_of=names, names=names)


# Case: x = (1, 1, 1), baseline 0, w = (3, 2, 1), b = -1.5
#   s = 3 + 2 + 1 - 1.5 = 4.5 > 0  ->  ŷ = 1, m0 = 4.5
#   removing group g sets x_g = 0, so Δ_g = w_g x_g: Δ = (3, 2, 1), π = (0, 1, 2)
#   K = min(5, G) = 3
#   path margins: k=0: 4.5; k=1: 4.5-3 = 1.5; k=2: 1.5-2 = -0.5 (flip); k=3: -0.5-1 = -1.5
#   k* = 2 (first k with a negative margin)
#   RCMA = (1/3)·[(4.5-1.5) + (4.5+0.5) + (4.5+1.5)] / (4.5 + ε) = (14/3)/(4.5 + 1e-8) ≈ 14/13.5
#   interpolate on all three groups: s(λ) = (1-λ)·6 - 1.5 = 4.5 - 6λ
#     λ=0.7 -> 0.3 (no flip); λ=0.8 -> -0.3 (flip)  ->  λ* = 0.8, j* = 8
#     d = (L + 1 - j*)/L = (10 + 1 - 8)/10 = 0.3
#   FDS = (1/3)(K+1-k*)/K + (1/3)(1 - e^{-RCMA}) + (1/3) d = (1/3)(2/3) + (1/3)(1-e^{-14/13.5}) + 0.1
W, B = (3.0, 2.0, 1.0), -1.5
X1 = np.array([[1.0, 1.0, 1.0]])
BASE = np.zeros(3)
CFG = FragilityConfig(families=("interpolate",))


def _cert(x=X1, w=W, b=B, cfg=CFG):
    model = Linear(w, b)
    batch = certify(model, x, grouping=one_per_group(len(w)), baseline=np.zeros(len(w)), scale=np.ones(len(w)), config=cfg)
    return model, batch


def test_hand_computed_certificate():
    _, batch = _cert()
    c = batch.certificate(0)
    assert c.y_hat == 1 and c.m0 == pytest.approx(4.5, rel=1e-9)
    assert c.delta == pytest.approx((3.0, 2.0, 1.0), rel=1e-9)
    assert c.order == (0, 1, 2) and c.path_groups == (0, 1, 2)
    assert c.path_margins == pytest.approx((4.5, 1.5, -0.5, -1.5), rel=1e-9)
    assert c.path_labels == (1, 1, 0, 0)
    assert c.k_star == 2
    rcma = (14 / 3) / (4.5 + 1e-8)
    assert c.rcma == pytest.approx(rcma, rel=1e-9)
    assert c.lambda_star["interpolate"] == pytest.approx(0.8)
    assert c.d == pytest.approx(0.3)
    assert c.curves["interpolate"][6] == pytest.approx(0.3, abs=1e-9)  # λ = 0.7: 4.5 - 4.2
    fds = (1 / 3) * (2 / 3) + (1 / 3) * (1 - math.exp(-rcma)) + (1 / 3) * 0.3
    assert c.fds == pytest.approx(fds, rel=1e-9)
    assert c.removal_order_names() == ["g0", "g1", "g2"]


def test_negative_prediction_uses_margin_of_class_zero():
    # x = (1, 1, 0), w = (-2, -1, 4), b = 0.5: s = -2 - 1 + 0 + 0.5 = -2.5 -> ŷ = 0, m0 = +2.5
    # margin of class 0 is -s; removing g (x_g -> 0) changes s by -w_g x_g, so m_0 changes by +w_g x_g:
    #   Δ_g = -(w_g x_g) ... precisely Δ_g = m0 - m_0(R) = (-s) - (-(s - w_g x_g)) = -w_g x_g
    #   Δ = (2, 1, -0) -> π = (0, 1, 2) (Δ_2 = 0, the smallest)
    #   path: k=1: s = -0.5 -> m = 0.5; k=2: s = 0.5 -> m = -0.5 (flip, k* = 2); k=3 unchanged: -0.5
    #   RCMA = (1/3)[(2.5-0.5) + (2.5+0.5) + (2.5+0.5)]/2.5 = (1/3)(8)/2.5 = 16/15
    _, batch = _cert(x=np.array([[1.0, 1.0, 0.0]]), w=(-2.0, -1.0, 4.0), b=0.5)
    c = batch.certificate(0)
    assert c.y_hat == 0 and c.m0 == pytest.approx(2.5)
    assert c.delta == pytest.approx((2.0, 1.0, 0.0), abs=1e-9)
    assert c.order == (0, 1, 2)
    assert c.path_margins == pytest.approx((2.5, 0.5, -0.5, -0.5), abs=1e-9)
    assert c.k_star == 2 and c.rcma == pytest.approx(16 / 15)


def test_ties_broken_by_group_index_and_no_flip_gives_K_plus_1():
    # w = (1, 2, 2), x = (1,1,1), b = 10: s = 15; Δ = (1, 2, 2) -> π = (1, 2, 0) (tie 1 vs 2 -> index 1 first)
    # K = 2: path s = 13, 11 -> never flips -> k* = K + 1 = 3
    # RCMA = (1/2)[(15-13) + (15-11)]/15 = 3/15 = 0.2
    # interpolate top-2 groups {1, 2}: s(λ) = 1 + 4(1-λ) + 10 > 0 -> no flip -> d = 0
    # FDS = (1/3)·0 + (1/3)(1 - e^{-0.2}) + 0
    _, batch = _cert(w=(1.0, 2.0, 2.0), b=10.0, cfg=FragilityConfig(k=2, families=("interpolate",)))
    c = batch.certificate(0)
    assert c.order == (1, 2, 0) and c.path_groups == (1, 2)
    assert c.k_star == 3 and c.rcma == pytest.approx(0.2)
    assert c.lambda_star["interpolate"] is None and c.d == 0.0
    assert c.fds == pytest.approx((1 - math.exp(-0.2)) / 3)


def test_dropout_and_noise_at_full_severity():
    # dropout at λ = 1 drops every coordinate of the top-K groups (u < 1 always): s = -1.5 -> flip at j = 10
    # the flip rate is 1 over all draws, and at λ ≤ 0.5 at most... we only check the last grid point here.
    # noise with scale 0 never moves x: margin stays 4.5 at every severity -> λ* none, d_noise = 0
    model, batch = _cert(cfg=FragilityConfig(families=("dropout", "noise"), n_draws=5))
    model2 = Linear(W, B)
    b0 = certify(model2, X1, grouping=one_per_group(3), baseline=BASE, scale=np.zeros(3),
                 config=FragilityConfig(families=("dropout", "noise"), n_draws=5))
    c = b0.certificate(0)
    assert c.flip_rates["dropout"][-1] == 1.0
    assert c.curves["dropout"][-1] == pytest.approx(-1.5)
    assert c.curves["noise"] == pytest.approx((4.5,) * 10)
    assert c.lambda_star["noise"] is None and c.d_family["noise"] == 0.0


def test_exact_and_beam_search_by_hand():
    # singles: s - w_g = 1.5, 2.5, 3.5 > 0: none flips; pair {0,1}: 4.5 - 5 = -0.5 flips.
    # lexicographic enumeration of pairs meets {0,1} first -> exact min 2, set (0, 1)
    model, batch = _cert()
    ex = exact_min_flip(model, X1, batch.protocol)
    assert ex.min_size.tolist() == [2] and ex.best_set == [(0, 1)] and ex.complete.all()
    # evaluated: 3 singles + 1 pair (stops at the first flipping pair)
    assert ex.n_evaluated.tolist() == [4]
    bm = beam_min_flip(model, X1, batch.protocol, width=2)
    assert bm.min_size.tolist() == [2]
    s = compare_search(batch.k_star, ex)
    assert s.share_equal == 1.0 and s.mean_gap == 0.0


def test_exact_budget_marks_incomplete():
    # budget 2 < the 3 singles: the size-1 layer is cut, the minimum is unsettled
    model, batch = _cert()
    ex = exact_min_flip(model, X1, batch.protocol, budget=2)
    assert not ex.complete[0] and ex.min_size[0] == 4
    assert compare_search(batch.k_star, ex).n_compared == 0


def test_json_round_trip_and_verify():
    model, batch = _cert(cfg=FragilityConfig(n_draws=4))
    c = batch.certificate(0)
    back = Certificate.from_json(c.to_json())
    assert back == c
    rep = verify(back, model, X1[0], grouping=one_per_group(3))
    assert rep.ok, rep.mismatches


def test_verify_reports_tampering():
    model, batch = _cert()
    d = batch.certificate(0).to_dict()
    d["k_star"] = 3
    d["rcma"] = 0.0
    rep = verify(Certificate.from_dict(d), model, X1[0])
    assert not rep.ok
    assert {m[0] for m in rep.mismatches} >= {"k_star", "rcma"}
    assert len(rep.to_frame()) == len(rep.mismatches)


def test_verify_refuses_other_grouping():
    model, batch = _cert()
    other = Grouping(("g0", "g1", "g2"), ("g0", "g1", "g2"), ("a", "a", "b"), ("a", "b"))
    with pytest.raises(AuditInputError) as e:
        verify(batch.certificate(0), model, X1[0], grouping=other)
    assert e.value.code == "FR_VERIFY_GROUPING"


@pytest.mark.parametrize(
    "kw, code",
    [
        (dict(k=0), "FR_BAD_K"),
        (dict(k=4), "FR_BAD_K"),
        (dict(path="sideways"), "FR_BAD_PATH"),
        (dict(grid=(0.5, 0.2)), "FR_BAD_GRID"),
        (dict(weights=(0.5, 0.5, 0.5)), "FR_BAD_WEIGHTS"),
        (dict(families=("blur",)), "FR_UNKNOWN_FAMILY"),
    ],
)
def test_declared_errors(kw, code):
    with pytest.raises(AuditInputError) as e:
        _cert(cfg=FragilityConfig(**kw))
    assert e.value.code == code


def test_bad_json_is_declared():
    with pytest.raises(AuditInputError) as e:
        Certificate.from_json("{not json")
    assert e.value.code == "FR_BAD_CERTIFICATE"
    with pytest.raises(AuditInputError):
        Certificate.from_json('{"protocol": {}}')


def test_non_finite_cases_refused():
    with pytest.raises(AuditInputError) as e:
        _cert(x=np.array([[1.0, np.nan, 1.0]]))
    assert e.value.code == "FR_NON_FINITE"
