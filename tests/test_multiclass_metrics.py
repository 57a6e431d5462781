"""Multi-class Transport metrics: hand-computed toys, scikit-learn agreement, registry-wide properties."""
from __future__ import annotations

import doctest
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss, log_loss, mean_squared_error, roc_auc_score

from audit_core.errors import AuditInputError
from audit_core.transport.multiclass import metrics as mm
from audit_core.transport.multiclass.metrics import MC_METRICS
from audit_core.transport.verdicts import GOOD_DIRECTION

# four records, three classes: right (0.7), right (0.5), wrong (0.6), wrong (0.8)
Y = np.array([0, 1, 2, 1])
P = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8]])


def test_doctests():
    assert doctest.testmod(mm).failed == 0


def test_toy_brier_and_log_loss_by_hand():
    # squared errors per row: .14, .38, 1.26, 1.46
    assert mm.brier_multiclass(Y, P) == pytest.approx(3.24 / 4, abs=1e-15)
    assert mm.log_loss_multiclass(Y, P) == pytest.approx(-(math.log(.7) + math.log(.5) + 2 * math.log(.1)) / 4)
    assert mm.accuracy(Y, P) == 0.5


def test_toy_top_label_ece_by_hand():
    # 2 bins: {0.5} right -> |1 - .5| · 1/4; {.7 right, .6 wrong, .8 wrong} -> |1/3 - .7| · 3/4
    assert mm.ece_top(Y, P, n_bins=2) == pytest.approx(0.125 + 0.275, abs=1e-15)
    # 15 bins: every confidence alone in its bin, ECE = mean |correct - conf| = (.3 + .5 + .6 + .8)/4
    assert mm.ece_top(Y, P) == pytest.approx(0.55, abs=1e-15)


def test_toy_classwise_ece_by_hand():
    # class 0: bins {.2,.1 | y 0,0} and {.7,.6 | y 1,0}: .15·½ + .15·½ = .15
    # class 1: one bin {.2,.5,.3,.1 | y 0,1,0,1}: |.5 − .275| = .225
    # class 2: {.1,.3,.1 | y 0,0,1}: (1/3 − 1/6)·¾ = .125 and {.8 | 0}: .8·¼ = .2 → .325
    assert mm.ece_classwise(Y, P, n_bins=2) == pytest.approx((0.15 + 0.225 + 0.325) / 3, abs=1e-15)


def test_toy_macro_auroc_by_hand():
    # class 0: 1; class 1: positives .5,.1 vs negatives .2,.3 -> 2/4; class 2: .1 vs .1 (½), .3, .8 -> 1/6
    assert mm.auroc_macro(Y, P) == pytest.approx((1 + 0.5 + 1 / 6) / 3, abs=1e-15)


def test_macro_auroc_leaves_out_a_class_absent_from_y():
    # class 2 never occurs: the mean is over classes 0 (positives .7, .6 vs .2, .1 -> 1)
    # and 1 (positives .5, .1 vs .2, .3 -> 2/4)
    y = np.array([0, 1, 0, 1])
    assert mm.auroc_macro(y, P) == pytest.approx((1 + 0.5) / 2, abs=1e-15)


def _data(seed=0, n=300, k=4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(0, 1, (n, k)) + 1.5 * np.eye(k)[y]
    P = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return y, P


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_scikit_learn_with_weights(seed):
    y, P = _data(seed)
    w = np.random.default_rng(seed + 10).uniform(0.2, 3, len(y))
    onehot = np.eye(P.shape[1])[y]
    labels = list(range(P.shape[1]))
    assert mm.log_loss_multiclass(y, P, sample_weight=w) == pytest.approx(
        log_loss(y, P, sample_weight=w, labels=labels), abs=1e-12)
    assert mm.auroc_macro(y, P, sample_weight=w) == pytest.approx(
        roc_auc_score(y, P, multi_class="ovr", average="macro", sample_weight=w), abs=1e-12)
    # Brier as the sum over classes of the one-hot squared error
    per_class = mean_squared_error(onehot, P, sample_weight=w, multioutput="raw_values")
    assert mm.brier_multiclass(y, P, sample_weight=w) == pytest.approx(per_class.sum(), abs=1e-12)
    assert mm.brier_multiclass(y, P, sample_weight=w) == pytest.approx(
        brier_score_loss(y, P, sample_weight=w, labels=labels), abs=1e-12)


def test_two_classes_match_the_binary_registry():
    from audit_core import metrics as bm

    rng = np.random.default_rng(3)
    p = rng.uniform(0.01, 0.99, 200)
    y = (rng.uniform(size=200) < p).astype(int)
    P2 = np.column_stack([1 - p, p])
    assert mm.brier_multiclass(y, P2) == pytest.approx(2 * bm.brier_score(y, p), abs=1e-12)
    assert mm.log_loss_multiclass(y, P2) == pytest.approx(bm.log_loss(y, p), abs=1e-12)
    assert mm.auroc_macro(y, P2) == pytest.approx(bm.auroc(y, p), abs=1e-12)


# ------------------------------------------- registry-wide properties
def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-9, abs=1e-12)


def test_every_metric_has_a_direction():
    assert set(MC_METRICS) <= set(GOOD_DIRECTION)


def test_metric_values_equal_each_function():
    y, P_ = _data(8)
    w = np.random.default_rng(9).uniform(0.5, 2, len(y))
    vals = mm.multiclass_metric_values(y, P_, sample_weight=w)
    assert list(vals) == list(MC_METRICS)
    for name, f in MC_METRICS.items():
        assert _close(vals[name], f(y, P_, sample_weight=w))


@pytest.mark.parametrize("name", sorted(MC_METRICS))
def test_sample_order_invariance(name):
    f = MC_METRICS[name]
    y, P_ = _data(1)
    perm = np.random.default_rng(1).permutation(len(y))
    assert _close(f(y, P_), f(y[perm], P_[perm]))
    w = np.random.default_rng(2).uniform(0.5, 2, len(y))
    assert _close(f(y, P_, sample_weight=w), f(y[perm], P_[perm], sample_weight=w[perm]))


@pytest.mark.parametrize("name", sorted(MC_METRICS))
def test_equal_weights_equal_no_weights(name):
    f = MC_METRICS[name]
    y, P_ = _data(3)
    assert _close(f(y, P_), f(y, P_, sample_weight=np.full(len(y), 3.7)))


@pytest.mark.parametrize("name", sorted(MC_METRICS))
def test_integer_weights_equal_repetition(name):
    f = MC_METRICS[name]
    y, P_ = _data(4, n=60)
    w = np.random.default_rng(5).integers(1, 4, len(y))
    assert _close(f(y, P_, sample_weight=w), f(np.repeat(y, w), np.repeat(P_, w, axis=0)))


@pytest.mark.parametrize("name", sorted(MC_METRICS))
def test_list_array_frame_equivalent(name):
    f = MC_METRICS[name]
    y, P_ = _data(6)
    ref = f(y, P_)
    assert _close(ref, f(y.tolist(), P_.tolist()))
    assert _close(ref, f(pd.Series(y), pd.DataFrame(P_)))
    assert _close(ref, f(y.astype(float), P_))


@pytest.mark.parametrize("name", sorted(MC_METRICS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["y", "P", "w"])
def test_nonfinite_refused(name, bad, where):
    f = MC_METRICS[name]
    y, P_ = _data(7, n=20)
    y, P_, w = y.astype(float), P_.copy(), np.ones(len(y))
    {"y": y, "P": P_[:, 1], "w": w}[where][3] = bad
    with pytest.raises(AuditInputError) as ei:
        f(y, P_, sample_weight=w)
    assert ei.value.code == "METRIC_NOT_FINITE"


@pytest.mark.parametrize("name", sorted(MC_METRICS))
def test_bad_labels_and_rows_are_named(name):
    f = MC_METRICS[name]
    with pytest.raises(AuditInputError, match=r"0 … 2.*\[3\.0\]"):
        f([0, 3, 1, 2], P)
    bad = P.copy()
    bad[2] = [0.6, 0.3, 0.2]
    with pytest.raises(AuditInputError, match=r"row 2 .*sum 1\.1"):
        f(Y, bad)
    with pytest.raises(AuditInputError, match=r"shape \(4, C\), got shape \(4,\)"):
        f(Y, P[:, 0])
