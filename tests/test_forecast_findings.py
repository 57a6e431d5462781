"""Forecast findings on hand-built tables (tests/forecast_tables.py): every number below is worked by hand."""
from __future__ import annotations

import pandas as pd

from audit_core.findings.forecast import forecast_check_finding, forecast_findings, quantity_words
from audit_core.findings.glossary import explain

from forecast_tables import DISAGREE, check_table, forecast_tables


def _by_kind(fs):
    return {f.kind: f for f in fs}


def test_exact_and_covariate_sentences_name_the_slice_and_the_mean_of_refits():
    fs = _by_kind(forecast_findings(forecast_tables(), model="logistic_regression", mapping="platt"))
    # rate@s=0.8: (0.62 + 0.66) / 2 = 0.64; n_target 2000 in both refits
    assert fs["forecast_exact_rate"].text == (
        "Computed on the target without labels: 64% of its 2000 cases clear the confidence cut-off that answers 80% "
        "of source cases (Platt-calibrated logistic regression, mean of 2 refits).")
    cov = fs["forecast_covariate"].text
    assert cov.startswith("If only the mix of cases changed (covariate shift, the model's probabilities read as the "
                          "target's expected outcomes; Platt-calibrated logistic regression, mean of 2 refits)")
    # value (0.18 + 0.20)/2 = 0.19, low (0.15 + 0.17)/2 = 0.16, high (0.21 + 0.25)/2 = 0.23, naive 0.12
    assert "forecast at 19% [16%, 23%] (90% interval), against 12% on the source ID test" in cov
    # both: low (0.14 + 0.16)/2 = 0.15, high (0.30 + 0.28)/2 = 0.29
    assert "forecast between 15% and 29%" in fs["forecast_both"].text


def test_an_unknown_forecast_shows_its_reason_and_no_number():
    fs = _by_kind(forecast_findings(forecast_tables(), model="logistic_regression", mapping="platt"))
    text = fs["forecast_unknown_label"].text
    assert "prevalence 31% on the target by EM against 22% in the source's selection partition" in text  # class "1": em 0.31, source 0.22 in both refits
    assert "cannot be trusted (1 of 2 refits unknown: " + DISAGREE + ")" in text
    assert "only the target's labels can settle it" in text
    # the label:em values (0.25, 0.27 -> 26%) and their ends must not appear as if trusted
    assert "26%" not in text and "[" not in text
    assert fs["forecast_unknown_label"].severity == "warning"
    assert "forecast_label" not in fs


def test_weights_check_overlap_and_concept_shift():
    fs = _by_kind(forecast_findings(forecast_tables(), model="logistic_regression", mapping="platt"))
    # weighted (0.60 + 0.64)/2 = 0.62 against exact 0.64: 2.0 points apart, tolerance 5.0 points
    assert ("reproduces the target's exact share answered by the 80% rule: 62% against 64%, 2.0 points apart "
            "(tolerance 5.0 points)") in fs["forecast_weights_check"].text
    # AUROC (0.70 + 0.80)/2 = 0.75; ESS (400 + 420)/2 = 410 of 1000
    assert "AUROC 0.75" in fs["forecast_overlap"].text and "410 of its 1000 records" in fs["forecast_overlap"].text
    assert "concept shift" in fs["forecast_concept_shift"].text


def test_failed_weights_and_overlap_say_so():
    t = forecast_tables()
    t["forecast_checks"].loc[1, ["source_weighted", "ok"]] = [0.50, False]
    t["forecast_weights"].loc[0, ["domain_auroc", "overlap_ok", "reason"]] = [
        0.99, False, "the domain classifier separates the two domains (AUROC 0.99 ≥ 0.95)"]
    fs = _by_kind(forecast_findings(t, model="logistic_regression", mapping="platt"))
    # weighted (0.60 + 0.50)/2 = 0.55 against 0.64: 9.0 points
    assert "misses the target's exact share answered by the 80% rule in 1 of 2 refits: 55% against 64%, 9.0 " \
           "points apart" in fs["forecast_weights_check"].text
    o = fs["forecast_overlap"].text
    assert "fails in 1 of 2 refits (the domain classifier separates the two domains (AUROC 0.99 ≥ 0.95))" in o
    assert fs["forecast_overlap"].severity == "warning"


def test_a_weights_check_missed_elsewhere_is_said_beside_the_rule_s_own():
    t = forecast_tables()
    extra = t["forecast_checks"].iloc[[0]].assign(quantity="rate@s=0.5", source_weighted=0.70, target_exact=0.80,
                                                  ok=False)
    t["forecast_checks"] = pd.concat([t["forecast_checks"], extra], ignore_index=True)
    f = _by_kind(forecast_findings(t, model="logistic_regression", mapping="platt"))["forecast_weights_check"]
    # the 80% rule's own check still holds (62% against 64%); the 50% rule's check failed in refit 0
    assert "reproduces the target's exact share answered by the 80% rule: 62% against 64%" in f.text
    assert ("It misses 1 more of the label-free checks in at least one refit (rate@s=0.5), so the covariate-shift "
            "forecasts cannot be trusted.") in f.text
    assert f.severity == "warning"
    assert "It misses" not in _by_kind(forecast_findings(forecast_tables(), model="logistic_regression",
                                                         mapping="platt"))["forecast_weights_check"].text


def _uninformative_check(t):
    """Both refits' checks pass with a 120-point tolerance (an ESS of a few records): 90% weighted, exact 62%/66%."""
    t["forecast_checks"][["source_weighted", "tolerance"]] = [0.90, 1.20]
    return t


def test_a_weights_check_that_could_not_fail_says_it_tells_nothing():
    f = _by_kind(forecast_findings(_uninformative_check(forecast_tables()), model="logistic_regression",
                                   mapping="platt"))["forecast_weights_check"]
    # exact (0.62 + 0.66)/2 = 64%: a share lies at most max(0.64, 0.36) = 64.0 points from it; tolerance 120.0 ≥ 64.0
    assert ("the importance-weighted source gives 90% against the target's exact 64% for the share answered by the "
            "80% rule, 26.0 points apart; with so few effective records its tolerance (120.0 points) exceeds the "
            "farthest any share can lie from 64% (64.0 points), so no weighting could fail it and it tells nothing."
            ) in f.text
    assert "reproduces" not in f.text and f.severity == "warning"


def test_a_check_whose_forecasts_were_all_unknown_says_so():
    f = forecast_check_finding(check_table().assign(status="unknown"), model="logistic_regression", mapping="platt")
    assert f is not None and f.text == (
        "Once the labels arrived (Platt-calibrated logistic regression): none of the 5 forecasts was trusted (each "
        "was unknown), so none is scored; the table sets each realised value beside its forecast.")
    nothing = check_table().assign(realised=float("nan"))  # nothing realised and some trusted: no sentence
    assert forecast_check_finding(nothing, model="logistic_regression", mapping="platt") is None


def test_another_slice_is_not_read():
    t = forecast_tables()
    other = forecast_tables(model="random_forest", mapping="isotonic")
    merged = {k: pd.concat([t[k], other[k]]) if k != "forecast_weights" else t[k] for k in t}
    merged["forecast"].loc[merged["forecast"]["model"] == "random_forest", "value"] = 0.9
    fs = _by_kind(forecast_findings(merged, model="logistic_regression", mapping="platt"))
    assert "forecast at 19% [16%, 23%]" in fs["forecast_covariate"].text
    assert forecast_findings({}, model="m", mapping="raw")[-1].kind == "forecast_concept_shift"


def test_check_table_sentence():
    f = forecast_check_finding(check_table(), model="logistic_regression", mapping="platt")
    assert f is not None
    assert ("3 of 4 realised values fell inside their 90% interval; the forecast was closer than 'unchanged from "
            "source' for 2 of 4") in f.text
    assert "1 unknown forecast(s)" in f.text
    # the refits both runs hold are named when the check table says it (check_forecast_runs stores n_refits)
    two = forecast_check_finding(check_table().assign(n_refits=2), model="logistic_regression", mapping="platt")
    assert two is not None and "Once the labels arrived (Platt-calibrated logistic regression, mean of 2 refits):" in two.text
    mixed = check_table().assign(n_refits=[2, 2, 1, 1, 2])
    f3 = forecast_check_finding(mixed, model="logistic_regression", mapping="platt")
    assert f3 is not None and "(Platt-calibrated logistic regression, means over 1–2 refits)" in f3.text


def test_quantities_in_plain_words_and_glossary():
    assert quantity_words("risk@s=0.8")[0] == "the error rate among the cases the 80% rule answers"
    assert quantity_words("label_conditional:worst_class_coverage@a=0.1")[0] == (
        "the coverage of the worst-covered class (label-conditional sets, α = 0.1)")
    for q in ("risk@s=0.8", "rate@s=0.8", "marginal:coverage@a=0.1", "marginal:worst_class_coverage@a=0.1",
              "weighted_marginal:set_size@a=0.2", "hcep@tau=0.9", "ece", "citl", "brier", "naive"):
        assert explain(q), q


def test_every_word_is_licensed_by_its_facts():
    from audit_core.findings.contract import holds, restricted_words

    t = forecast_tables()
    t["forecast_checks"].loc[1, ["source_weighted", "ok"]] = [0.50, False]
    for tables in (forecast_tables(), t, _uninformative_check(forecast_tables())):
        for f in forecast_findings(tables, model="logistic_regression", mapping="platt"):
            facts = {x.name: x for x in f.facts}
            assert all(holds(w, facts) for w in f.words), f.text
            assert restricted_words(f.text) == [], f.text
