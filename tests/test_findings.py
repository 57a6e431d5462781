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
    summary = pd.DataFrame({"key": list("abcdef"), "p_hat": p_hat, "donor_any": brittle})
    scores = pd.DataFrame({c: conf for c in CONF} | {"fds": fds})
    au_fds, au_conf = (1.0, 0.0) if fds_first else (0.0, 1.0)
    auroc = pd.DataFrame([dict(label="donor_any", stratum="all", score=s, n=6, n_brittle=3,
                               auroc=au_fds if s == "fds" else au_conf, lo=np.nan, hi=np.nan, same_ranking=s in CONF)
                          for s in (*CONF, "fds")])
    inc = pd.DataFrame([dict(label="donor_any", auroc_confidence=0.61, auroc_with_certificate=0.74, difference=0.13,
                             lo=0.02, hi=0.25, n=6, n_brittle=3)])
    batch = SimpleNamespace(protocol=SimpleNamespace(k=2), k_star=np.array([1, 2, 3, 3, 1, 7]))
    return FragilityAudit(batch=batch, summary=summary, scores=scores, auroc=auroc, incremental=inc,
                          search=pd.DataFrame(), temperature=None, baseline=None,
                          options=AuditOptions(donor_groups=3, n_boot=50))


def test_fragility_toy_negative_result_is_said():
    texts = [f.text for f in fragility_findings(_toy_audit(fds_first=False))]
    # p̂ ≥ 0.8: cases a, b, d, e; of those a and b are brittle.
    assert texts[0] == "2 of 4 confident predictions (p̂ ≥ 0.8) flip when up to 3 evidence groups take another case's values."
    # k* ≤ 2: cases a, b, e.
    assert texts[1].startswith("3 of 6 audited predictions (50%) flip when at most 2 evidence groups")
    # every resample with both classes has FDS AUROC 0 and confidence AUROC 1: difference −1 exactly.
    assert texts[2] == ("On this model the certificate does not rank brittle cases better than plain confidence "
                        "(AUROC 0.00 vs 1.00, difference −1.00 [−1.00, −1.00]).")
    assert texts[3] == ("Adding the certificate to confidence improves the cross-validated AUROC for brittle cases "
                        "from 0.61 to 0.74 (difference +0.13 [0.02, 0.25]).")
    assert len(texts) == 4


def test_fragility_toy_positive_result_and_severity():
    fs = fragility_findings(_toy_audit(fds_first=True))
    rank = next(f for f in fs if f.kind == "certificate_vs_confidence")
    assert rank.text == ("On this model the certificate ranks brittle cases better than plain confidence "
                         "(AUROC 1.00 vs 0.00, difference +1.00 [1.00, 1.00]).")
    assert rank.severity == "good" and rank.numbers["difference"] == 1.0
    assert fs[0].severity == "warning" and fs[0].numbers == {"flipped": 2, "confident": 4, "share": 0.5, "groups": 3}


def test_fragility_winner_vs_most_stable():
    models = pd.DataFrame({"model": ["logistic_regression", "lightgbm"], "heldout_auroc": [0.781, 0.790],
                           "mean_rcma": [0.41, 1.32], "mean_fds": [0.1, 0.2]})
    f = fragility_findings(_toy_audit(fds_first=True), models=models)[-1]
    assert f.text == ("The model with the best AUROC (lightgbm, 0.790) is not the most stable "
                      "(logistic_regression, mean RCMA 0.41 vs 1.32).")
    same = models.assign(mean_rcma=[1.5, 0.3])
    assert fragility_findings(_toy_audit(fds_first=True), models=same)[-1].text == (
        "The model with the best AUROC (lightgbm, 0.790) is also the most stable (mean RCMA 0.30).")


def test_stopped_run_says_only_what_it_has():
    a = _toy_audit(fds_first=True)
    stopped = FragilityAudit(**{**{k: getattr(a, k) for k in a.__dataclass_fields__}, "complete": False})
    assert [f.kind for f in fragility_findings(stopped)] == ["confident_flips", "certificate_flips"]


# ---------------------------------------------------------------- transport (toy)
def _toy_transport() -> TransportResult:
    base = dict(condition="clean", target_definition="default", model="lr", mapping="platt", weighting="unweighted")
    rows = []
    for dom, rate, risk in (("id", 0.80, 0.08), ("ood", 0.30, 0.19)):
        rows += [dict(base, analysis="selective", domain=dom, metric="rate", alpha=np.nan, selection_rate=0.8, mean=rate),
                 dict(base, analysis="selective", domain=dom, metric="risk", alpha=np.nan, selection_rate=0.8, mean=risk)]
    for meth, c0, c1, two in (("marginal", 0.97, 0.70, 0.20), ("label_conditional", 0.91, 0.90, 0.27)):
        for metric, v in (("coverage_class0", c0), ("coverage_class1", c1), ("two_class_rate", two)):
            rows.append(dict(base, analysis=f"conformal_{meth}", domain="ood", metric=metric, alpha=0.1,
                             selection_rate=np.nan, mean=v))
    summary = pd.DataFrame(rows)
    vb = dict(model="lr", mapping="platt", weighting="unweighted", tolerance=0.02, n_refits=1, n_bootstrap=10)
    verdicts = pd.DataFrame([
        dict(vb, analysis="selective", metric="risk", alpha=np.nan, selection_rate=0.8, delta=0.11, ci_low=0.07,
             ci_high=0.15, verdict="transport-sensitive"),
        dict(vb, analysis="metrics", metric="auroc", alpha=np.nan, selection_rate=np.nan, delta=-0.004, ci_low=-0.012,
             ci_high=0.006, verdict="transport-stable"),
        dict(vb, analysis="metrics", metric="ece", alpha=np.nan, selection_rate=np.nan, delta=0.031, ci_low=0.001,
             ci_high=0.05, verdict="indeterminate"),
    ])
    table = pd.DataFrame({"target_definition": ["default"]})
    manifest = {"config": {"models": ["lr"], "mappings": ["platt"], "target_value": 2023, "single_domain": False,
                           "targets": [{"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"}]}}
    return TransportResult(table=table, verdicts=verdicts, summary=summary, extras={}, manifest=manifest)


def test_transport_toy_sentences():
    texts = [f.text for f in transport_findings(_toy_transport())]
    assert texts == [
        "On 2023 the 0.8 selection threshold answers 30% of cases instead of 80%, and their error rate rises from 8% "
        "to 19% (risk change +0.11 [0.07, 0.15]).",
        "On 2023 label-conditional sets restore the coverage of 'yes' (0.90 vs 0.70 marginal, target 90%) at the "
        "cost of 7% more two-class sets.",
        "On 2023 the AUROC changes by −0.004 [−0.012, 0.006] against a tolerance of ±0.020: transport-stable.",
        "On 2023 the calibration error (ECE) changes by +0.031 [0.001, 0.050] against a tolerance of ±0.020: "
        "indeterminate.",
        "Of 3 checked quantities, 1 changed by more than their tolerance, 1 stayed within it and 1 are undecided "
        "(the interval crosses the tolerance).",
    ]


def test_transport_toy_no_restoration_is_said():
    r = _toy_transport()
    s = r.summary.copy()
    s.loc[(s["analysis"] == "conformal_label_conditional") & (s["metric"] == "coverage_class1"), "mean"] = 0.65
    f = transport_findings(TransportResult(table=r.table, verdicts=r.verdicts, summary=s, extras={},
                                           manifest=r.manifest))[1]
    assert f.text == ("On 2023 label-conditional sets do not raise the coverage of 'yes' (0.65 vs 0.70 marginal, "
                      "target 90%).")
    assert f.severity == "warning"
    # a threshold target names its classes by the threshold; a config without targets says the class code
    for targets, said in (([{"kind": "threshold", "name": "big", "column": "amount", "threshold": 5e3}], "'>= 5000'"),
                          ([], "class 1")):
        manifest = {"config": {**r.manifest["config"], "targets": targets}}
        f = transport_findings(TransportResult(table=r.table, verdicts=r.verdicts, summary=s, extras={},
                                               manifest=manifest))[1]
        assert f.text.startswith(f"On 2023 label-conditional sets do not raise the coverage of {said} (0.65"), f.text


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


# ---------------------------------------------------------------- gate (toy, real cube)
def _grounds(**changes) -> GateGrounds:
    values = {g.name: 0.0 for g in GROUND_SPECS}
    values.update(test_auroc=0.8, ood_ece=0.02, worst_class_coverage_90=0.9, brittle_share_confident=0.05)
    values.update(changes)
    return GateGrounds(values=values, report=pd.DataFrame())


def test_gate_blocked_with_rule_and_receipt(monkeypatch):
    sides = {"a": _grounds(), "b": _grounds(ood_ece=0.10)}
    monkeypatch.setattr(gate_mod, "extract_gate_grounds", lambda runs: sides[runs[0].run_id])
    g = gate_mod.compare_runs([SimpleNamespace(run_id="a")], [SimpleNamespace(run_id="b")], scope="production")
    fs = gate_findings(g)
    assert fs[0].text == "Release is blocked: OOD ECE must be at most 0.05 (ood_ece is 0.10; rule ood_ece)."
    assert fs[0].severity == "alert" and fs[0].numbers == {"ood_ece": 0.10}
    assert fs[1].text == "The change from the baseline run (release → block) is accounted for by {G:ood_ece} alone."
    assert len(fs) == 2


def test_gate_release_unchanged_and_absent_grounds(monkeypatch):
    g0 = _grounds()
    g0.values["n_transport_worse"] = None
    monkeypatch.setattr(gate_mod, "extract_gate_grounds", lambda runs: g0)
    g = gate_mod.compare_runs([SimpleNamespace(run_id="a")], [SimpleNamespace(run_id="b")], scope="internal")
    fs = gate_findings(g)
    assert fs[0].severity == "good" and fs[0].text.startswith("Release is allowed under the internal scope: ")
    assert fs[1].text == "The verdict is the same as for the baseline run (release)."
    assert fs[2].text == "1 ground(s) are unknown because no run provides them: n_transport_worse."


def test_finding_is_frozen():
    f = Finding(text="x", kind="k")
    with pytest.raises(AttributeError):
        f.text = "y"  # type: ignore[misc]


# ---------------------------------------------------------------- loan sample: sentences match the result tables
@pytest.fixture(scope="module")
def loan_fragility():
    from audit_core.fragility.audit import run_fragility_audit

    from fragility_data import loan_workspace

    ws, _ = loan_workspace()
    return run_fragility_audit(ws, options=AuditOptions(max_cases=60, n_boot=50))


def test_loan_fragility_numbers_match_the_result(loan_fragility):
    a = loan_fragility
    fs = {f.kind: f for f in fragility_findings(a)}
    s = a.summary
    conf = s[s["p_hat"] >= 0.8]
    flips = fs["confident_flips"]
    assert flips.numbers["confident"] == len(conf) and flips.numbers["flipped"] == int(conf["donor_any"].sum())
    assert flips.text.startswith(f"{int(conf['donor_any'].sum())} of {len(conf)} confident predictions")
    k = a.batch.protocol.k
    assert fs["certificate_flips"].numbers["flipped"] == int((s["k_star"] <= k).sum())
    t = a.auroc[(a.auroc["label"] == "donor_any") & (a.auroc["stratum"] == "all")].set_index("score")["auroc"]
    rank = fs["certificate_vs_confidence"]
    best_conf = max(t[c] for c in CONF)
    assert rank.numbers["fds"] == t["fds"] and rank.numbers["confidence"] == best_conf
    assert f"AUROC {t['fds']:.2f} vs {best_conf:.2f}".replace("-", "−") in rank.text
    # the negative result is said exactly when it holds
    assert ("does not rank brittle cases better" in rank.text) == (t["fds"] <= best_conf)
    inc = a.incremental.set_index("label").loc["donor_any"]
    assert fs["incremental_value"].numbers["difference"] == inc["difference"]
    assert f"{inc['lo']:.2f}, {inc['hi']:.2f}]".replace("-", "−") in fs["incremental_value"].text
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
    cc = fs["conformal_class_coverage"]
    c = int(cc.numbers["class"])
    marg = {k: mean("conformal_marginal", f"coverage_class{k}", "ood", alpha=0.1) for k in (0, 1)}
    assert c == min(marg, key=marg.get)
    assert cc.numbers["coverage_marginal"] == pytest.approx(marg[c])
    lc = mean("conformal_label_conditional", f"coverage_class{c}", "ood", alpha=0.1)
    assert cc.numbers["coverage_label_conditional"] == pytest.approx(lc)
    assert f"({lc:.2f} vs {marg[c]:.2f} marginal" in cc.text
    vt = r.verdicts
    v = vt[(vt["analysis"] == "metrics") & (vt["metric"] == "auroc") & (vt["model"] == "logistic_regression")
           & (vt["mapping"] == "platt") & (vt["weighting"] == "unweighted")].iloc[0]
    assert fs["change_auroc"].numbers["change"] == v["delta"] and v["verdict"] in fs["change_auroc"].text
    tally = fs["verdict_tally"].numbers
    vv = r.verdicts[(r.verdicts["model"] == "logistic_regression") & (r.verdicts["mapping"] == "platt")]
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
    assert doc.index("<h2>Findings</h2>") < doc.index("<h2>Summary</h2>")
    for text in expected:
        assert html.escape(text) in doc
