"""Forecast grounds of the release gate, on hand-built runs saved in a scratch registry.

The forecast tables are tests/forecast_tables.py (slice logistic_regression / platt, two refits):
ece by covariate:cbpe 0.04, label:em 0.06, both:span 0.05 (every refit); risk@s=0.8 by covariate:cbpe
0.19 (mean of 0.18, 0.20), label:em unknown in refit 1 (DISAGREE).
"""
from __future__ import annotations

import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.findings import gate_findings, gate_report
from audit_core.runs.gate import compare_gate, compare_runs, gate_state
from audit_core.runs.grounds import extract_gate_grounds
from audit_core.runs.forecast_grounds import split_rules
from audit_core.runs.registry import RunRegistry

from forecast_tables import DISAGREE, forecast_tables

HEADLINE = {"model": "logistic_regression", "mapping": "platt", "target_definition": "t", "weighting": "unweighted",
            "n_refits": 2}


def _results(ece_ood: float) -> pd.DataFrame:
    """The measured OOD ECE of the headline slice: two refits, both ``ece_ood``."""
    return pd.DataFrame([{"analysis": "metrics", "condition": "clean", "target_definition": "t", "domain": d,
                          "model": "logistic_regression", "mapping": "platt", "weighting": "unweighted",
                          "metric": "ece", "alpha": None, "selection_rate": None, "refit": r,
                          "value": ece_ood if d == "ood" else 0.01}
                         for r in (0, 1) for d in ("id", "ood")])


def _save(reg: RunRegistry, tables: dict) -> str:
    return reg.save(audit_kind="transport", dataset_name="toy", dataset_fingerprint="f" * 64, grouping_hash=None,
                    model_spec={"kind": "logistic_regression"}, config={"kind": "transport"}, tables=tables,
                    artifacts={}, manifest={"headline": HEADLINE})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    reg = RunRegistry(tmp_path_factory.mktemp("gf") / "r.sqlite3")
    ids = {"forecast_only": _save(reg, forecast_tables()),
           "measured_only": _save(reg, {"results": _results(0.02)}),
           "both": _save(reg, {"results": _results(0.02), **forecast_tables()})}
    return {k: reg.load(v) for k, v in ids.items()}


def _yaml(*rules: str, on_unknown: str = "refer") -> str:
    body = "".join(rules)
    ids = [line.split(":", 1)[1].strip() for line in body.splitlines() if line.strip().startswith("- id:")]
    return (f"norms:\n  default: release\n  on_unknown: {on_unknown}\n  rules:\n{body}authority:\n"
            + "".join(f"  {i}: true\n" for i in ids))


def _rule(rid: str, when: str, **extra: str) -> str:
    return f"    - id: {rid}\n      when: {when}\n      then: block\n" + "".join(
        f"      {k}: {v}\n" for k, v in extra.items())


def test_forecast_rule_reads_the_declared_method(runs):
    f = runs["forecast_only"]
    for extra, limit, verdict in (({"assumption": "covariate"}, "0.035", "block"),   # 0.04 > 0.035
                                  ({"assumption": "covariate"}, "0.045", "release"),  # 0.04 ≤ 0.045
                                  ({}, "0.045", "block"),                             # both:span 0.05 > 0.045
                                  ({"assumption": "label", "method": "label:em"}, "0.055", "block")):  # 0.06
        r = compare_runs(f, f, rules_yaml=_yaml(_rule("ece_fc", f"ood_ece > {limit}", source="forecast", **extra)))
        assert r.verdict_b == verdict, (extra, limit)
    r = compare_runs(f, f, rules_yaml=_yaml(_rule("ece_fc", "ood_ece > 0.035", source="forecast",
                                                  assumption="covariate")))
    frame = r.to_frame().set_index("ground")
    assert frame.loc["forecast_covariate_cbpe_ood_ece", "status_b"] == "present (forecast)"
    assert frame.loc["forecast_covariate_cbpe_ood_ece", "value_b"] == pytest.approx(0.04)
    rep = r.comparison.new_grounds.report.set_index("ground")
    assert rep.loc["forecast_covariate_cbpe_ood_ece", "description"].startswith("forecast (covariate:cbpe")
    assert r.comparison.new_grounds.values["ood_ece"] is None  # the measured ground is not filled from forecasts


def test_unknown_forecast_never_passes(runs):
    f = runs["forecast_only"]
    yaml = _yaml(_rule("risk_fc", "ood_selective_risk_80 > 0.5", source="forecast", assumption="label"))
    r = compare_runs(f, f, rules_yaml=yaml)
    assert r.verdict_b == "refer" and not r.passed
    rep = r.comparison.new_grounds.report.set_index("ground")
    assert rep.loc["forecast_label_em_ood_selective_risk_80", "status"] == "unknown (forecast)"
    assert rep.loc["forecast_label_em_ood_selective_risk_80", "detail"].startswith(f"unknown: {DISAGREE} (1 of 2")
    # the same rule under covariate shift: 0.19 ≤ 0.5, it passes
    ok = compare_runs(f, f, rules_yaml=yaml.replace("assumption: label", "assumption: covariate"))
    assert ok.verdict_b == "release"
    with pytest.raises(AuditInputError) as e:
        compare_runs(f, f, rules_yaml=_yaml(_rule("risk_fc", "ood_selective_risk_80 > 0.5", source="forecast"),
                                            on_unknown="skip"))
    assert e.value.code == "GATE_FORECAST_SKIP"


def test_refusals_never_mix_sources(runs):
    with pytest.raises(AuditInputError) as e:  # the default rules are measured: ood_ece of a forecast-only run
        compare_runs(runs["forecast_only"], runs["forecast_only"])
    assert e.value.code == "GATE_MEASURED_ON_FORECAST" and "reads measured grounds (ood_ece)" in e.value.message
    assert "source: forecast" in e.value.message
    with pytest.raises(AuditInputError) as e:
        compare_runs(runs["measured_only"], runs["measured_only"],
                     rules_yaml=_yaml(_rule("ece_fc", "ood_ece > 0.05", source="forecast")))
    assert e.value.code == "GATE_FORECAST_ON_MEASURED"
    # a run with both: the measured rule reads results (0.02), the forecast rule the forecast (both:span 0.05)
    b = runs["both"]
    yaml = _yaml(_rule("ece", "ood_ece > 0.03"), _rule("ece_fc", "ood_ece > 0.045", source="forecast"))
    r = compare_runs(b, b, rules_yaml=yaml)
    values = r.comparison.new_grounds.values
    assert values["ood_ece"] == pytest.approx(0.02) and values["forecast_both_span_ood_ece"] == pytest.approx(0.05)
    assert r.verdict_b == "block"
    measured_only = compare_runs(b, b, rules_yaml=_yaml(_rule("ece", "ood_ece > 0.03")))
    assert measured_only.verdict_b == "release"
    assert not any(g.startswith("forecast_") for g in measured_only.comparison.new_grounds.values)


def test_rule_fields_are_checked():
    data = {"norms": {"default": "release", "rules": [{"id": "x", "when": "ood_ece > 0.1", "then": "block",
                                                        "source": "forecast", "method": "covariate:cbpe",
                                                        "assumption": "covariate"}]}, "authority": {"x": True}}
    clean, requests, measured = split_rules(data)
    assert clean["norms"]["rules"][0] == {"id": "x", "when": "forecast_covariate_cbpe_ood_ece > 0.1", "then": "block"}
    assert [(r.ground, r.method, r.quantity) for r in requests] == [("ood_ece", "covariate:cbpe", "ece")]
    assert measured == []
    for bad, code in (({"source": "guess"}, "GATE_RULE_SOURCE"), ({"source": "forecast", "assumption": "x"},
                                                                  "GATE_RULE_SOURCE"),
                      ({"source": "forecast", "assumption": "label", "method": "covariate:weighted"},
                       "GATE_RULE_SOURCE"), ({"assumption": "label"}, "GATE_RULE_SOURCE")):
        rule = {"id": "x", "when": "ood_ece > 0.1", "then": "block", **bad}
        with pytest.raises(AuditInputError) as e:
            split_rules({"norms": {"rules": [rule]}})
        assert e.value.code == code, bad
    with pytest.raises(AuditInputError) as e:
        split_rules({"norms": {"rules": [{"id": "x", "when": "test_auroc < 0.7", "then": "block",
                                          "source": "forecast"}]}})
    assert e.value.code == "GATE_FORECAST_GROUND" and "'test_auroc'" in e.value.message


def test_gate_state_declares_requested_grounds_unknown_without_runs(runs):
    yaml = _yaml(_rule("ece_fc", "ood_ece > 0.05", source="forecast"))
    state = gate_state(extract_gate_grounds([]), deployment_scope="production", rules_yaml=yaml)
    g = {x.name: x for x in state.grounds}
    assert g["forecast_both_span_ood_ece"].value is None
    comp = compare_gate([], [], old_scope="production", new_scope="production", old_rules=yaml)
    assert comp.cube.cube.v_new == "refer"


def test_gate_words_label_forecasts(runs):
    f = runs["forecast_only"]
    r = compare_runs(f, f, rules_yaml=_yaml(_rule("ece_fc", "ood_ece > 0.045", source="forecast")))
    text = " ".join(x.text for x in gate_findings(r))
    # both:span 0.05 (printed as the measured ECE is, 3 decimals) above 0.045
    assert ("the label-free forecast (both:span) of how far the stated probabilities are off on the target domain "
            "(ECE) is 0.050, above the 0.045 limit") in text
    u = compare_runs(f, f, rules_yaml=_yaml(_rule("risk_fc", "ood_selective_risk_80 > 0.5", source="forecast",
                                                  assumption="label")))
    (rule,) = gate_report(u).rules
    assert rule.status == "unknown"
    assert rule.text.startswith("the label-free forecast (label:em) of the error rate among the cases the 80% rule "
                                f"answers on the target domain is unknown: {DISAGREE}")
