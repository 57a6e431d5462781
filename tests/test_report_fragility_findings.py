"""The HTML report of a Fragility run opens with the same findings the Fragility page shows after the run.

A Fragility run used to give the report no findings (``record_findings`` returned ``[]`` for it, while the
Transport and Receipts reports had them): the sentences are now rebuilt from the saved tables and must equal,
word for word, the page's sentences on the same audit (the model comparison is not saved, so it is absent).
"""
from __future__ import annotations

import html
import re

import pytest

from audit_core.findings import fragility_findings, record_findings
from audit_core.runs.registry import RunRegistry
from audit_core.runs.save import save_fragility_run
from components.report import render_report

from fragility_data import loan_workspace
from runs_data import save_fragility_run as save_cli_fragility_run


@pytest.fixture(scope="module")
def saved(tmp_path_factory, loan_fragility_audit):
    ws, _ = loan_workspace()
    audit = loan_fragility_audit  # the session fixture (tests/conftest.py): run_fragility_audit(ws, max_cases=60, n_boot=50)
    reg = RunRegistry(tmp_path_factory.mktemp("frag") / "r.sqlite3")
    return audit, reg.load(save_fragility_run(reg, ws, audit))


def _report_findings(record) -> list[str]:
    page = render_report(record)
    (section,) = re.findall(r"<ul id='findings' class='findings'>(.*?)</ul>", page, flags=re.S)
    # read back as text: how an escaped apostrophe is spelt (&#39; or &#x27;) is the template engine's choice
    return [html.unescape(li) for li in re.findall(r"<li class='finding-[a-z]+'>(.*?)</li>", section, flags=re.S)]


@pytest.mark.xdist_group("loan_fragility_audit")  # on the worker that has the session fixture
def test_the_report_has_the_pages_fragility_findings(saved):
    audit, record = saved
    page = fragility_findings(audit)
    assert [f.kind for f in page] == ["confident_flips", "certificate_flips", "certificate_vs_confidence",
                                      "incremental_value"]
    stored = record_findings(record)
    assert [(f.kind, f.text, f.severity) for f in stored] == [(f.kind, f.text, f.severity) for f in page]
    assert stored[2].numbers == page[2].numbers  # the paired bootstrap interval, redrawn from the saved scores
    items = _report_findings(record)
    assert items[:len(page)] == [f.text for f in page]


@pytest.mark.xdist_group("loan_fragility_audit")  # on the worker that has the session fixture
def test_a_run_saved_without_scores_says_what_its_tables_support(saved):
    _, record = saved
    import dataclasses

    tables = {k: v for k, v in record.tables.items() if k != "scores"}  # saved by an earlier version
    kinds = [f.kind for f in record_findings(dataclasses.replace(record, tables=tables))]
    assert kinds == ["confident_flips", "certificate_flips", "incremental_value"]


def test_a_cli_fragility_run_has_findings_from_its_tables(tmp_path):
    reg = RunRegistry(tmp_path / "r.sqlite3")
    record = reg.load(save_cli_fragility_run(reg, max_cases=30))
    fs = {f.kind: f for f in record_findings(record)}
    s = record.tables["certificates"]
    k = record.manifest["fragility_config"]["protocol"]["k"]
    within = int((s["k_star"] <= k).sum())  # by hand from the stored table
    assert fs["certificate_flips"].text.startswith(f"{within} of {len(s)} audited predictions")
    conf = s[s["p_hat"] >= 0.8]
    assert fs["confident_flips"].numbers["flipped"] == int(conf["donor_any"].astype(bool).sum())
    assert _report_findings(record)[0] == fs["confident_flips"].text
