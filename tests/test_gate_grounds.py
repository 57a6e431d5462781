"""The release gate's grounds, each checked against a value computed by hand from a real run's stored table.

The runs come from UCI adult.data read as shipped (``tests/real_data.py``),
run through the CLI's executor (model, fragility and transport audits, with
the default stresses) and saved to a scratch registry. Each expected value is
computed below with pandas filters written out from the definitions in
``docs/receipts.md``, independently of ``audit_core.runs.grounds``.

Before the fix, ``ood_ece`` averaged every ``ece``/``ood``/``raw`` row of
every analysis (degradation percentiles valued up to 100, heterogeneity,
stress conditions): on this run that gives 10.09, while the metrics rows say
0.02 (``test_the_old_average_was_impossible`` keeps that evidence).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.gate import compare_gate, extract_gate_grounds
from audit_core.runs.registry import RunRegistry

from real_data import ROOT, adult_config

FRAGILITY = {"kind": "fragility", "max_cases": 40, "n_boot": 10, "shap_max_cases": 10, "search_max_cases": 10,
             "temperature": False, "perm_repeats": 1, "stress_draws": 2, "n_draws": 2}
TRANSPORT = {"kind": "transport", "n_refits": 2, "n_bootstrap": 20, "n_random_sets": 3, "stress_max_rows": 2000}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    reg = RunRegistry(tmp_path_factory.mktemp("gate") / "registry.sqlite3")
    cfg = parse_config(adult_config([{"kind": "model", "bootstrap": 0}, FRAGILITY, TRANSPORT]))
    out = run_config(cfg, registry=reg, base_dir=ROOT)
    assert [o.status for o in out] == ["done"] * 3, [o.error for o in out]
    return {o.kind: reg.load(o.run_id) for o in out}


def _grounds(runs: dict) -> dict:
    return extract_gate_grounds(list(runs.values())).values


def test_transport_grounds_by_hand(runs):
    """The headline slice by the rule: the first model (logistic regression), Platt scaling (fitted under the
    default mappings raw, platt, isotonic), the primary target, unweighted (no weight column), mean over refits."""
    assert runs["transport"].manifest["headline"]["mapping"] == "platt"
    t = runs["transport"].tables["results"]
    clean_ood = t[(t["condition"] == "clean") & (t["domain"] == "ood") & (t["model"] == "logistic_regression")
                  & (t["mapping"] == "platt") & (t["weighting"] == "unweighted") & (t["target_definition"] == "high_income")
                  & (t["refit"] >= 0)]
    ece = clean_ood[(clean_ood["analysis"] == "metrics") & (clean_ood["metric"] == "ece")]
    assert sorted(ece["refit"]) == [0, 1]
    cov = clean_ood[(clean_ood["analysis"] == "conformal_marginal") & (clean_ood["metric"] == "worst_class_coverage")
                    & np.isclose(clean_ood["alpha"], 0.1)]
    assert sorted(cov["refit"]) == [0, 1]
    v = runs["transport"].tables["verdicts"]
    v = v[(v["model"] == "logistic_regression") & (v["mapping"] == "platt") & (v["weighting"] == "unweighted")]
    g = _grounds(runs)
    assert g["ood_ece"] == pytest.approx(ece["value"].mean(), abs=1e-15)
    assert g["worst_class_coverage_90"] == pytest.approx(cov["value"].mean(), abs=1e-15)
    assert g["n_transport_sensitive"] == (v["verdict"] == "transport-sensitive").sum()
    assert g["n_transport_worse"] == ((v["verdict"] == "transport-sensitive") & (v["direction"] == "worse")).sum()
    assert 0 <= g["ood_ece"] <= 1 and 0 <= g["worst_class_coverage_90"] <= 1


def test_model_and_fragility_grounds_by_hand(runs):
    m = runs["model"].tables["metrics"]
    s = runs["fragility"].tables["certificates"]
    g = _grounds(runs)
    assert g["test_auroc"] == m.loc[(m["split"] == "test") & (m["metric"] == "auroc"), "value"].item()
    assert g["test_log_loss"] == m.loc[(m["split"] == "test") & (m["metric"] == "log_loss"), "value"].item()
    confident = s[s["p_hat"] >= 0.8]
    assert len(confident) > 0
    assert g["brittle_share_confident"] == pytest.approx(confident["donor_any"].astype(float).mean(), abs=1e-15)
    assert g["mean_fds"] == pytest.approx(s["fds"].mean(), abs=1e-15)


def test_the_old_average_was_impossible(runs):
    """What the old extractor read: every ECE row of the OOD domain under the raw mapping, of every analysis."""
    t = runs["transport"].tables["results"]
    old = t[(t["metric"] == "ece") & (t["domain"] == "ood") & (t["mapping"] == "raw")]
    assert set(old["analysis"]) > {"metrics"}  # degradation percentiles, heterogeneity, stress conditions
    assert old["value"].mean() > 1 > _grounds(runs)["ood_ece"]


def _with_results(run, edit):
    t = run.tables["results"].copy()
    edit(t)
    return replace(run, tables={**run.tables, "results": t})


def _primary_ece(t):
    return ((t["analysis"] == "metrics") & (t["condition"] == "clean") & (t["domain"] == "ood") & (t["mapping"] == "platt")
            & (t["weighting"] == "unweighted") & (t["metric"] == "ece") & (t["refit"] >= 0))


def test_out_of_range_values_are_unknown_with_the_reason(runs):
    def bad_ece(t):
        t.loc[_primary_ece(t), "value"] = 1.5

    def bad_cov(t):
        t.loc[(t["metric"] == "worst_class_coverage") & (t["analysis"] == "conformal_marginal"), "value"] = -0.1

    for edit, ground in ((bad_ece, "ood_ece"), (bad_cov, "worst_class_coverage_90")):
        g = extract_gate_grounds([_with_results(runs["transport"], edit)])
        assert g.values[ground] is None
        row = g.report.set_index("ground").loc[ground]
        assert row["status"] == "invalid → UNKNOWN" and "outside the valid range [0, 1]" in row["detail"]


def test_ambiguous_slices_are_unknown_never_averaged(runs):
    rec = runs["transport"]
    t = pd.concat([rec.tables["results"], rec.tables["results"][_primary_ece(rec.tables["results"])]], ignore_index=True)
    g = extract_gate_grounds([replace(rec, tables={**rec.tables, "results": t})])
    row = g.report.set_index("ground").loc["ood_ece"]
    assert g.values["ood_ece"] is None and row["status"] == "invalid → UNKNOWN" and "ambiguous" in row["detail"]


def test_a_run_without_alpha_010_leaves_the_coverage_ground_unknown(runs):
    rec = runs["transport"]
    t = rec.tables["results"]
    t = t[~np.isclose(t["alpha"], 0.1)]
    g = extract_gate_grounds([replace(rec, tables={**rec.tables, "results": t})])
    assert g.values["worst_class_coverage_90"] is None
    assert "did not evaluate alpha = 0.1" in g.report.set_index("ground").loc["worst_class_coverage_90", "detail"]
    assert g.values["ood_ece"] is not None


def test_missing_tables_are_unknown_and_the_gate_refers(tmp_path: Path, runs) -> None:
    """Runs without the tables or columns a ground needs: UNKNOWN with the reason, never guessed."""
    reg = RunRegistry(tmp_path / "r.sqlite3")
    cfg = {"models": ["lr"], "mappings": ["platt"], "targets": [{"kind": "class", "name": "t", "column": "y",
                                                                "positive": 1}]}
    bare = reg.load(reg.save(audit_kind="transport", dataset_name="d", dataset_fingerprint="a" * 64, grouping_hash=None,
                             model_spec={}, config={}, manifest={"config": cfg},
                             tables={"results": pd.DataFrame({"metric": ["ece"], "domain": ["ood"], "value": [0.07]})}))
    g = extract_gate_grounds([bare])
    rep = g.report.set_index("ground")
    assert g.values["ood_ece"] is None and "lacks column(s)" in rep.loc["ood_ece", "detail"]
    unnamed = reg.load(reg.save(audit_kind="transport", dataset_name="d", dataset_fingerprint="a" * 64,
                                grouping_hash=None, model_spec={}, config={}, tables=bare.tables))
    detail = extract_gate_grounds([unnamed]).report.set_index("ground").loc["ood_ece", "detail"]
    assert "does not declare its models, mappings and targets" in detail
    assert g.values["n_transport_sensitive"] is None and "no 'verdicts' table" in rep.loc["n_transport_sensitive", "detail"]
    only_model = extract_gate_grounds([runs["model"]])
    assert set(only_model.absent) >= {"ood_ece", "brittle_share_confident"}
    row = only_model.report.set_index("ground").loc["ood_ece"]
    assert row["status"] == "absent → UNKNOWN" and "transport" in row["detail"]
    cmp = compare_gate([runs["model"]], list(runs.values()), old_scope="production", new_scope="production")
    assert cmp.cube.cube.v_old == "refer"  # production needs the transport and fragility grounds
    assert cmp.cube.cube.v_new in ("release", "block")
