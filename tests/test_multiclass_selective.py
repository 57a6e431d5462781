"""Selective prediction on max-probability: hand-computed toy, weights, and the binary rule at C = 2."""
from __future__ import annotations

import numpy as np
import pytest

from audit_core.errors import AuditInputError
from audit_core.transport import selective as bsl
from audit_core.transport.multiclass.selective import fit_thresholds, mc_confidence, mc_errors, selective_rows


def _tri(conf, cls):
    """Rows whose maximum ``conf`` sits on class ``cls`` (three classes, the rest split evenly)."""
    P = np.full((len(conf), 3), 0.0)
    for i, (c, k) in enumerate(zip(conf, cls)):
        P[i] = (1 - c) / 2
        P[i, k] = c
    return P


def _rows(rows):
    return {(r["metric"], r.get("selection_rate")): r["value"] for r in rows}


def test_threshold_and_accepted_error_by_hand():
    # selection partition confidences .4, .5, .6, .9: s = 0.5 → τ = .6 (W(c ≥ .6) = 2/4), s = 1 → τ = .4
    sel = _tri([0.4, 0.5, 0.6, 0.9], [0, 1, 2, 0])
    thr = fit_thresholds(sel, [0.5, 1.0])
    assert thr == {0.5: 0.6, 1.0: 0.4}
    # test set: .9 right, .8 wrong, .6 right, .5 wrong
    P = _tri([0.9, 0.8, 0.6, 0.5], [0, 1, 2, 0])
    y = np.array([0, 2, 2, 1])
    assert mc_errors(y, P).tolist() == [0, 1, 0, 1]
    got = _rows(selective_rows(y, P, thr, hcep_thresholds=[0.85]))
    assert got[("rate", 0.5)] == 0.75 and got[("risk", 0.5)] == pytest.approx(1 / 3) and got[("hcep", 0.5)] == 0.25
    assert got[("rate", 1.0)] == 1.0 and got[("risk", 1.0)] == 0.5
    assert got[("rate_at_0.85", None)] == 0.25 and got[("risk_at_0.85", None)] == 0.0
    # curve after each record (most confident first): risks 0, 1/2, 1/3, 1/2 → AURC = (0 + .5 + 1/3 + .5)/4;
    # correct-first: 0, 0, 1/3, 1/2
    assert got[("aurc", None)] == pytest.approx((0.5 + 1 / 3 + 0.5) / 4)
    assert got[("excess_aurc", None)] == pytest.approx((0.5 + 1 / 3 + 0.5) / 4 - (1 / 3 + 0.5) / 4)


def test_weighted_threshold_and_share():
    sel = _tri([0.4, 0.5, 0.6, 0.9], [0, 1, 2, 0])
    # weight 3 on the most confident record: W(c ≥ .9) = 3/6 ≥ .5, so τ = .9
    assert fit_thresholds(sel, [0.5], sample_weight=np.array([1, 1, 1, 3.0])) == {0.5: 0.9}
    P = _tri([0.9, 0.8, 0.6, 0.5], [0, 1, 2, 0])
    y = np.array([0, 2, 2, 1])
    got = _rows(selective_rows(y, P, {0.5: 0.6}, sample_weight=np.array([1, 2, 1, 4.0]), weighting="weighted"))
    # accepted: the first three, weights 1 + 2 + 1 of 8; wrong among them: weight 2
    assert got[("rate", 0.5)] == 0.5 and got[("risk", 0.5)] == 0.5 and got[("hcep", 0.5)] == 0.25


def test_two_classes_equal_the_binary_rule():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.01, 0.99, 400)
    p = p[np.abs(p - 0.5) > 1e-3]  # the binary rule breaks a 0.5 tie towards class 1, arg-max towards class 0
    y = (rng.uniform(size=len(p)) < p).astype(int)
    P = np.column_stack([1 - p, p])
    w = rng.uniform(0.5, 2, len(p))
    assert np.array_equal(mc_confidence(P), bsl.confidence(p))
    assert np.array_equal(mc_errors(y, P), bsl.errors(y, p))
    thr = fit_thresholds(P, [0.5, 0.8], sample_weight=w)
    assert thr == {s: bsl.selection_threshold(bsl.confidence(p), s, sample_weight=w) for s in (0.5, 0.8)}
    got = _rows(selective_rows(y, P, thr, sample_weight=w))
    for s, t in thr.items():
        ref = bsl.selective_stats(y, p, t, sample_weight=w)
        assert (got[("rate", s)], got[("risk", s)], got[("hcep", s)]) == (ref["rate"], ref["risk"], ref["hcep"])
    assert (got[("aurc", None)], got[("excess_aurc", None)]) == bsl.aurc_and_excess(y, p, sample_weight=w)
    assert got[("aurc", None)] == pytest.approx(bsl.aurc(y, p, sample_weight=w), abs=1e-15)


def test_bad_rate_named():
    with pytest.raises(AuditInputError, match="selection rate.*1.5"):
        fit_thresholds(_tri([0.5], [0]), [1.5])
