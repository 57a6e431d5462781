"""Transport audits the user's model, not only one it trains itself.

Before: Transport refitted logistic regression whatever the user trained or
imported, and a run that included LightGBM was labelled
``logistic_regression`` in the registry (CLI runs: the config's model, or
nothing).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import skops.io as sio

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.samples import load_sample
from audit_core.errors import AuditInputError
from audit_core.metrics import METRICS
from audit_core.models.importing import import_model
from audit_core.models.training import attach_model, train_workspace
from audit_core.models.zoo import ModelSpec
from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.registry import RunRegistry
from audit_core.transport import TransportAudit, TransportConfig, model_options, run_transport

SMALL = dict(n_refits=2, n_bootstrap=20, n_random_sets=3, stress_max_rows=800, mappings=("raw", "platt"))


@pytest.fixture(scope="module")
def loan():
    frame, info = load_sample("loan_synthetic")
    cfg = DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year", source_domain=2019,
                        target_domain=2023, roles={c: "ignore" for c in info.exclude_columns})
    return build_dataset(frame, cfg)


def test_a_trained_zoo_model_is_refitted_with_its_kind_and_settings(loan):
    ws = train_workspace(loan, spec=ModelSpec(kind="logistic_regression", seed=3, params={"C": 0.001}))
    opts, fixed = model_options(ws)
    assert fixed is None and opts == {"models": ("logistic_regression",), "model_params": {"logistic_regression": {"C": 0.001}}}
    audit = TransportAudit(TransportConfig.from_dataset(loan, stresses=(), **SMALL, **opts))
    res = audit.run(loan.frame)
    for r in range(2):
        assert audit.state.pipes[(r, "logistic_regression")]["model"].estimator.C == 0.001
    assert res.manifest["model"]["refit"] is True
    assert res.manifest["model"]["params"] == {"logistic_regression": {"C": 0.001}}


def _imported(loan, *, handles_missing=True):
    """A scikit-learn pipeline saved with skops and imported; LightGBM scores missing values itself.

    (A ``SimpleImputer`` in the pipeline is refused at import: skops lists ``numpy.dtype`` as untrusted.)
    """
    from lightgbm import LGBMClassifier
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    num, cat = list(loan.numeric), list(loan.categorical)
    pre = ColumnTransformer([("num", StandardScaler(), num),
                             ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)])
    clf = LGBMClassifier(n_estimators=30, random_state=0, verbose=-1) if handles_missing else LogisticRegression(max_iter=500)
    pipe = make_pipeline(pre, clf)
    src = loan.frame[loan.domain_mask(2019)]
    X = src[num + cat].astype({c: object for c in cat})
    X[num] = X[num].fillna(X[num].median())  # trained elsewhere on complete records
    pipe.fit(X, loan.primary.y[loan.domain_mask(2019)])
    model = import_model(sio.dumps(pipe), name="mine.skops", table=loan.frame)
    return attach_model(loan, model)


def test_an_imported_model_is_audited_as_it_is(loan, tmp_path):
    ws = _imported(loan)
    opts, fixed = model_options(ws)
    assert opts == {"fixed_model": "imported:mine.skops"} and fixed is ws.model
    cfg = TransportConfig.from_dataset(loan, **SMALL, **opts)
    audit = TransportAudit(cfg, model=fixed)
    res = audit.run(loan.frame)
    # the model is never refitted: every refit's pipeline holds the given model, and its raw
    # probabilities on the ID test are the given model's
    for r in range(2):
        assert audit.state.pipes[(r, cfg.fixed_model)]["model"] is fixed
        idt = audit.state.source_rows(r, "id_test")
        np.testing.assert_array_equal(audit.state.mapped(r, cfg.fixed_model, "raw", "id"),
                                      fixed.predict_proba(audit.state.source.iloc[idt])[:, 1])
    t = res.table
    auc = t[(t["analysis"] == "metrics") & (t["metric"] == "auroc") & (t["mapping"] == "raw")
            & (t["condition"] == "clean") & (t["domain"] == "ood") & (t["weighting"] == "unweighted")]
    p_ood = fixed.predict_proba(audit.state.target)[:, 1]
    assert auc["value"].to_numpy() == pytest.approx([METRICS["auroc"](audit.state.y_target["default"], p_ood)] * 2)
    assert set(t.loc[t["model"] != "", "model"]) == {"imported:mine.skops"}
    m = res.manifest["model"]
    assert m["refit"] is False and "not refit" in m["note"] and m["spec"]["source"] == "mine.skops"
    assert "probability mappings" in m["fitted_on_source"]["calibration"]
    reg = RunRegistry(tmp_path / "r.sqlite3")
    rec = reg.load(res.save_to_registry(reg, dataset_name="loan"))
    assert rec.model_spec["refit"] is False and rec.model == "imported:mine.skops"


def test_fixed_model_declarations_are_checked(loan):
    ws = _imported(loan)
    cfg = TransportConfig.from_dataset(loan, fixed_model="imported:mine.skops", **SMALL)
    with pytest.raises(AuditInputError) as e:
        TransportAudit(cfg)
    assert e.value.code == "TRANSPORT_FIXED_MODEL_MISSING"
    with pytest.raises(AuditInputError) as e:
        TransportAudit(TransportConfig.from_dataset(loan, **SMALL), model=ws.model)
    assert e.value.code == "TRANSPORT_FIXED_MODEL_UNUSED"
    with pytest.raises(AuditInputError) as e:
        TransportConfig.from_dataset(loan, fixed_model="x", models=("lightgbm",))
    assert e.value.code == "TRANSPORT_BAD_OPTION"


def test_an_imported_model_without_an_imputer_skips_the_degradation_stress_and_says_why(loan):
    """Complete records score; the degradation stress sets values missing, which this model cannot score.

    The stress is skipped before it emits anything, with a warning in the manifest; the rest of the run
    stands, equal to the same run declared without the stress.
    """
    frame = loan.frame.copy()
    num = list(loan.numeric)
    frame[num] = frame[num].fillna(frame[num].median())
    complete = build_dataset(frame, loan.config)
    ws = _imported(complete, handles_missing=False)
    opts, fixed = model_options(ws)
    small = {**SMALL, **opts}
    res = run_transport(complete.frame, config=TransportConfig.from_dataset(complete, **{**small, "stresses": ("degradation",)}),
                        model=fixed)
    warned = [w for w in res.manifest["warnings"] if w["code"] == "TRANSPORT_STRESS_NO_IMPUTER"]
    assert len(warned) == 1
    assert "imported:mine.skops" in warned[0]["message"] and "missing values" in warned[0]["message"]
    assert res.extras.get("degradation_percentiles") is None
    assert not res.table["condition"].astype(str).str.startswith(("mcar", "targeted", "random_set")).any()
    bare = run_transport(complete.frame, config=TransportConfig.from_dataset(complete, **{**small, "stresses": ()}),
                         model=fixed)
    pd.testing.assert_frame_equal(res.table, bare.table)


def _cli(tmp_path, model: str, transport: dict) -> RunRegistry:
    reg = RunRegistry(tmp_path / f"{model}.sqlite3")
    cfg = parse_config({"data": {"sample": "loan_synthetic"}, "model": {"kind": model, "seed": 0, "params": {}},
                        "audits": [{"kind": "transport", "n_refits": 1, "n_bootstrap": 10, "stresses": [],
                                    "mappings": ["platt"], **transport}]})
    out = run_config(cfg, registry=reg, base_dir=".")
    assert out[0].status == "done", out[0].error
    return reg


def test_cli_transport_defaults_to_the_config_model_and_labels_every_model(tmp_path):
    reg = _cli(tmp_path, "lightgbm", {})
    runs = reg.list_runs()
    assert runs["model"].tolist() == ["lightgbm"]
    rec = reg.load(runs["run_id"].iloc[0])
    assert set(rec.tables["results"]["model"]) - {""} == {"lightgbm"}
    assert rec.manifest["model"]["refit"] is True
    reg = _cli(tmp_path, "logistic_regression", {"models": ["logistic_regression", "lightgbm"]})
    assert reg.list_runs()["model"].tolist() == ["logistic_regression + lightgbm"]
