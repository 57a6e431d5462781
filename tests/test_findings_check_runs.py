"""The findings checker over many saved runs: every sentence of every report's first page is supported by its tables.

The corpus (``tests/saved_runs.py``) saves small runs of the loan sample, breast cancer and five public files as
shipped (German credit, OULAD ``studentInfo.csv``, two UCI heart sites, ACS income Wyoming, South German credit):
binary and multi-class targets, one and two targets, logistic regression, LightGBM and an imported model, Transport
and Fragility. On each, :func:`check_findings` re-derives every number and word of what the report's first page
says; a tampered table shows that it can fail. On the loan sample, German credit and OULAD, the report's first
page, the gate, the findings, the model card and the figure quote one OOD ECE, named with its slice.
"""
from __future__ import annotations

import html
import re

import pytest

from audit_core.findings import check_findings, record_findings
from audit_core.findings.card import card_metrics
from audit_core.findings.records import report_findings
from audit_core.runs.gate import compare_runs
from audit_core.runs.registry import RunRegistry
from audit_core.transport.headline import recorded_headline
from real_data import require
from saved_runs import BUILDERS, GERMAN, OULAD, build_runs


@pytest.fixture(scope="session")
def saved(tmp_path_factory):
    for f in (GERMAN, OULAD):
        require(f)
    reg = RunRegistry(tmp_path_factory.mktemp("saved_runs") / "r.sqlite3")
    return reg, {name: reg.load(run_id) for name, run_id in build_runs(reg).items()}


def test_the_corpus_covers_the_configurations(saved):
    _, runs = saved
    assert len(runs) >= 12
    assert len({r.dataset_name for r in runs.values()}) >= 6  # the loan and breast cancer samples and 4+ files
    transport = [r for r in runs.values() if r.audit_kind == "transport"]
    configs = [r.manifest["config"] for r in transport]
    assert any(len(c["targets"]) == 2 for c in configs) and any(len(c["targets"]) == 1 for c in configs)
    assert any(recorded_headline(r.manifest, r.config).multiclass for r in transport)
    assert {"logistic_regression", "lightgbm", "imported:mine.skops"} <= {r.model for r in runs.values()}
    assert {"transport", "fragility"} <= {r.audit_kind for r in runs.values()}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_sentence_of_the_first_page_is_supported_by_the_tables(saved, name):
    _, runs = saved
    record = runs[name]
    said = report_findings(record)
    assert len(said) >= 3
    assert sum(len(f.facts) for f in said) >= 5  # the sentences carry their contracts
    assert check_findings(record, said) == [], "\n".join(map(str, check_findings(record, said)))


def test_a_tampered_table_is_caught(saved):
    reg, runs = saved
    record = runs["german_lr"]
    said = report_findings(record)
    t = record.tables["results"].copy()
    ece = (t["analysis"] == "metrics") & (t["metric"] == "ece") & (t["domain"] == "ood")
    t.loc[ece, "value"] += 0.05
    tampered = reg.load(reg.save(audit_kind="transport", dataset_name=record.dataset_name,
                                 dataset_fingerprint=record.dataset_fingerprint, grouping_hash=None,
                                 model_spec=record.model_spec, config=record.config,
                                 tables={**record.tables, "results": t}, manifest=record.manifest))
    problems = [v for v in check_findings(tampered, said) if "the table gives" in v.problem]
    kinds = {v.kind for v in problems}
    assert {"change_ece", "gate_verdict"} <= kinds or {"change_ece"} <= kinds, problems


def _printed(v: float) -> str:
    return f"{v:.3f}"


@pytest.mark.parametrize("name", ["loan_lr", "german_lr", "oulad_binary"])
def test_one_ood_ece_on_the_first_page_the_gate_the_findings_the_card_and_the_figure(saved, name):
    from components.report import figures_for, render_report

    _, runs = saved
    record = runs[name]
    where = str(record.manifest["config"]["target_value"])
    gate = compare_runs(record, record).comparison.new_grounds.values["ood_ece"]
    finding = next(f for f in record_findings(record) if f.kind == "change_ece")
    card = {k: v for k, v in card_metrics(record).items() if k.startswith("ece (OOD")}
    assert finding.numbers["ood"] == pytest.approx(gate, abs=1e-12)
    slice_words = "Platt-calibrated logistic regression, mean of 2 refits"
    assert card == {f"ece (OOD {where}; {slice_words})": pytest.approx(gate, abs=1e-12)}
    title, fig = figures_for(record)[0]
    assert title == "Reliability diagram" and "(headline slice)" in fig.layout.title.text
    assert f"OOD (target) · ECE {_printed(gate)}" in [t.name for t in fig.data]
    doc = html.unescape(render_report(record, generated_at="t"))
    first = re.sub(r"<[^>]+>", " ", doc[doc.index("<h2>Findings</h2>"):doc.index("<h2>Key figures</h2>")])
    # every OOD ECE the first page's sentences quote is the one value, and the findings' sentence names its slice
    quoted = set(re.findall(r"ECE (\d\.\d{3})", first)) - {_printed(finding.numbers["id"])}
    assert quoted == {_printed(gate)}, first
    assert f"On {where} ({slice_words}), the model's stated probabilities are off by {100 * gate:.1f} points" in first
