"""The findings checker catches every false sentence the issue lists, fed the tables that produced it.

Each test builds a saved run's tables by hand (the numbers the issue quotes), then gives the checker the sentence
as it was said: once as the old text (no contract: the text rules and the restricted words catch it), and where
the sentence can be written as a contract, once with the contract that claims its words (the word conditions catch
it). A true sentence on the same tables passes, so the checker is not merely strict.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.findings import Fact, Finding, Word, check_findings, gate_findings, transport_findings
from audit_core.findings.check import text_violations
from audit_core.runs.gate import compare_runs
from audit_core.runs.keys import TableKey, headline_key
from audit_core.runs.registry import RunRegistry
from audit_core.transport.headline import headline_slice

TARGET = {"kind": "class", "name": "good", "column": "kredit", "positive": 1}
CONFIG = {"models": ["logistic_regression"], "mappings": ["raw", "platt"], "targets": [TARGET], "n_refits": 2,
          "n_bins": 15, "target_value": "A151", "weight_column": None}
H = headline_slice(CONFIG)


def _rows(analysis, domain, metric, values, *, mapping="platt", alpha=np.nan, rate=np.nan):
    return [dict(analysis=analysis, condition="clean", target_definition="good", domain=domain,
                 model="logistic_regression", mapping=mapping, refit=r, metric=metric, value=v, weighting="unweighted",
                 alpha=alpha, selection_rate=rate) for r, v in enumerate(values)]


@pytest.fixture
def registry(tmp_path) -> RunRegistry:
    return RunRegistry(tmp_path / "r.sqlite3")


def _transport(registry, rows, verdicts=None):
    tables = {"results": pd.DataFrame(rows), "verdicts": verdicts if verdicts is not None else pd.DataFrame(
        {"model": ["logistic_regression"], "mapping": ["platt"], "weighting": ["unweighted"], "analysis": ["metrics"],
         "metric": ["auroc"], "alpha": [np.nan], "selection_rate": [np.nan], "delta": [0.0], "ci_low": [-0.01],
         "ci_high": [0.01], "tolerance": [0.02], "verdict": ["transport-stable"], "direction": ["within tolerance"]}),
              "refit_summary": pd.DataFrame({"x": [0]})}
    return registry.load(registry.save(audit_kind="transport", dataset_name="d", dataset_fingerprint="f" * 64,
                                       grouping_hash=None, model_spec={}, config=CONFIG, tables=tables,
                                       manifest={"config": CONFIG, "headline": H.to_dict()}))


def _problems(record, finding) -> list[str]:
    return [v.problem for v in check_findings(record, [finding])]


# -------------------------------------------------------------- "answers 81% of cases instead of 81%"
def test_instead_of_between_equal_printed_numbers(registry):
    # German credit: 81% of source cases answered on the source test and 81% on A151 (0.806 and 0.812)
    rows = (_rows("selective", "id", "rate", [0.806, 0.806], rate=0.8)
            + _rows("selective", "ood", "rate", [0.81, 0.814], rate=0.8))
    rec = _transport(registry, rows)
    old = Finding(text="On A151 the 0.8 selection threshold answers 81% of cases instead of 81%, and their error rate "
                       "rises from 16% to 23% (risk change +0.08 [0.01, 0.14]).", severity="info", kind="selective")
    problems = _problems(rec, old)
    assert any("'instead of' between two equal numbers (81% instead of 81%)" in p for p in problems)
    assert any("records no contract" in p for p in problems)
    facts = [Fact("rate_ood", 0.812, headline_key(H, analysis="selective", metric="rate", domain="ood",
                                                  selection_rate=0.8), "pct"),
             Fact("rate_id", 0.806, headline_key(H, analysis="selective", metric="rate", domain="id",
                                                 selection_rate=0.8), "pct")]
    claimed = Finding.of(kind="selective", severity="info", template="It answers {rate_ood} of cases {w0} {rate_id}.",
                         facts=facts, words=[Word("instead of", "differ_printed", ("rate_ood", "rate_id"))])
    assert any("'instead of' requires that the two numbers differ at the printed precision" in p
               for p in _problems(rec, claimed))
    true = Finding.of(kind="selective", severity="info", template="It answers {rate_ood} of cases, {w0} ({rate_id}).",
                      facts=facts, words=[Word("as on the source test", "same_printed", ("rate_ood", "rate_id"))])
    assert _problems(rec, true) == []


# -------------------------------------------------------------- "restore the coverage … (0.86 vs 0.86 marginal)"
def _coverage_rows(m0, m1, l0, l1):
    out = []
    for meth, c0, c1 in (("marginal", m0, m1), ("label_conditional", l0, l1)):
        for metric, v in (("coverage_class0", c0), ("coverage_class1", c1), ("mean_set_size", 1.4)):
            out += _rows(f"conformal_{meth}", "ood", metric, [v, v], alpha=0.1)
    return out


def _restore(l_c, l_w, m_c, classes=(1, 1, 1)):
    k = {m: headline_key(H, analysis=f"conformal_{meth}", metric=f"coverage_class{c}", domain="ood", alpha=0.1)
         for m, meth, c in (("l_c", "label_conditional", classes[0]), ("l_w", "label_conditional", classes[1]),
                            ("m_c", "marginal", classes[2]))}
    facts = [Fact("l_c", l_c, k["l_c"]), Fact("l_w", l_w, k["l_w"]), Fact("m_c", m_c, k["m_c"]),
             Fact("target", 0.9, None, "pct")]
    return Finding.of(kind="conformal_class_coverage", severity="good", facts=facts,
                      words=[Word("restore", "restores", ("l_c", "l_w", "target", "m_c"))],
                      template="Label-conditional sets {w0} the coverage of 'yes' ({l_c} vs {m_c} marginal, target "
                               "{target}).")


def test_restore_when_the_class_stays_below_target(registry):
    # OULAD: the worst class at 0.86 under both methods, target 90%
    rec = _transport(registry, _coverage_rows(0.97, 0.86, 0.95, 0.86))
    old = Finding(text="On 2014J label-conditional sets restore the coverage of 'Fail' (0.86 vs 0.86 marginal, "
                       "target 90%) at the cost of 1% more two-class sets.", severity="good", kind="conformal")
    assert any("uses 'restore'" in p for p in _problems(rec, old))
    problems = _problems(rec, _restore(0.86, 0.86, 0.86))
    assert any(p.startswith("'restore' requires that the class reaches its target coverage") for p in problems)
    # the sentence the findings say instead, on the same tables, passes
    said = transport_findings(_result(rec))[0]
    assert "restore" not in said.text and check_findings(rec, [said]) == []


def test_restore_when_the_other_class_falls_as_far(registry):
    # demo step 3: 'yes' goes 0.74 → 0.98 while the other class goes 0.98 → 0.74: the worst class is no better
    rec = _transport(registry, _coverage_rows(0.98, 0.74, 0.74, 0.98))
    problems = _problems(rec, _restore(0.98, 0.74, 0.74, classes=(1, 0, 1)))
    assert any("the worst class under label-conditional sets is better" in p and "l_w = 0.74, target = 90%, "
               "m_c = 0.74" in p for p in problems)
    # a true restoration on other tables passes: 'yes' 0.74 → 0.93, the other class 0.98 → 0.95
    rec2 = _transport(registry, _coverage_rows(0.98, 0.74, 0.95, 0.93))
    assert _problems(rec2, _restore(0.93, 0.93, 0.74, classes=(1, 1, 1))) == []


def _result(record):
    from audit_core.transport.results import TransportResult

    return TransportResult(table=record.tables["results"], verdicts=record.tables["verdicts"],
                           refit_summary=record.tables["refit_summary"], extras={}, manifest=dict(record.manifest))


# -------------------------------------------------------------- "the 0.8 selection threshold"
def test_a_selection_rate_called_a_threshold(registry):
    rows = (_rows("selective", "source", "threshold", [0.70, 0.716], rate=0.8)
            + _rows("selective", "source", "rate", [0.8, 0.8], rate=0.8))
    rec = _transport(registry, rows)
    old = Finding(text="On 2023 the 0.8 selection threshold answers 63% of cases instead of 81%.", severity="warning",
                  kind="selective")
    assert any("a selection rate is called a threshold" in p for p in _problems(rec, old))
    # calling the rate's fitted confidence (0.708) the threshold is what the contract licenses
    thr = TableKey.of("results", "value", how="refit_mean", analysis="selective", target_definition="good",
                      domain="source", model="logistic_regression", mapping="platt", metric="threshold",
                      selection_rate=0.8)
    good = Finding.of(kind="selective", severity="info", facts=[Fact("threshold", 0.708, thr, "num3"),
                                                                Fact("rate", 0.8, None, "pct")],
                      words=[Word("threshold", "reads_threshold", ("threshold",))],
                      template="The {w0} that answers {rate} of source cases (confidence ≥ {threshold}).")
    assert _problems(rec, good) == []
    # the rate itself, keyed as the "threshold", is refused by the word's condition
    rate_key = headline_key(H, analysis="selective", metric="rate", domain="source", selection_rate=0.8)
    wrong = Finding.of(kind="selective", severity="info", facts=[Fact("threshold", 0.708, rate_key, "num3")],
                       words=[Word("threshold", "reads_threshold", ("threshold",))], template="The {w0} {threshold}.")
    assert any("'threshold' requires that the number is a confidence threshold" in p for p in _problems(rec, wrong))


# -------------------------------------------------------------- "most stable" on RCMA alone
def test_most_stable_on_rcma_alone(registry):
    # demo step 2: LightGBM has the lower mean RCMA, but logistic regression the lower FDS and the higher k*
    models = pd.DataFrame({"model": ["logistic_regression", "lightgbm"], "heldout_auroc": [0.816, 0.790],
                           "mean_rcma": [1.59, 1.07], "mean_fds": [0.208, 0.358], "mean_k_star": [5.14, 4.09]})
    rec = registry.load(registry.save(audit_kind="fragility", dataset_name="d", dataset_fingerprint="f" * 64,
                                      grouping_hash=None, model_spec={}, config={}, tables={"models": models}))
    old = Finding(text="The model with the best AUROC (logistic_regression, 0.816) is not the most stable (lightgbm, "
                       "mean RCMA 1.07 vs 1.59).", severity="warning", kind="winner_vs_stable")
    assert any("uses 'most stable'" in p for p in _problems(rec, old))
    facts = [Fact(f"{s}{i}", float(models.loc[i, col]), TableKey.of("models", col, model=models.loc[i, "model"]))
             for i in (0, 1) for s, col in (("rcma", "mean_rcma"), ("fds", "mean_fds"), ("k", "mean_k_star"))]
    claimed = Finding.of(kind="winner_vs_stable", severity="warning", facts=facts,
                         words=[Word("most stable", "most_stable", ("rcma1", "fds1", "k1", "rcma0", "fds0", "k0"))],
                         template="LightGBM is the {w0} (mean RCMA {rcma1} vs {rcma0}).")
    assert any("'most stable' requires that the model has the lowest mean RCMA, the lowest mean FDS and the highest "
               "mean k*" in p for p in _problems(rec, claimed))
    # what the findings say on these tables passes
    from audit_core.findings import record_findings  # noqa: F401  (the same module the report uses)
    from audit_core.findings.fragility import FragilityTables, _models

    said = _models(FragilityTables(certificates=pd.DataFrame(), k_star=np.array([]), scores=pd.DataFrame(),
                                   auroc=pd.DataFrame(), incremental=pd.DataFrame(), k=3, donor_groups=3, n_boot=1,
                                   stress_seed=0, models=models))
    assert "most stable" not in said.text and check_findings(rec, [said]) == []


# -------------------------------------------------------------- "improves" in alarm colour
def test_improves_in_alarm_colour():
    # gbsg2: "ECE improves by −0.065" shown as a warning beside "Release is blocked"
    f = Finding(text="On the target domain the calibration error (ECE) improves by −0.065 [−0.09, −0.04].",
                severity="warning", kind="change_ece")
    assert "'improves' shown in alarm colour (warning)" in text_violations(f)
    assert text_violations(Finding(text="Adding the certificate improves it.", severity="good")) == []


# -------------------------------------------------------------- two meanings of fragile
def test_fragile_for_a_donor_count_and_the_list_it_must_agree_with(registry):
    # "5 of 8 confident predictions flip" (donor test) beside a "confident but fragile" list of the certificate
    s = pd.DataFrame({"key": [f"c{i}" for i in range(10)],
                      "p_hat": [0.95, 0.9, 0.85, 0.82, 0.81, 0.88, 0.9, 0.99, 0.6, 0.55],
                      "donor_any": [1, 1, 1, 1, 1, 0, 0, 0, 1, 0], "k_star": [4, 4, 4, 4, 4, 4, 4, 2, 1, 4]})
    rec = registry.load(registry.save(audit_kind="fragility", dataset_name="d", dataset_fingerprint="f" * 64,
                                      grouping_hash=None, model_spec={}, config={}, tables={"certificates": s}))
    conf = TableKey("certificates", "p_hat", (("p_hat", ">=", 0.8),), "count")
    flipped = Fact("flipped", 5.0, conf.and_("donor_any", "=", True), "int")
    facts = [flipped, Fact("confident", 8.0, conf, "int")]
    old = Finding(text="5 of 8 confident predictions are fragile: they flip when up to 3 evidence groups take another "
                       "case's values.", severity="warning", kind="confident_flips")
    assert any("uses 'fragile'" in p for p in _problems(rec, old))
    claimed = Finding.of(kind="confident_flips", severity="warning", facts=facts,
                         words=[Word("fragile", "certificate_count", ("flipped",))],
                         template="{flipped} of {confident} confident predictions are {w0}.")
    assert any("'fragile' requires that the count reads the certificate" in p for p in _problems(rec, claimed))
    named = Finding.of(kind="confident_flips", severity="warning", facts=facts,
                       words=[Word("brittle", "donor_count", ("flipped",))],
                       template="{flipped} of {confident} confident predictions are {w0}.")
    assert _problems(rec, named) == []
    # the case inspector's lists are the cases the two sentences count (the same filters)
    from audit_core.findings.cases import confident_brittle, confident_fragile

    assert list(confident_brittle(s)["key"]) == ["c0", "c1", "c2", "c3", "c4"]
    assert list(confident_fragile(s, k=3)["key"]) == ["c7"]  # the one fragile case is not among the five


# -------------------------------------------------------------- numbers, and two readings of one quantity
def test_a_number_its_table_does_not_hold_and_two_readings_of_ood_ece(registry):
    # German credit: the gate read OOD ECE on the raw mapping (0.13) while a sentence read Platt (0.122)
    rows = _rows("metrics", "ood", "ece", [0.12, 0.124]) + _rows("metrics", "ood", "ece", [0.13, 0.13], mapping="raw")
    rec = _transport(registry, rows)
    platt = headline_key(H, analysis="metrics", metric="ece", domain="ood")
    raw_h = headline_slice({**CONFIG, "mappings": ["raw"]})
    raw = headline_key(raw_h, analysis="metrics", metric="ece", domain="ood")
    wrong = Finding.of(kind="change_ece", severity="info", facts=[Fact("ood", 0.109, platt, "num3")],
                       template="ECE {ood}.")
    assert any("fact 'ood' says 0.109 but the table gives 0.122" in p for p in _problems(rec, wrong))
    a = Finding.of(kind="change_ece", severity="info", facts=[Fact("ood", 0.122, platt, "num3")], template="ECE {ood}.")
    b = Finding.of(kind="gate_verdict", severity="alert", facts=[Fact("v0", 0.13, raw, "num3")],
                   template="Blocked: ECE {v0}.")
    assert check_findings(rec, [a]) == [] and check_findings(rec, [b]) == []
    both = [v.problem for v in check_findings(rec, [a, b])]
    assert len(both) == 1 and both[0].startswith("two readings of one quantity (analysis=metrics, metric=ece, "
                                                 "domain=ood, condition=clean)")


def test_the_gate_and_the_findings_of_a_run_read_one_ood_ece(registry):
    rows = (_rows("metrics", "ood", "ece", [0.12, 0.124]) + _rows("metrics", "id", "ece", [0.10, 0.11])
            + _rows("metrics", "ood", "ece", [0.13, 0.13], mapping="raw"))
    verdicts = pd.DataFrame({"model": ["logistic_regression"], "mapping": ["platt"], "weighting": ["unweighted"],
                             "analysis": ["metrics"], "metric": ["ece"], "alpha": [np.nan], "selection_rate": [np.nan],
                             "delta": [0.017], "ci_low": [-0.01], "ci_high": [0.05], "tolerance": [0.02],
                             "verdict": ["indeterminate"], "direction": ["undetermined"]})
    rec = _transport(registry, rows, verdicts)
    said = transport_findings(_result(rec)) + gate_findings(compare_runs(rec, rec))
    ece = [f for f in said if f.kind in ("change_ece", "gate_verdict")]
    assert [f.numbers.get("ood", f.numbers.get("v0")) for f in ece] == pytest.approx([0.122, 0.122])
    assert check_findings(rec, said) == []
