"""The staged transport protocol on the loan sample: order, locks, refusals,
no target tuning, determinism, outputs."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.samples import load_sample
from audit_core.errors import MESSAGES, AuditInputError
from audit_core.runs.registry import RunRegistry
from audit_core.transport import RESULT_COLUMNS, STAGES, TransportAudit, TransportConfig, run_transport
from audit_core.transport.splits import PARTITIONS


@pytest.fixture(scope="module")
def loan():
    frame, info = load_sample("loan_synthetic")
    cfg = DatasetConfig(
        name="loan", targets=info.target_definitions[:2], domain_column="year", source_domain=2019,
        target_domain=2023, group_column="branch_id", key_column="application_id", strata_columns=("region",),
        roles={c: "ignore" for c in info.exclude_columns},
    )
    return build_dataset(frame, cfg)


def small(ds, **kw):
    base = dict(n_refits=2, n_bootstrap=40, n_random_sets=3, stress_max_rows=1500, models=("logistic_regression",))
    base.update(kw)
    return TransportConfig.from_dataset(ds, **base)


@pytest.fixture(scope="module")
def result(loan):
    return run_transport(loan.frame, config=small(loan))


def _code(excinfo):
    return excinfo.value.code


def test_stage_order_enforced(loan):
    audit = TransportAudit(small(loan))
    with pytest.raises(AuditInputError) as e:
        audit.split()
    assert _code(e) == "TRANSPORT_STAGE_ORDER"
    assert "run 'declare' first" in str(e.value)
    audit.declare(loan.frame)
    with pytest.raises(AuditInputError) as e:
        audit.declare(loan.frame)
    assert _code(e) == "TRANSPORT_STAGE_DONE"
    with pytest.raises(AuditInputError) as e:
        audit.fit()
    assert _code(e) == "TRANSPORT_STAGE_ORDER"
    audit.split()
    with pytest.raises(AuditInputError):
        audit.result()
    assert audit.stages_done == STAGES[:2]


def test_tolerances_locked_after_declaration(loan):
    audit = TransportAudit(small(loan))
    audit.set_tolerances({"auroc": 0.05})  # before declaration: allowed
    assert audit.config.tolerances == {"auroc": 0.05}
    audit.declare(loan.frame)
    with pytest.raises(AuditInputError) as e:
        audit.set_tolerances({"auroc": 0.5})
    assert _code(e) == "TRANSPORT_TOLERANCES_LOCKED"
    with pytest.raises(Exception):
        audit.config.tolerances = {}  # frozen dataclass


def test_binary_only_refused(loan):
    cfg = small(loan, targets=({"kind": "class", "name": "region", "column": "region"},),
                categorical=("employment_type",))
    with pytest.raises(AuditInputError) as e:
        TransportAudit(cfg).declare(loan.frame)
    assert _code(e) == "TRANSPORT_NOT_BINARY"
    assert "binary-only" in MESSAGES["TRANSPORT_NOT_BINARY"]


def test_domains_required_and_distinct(loan):
    with pytest.raises(AuditInputError) as e:
        TransportAudit(small(loan, domain_column=None)).declare(loan.frame)
    assert _code(e) == "TRANSPORT_NO_DOMAINS"
    with pytest.raises(AuditInputError) as e:
        TransportAudit(small(loan, target_value=2019)).declare(loan.frame)
    assert _code(e) == "TRANSPORT_SAME_DOMAIN"


def test_bad_options_declared():
    with pytest.raises(AuditInputError) as e:
        TransportConfig(targets=({"kind": "class", "name": "t", "column": "y", "positive": 1},), numeric=("x",),
                        mappings=("no_such_mapping",))
    assert _code(e) == "TRANSPORT_BAD_OPTION"
    with pytest.raises(AuditInputError) as e:
        TransportConfig(targets=({"kind": "class", "name": "t", "column": "y", "positive": 1},), numeric=("x",),
                        tolerances={"auroc": -1})
    assert _code(e) == "TRANSPORT_BAD_TOLERANCE"
    # A misspelt metric is refused, not silently ignored.
    with pytest.raises(AuditInputError) as e:
        TransportConfig(targets=({"kind": "class", "name": "t", "column": "y", "positive": 1},), numeric=("x",),
                        tolerances={"auorc": 0.02})
    assert _code(e) == "TRANSPORT_UNKNOWN_TOLERANCE"
    assert "'auorc'" in str(e.value) and "did you mean 'auroc'?" in str(e.value)


def test_result_table_columns_and_content(result):
    t = result.table
    assert tuple(t.columns) == RESULT_COLUMNS
    assert set(t["domain"]) >= {"id", "ood", "ood-id", "source"}
    need = {"metrics", "selective", "conformal_marginal", "conformal_label_conditional", "heterogeneity",
            "target_grid", "target_decomposition", "fitted"}
    assert need <= set(t["analysis"])
    conds = set(t["condition"])
    assert {"clean", "mcar", "targeted", "corruption", "oracle", "random_set:0", "targeted_vs_random"} <= conds
    m = t[(t.analysis == "metrics") & (t.domain == "id")]
    assert set(m.metric) == {"prevalence", "auroc", "average_precision", "pr_skill", "brier_score", "log_loss", "ece",
                             "calibration_intercept", "calibration_slope", "ace", "mce", "spiegelhalter_z"}
    # paired change equals OOD - ID row by row
    key = dict(analysis="metrics", metric="auroc", model="logistic_regression", mapping="platt", refit=1,
               condition="clean")
    sel = t.loc[np.logical_and.reduce([t[k] == v for k, v in key.items()])].set_index("domain")["value"]
    assert sel["ood-id"] == pytest.approx(sel["ood"] - sel["id"])
    assert set(result.verdicts["verdict"]) <= {"transport-stable", "transport-sensitive", "indeterminate",
                                               "no tolerance declared"}
    v = result.verdicts
    assert (v["ci_low"] <= v["ci_high"] + 1e-12).all()


def test_partitions_disjoint_grouped_and_in_manifest(result, loan):
    parts = result.extras["partitions"]
    src = loan.frame[loan.frame["year"] == 2019].reset_index(drop=True)
    assert len(parts) == len(src)
    assert parts["key"].tolist() == src["application_id"].tolist()
    for r in range(2):
        col = parts[f"refit_{r}"].astype(str)
        assert set(col) == set(PARTITIONS)
        assert col.groupby(src["branch_id"]).nunique().max() == 1  # a branch stays in one partition
    man = result.manifest
    assert man["binary_only"] and len(man["seeds"]["split"]) == 2
    assert set(man["versions"]) >= {"numpy", "pandas", "scikit-learn"}
    assert all(len(h) == 64 for h in man["inputs_sha256"].values())
    json.dumps(man, default=str)


def test_target_domain_never_tunes(loan):
    """Permuting the target-domain labels changes no fitted quantity."""
    frame = loan.frame.copy()
    tgt = frame["year"] == 2023
    rng = np.random.default_rng(0)
    frame.loc[tgt, "defaulted"] = rng.permutation(frame.loc[tgt, "defaulted"].to_numpy())
    cfg = small(loan, n_bootstrap=5, stresses=())
    a = run_transport(loan.frame, config=cfg).table
    b = run_transport(frame, config=cfg).table
    fa = a[a.domain == "source"].reset_index(drop=True)
    fb = b[b.domain == "source"].reset_index(drop=True)
    assert len(fa) > 0
    pd.testing.assert_frame_equal(fa, fb)
    ia, ib = a[a.domain == "id"].reset_index(drop=True), b[b.domain == "id"].reset_index(drop=True)
    pd.testing.assert_frame_equal(ia, ib)


def test_deterministic(loan, result):
    again = run_transport(loan.frame, config=small(loan))
    pd.testing.assert_frame_equal(result.table, again.table)
    pd.testing.assert_frame_equal(result.verdicts, again.verdicts)


def test_save_and_registry(result, tmp_path):
    paths = result.save(tmp_path / "out")
    back = pd.read_parquet(paths["results"])
    pd.testing.assert_frame_equal(back, result.table)
    js = json.loads(paths["json"].read_text())
    assert len(js["results"]) == len(result.table) and "manifest" in js
    reg = RunRegistry(tmp_path / "reg.sqlite3")
    run_id = result.save_to_registry(reg, dataset_name="loan")
    rec = reg.load(run_id)
    assert rec.audit_kind == "transport"
    assert {"results", "verdicts"} <= set(rec.tables)
    pd.testing.assert_frame_equal(rec.tables["results"].reset_index(drop=True), result.table, check_dtype=False)


def test_two_tables_equal_one_table(loan):
    cfg = small(loan, n_bootstrap=5, stresses=())
    one = run_transport(loan.frame, config=cfg).table
    src = loan.frame[loan.frame.year == 2019]
    tgt = loan.frame[loan.frame.year == 2023]
    two = run_transport(src, tgt, config=cfg).table
    pd.testing.assert_frame_equal(one, two)


def test_cancellation(loan):
    calls = {"n": 0}

    def cancel():
        calls["n"] += 1
        return calls["n"] > 2

    with pytest.raises(AuditInputError) as e:
        run_transport(loan.frame, config=small(loan, stresses=()), should_stop=cancel)
    assert _code(e) == "TRANSPORT_CANCELLED"


def test_aggregates_present(result):
    s = result.refit_summary
    assert {"mean", "std", "median", "min", "max", "n_refits"} <= set(s.columns)
    tally = result.extras["conformal_tally"].set_index("quantity")["value"]
    assert tally["conditions"] == (tally["worst_class_coverage_improved"] + tally["worst_class_coverage_worsened"]
                                   + tally["worst_class_coverage_unchanged"])
    assert 0 <= tally["share_set_size_grew"] <= 1


def test_single_domain_mode_for_degradation_studies(loan):
    src = loan.frame[loan.frame.year == 2019]
    cfg = small(loan, domain_column=None, source_value=None, target_value=None, single_domain=True,
                stresses=("degradation",), n_random_sets=2, n_bootstrap=5, targets=loan.config.targets[:1])
    res = run_transport(src, config=cfg)
    assert set(res.table["domain"]) <= {"id", "source"}
    assert "targeted" in set(res.table["condition"])
    assert res.verdicts.empty


def test_cli_runner_saves_transport_run(tmp_path):
    import yaml

    import audit_core.runs.plugins.transport  # noqa: F401  (registers the "transport" audit)
    from audit_core.runs.execute import run_config
    from audit_core.runs.config import parse_config

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    raw = yaml.safe_load((root / "docs" / "examples" / "real_heart.yaml").read_text())
    raw["audits"] = [{"kind": "transport", "n_refits": 2, "n_bootstrap": 10, "mappings": ["platt"], "stresses": []}]
    reg = RunRegistry(tmp_path / "r.sqlite3")
    out = run_config(parse_config(raw), registry=reg, base_dir=root)
    rec = reg.load(out[0].run_id)
    assert rec.audit_kind == "transport" and rec.status == "done"
    assert {"results", "verdicts", "reliability", "curves", "feature_shift", "domain_classifier"} <= set(rec.tables)
    assert tuple(rec.tables["results"].columns) == RESULT_COLUMNS
