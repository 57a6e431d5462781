"""Brittle-case evaluation, stressors, temperature and baseline sensitivity on the loan sample."""
from __future__ import annotations

import numpy as np
import pytest

from audit_core.fragility.audit import AuditOptions, baseline_sensitivity, run_fragility_audit
from audit_core.fragility.engine import FragilityConfig, column_scale
from audit_core.fragility.stressors import natural_unavailability, unavailable_fields
from audit_core.fragility.temperature import brier, brittleness_temperature, ece, nll

from fragility_data import loan_workspace


def test_metrics_by_hand():
    # y = (1, 0); p_1 = (0.8, 0.6): top-label confidences 0.8 (correct) and 0.6 (wrong)
    # ECE, 15 bins: 0.8 -> bin 12, 0.6 -> bin 9; each bin has 1 case: (|1-0.8| + |0-0.6|)/2 = 0.4
    p = np.array([[0.2, 0.8], [0.4, 0.6]])
    y = np.array([1, 0])
    assert ece(y, p) == pytest.approx(0.4)
    # NLL = -(log 0.8 + log 0.4)/2; Brier = ((0.8-1)^2 + (0.6-0)^2)/2 = (0.04 + 0.36)/2 = 0.2
    assert nll(y, p) == pytest.approx(-(np.log(0.8) + np.log(0.4)) / 2)
    assert brier(y, p) == pytest.approx(0.2)


def test_temperature_beta_zero_when_fds_carries_no_information():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400) * 2
    y = (rng.random(400) < 1 / (1 + np.exp(-s))).astype(int)
    p = np.column_stack([1 / (1 + np.exp(s)), 1 / (1 + np.exp(-s))])
    res = brittleness_temperature(p, y, np.zeros(400), seed=0)
    assert res.beta == 0.0 and 0.5 < res.t0 < 2.0
    assert set(res.table["method"]) == {"uncalibrated", "global_T", "brittleness_T"}
    g = res.table.set_index(["method", "subset"])
    assert g.loc[("global_T", "all"), "nll"] == pytest.approx(g.loc[("brittleness_T", "all"), "nll"])


def test_natural_unavailability_and_audit_tables():
    ws, codes = loan_workspace()
    fields = unavailable_fields(ws.dataset.frame, codes)
    assert "credit_score" in fields and "employment_type" in fields
    frame = ws.dataset.frame.iloc[ws.test_index[:30]]
    r1 = natural_unavailability(ws.model, frame, fields=fields, n_draws=5, seed=3)
    r2 = natural_unavailability(ws.model, frame, fields=fields, n_draws=5, seed=3)
    assert (r1.flip_rate == r2.flip_rate).all() and ((r1.flip_rate >= 0) & (r1.flip_rate <= 1)).all()
    audit = run_fragility_audit(ws, options=AuditOptions(max_cases=60, missing_codes=codes, n_boot=20, search_max_cases=20))
    assert audit.complete and len(audit.certificates) == 60
    assert {"donor_any", "donor_0.25", "donor_0.5", "unavailable_any"} <= set(audit.certificates.columns)
    strata = set(audit.auroc["stratum"])
    assert strata == {"all", "p_hat>=0.7", "p_hat>=0.8", "p_hat>=0.9"}
    assert {"group_shap", "perm_importance", "fds_random_order", "max_delta"} <= set(audit.auroc["score"])
    ok = audit.auroc.dropna(subset=["lo", "hi"])
    assert ((ok["lo"] <= ok["auroc"] + 1e-12) & (ok["auroc"] <= ok["hi"] + 1e-12)).all()
    assert set(audit.incremental["label"]) == set(c for c in audit.certificates.columns if c.startswith(("donor_", "unavailable_")) and "rate" not in c)


def test_stop_returns_partial_batch():
    ws, codes = loan_workspace()
    calls = iter([False, True] + [True] * 100)
    audit = run_fragility_audit(ws, options=AuditOptions(max_cases=80, config=FragilityConfig(chunk_rows=40 * 260)),
                                should_stop=lambda: next(calls))
    assert not audit.complete and 0 < len(audit.batch) < 80
    assert "Stopped by the user" in audit.notes[0]


def test_baseline_sensitivity_has_every_kind():
    ws, _ = loan_workspace()
    X = ws.model.transform(ws.dataset.frame.iloc[ws.test_index[:30]])
    Xtr = ws.model.transform(ws.dataset.frame.iloc[ws.train_index])
    tab = baseline_sensitivity(ws.model, X, Xtr, grouping=ws.grouping, config=FragilityConfig(n_draws=3))
    assert list(tab["baseline_kind"]) == ["mean", "median", "mode", "zero"]
    assert tab.loc[0, "spearman_fds_vs_mean"] == pytest.approx(1.0)
    assert column_scale(Xtr).shape == (Xtr.shape[1],)
