"""The multi-class Transport run: protocol, source-only fitting, determinism, bootstrap arithmetic, CLI and registry."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.transport import RESULT_COLUMNS, TransportConfig, run_transport
from audit_core.transport.multiclass.bootstrap import replicate_columns, replicate_values
from audit_core.transport.multiclass.conformal import ScoreSpec
from audit_core.transport.multiclass.metrics import multiclass_metric_values
from audit_core.transport.multiclass.fitting import MulticlassRules
from audit_core.transport.multiclass.run import (
    MulticlassTransportAudit,
    multiclass_mappings,
    run_multiclass_transport,
)
from audit_core.transport.multiclass.selective import fit_thresholds


def _frame(seed=0, n=2400, shift=0.6, weights=False):
    rng = np.random.default_rng(seed)
    dom = np.where(rng.uniform(size=n) < 0.5, "s", "t")
    x1 = rng.normal(size=n) + shift * (dom == "t")
    x2 = rng.normal(size=n)
    z = np.column_stack([x1, x2, -x1 - x2, np.zeros(n)])
    P = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = np.array(["pass", "fail", "withdrawn", "distinction"])[np.minimum((P.cumsum(1) < rng.uniform(size=(n, 1))).sum(1), 3)]
    out = pd.DataFrame({"x1": x1, "x2": x2, "k": rng.choice(["u", "v"], n), "dom": dom, "y": y})
    if weights:
        out["w"] = rng.uniform(0.5, 2, n)
    return out


def _config(**kw):
    base = dict(targets=({"kind": "class", "name": "y", "column": "y"},), numeric=("x1", "x2"), categorical=("k",),
                n_refits=2, n_bootstrap=40, domain_column="dom", source_value="s", target_value="t")
    return TransportConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def result():
    return run_multiclass_transport(_frame(), config=_config())


def test_result_has_the_binary_table_shape_and_verdicts(result):
    assert list(result.table.columns) == list(RESULT_COLUMNS)
    assert result.classes == ("distinction", "fail", "pass", "withdrawn")  # sorted: the class codes
    assert result.manifest["multiclass"] and not result.manifest["binary_only"]
    assert result.manifest["config"]["mappings"] == ["raw", "temperature", "vector"]
    v = result.verdicts
    assert set(v["mapping"]) == {"raw", "temperature", "vector"}
    names = set(v.loc[v.analysis == "metrics", "metric"])
    assert names == {"accuracy", "auroc_macro", "brier_multiclass", "log_loss_multiclass", "ece_top", "ece_classwise"}
    conf = set(v.loc[v.analysis == "conformal_marginal", "metric"])
    assert conf == {f"{s}:{m}" for s in ("lac", "aps", "raps") for m in ("coverage", "mean_set_size")}
    assert v["verdict"].isin(["transport-stable", "transport-sensitive", "indeterminate"]).all()
    assert (v["ci_low"] <= v["delta"] + 1e-12).all() and (v["delta"] <= v["ci_high"] + 1e-12).all()
    # per-class coverage rows on both domains
    t = result.table
    per_class = t[(t.analysis == "conformal_label_conditional") & t.metric.str.match(r"aps:coverage_class\d")]
    assert set(per_class["domain"]) == {"id", "ood", "ood-id"} and set(per_class["metric"].str[-1]) == {"0", "1", "2", "3"}


def test_direction_reads_the_multiclass_metric_names(result):
    v = result.verdicts
    sens = v[v.verdict == "transport-sensitive"]
    assert not sens["direction"].eq("shifted").any()  # every multi-class name has a good direction


def test_rules_are_fitted_on_the_source_selection_partition_only(result):
    cfg = _config(n_refits=1, n_bootstrap=5)
    a = MulticlassTransportAudit(cfg).declare(_frame()).split().fit()
    sel = a.state.source_rows(0, "selection")
    pipe = a.state.pipes[(0, "logistic_regression")]
    for mp in ("raw", "temperature", "vector"):
        Psel = pipe["maps"][mp](pipe["raw"]["selection"])
        assert a.state.rules[(0, "logistic_regression", mp)].thresholds == fit_thresholds(Psel, cfg.selection_rates)
    # the target's labels never reach a fitted quantity: scrambling them leaves every source row unchanged
    df = _frame()
    scrambled = df.copy()
    tmask = (scrambled.dom == "t").to_numpy()
    scrambled.loc[tmask, "y"] = np.random.default_rng(9).permutation(scrambled.loc[tmask, "y"].to_numpy())
    r1 = run_multiclass_transport(df, config=cfg).table
    r2 = run_multiclass_transport(scrambled, config=cfg).table
    src1, src2 = r1[r1.domain == "source"], r2[r2.domain == "source"]
    pd.testing.assert_frame_equal(src1.reset_index(drop=True), src2.reset_index(drop=True))
    assert not r1[r1.domain == "ood"]["value"].equals(r2[r2.domain == "ood"]["value"])


def test_same_config_gives_identical_tables(result):
    again = run_multiclass_transport(_frame(), config=_config())
    pd.testing.assert_frame_equal(result.table, again.table)
    pd.testing.assert_frame_equal(result.verdicts, again.verdicts)


def test_weighted_run_reports_both_schemes():
    res = run_multiclass_transport(_frame(weights=True), config=_config(weight_column="w", n_refits=1, n_bootstrap=10))
    t = res.table
    assert set(t.loc[t.analysis == "metrics", "weighting"]) == {"unweighted", "weighted"}
    assert {"unweighted", "weighted"} <= set(res.verdicts["weighting"])


def test_bootstrap_statistics_equal_the_metric_functions_at_unit_weights():
    """The vectorised replicate arithmetic, at weights 1 (and at integer weights), is the point estimate."""
    rng = np.random.default_rng(3)
    n, k = 500, 4
    z = rng.normal(0, 1.5, (n, k))
    P = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    specs = (ScoreSpec("lac"), ScoreSpec("aps"))
    from audit_core.transport.multiclass import conformal as mcf
    from audit_core.transport.multiclass.selective import selective_rows

    rules = MulticlassRules(thresholds=fit_thresholds(P, [0.5, 0.9]),
                            qhat={s.name: {0.1: mcf.calibrate(y, P, 0.1, s)} for s in specs},
                            hcep_thresholds=(0.8,), scores=specs)
    cols = replicate_columns(y, P, rules)
    w = rng.integers(1, 4, n).astype(float)
    for W, ww in ((np.ones((1, n)), None), (w[None, :], w)):
        vals = {k_: v[0] for k_, v in replicate_values(cols, W).items()}
        ref = multiclass_metric_values(y, P, sample_weight=ww)
        for name, v in ref.items():
            assert vals[("metrics", name, None, None)] == pytest.approx(v, abs=1e-12), name
        sel = {(r["metric"], r.get("selection_rate")): r["value"] for r in selective_rows(y, P, rules.thresholds, (0.8,),
                                                                                        sample_weight=ww)}
        for s in (0.5, 0.9):
            assert vals[("selective", "rate", None, s)] == pytest.approx(sel[("rate", s)], abs=1e-12)
            assert vals[("selective", "risk", None, s)] == pytest.approx(sel[("risk", s)], abs=1e-12)
        assert vals[("selective", "hcep_at_0.80", None, None)] == pytest.approx(sel[("hcep_at_0.80", None)], abs=1e-12)
        for spec in specs:
            for method in ("marginal", "label_conditional"):
                sets = mcf.prediction_sets(P, rules.qhat[spec.name][0.1][method], spec)
                rep = mcf.set_report(y, sets, sample_weight=ww)
                got = vals[(f"conformal_{method}", f"{spec.name}:coverage", 0.1, None)]
                assert got == pytest.approx(rep["coverage_weighted"], abs=1e-12)


def test_a_class_the_target_lacks_keeps_the_source_codes():
    df = _frame()
    df = df[~((df.dom == "t") & (df.y == "fail"))].reset_index(drop=True)  # code 1 of 4 absent from the target
    a = MulticlassTransportAudit(_config(n_refits=1, n_bootstrap=5)).declare(df)
    names = np.array(["distinction", "fail", "pass", "withdrawn"])
    assert a.classes == tuple(names)
    assert np.array_equal(names[a.state.y_target["y"]], df.loc[df.dom == "t", "y"].to_numpy())
    res = run_multiclass_transport(df, config=_config(n_refits=1, n_bootstrap=5))
    t = res.table
    cov1 = t[(t.domain == "ood") & (t.metric == "lac:coverage_class1")]["value"]
    assert len(cov1) and cov1.isna().all()  # no target record of the absent class
    assert t[(t.domain == "ood") & (t.metric == "lac:coverage_class2")]["value"].notna().all()


def test_refusals_are_declared():
    with pytest.raises(AuditInputError, match="primary target 'y' must be a class target without a positive"):
        run_multiclass_transport(_frame(), config=_config(targets=({"kind": "class", "name": "y", "column": "y",
                                                                    "positive": "pass"},)))
    two = _frame()
    two["y"] = np.where(two["y"] == "pass", "pass", "other")
    with pytest.raises(AuditInputError, match=r"2 classes \('other', 'pass'\): declare a positive class"):
        run_multiclass_transport(two, config=_config())
    lacking = _frame()
    lacking = lacking[~((lacking.dom == "s") & (lacking.y == "distinction"))]
    with pytest.raises(AuditInputError, match=r"4 classes.*the source domain holds 3 of them"):
        run_multiclass_transport(lacking, config=_config())
    with pytest.raises(AuditInputError, match="'spline'"):
        multiclass_mappings(["raw", "spline"])
    assert multiclass_mappings(["raw", "platt", "isotonic", "beta"]) == ("raw", "temperature", "vector")
    with pytest.raises(AuditInputError, match="refits zoo models.*'mine'"):
        MulticlassTransportAudit(_config(fixed_model="mine"))
    with pytest.raises(AuditInputError, match="Step 'split' cannot run yet: run 'declare' first"):
        MulticlassTransportAudit(_config()).split()
    # the binary entry point still refuses, and says where the multi-class run is
    with pytest.raises(AuditInputError, match="run_multiclass_transport"):
        run_transport(_frame(), config=_config())


def test_cli_run_and_registry_take_a_multiclass_target(tmp_path: Path):
    from audit_core.runs.config import parse_config
    from audit_core.runs.execute import run_config
    from audit_core.runs.registry import RunRegistry

    path = tmp_path / "four.csv"
    _frame().to_csv(path, index=False)
    cfg = parse_config({"data": {"path": str(path)},
                        "dataset": {"targets": [{"kind": "class", "name": "y", "column": "y"}],
                                    "domain_column": "dom", "source_domain": "s", "target_domain": "t"},
                        "model": {"kind": "logistic_regression"},
                        "audits": [{"kind": "transport", "n_refits": 1, "n_bootstrap": 10}]})
    reg = RunRegistry(tmp_path / "r.sqlite3")
    out = run_config(cfg, registry=reg, base_dir=tmp_path)
    assert out[0].status == "done", out[0].error
    run = reg.load(out[0].run_id)
    assert run.audit_kind == "transport" and run.status == "done"
    assert {"ece_top", "aps:coverage", "raps:coverage"} <= set(run.tables["verdicts"]["metric"])
    assert run.manifest["classes"] == ["distinction", "fail", "pass", "withdrawn"]
    assert run.model_spec["mappings"] == ["raw", "temperature", "vector"]  # what ran, not the binary names


def test_saved_multiclass_run_reports_its_tables_and_multiclass_figures(tmp_path: Path, result):
    """The report and the Runs page rebuild figures from stored tables: a multi-class run gets its own, never the
    binary builders (which read binary metric names)."""
    from audit_core.runs.registry import RunRegistry
    from components.report.builders import figures_for
    from components.report.document import render_report

    reg = RunRegistry(tmp_path / "r.sqlite3")
    record = reg.load(result.save_to_registry(reg, dataset_name="four"))
    titles = [t for t, _ in figures_for(record)]  # before the binary builders: RUN_TABLES_UNREADABLE ("KeyError")
    assert titles == ["Top-label reliability diagram", "Max-probability selective risk", "Per-class conformal sets"]
    html = render_report(record)
    assert "cannot be drawn" not in html and "Per-class conformal sets" in html and "Verdict table" in html
