"""The label-free Transport run (``target_labels`` absent or hidden): steps, refusals, tables, fingerprints.

Runs on the loan sample (2019 → 2023) as two tables, kept small (one refit, 10 forecast replicates).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.samples import load_sample
from audit_core.errors import AuditInputError
from audit_core.forecast import run_transport_with_forecast
from audit_core.forecast.transport_stage import LabelFreeTransportAudit, NO_FEATURES, tolerance_key
from audit_core.transport import TransportAudit, TransportConfig, run_transport

#: the columns the other helpers code against (docs/forecast.md)
COLUMNS = {
    "forecast": ["refit", "model", "mapping", "quantity", "method", "assumption", "value", "low", "high", "level",
                 "status", "reason", "naive", "change", "tolerance", "verdict", "direction", "source"],
    "forecast_exact": ["refit", "model", "mapping", "quantity", "value"],
    "forecast_checks": ["refit", "model", "mapping", "method", "quantity", "source_weighted", "target_exact",
                        "tolerance", "ok"],
    "forecast_weights": ["refit", "domain_auroc", "ess", "n_source", "n_target", "cap", "n_clipped", "overlap_ok",
                         "reason"],
    "forecast_prevalence": ["refit", "model", "mapping", "class", "source", "em", "bbse"],
}


@pytest.fixture(scope="module")
def loan():
    frame, info = load_sample("loan_synthetic")
    ds = build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year",
                                            source_domain=2019, target_domain=2023,
                                            roles={c: "ignore" for c in info.exclude_columns}))
    f = ds.frame
    label = info.target_definitions[0]["column"]
    src = f[f["year"] == 2019].reset_index(drop=True)
    tgt = f[f["year"] == 2023].reset_index(drop=True)
    return ds, src, tgt, label


def _config(ds, **kw):
    base = dict(n_refits=1, n_bootstrap=10, mappings=("platt",), models=("logistic_regression",), domain_column=None,
                source_value=None, target_value=None, n_random_sets=3, stress_max_rows=600)
    return TransportConfig.from_dataset(ds, **{**base, **kw})


@pytest.fixture(scope="module")
def absent(loan):
    ds, src, tgt, label = loan
    audit = LabelFreeTransportAudit(_config(ds, target_labels="absent"))
    return audit, audit.run(src, tgt.drop(columns=[label]))


@pytest.fixture(scope="module")
def hidden(loan):
    ds, src, tgt, _ = loan
    return run_transport_with_forecast(src, tgt, config=_config(ds, target_labels="hidden"))


def test_the_five_tables_and_their_columns(absent):
    audit, res = absent
    for name, cols in COLUMNS.items():
        assert list(res.extras[name].columns) == cols, name
        assert len(res.extras[name]) > 0, name
    f = res.extras["forecast"]
    assert (f["source"] == "forecast").all()
    assert set(f["status"]) <= {"forecast", "unknown"}
    assert (f.loc[f["status"] == "unknown", "verdict"] == "indeterminate").all()
    assert np.allclose(f["change"], f["value"] - f["naive"], equal_nan=True)
    assert set(f["assumption"]) == {"covariate", "label", "both"}
    assert {"risk@s=0.8", "prevalence", "ece", "marginal:coverage@a=0.1"} <= set(f["quantity"])
    # the risk tolerance is the declared one (0.02 by default), citl has none
    assert (f.loc[f["quantity"] == "risk@s=0.8", "tolerance"] == 0.02).all()
    assert f.loc[f["quantity"] == "citl", "tolerance"].isna().all()
    exact = set(res.extras["forecast_exact"]["quantity"])
    assert "rate@s=0.8" in exact and "mean_confidence" in exact and "risk@s=0.8" not in exact
    w = res.extras["forecast_weights"]
    assert len(w) == 1 and w["n_target"].iloc[0] == 4000
    # n_source: the selection and ID-test partitions (10% + 15% of the 4000 source records)
    assert w["n_source"].iloc[0] == 1000
    assert res.manifest["forecast"]["target_labels"] == "absent"
    assert res.manifest["forecast"]["clip_rule"] == {"quantile": 0.99, "max_ratio": 20.0}


def test_naive_is_the_source_id_test_value(absent):
    """``naive`` ("unchanged from source") of the prevalence is the share of positives among the ID-test records."""
    audit, res = absent
    state = audit.state
    y = state.y_source[state.config.primary_target][state.source_rows(0, "id_test")]
    f = res.extras["forecast"]
    got = f.loc[f["quantity"] == "prevalence", "naive"].unique()
    assert got.size == 1 and got[0] == pytest.approx(y.mean())
    prev = res.extras["forecast_prevalence"]
    assert list(prev["class"]) == ["not yes", "yes"]
    assert prev["em"].sum() == pytest.approx(1.0)


def test_only_the_source_is_evaluated(absent):
    _, res = absent
    assert set(res.table["domain"]) == {"id", "source"}
    assert res.verdicts.empty


def test_hidden_gives_the_tables_of_absent(absent, hidden):
    _, res = absent
    pd.testing.assert_frame_equal(res.table, hidden.table, check_exact=True)
    for name in COLUMNS:
        pd.testing.assert_frame_equal(res.extras[name], hidden.extras[name], check_exact=True)
    assert res.manifest["target_fingerprint"] == hidden.manifest["target_fingerprint"]
    assert res.manifest["declaration_key"] == hidden.manifest["declaration_key"]


def test_steps_refused_in_each_mode(loan):
    ds, src, tgt, label = loan
    audit = LabelFreeTransportAudit(_config(ds, target_labels="hidden"))
    audit.declare(src, tgt).split().fit().evaluate()
    for step in (audit.transport, audit.classify, audit.stress, audit.heterogeneity):
        with pytest.raises(AuditInputError) as e:
            step()
        assert e.value.code == "TRANSPORT_LABEL_FREE_STAGE"
        assert "'hidden'" in str(e.value)
    labelled = LabelFreeTransportAudit(_config(ds))
    labelled.declare(src, tgt).split().fit().evaluate()
    with pytest.raises(AuditInputError) as e:
        labelled.forecast()
    assert e.value.code == "TRANSPORT_FORECAST_LABELLED"
    with pytest.raises(AuditInputError) as e:  # the transport runner alone holds no forecast step
        TransportAudit(_config(ds, target_labels="absent")).declare(src, tgt).split().fit().evaluate().forecast()
    assert e.value.code == "TRANSPORT_FORECAST_RUNNER"


def test_forecast_step_ticks_and_can_be_cancelled(loan):
    ds, src, tgt, _ = loan
    seen: list[str] = []
    audit = LabelFreeTransportAudit(_config(ds, target_labels="hidden"), progress=lambda f, m: seen.append(m),
                                    should_stop=lambda: any(m.startswith("Forecasting") for m in seen))
    with pytest.raises(AuditInputError) as e:
        audit.run(src, tgt)
    assert e.value.code == "TRANSPORT_CANCELLED" and "'forecast'" in str(e.value)
    assert audit.stages_done == ("declare", "split", "fit", "evaluate")


def test_config_refuses_an_unknown_label_mode_and_a_missing_target(loan):
    ds, src, tgt, _ = loan
    with pytest.raises(AuditInputError) as e:
        _config(ds, target_labels="maybe")
    assert e.value.code == "TRANSPORT_BAD_OPTION" and "'maybe'" in str(e.value)
    with pytest.raises(AuditInputError) as e:
        _config(ds, target_labels="hidden", single_domain=True)
    assert e.value.code == "TRANSPORT_BAD_OPTION"
    with pytest.raises(AuditInputError) as e:
        LabelFreeTransportAudit(_config(ds, target_labels="hidden")).declare(src)
    assert e.value.code in ("TRANSPORT_LABEL_FREE_NO_TARGET", "TRANSPORT_NO_DOMAINS")
    assert "target_labels" not in _config(ds).to_dict()  # a labelled run's config dict is unchanged


def test_fingerprint_is_the_targets_features_only(loan):
    ds, src, tgt, label = loan

    def manifest(target, mode):
        return TransportAudit(_config(ds, target_labels=mode)).declare(src, target).split().manifest

    hidden, labelled = manifest(tgt, "hidden"), manifest(tgt, "available")
    assert hidden["target_fingerprint"] == labelled["target_fingerprint"]
    assert hidden["declaration_key"] == labelled["declaration_key"]
    assert manifest(tgt.drop(columns=[label]), "absent")["target_fingerprint"] == labelled["target_fingerprint"]
    flipped = tgt.copy()
    flipped[label] = flipped[label].iloc[::-1].to_numpy()  # other labels, same features: same fingerprint
    assert manifest(flipped, "available")["target_fingerprint"] == labelled["target_fingerprint"]
    changed = tgt.copy()
    col = ds.numeric[0]
    changed.loc[0, col] = changed.loc[0, col] + 1.0
    assert manifest(changed, "hidden")["target_fingerprint"] != hidden["target_fingerprint"]
    other = TransportAudit(_config(ds, seed=1)).declare(src, tgt).split().manifest
    assert other["declaration_key"] != labelled["declaration_key"]


def test_labelled_tables_unchanged_and_realised_added(loan):
    ds, src, tgt, label = loan
    cfg = _config(ds, n_bootstrap=5)
    plain = run_transport(src, tgt, config=cfg)
    res = run_transport_with_forecast(src, tgt, config=cfg)
    pd.testing.assert_frame_equal(plain.table, res.table, check_exact=True)
    pd.testing.assert_frame_equal(plain.verdicts, res.verdicts, check_exact=True)
    assert set(res.extras) == set(plain.extras) | {"realised"}
    for k, v in plain.extras.items():
        pd.testing.assert_frame_equal(v, res.extras[k], check_exact=True)
    real = res.extras["realised"]
    assert list(real.columns) == ["refit", "model", "mapping", "quantity", "value"]
    # the realised prevalence is the share of defaults among the 2023 records
    share = float((tgt[label].astype(str) == "yes").mean())
    assert real.loc[real["quantity"] == "prevalence", "value"].iloc[0] == pytest.approx(share)
    assert not real["quantity"].str.startswith("weighted_").any()


def test_tolerance_keys():
    assert tolerance_key("hcep@s=0.8", multiclass=False) is None
    assert tolerance_key("brier", multiclass=False) == "brier_score"
    assert tolerance_key("label_conditional:coverage@a=0.05", multiclass=True) == "coverage"
    assert tolerance_key("marginal:worst_class_coverage@a=0.1", multiclass=False) is None


def test_multiclass_label_free_run():
    from tests.test_multiclass_run import _config as mc_config, _frame

    frame = _frame(n=1600)
    cfg = mc_config(n_refits=1, n_bootstrap=10, mappings=("raw",), target_labels="hidden")
    res = run_transport_with_forecast(frame, config=cfg)
    for name, cols in COLUMNS.items():
        assert list(res.extras[name].columns) == cols, name
    prev = res.extras["forecast_prevalence"]
    assert list(prev["class"]) == ["distinction", "fail", "pass", "withdrawn"]
    q = set(res.extras["forecast"]["quantity"])
    assert {f"prevalence_class{c}" for c in range(4)} <= q
    # multi-class ECE is read against the top-label tolerance
    f = res.extras["forecast"]
    assert (f.loc[f["quantity"] == "ece", "tolerance"] == 0.02).all()
    assert res.manifest["multiclass"] and res.manifest["target_labels"] == "hidden"


def test_scores_run_without_features_has_no_covariate_forecast():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.02, 0.98, 1200)
    site = np.repeat(["a", "b"], 600)
    y = (rng.uniform(0, 1, 1200) < p).astype(int)
    table = pd.DataFrame({"p": p, "y": y, "site": site})
    cfg = TransportConfig(targets=({"kind": "class", "name": "y", "column": "y", "positive": 1},), score_columns=("p",),
                          domain_column="site", source_value="a", target_value="b", n_refits=1, n_bootstrap=10,
                          mappings=("raw",), target_labels="hidden")
    res = run_transport_with_forecast(table, config=cfg)
    f = res.extras["forecast"]
    cov = f[f["assumption"] == "covariate"]
    assert len(cov) and (cov["status"] == "unknown").all() and cov["reason"].str.contains(NO_FEATURES).all()
    w = res.extras["forecast_weights"]
    assert not w["overlap_ok"].iloc[0] and w["reason"].iloc[0] == NO_FEATURES
    assert (f.loc[f["assumption"] == "label", "status"] == "forecast").any()
