"""Findings: hand-worked sentences on toy results, and the loan sample's sentences against its result tables."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from audit_core.findings import Finding, fragility_findings, gate_findings, transport_findings
from audit_core.fragility.audit import AuditOptions, FragilityAudit
from audit_core.runs import gate as gate_mod
from audit_core.runs.grounds import GROUND_SPECS, GateGrounds
from audit_core.transport.results import TransportResult

CONF = ("max_softmax", "neg_entropy", "margin", "neg_energy")


# ---------------------------------------------------------------- fragility (toy)
def _toy_audit(*, fds_first: bool) -> FragilityAudit:
    """Six cases, three brittle (donor_any). FDS ranks them perfectly or exactly backwards; margin the reverse."""
    brittle = np.array([1, 1, 1, 0, 0, 0], dtype=bool)
    p_hat = np.array([0.95, 0.85, 0.6, 0.9, 0.82, 0.55])
    good = np.array([6.0, 5, 4, 3, 2, 1])  # higher = more brittle: the brittle cases rank first
    fds, conf = (good, -good) if fds_first else (-good, good)
    k_star = np.array([1, 2, 3, 3, 1, 7])
    summary = pd.DataFrame({"key": list("abcdef"), "p_hat": p_hat, "donor_any": brittle, "k_star": k_star})
    scores = pd.DataFrame({c: conf for c in CONF} | {"fds": fds})
    au_fds, au_conf = (1.0, 0.0) if fds_first else (0.0, 1.0)
    auroc = pd.DataFrame([dict(label="donor_any", stratum="all", score=s, n=6, n_brittle=3,
                               auroc=au_fds if s == "fds" else au_conf, lo=np.nan, hi=np.nan, same_ranking=s in CONF)
                          for s in (*CONF, "fds")])
    inc = pd.DataFrame([dict(label="donor_any", auroc_confidence=0.61, auroc_with_certificate=0.74, difference=0.13,
                             lo=0.02, hi=0.25, n=6, n_brittle=3)])
    batch = SimpleNamespace(protocol=SimpleNamespace(k=2), k_star=k_star)
    return FragilityAudit(batch=batch, certificates=summary, scores=scores, auroc=auroc, incremental=inc,
                          search=pd.DataFrame(), temperature=None, baseline=None,
                          options=AuditOptions(donor_groups=3, n_boot=50))


def test_fragility_toy_negative_result_is_said():
    texts = [f.text for f in fragility_findings(_toy_audit(fds_first=False))]
    # p̂ ≥ 0.8: cases a, b, d, e (4); of those a and b are brittle (donor_any): 2, 50%.
    assert texts[0] == ("2 of 4 confident predictions (probability ≥ 0.8; 50%) are brittle: they change class when up "
                        "to 3 evidence groups take another case's values (the donor test).")
    # k* ≤ 2: cases a (1), b (2), e (1); all three have p̂ ≥ 0.8.
    assert texts[1] == ("3 of 6 audited predictions are fragile: they flip when at most 2 evidence groups are set to "
                        "reference values, one group at a time in the most damaging order; 3 of them are confident "
                        "(probability ≥ 0.8), the case inspector's 'confident and fragile' list.")
    # every resample with both classes has FDS AUROC 0 and confidence AUROC 1: difference −1, interval [−1, −1]
    assert texts[2] == ("On this model the fragility certificate ranks brittle cases worse than plain confidence "
                        "(AUROC 0.00 vs 1.00, difference −1.00, 95% interval −1.00 to −1.00).")
    assert texts[3] == ("Adding the certificate to confidence improves the cross-validated AUROC for brittle cases "
                        "from 0.61 to 0.74 (difference +0.13, 95% interval 0.02 to 0.25).")
    assert len(texts) == 4


def test_fragility_toy_positive_result_and_severity():
    fs = fragility_findings(_toy_audit(fds_first=True))
    rank = next(f for f in fs if f.kind == "certificate_vs_confidence")
    assert rank.text == ("On this model the fragility certificate ranks brittle cases better than plain confidence "
                         "(AUROC 1.00 vs 0.00, difference +1.00, 95% interval 1.00 to 1.00).")
    assert rank.severity == "good" and rank.numbers["diff"] == 1.0
    assert fs[0].severity == "warning"
    assert {k: fs[0].numbers[k] for k in ("flipped", "confident", "share", "groups")} == {
        "flipped": 2, "confident": 4, "share": 0.5, "groups": 3}


def test_fragility_winner_vs_stability_measures():
    models = pd.DataFrame({"model": ["logistic_regression", "lightgbm"], "heldout_auroc": [0.781, 0.790],
                           "mean_rcma": [0.41, 1.32], "mean_fds": [0.1, 0.2], "mean_k_star": [5.0, 4.0]})
    # logistic regression leads all three measures: it is the most stable, and not the winner
    f = fragility_findings(_toy_audit(fds_first=True), models=models)[-1]
    assert f.text == ("The model that ranks cases best (LightGBM, held-out AUROC 0.790) is not the most stable; "
                      "logistic regression is: its margins collapse most slowly as evidence is removed (0.41 vs 1.32), "
                      "it has the lowest fragility score (0.10 vs 0.20) and it needs the most evidence groups removed "
                      "to flip a prediction (5.00 vs 4.00 on average).")
    assert f.severity == "warning" and [w.text for w in f.words] == ["most stable"]
    # the measures disagree (FDS ranks LightGBM first): no model is called the most stable
    split = models.assign(mean_fds=[0.3, 0.2])
    f = fragility_findings(_toy_audit(fds_first=True), models=split)[-1]
    assert f.text == ("The model that ranks cases best is LightGBM (held-out AUROC 0.790), and the stability measures "
                      "disagree: logistic regression has the margins that collapse most slowly as evidence is removed "
                      "(0.41 vs 1.32 for LightGBM); LightGBM has the lowest fragility score (0.20 vs 0.30 for logistic "
                      "regression); logistic regression needs the most evidence groups removed to flip a prediction "
                      "(5.00 vs 4.00 for LightGBM).")
    assert "most stable" not in f.text and f.detail == ("lowest mean RCMA: logistic_regression; lowest mean FDS: "
                                                        "lightgbm; highest mean k*: logistic_regression")
    same = models.assign(mean_rcma=[1.5, 0.3], mean_fds=[0.3, 0.2], mean_k_star=[3.0, 4.0])
    f = fragility_findings(_toy_audit(fds_first=True), models=same)[-1]
    assert f.text.startswith("The model that ranks cases best (LightGBM, held-out AUROC 0.790) is also the most "
                             "stable, against logistic regression: its margins collapse most slowly") and f.severity == "good"


def test_the_comparison_table_names_most_stable_only_when_the_measures_agree():
    from audit_core.fragility.audit import stability_roles

    t = pd.DataFrame({"model": ["lr", "lgbm"], "heldout_auroc": [0.816, 0.790], "mean_rcma": [1.59, 1.07],
                      "mean_fds": [0.208, 0.358], "mean_k_star": [5.14, 4.09]})  # the demo's numbers (the issue)
    assert stability_roles(t) == ["nominal winner & lowest mean FDS & highest mean k*", "lowest mean RCMA"]
    agree = t.assign(mean_fds=[0.4, 0.3], mean_k_star=[4.0, 5.0])
    assert stability_roles(agree) == ["nominal winner", "most stable"]


def test_stopped_run_says_only_what_it_has():
    a = _toy_audit(fds_first=True)
    stopped = FragilityAudit(**{**{k: getattr(a, k) for k in a.__dataclass_fields__}, "complete": False})
    assert [f.kind for f in fragility_findings(stopped)] == ["confident_flips", "certificate_flips"]


# ---------------------------------------------------------------- transport (toy)
def _toy_transport() -> TransportResult:
    """Two refits per value (the mean is what the sentences state), model "lr", Platt mapping, target 2023."""
    base = dict(condition="clean", target_definition="default", model="lr", mapping="platt", weighting="unweighted")
    rows = []

    def add(analysis, domain, metric, values, alpha=np.nan, rate=np.nan):
        rows.extend(dict(base, analysis=analysis, domain=domain, metric=metric, refit=r, value=v, alpha=alpha,
                         selection_rate=rate) for r, v in enumerate(values))

    for dom, rate, risk in (("id", (0.78, 0.82), (0.07, 0.09)), ("ood", (0.28, 0.32), (0.18, 0.20))):
        add("selective", dom, "rate", rate, rate=0.8)
        add("selective", dom, "risk", risk, rate=0.8)
    add("selective", "source", "threshold", (0.70, 0.72), rate=0.8)
    for meth, c0, c1, size in (("marginal", 0.97, 0.70, 1.20), ("label_conditional", 0.91, 0.92, 1.27)):
        for metric, v in (("coverage_class0", c0), ("coverage_class1", c1), ("mean_set_size", size)):
            add(f"conformal_{meth}", "ood", metric, (v, v), alpha=0.1)
    add("metrics", "id", "auroc", (0.80, 0.80))
    add("metrics", "ood", "auroc", (0.79, 0.80))
    add("metrics", "id", "ece", (0.03, 0.05))
    add("metrics", "ood", "ece", (0.07, 0.07))
    table = pd.DataFrame(rows)
    vb = dict(model="lr", mapping="platt", weighting="unweighted", tolerance=0.02, n_refits=2, n_bootstrap=10)
    verdicts = pd.DataFrame([
        dict(vb, analysis="selective", metric="risk", alpha=np.nan, selection_rate=0.8, delta=0.11, ci_low=0.07,
             ci_high=0.15, verdict="transport-sensitive", direction="worse"),
        dict(vb, analysis="metrics", metric="auroc", alpha=np.nan, selection_rate=np.nan, delta=-0.004, ci_low=-0.012,
             ci_high=0.006, verdict="transport-stable", direction="within tolerance"),
        dict(vb, analysis="metrics", metric="ece", alpha=np.nan, selection_rate=np.nan, delta=0.031, ci_low=0.001,
             ci_high=0.05, verdict="indeterminate", direction="undetermined"),
    ])
    manifest = {"config": {"models": ["lr"], "mappings": ["platt"], "target_value": 2023, "single_domain": False,
                           "n_refits": 2, "n_bins": 15,
                           "targets": [{"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"}]}}
    return TransportResult(table=table, verdicts=verdicts, refit_summary=pd.DataFrame(), extras={}, manifest=manifest)


SLICE = "On 2023 (Platt-calibrated lr, mean of 2 refits)"


def test_transport_toy_sentences():
    fs = transport_findings(_toy_transport())
    assert [f.text for f in fs] == [
        f"{SLICE}, the threshold that answers 80% of source cases (confidence ≥ 0.710) answers 30% of cases instead "
        "of 80% on the source test, and the error rate among the answered cases rises from 8% to 19% (change +0.11, "
        "95% interval 0.07 to 0.15).",
        # worst marginal class: 'yes' at 0.70; label-conditional: 0.92 ≥ 90%, and the worst class 0.91 > 0.70
        f"{SLICE}, label-conditional sets restore the coverage of cases with default = 'yes' from 0.70 to 0.92 "
        "(target 90%); the worst class is now cases with default other than 'yes' at 0.91. Mean set size goes from "
        "1.20 to 1.27.",
        f"{SLICE}, the model's stated probabilities are off by 7.0 points on average (ECE 0.070, 15 equal-width "
        "bins): the calibration error rises from 0.040 on the source test (change +0.031, 95% interval 0.001 to "
        "0.050, undecided against the tolerance of ±0.020).",
        f"{SLICE}, the ranking quality (AUROC) is 0.795, against 0.800 on the source test: it does not change "
        "detectably (change −0.004, 95% interval −0.012 to 0.006, within the tolerance of ±0.020).",
        "Of 3 checked quantities (Platt-calibrated lr, mean of 2 refits): 1 changed by more than their tolerance, 1 "
        "stayed within it, 1 undecided (the interval crosses the tolerance).",
    ]
    assert [f.severity for f in fs] == ["warning", "good", "info", "info", "warning"]


def _with_lc(r: TransportResult, class0: float, class1: float) -> TransportResult:
    t = r.table.copy()
    lc = (t["analysis"] == "conformal_label_conditional")
    t.loc[lc & (t["metric"] == "coverage_class0"), "value"] = class0
    t.loc[lc & (t["metric"] == "coverage_class1"), "value"] = class1
    return TransportResult(table=t, verdicts=r.verdicts, refit_summary=r.refit_summary, extras={}, manifest=r.manifest)


def test_transport_toy_restore_only_when_the_class_reaches_target_and_the_worst_class_improves():
    r = _toy_transport()
    # the class rises to 0.86, below the 90% target: nothing is restored (OULAD's 0.86 vs 0.86 case)
    f = transport_findings(_with_lc(r, 0.95, 0.86))[1]
    assert f.text == (f"{SLICE}, marginal conformal sets cover cases with default = 'yes' at 0.70, below the 90% "
                      "target; label-conditional sets give it 0.86, still below the target. Mean set size goes from "
                      "1.20 to 1.27.")  # the same class stays the worst: not named twice as if it were another
    assert f.severity == "warning" and "restore" not in f.text
    # the classes swap (the demo's 0.98 / 0.74 case): 'yes' reaches the target, the other class falls to 0.70
    f = transport_findings(_with_lc(r, 0.70, 0.98))[1]
    assert "restore" not in f.text and f.text.endswith(
        "label-conditional sets give it 0.98, and still leave a class below the target: cases with default other "
        "than 'yes' at 0.70. Mean set size goes from 1.20 to 1.27.")


def test_transport_toy_same_rate_is_not_said_instead_of():
    r = _toy_transport()
    t = r.table.copy()
    t.loc[(t["metric"] == "rate") & (t["domain"] == "ood"), "value"] = [0.804, 0.808]  # 81% vs 80%
    t.loc[(t["metric"] == "rate") & (t["domain"] == "id"), "value"] = [0.810, 0.812]  # 81%
    f = transport_findings(TransportResult(table=t, verdicts=r.verdicts, refit_summary=r.refit_summary, extras={},
                                           manifest=r.manifest))[0]
    assert "answers 81% of cases, as on the source test (81%)" in f.text and "instead of" not in f.text


def test_class_names_of_a_transport_config():
    from audit_core.transport.config import class_names_of

    cfg = {"targets": [{"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"},
                       {"kind": "expression", "name": "late", "expression": "days > 30"},
                       {"kind": "threshold", "name": "big", "column": "amount", "threshold": 100, "op": ">"}]}
    assert class_names_of(cfg) == ("not yes", "yes")  # the primary target
    assert class_names_of(cfg, "late") == ("not late", "late")
    assert class_names_of(cfg, "big") == ("<= 100", "> 100")
    assert class_names_of(cfg, "absent") == ("not yes", "yes")
    assert class_names_of({"targets": [{"kind": "class", "name": "c", "column": "c"}]}) is None  # multi-class
    assert class_names_of({"targets": [{"kind": "nonsense"}]}) is None and class_names_of({}) is None


def test_class_words_never_make_up_a_class_name():
    from audit_core.findings.cases import class_label, class_words

    cfg = {"targets": [{"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"},
                       {"kind": "threshold", "name": "big", "column": "amount", "threshold": 100, "op": ">"}]}
    assert class_words(cfg) == ("cases with default other than 'yes'", "cases with default = 'yes'")
    assert class_words(cfg, "big") == ("cases with amount <= 100", "cases with amount > 100")
    assert class_words({}, classes=["Pass", "Fail", "Withdrawn"]) == ("class 'Pass'", "class 'Fail'",
                                                                      "class 'Withdrawn'")
    assert class_words({}) == ("class 0", "class 1")
    assert class_label(("not yes", "yes"), 0) == "other than 'yes'" and class_label(("not yes", "yes"), 1) == "'yes'"


# ---------------------------------------------------------------- gate (toy, real cube)
def _grounds(**changes) -> GateGrounds:
    values = {g.name: 0.0 for g in GROUND_SPECS}
    values.update(test_auroc=0.8, ood_ece=0.02, worst_class_coverage_90=0.9, brittle_share_confident=0.05)
    values.update(changes)
    return GateGrounds(values=values, report=pd.DataFrame())


def test_gate_says_what_blocks_what_passed_and_what_changed(monkeypatch):
    sides = {"a": _grounds(), "b": _grounds(ood_ece=0.10)}
    monkeypatch.setattr(gate_mod, "extract_gate_grounds", lambda runs: sides[runs[0].run_id])
    g = gate_mod.compare_runs([SimpleNamespace(run_id="a")], [SimpleNamespace(run_id="b")], scope="production")
    fs = gate_findings(g)
    # production: ood_ece (0.10 > 0.05) blocks; brittle share (0.05 ≤ 0.10) and AUROC (0.80 ≥ 0.70) pass
    assert fs[0].text == ("Release is blocked: the model's stated probabilities are off by 10.0 points on the target "
                          "domain (ECE 0.100, 15 equal-width bins), above the 5-point limit.")
    assert fs[0].severity == "alert" and fs[0].numbers["v0"] == 0.10 and "rule ood_ece" in fs[0].detail
    assert fs[1].text == ("Passed: 5% of confident predictions are brittle (they change class under the donor test), "
                          "within the 10% limit; the model ranks held-out cases with an AUROC of 0.80, at least the "
                          "0.70 minimum.")
    assert fs[2].text == ("Against the baseline runs the verdict goes from allowed to blocked; how far the stated "
                          "probabilities are off on the target domain (ECE) alone accounts for the change.")
    assert "{G:ood_ece}" in fs[2].detail and len(fs) == 3
    plain = " ".join(f.text for f in fs)
    assert not any(s in plain for s in ("{G:", "ground", "refer", "rule ood_ece", "p̂"))


def test_gate_release_unchanged_and_unknowns_the_rules_need(monkeypatch):
    g0 = _grounds()
    g0.values["n_transport_worse"] = None  # no rule reads it: not a plain-words finding, only in the detail
    monkeypatch.setattr(gate_mod, "extract_gate_grounds", lambda runs: g0)
    g = gate_mod.compare_runs([SimpleNamespace(run_id="a")], [SimpleNamespace(run_id="b")], scope="internal")
    fs = gate_findings(g)
    assert [f.text for f in fs] == [
        "Release is allowed: every check that applies passed.",
        "Passed: the model ranks held-out cases with an AUROC of 0.80, at least the 0.70 minimum.",
        "The verdict is the same as for the baseline runs (allowed).",
    ]
    assert "n_transport_worse" in fs[0].detail
    g1 = _grounds(ood_ece=None)
    monkeypatch.setattr(gate_mod, "extract_gate_grounds", lambda runs: g1)
    fs = gate_findings(gate_mod.compare_runs([SimpleNamespace(run_id="a")], [SimpleNamespace(run_id="b")],
                                             scope="production"))
    assert fs[0].text == ("Release cannot be decided yet: how far the stated probabilities are off on the target "
                          "domain (ECE) is unknown, because no saved run provides it.")
    # a saved run that does not define the ground (a multi-class transport run has no ECE-15) is not "no run"
    g2 = GateGrounds(values=g1.values, report=pd.DataFrame({
        "ground": ["ood_ece", "brittle_share_confident"],
        "detail": ["r1: not defined for a multi-class transport run", "no selected run of kind 'fragility'"]}))
    monkeypatch.setattr(gate_mod, "extract_gate_grounds", lambda runs: GateGrounds(
        values={**g1.values, "brittle_share_confident": None}, report=g2.report))
    fs = gate_findings(gate_mod.compare_runs([SimpleNamespace(run_id="a")], [SimpleNamespace(run_id="b")],
                                             scope="production"))
    assert fs[0].text == ("Release cannot be decided yet: the share of confident predictions that change class under "
                          "the donor test is unknown, because no saved run provides it, and how far the stated "
                          "probabilities are off on the target domain (ECE) is not defined for the saved runs given "
                          "(their kind or target does not have it).")


def test_finding_is_frozen():
    f = Finding(text="x", kind="k")
    with pytest.raises(AttributeError):
        f.text = "y"  # type: ignore[misc]


# ---------------------------------------------------------------- loan sample: sentences match the result tables
@pytest.fixture(scope="module")
def loan_fragility(loan_fragility_audit):
    return loan_fragility_audit  # the session fixture (tests/conftest.py): loan_workspace(), max_cases=60, n_boot=50


@pytest.mark.xdist_group("loan_fragility_audit")  # on the worker that has the session fixture
def test_loan_fragility_numbers_match_the_result(loan_fragility):
    a = loan_fragility
    fs = {f.kind: f for f in fragility_findings(a)}
    s = a.certificates
    conf = s[s["p_hat"] >= 0.8]
    flips = fs["confident_flips"]
    assert flips.numbers["confident"] == len(conf) and flips.numbers["flipped"] == int(conf["donor_any"].sum())
    assert flips.text.startswith(f"{int(conf['donor_any'].sum())} of {len(conf)} confident predictions")
    k = a.batch.protocol.k
    assert fs["certificate_flips"].numbers["fragile"] == int((s["k_star"] <= k).sum())
    assert fs["certificate_flips"].numbers["confident_fragile"] == int(((s["k_star"] <= k) & (s["p_hat"] >= 0.8)).sum())
    t = a.auroc[(a.auroc["label"] == "donor_any") & (a.auroc["stratum"] == "all")].set_index("score")["auroc"]
    rank = fs["certificate_vs_confidence"]
    best_conf = max(t[c] for c in CONF)
    assert rank.numbers["fds"] == t["fds"] and rank.numbers["conf"] == best_conf
    assert f"AUROC {t['fds']:.2f} vs {best_conf:.2f}".replace("-", "−") in rank.text
    inc = a.incremental.set_index("label").loc["donor_any"]
    assert fs["incremental_value"].numbers["diff"] == inc["difference"]
    assert f"95% interval {inc['lo']:.2f} to {inc['hi']:.2f}".replace("-", "−") in fs["incremental_value"].text
    assert 3 <= len(fs) <= 6


@pytest.fixture(scope="module")
def loan_transport():
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample
    from audit_core.transport import TransportConfig, run_transport

    frame, info = load_sample("loan_synthetic")
    ds = build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year",
                                            source_domain=2019, target_domain=2023, group_column="branch_id",
                                            roles={c: "ignore" for c in info.exclude_columns}))
    return run_transport(ds.frame, config=TransportConfig.from_dataset(
        ds, n_refits=2, n_bootstrap=10, n_random_sets=3, stress_max_rows=800, mappings=("platt",), stresses=()))


def test_loan_transport_numbers_match_the_result(loan_transport):
    r = loan_transport
    fs = {f.kind: f for f in transport_findings(r)}
    t = r.table  # recompute the refit means from the long table, not from the summary
    clean = t[(t["condition"] == "clean") & (t["weighting"] == "unweighted") & (t["model"] == "logistic_regression")
              & (t["mapping"] == "platt")]

    def mean(analysis, metric, domain, **kw):
        m = clean[(clean["analysis"] == analysis) & (clean["metric"] == metric) & (clean["domain"] == domain)]
        for col, v in kw.items():
            m = m[np.isclose(m[col], v)]
        assert m["refit"].nunique() == 2
        return m["value"].mean()

    sel = fs["selective_threshold"]
    for q in ("rate", "risk"):
        for d in ("id", "ood"):
            assert sel.numbers[f"{q}_{d}"] == pytest.approx(mean("selective", q, d, selection_rate=0.8))
    assert f"answers {100 * mean('selective', 'rate', 'ood', selection_rate=0.8):.0f}% of cases" in sel.text
    thr = t[(t["analysis"] == "selective") & (t["domain"] == "source") & (t["metric"] == "threshold")
            & (t["mapping"] == "platt") & np.isclose(t["selection_rate"], 0.8)]["value"].mean()
    assert f"(confidence ≥ {thr:.3f})" in sel.text
    cc = fs["conformal_class_coverage"]
    marg = {k: mean("conformal_marginal", f"coverage_class{k}", "ood", alpha=0.1) for k in (0, 1)}
    c = min(marg, key=marg.get)
    assert cc.numbers["m_c"] == pytest.approx(marg[c])
    lc = {k: mean("conformal_label_conditional", f"coverage_class{k}", "ood", alpha=0.1) for k in (0, 1)}
    assert cc.numbers["l_c"] == pytest.approx(lc[c]) and cc.numbers["l_w"] == pytest.approx(min(lc.values()))
    vt = r.verdicts
    v = vt[(vt["analysis"] == "metrics") & (vt["metric"] == "auroc") & (vt["model"] == "logistic_regression")
           & (vt["mapping"] == "platt") & (vt["weighting"] == "unweighted")].iloc[0]
    assert fs["change_auroc"].numbers["change"] == v["delta"]
    assert fs["change_ece"].numbers["ood"] == pytest.approx(mean("metrics", "ece", "ood"))
    tally = fs["verdict_tally"].numbers
    vv = vt[(vt["model"] == "logistic_regression") & (vt["mapping"] == "platt") & (vt["weighting"] == "unweighted")]
    assert tally["checked"] == len(vv)
    assert tally["sensitive"] == (vv["verdict"] == "transport-sensitive").sum()


def test_saved_transport_run_has_the_same_findings_and_the_report_opens_with_them(loan_transport, tmp_path):
    import html

    from audit_core.findings import record_findings
    from audit_core.runs.registry import RunRegistry
    from components.report import render_report

    reg = RunRegistry(tmp_path / "reg.sqlite3")
    record = reg.load(loan_transport.save_to_registry(reg, dataset_name="loan_synthetic"))
    expected = [f.text for f in transport_findings(loan_transport)]
    assert [f.text for f in record_findings(record)] == expected and len(expected) >= 3
    doc = render_report(record, generated_at="t")
    assert doc.index("<h2>Findings</h2>") < doc.index("<h2>Key numbers</h2>")
    shown = html.unescape(doc)  # read back as text (how an apostrophe is escaped is the template engine's choice)
    for text in expected:
        assert text in shown
