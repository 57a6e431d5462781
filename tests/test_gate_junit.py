"""``reliability-audit gate --junit FILE`` / ``--json``: the release gate where CI systems look.

Two saved model runs with hand-set held-out metrics (A: AUROC 0.82, log loss
0.40; B: AUROC 0.60, log loss 0.50) and a rules file of four rules give, for B
under the ``production`` scope, one rule of each status, worked out by hand:

* ``discrimination`` (``test_auroc < 0.70``): 0.60 < 0.70 holds -> failed;
* ``log_loss`` (``test_log_loss > 0.90``): 0.50 > 0.90 does not hold -> passed;
* ``ood_ece`` (``ood_ece > 0.05``): no transport run -> unknown;
* ``coverage`` (authority ``deployment_scope == "regulated"``) -> not applicable.

So A's verdict is ``refer`` (its only decided rules pass and ``ood_ece`` is
unknown), B's is ``block``, the gate fails (exit 1), and the JUnit file has
tests 4, failures 1, errors 0, skipped 2. The file is read with
``junitparser`` (what CI plug-ins and reporters build on) and its shape is
checked against the JUnit schema's elements and attributes; the JSON on
stdout carries the same content. The scope, the candidate's dataset name and a
rule's note carry ``<``, ``&``, ``]]>`` and an ANSI escape.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
import yaml
from junitparser import Failure, JUnitXml, Skipped

from audit_core.errors import AuditInputError
from audit_core.findings import gate_findings
from audit_core.findings.gate import rule_sentence
from audit_core.findings.gate_report import JSON_SCHEMA, gate_report
from audit_core.runs.gate import compare_runs
from audit_core.runs.registry import RunRegistry
from tests.test_cli import ROOT, cli

DOC = ROOT / "docs" / "cli.md"

HOSTILE_NOTE = "log loss <b>&amp; ]]> | \x1b[31m at most 0.90"
#: The note as every output shows it: markup as written, the escape character made visible.
HOSTILE_NOTE_SHOWN = "log loss <b>&amp; ]]> | \\x1b[31m at most 0.90"
HOSTILE_SCOPE = "prod<&]]>\x1b[2J"
HOSTILE_DATASET = "cand <b>&]]>\x1b]0;pwned\x07"
RULES = {
    "norms": {"default": "release", "on_unknown": "refer", "rules": [
        {"id": "discrimination", "when": "test_auroc < 0.70", "then": "block",
         "note": "held-out AUROC must be at least 0.70"},
        {"id": "log_loss", "when": "test_log_loss > 0.90", "then": "block", "note": HOSTILE_NOTE},
        {"id": "ood_ece", "when": "ood_ece > 0.05", "then": "block", "note": "OOD ECE must be at most 0.05"},
        {"id": "coverage", "when": "worst_class_coverage_90 < 0.85", "then": "block"},
    ]},
    "authority": {"discrimination": "true", "log_loss": "true", "ood_ece": "true",
                  "coverage": 'deployment_scope == "regulated"'},
}
#: Expected status per rule (worked out in the module docstring).
EXPECTED = {"discrimination": "failed", "log_loss": "passed", "ood_ece": "unknown", "coverage": "not_applicable"}

# The JUnit schema's shape (the Ant/Jenkins junit XSD that GitLab, GitHub reporters and Jenkins read):
# attributes each element may carry, the required ones, and the children allowed in order.
ALLOWED = {
    "testsuites": {"name", "tests", "failures", "errors", "skipped", "time", "disabled", "timestamp"},
    "testsuite": {"name", "tests", "failures", "errors", "skipped", "time", "disabled", "timestamp", "hostname",
                  "id", "package", "file"},
    "properties": set(), "property": {"name", "value"},
    "testcase": {"name", "classname", "time", "assertions", "file", "line", "status"},
    "failure": {"message", "type"}, "error": {"message", "type"}, "skipped": {"message"},
    "system-out": set(), "system-err": set(),
}
REQUIRED = {"testsuite": {"name", "tests", "failures", "errors"}, "testcase": {"name"},
            "property": {"name", "value"}}
CHILD_ORDER = {"testsuites": ["testsuite"], "testsuite": ["properties", "testcase", "system-out", "system-err"],
               "properties": ["property"], "testcase": ["skipped", "failure", "error", "system-out", "system-err"]}
COUNTS = ("tests", "failures", "errors", "skipped")


def check_junit_shape(root: ET.Element) -> None:
    """Elements, attributes and child order as the JUnit schema allows; counts equal to what the file holds."""
    for el in root.iter():
        assert el.tag in ALLOWED, el.tag
        assert set(el.attrib) <= ALLOWED[el.tag], (el.tag, el.attrib)
        assert REQUIRED.get(el.tag, set()) <= set(el.attrib), (el.tag, el.attrib)
        order = CHILD_ORDER.get(el.tag)
        if order is not None:
            positions = [order.index(c.tag) for c in el]  # a child not allowed here raises ValueError
            assert positions == sorted(positions), (el.tag, [c.tag for c in el])
        for name in COUNTS + ("time",):
            if name in el.attrib:
                assert float(el.attrib[name]) >= 0 and (name == "time" or el.attrib[name].isdigit()), (el.tag, name)
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        held = {"tests": len(cases), "failures": sum(len(c.findall("failure")) for c in cases),
                "errors": sum(len(c.findall("error")) for c in cases),
                "skipped": sum(len(c.findall("skipped")) for c in cases)}
        assert {k: int(suite.attrib.get(k, 0)) for k in COUNTS} == held
    if root.tag == "testsuites":
        for k in COUNTS:
            assert int(root.attrib[k]) == sum(int(s.attrib[k]) for s in root.iter("testsuite"))


def _metrics(auroc: float, log_loss: float) -> pd.DataFrame:
    return pd.DataFrame({"split": ["test", "test"], "metric": ["auroc", "log_loss"], "value": [auroc, log_loss]})


@pytest.fixture
def gate_runs(tmp_path: Path) -> dict:
    """A registry with runs A (baseline) and B (candidate, hostile dataset name) and the rules file."""
    reg = RunRegistry(tmp_path / "registry.sqlite3")
    ids = [reg.save(audit_kind="model", dataset_name=name, dataset_fingerprint=fp * 64, grouping_hash=None,
                    model_spec={"kind": "logistic_regression"}, config={}, tables={"metrics": _metrics(auc, ll)})
           for name, fp, auc, ll in (("base", "a", 0.82, 0.40), (HOSTILE_DATASET, "b", 0.60, 0.50))]
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES, allow_unicode=True), encoding="utf-8")
    return {"registry": reg, "reg": str(reg.path), "a": ids[0], "b": ids[1], "rules": str(rules), "tmp": tmp_path}


def _gate(r: dict, *extra: str, scope: str = "production"):
    return cli("gate", r["a"], r["b"], "--rules", r["rules"], "--scope", scope, "--registry", r["reg"], *extra)


def test_junit_has_one_case_per_rule_with_its_status_receipt_and_reason(gate_runs):
    out = gate_runs["tmp"] / "reports" / "gate.xml"  # the folder is created
    done = _gate(gate_runs, "--junit", str(out))
    assert done.returncode == 1, done.stderr  # B blocks: exit codes unchanged
    assert done.stdout.strip().endswith("gate: FAILED")
    check_junit_shape(ET.parse(out).getroot())

    (suite,) = list(JUnitXml.fromfile(str(out)))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 0, 2)
    assert suite.name == f"release gate (production): {gate_runs['a']} → {gate_runs['b']}"
    cases = {c.name.split(":", 1)[0]: c for c in suite}
    assert list(cases) == list(EXPECTED)
    assert cases["discrimination"].name == "discrimination: held-out AUROC must be at least 0.70"

    (failure,) = cases["discrimination"].result
    assert isinstance(failure, Failure) and failure.type == "block"
    assert "AUROC of 0.60" in failure.message and "0.70 minimum" in failure.message
    assert "test_auroc = 0.6 (baseline 0.82); limit 0.7" in failure.text
    assert failure.message in done.stdout  # the receipt in the words the terminal prints

    assert cases["log_loss"].is_passed and cases["log_loss"].result == []
    (unknown,) = cases["ood_ece"].result
    assert isinstance(unknown, Skipped) and "no saved run provides it" in unknown.message
    assert f"Not known: {unknown.message}." in done.stdout
    (excluded,) = cases["coverage"].result
    assert isinstance(excluded, Skipped) and excluded.message == "the rule does not apply to the production scope"
    props = {p.name: p.value for p in suite.properties()}
    assert props["verdict"] == "failed" and (props["baseline_verdict"], props["candidate_verdict"]) == ("refer", "block")
    assert props["receipt"] == "{G:test_auroc}"
    assert not list(out.parent.glob(".*.part"))  # written through a temporary file, nothing left beside it


def test_json_on_stdout_carries_the_same_content_as_the_junit_file(gate_runs):
    out = gate_runs["tmp"] / "gate.xml"
    done = _gate(gate_runs, "--json", "--junit", str(out))
    assert done.returncode == 1
    doc = json.loads(done.stdout)  # stdout is one JSON document: the notes and the verdict line are on stderr
    assert "gate: FAILED" in done.stderr and "note: The two sides read different data" in done.stderr
    assert set(doc) == set(JSON_SCHEMA["required"]) == set(JSON_SCHEMA["properties"])
    assert (doc["verdict"], doc["passed"], doc["schema_version"]) == ("failed", False, JSON_SCHEMA["properties"]
                                                                      ["schema_version"]["const"])
    assert doc["runs"] == {"baseline": [gate_runs["a"]], "candidate": [gate_runs["b"]]}
    assert doc["verdicts"] == {"baseline": "refer", "candidate": "block"}
    assert {r["id"]: r["status"] for r in doc["rules"]} == EXPECTED
    by_id = {r["id"]: r for r in doc["rules"]}
    assert by_id["discrimination"]["numbers"] == {"test_auroc": 0.6}
    assert by_id["discrimination"]["baseline"] == {"test_auroc": 0.82} and by_id["discrimination"]["limit"] == 0.7
    assert by_id["ood_ece"]["numbers"] == {"ood_ece": None} and by_id["ood_ece"]["receipt"] is None
    rule_keys = set(JSON_SCHEMA["properties"]["rules"]["items"]["required"])
    assert all(set(r) == rule_keys for r in doc["rules"])
    documented = json.loads(DOC.read_text().split("```json\n", 1)[1].split("```", 1)[0])  # docs/cli.md's example
    assert set(documented) == set(doc) and set(documented["rules"][0]) == rule_keys

    (suite,) = list(JUnitXml.fromfile(str(out)))
    assert doc["suite"] == suite.name
    assert (doc["counts"]["tests"], doc["counts"]["failures"], doc["counts"]["errors"], doc["counts"]["skipped"]) \
        == (suite.tests, suite.failures, suite.errors, suite.skipped)
    for case, rule in zip(suite, doc["rules"], strict=True):
        assert case.name == f"{rule['id']}: {rule['name']}"
        message = case.result[0].message if case.result else None
        assert message == (rule["reason"] if rule["status"] in ("unknown", "not_applicable") else
                           None if rule["status"] == "passed" else rule["receipt"])
        assert (type(case.result[0]).__name__ if case.result else "passed") == \
            {"failed": "Failure", "passed": "passed", "unknown": "Skipped", "not_applicable": "Skipped"}[rule["status"]]


def test_hostile_names_and_rule_text_stay_text_in_the_xml_and_the_json(gate_runs):
    out = gate_runs["tmp"] / "gate.xml"
    done = _gate(gate_runs, "--json", "--junit", str(out), scope=HOSTILE_SCOPE)
    raw = out.read_bytes()
    for c in (b"\x1b", b"\x07", b"<b>", b"]]>"):
        assert c not in raw, c  # escaped in the XML; the control characters shown as text
    check_junit_shape(ET.parse(out).getroot())
    (suite,) = list(JUnitXml.fromfile(str(out)))
    scope_shown = "prod<&]]>\\x1b[2J"
    assert suite.name.startswith(f"release gate ({scope_shown}): ")
    names = [c.name for c in suite]
    assert f"log_loss: {HOSTILE_NOTE_SHOWN}" in names
    assert {c.classname for c in suite} == {f"release_gate.{scope_shown}"}
    system_out = ET.parse(out).getroot().find("testsuite/system-out").text
    assert "new 'cand <b>&]]>\\x1b]0;pwned\\x07'" in system_out  # the dataset name, as text

    assert "\x1b" not in done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert doc["scope"] == scope_shown
    assert {r["id"]: r["name"] for r in doc["rules"]}["log_loss"] == HOSTILE_NOTE_SHOWN
    assert "cand <b>&]]>\\x1b]0;pwned\\x07" in doc["notes"][0]


def test_a_failed_rule_said_by_its_note_is_its_receipt_in_every_output(gate_runs):
    """A rule that is not a plain comparison is said by its note, braces and markup included, the same in the
    terminal's findings, the JUnit failure and the JSON receipt (in-process, through the library)."""
    note = "AUROC {x} < 0.7 & log loss > 0.1 ]]>"
    rules = {"norms": {"default": "release", "rules": [
        {"id": "both", "when": "test_auroc < 0.70 and test_log_loss > 0.1", "then": "block", "note": note}]},
        "authority": {"both": "true"}}
    reg = gate_runs["registry"]
    result = compare_runs(reg.load(gate_runs["a"]), reg.load(gate_runs["b"]), rules_yaml=yaml.safe_dump(rules))
    assert (result.verdict_a, result.verdict_b) == ("release", "block")
    assert gate_findings(result)[0].text == f"Release is blocked: {note}."
    report = gate_report(result)
    (suite,) = list(JUnitXml.fromstring(ET.tostring(report.to_junit().getroot(), encoding="unicode")))
    (case,) = list(suite)
    (failure,) = case.result
    assert failure.message == note and report.to_dict()["rules"][0]["receipt"] == note
    assert report.to_dict()["rules"][0]["numbers"] == {"test_auroc": 0.6, "test_log_loss": 0.5}
    assert report.to_dict()["rules"][0]["limit"] is None
    with pytest.raises(AuditInputError, match="no rule 'nope'; its rules are: both"):
        rule_sentence(result, "nope")


def test_a_junit_path_that_cannot_be_written_is_one_line_and_exit_2(gate_runs):
    tmp = gate_runs["tmp"]
    (tmp / "a_file").write_text("x")
    folder = tmp / "a_folder"
    folder.mkdir()
    for target in (tmp / "a_file" / "gate.xml", folder):
        done = _gate(gate_runs, "--junit", str(target))
        assert done.returncode == 2, (target, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and str(target) in lines[0], done.stderr
        assert "Traceback" not in done.stderr and "gate: " not in done.stdout
    assert (tmp / "a_file").read_text() == "x" and list(folder.iterdir()) == []
    assert not list(tmp.glob(".*.part"))


def test_markdown_table_has_one_row_per_rule_with_the_junit_words_and_data_as_text(gate_runs):
    """``--markdown FILE`` (a GitHub job summary): one table row per rule, three cells each even when a note holds
    ``|``; the receipt or reason as in the JUnit file; markup and escapes from data escaped."""
    xml, md = gate_runs["tmp"] / "gate.xml", gate_runs["tmp"] / "gate.md"
    done = _gate(gate_runs, "--junit", str(xml), "--markdown", str(md), scope=HOSTILE_SCOPE)
    assert done.returncode == 1, done.stderr
    text = md.read_text(encoding="utf-8")
    assert text.startswith("### Release gate: failed\n")
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]  # below the header row
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
    assert [len(c) for c in cells] == [3, 3, 3, 3]
    assert [c[1] for c in cells] == ["failed", "passed", "unknown", "not applicable"]
    (suite,) = list(JUnitXml.fromfile(str(xml)))
    messages = [c.result[0].message if c.result else None for c in suite]
    assert cells[0][2] == messages[0] and cells[2][2] == messages[2]  # no Markdown characters in these sentences
    assert cells[0][0] == "discrimination: held-out AUROC must be at least 0.70"
    for raw in ("\x1b", "<b>", "]]>"):
        assert raw not in text, raw
    assert "\\<b\\>" in cells[1][0] and "\\|" in cells[1][0]


def test_a_referred_candidate_fails_with_no_failure_case_and_its_unknown_rule_skipped(gate_runs):
    """A against itself: AUROC 0.82 and log loss 0.40 pass, ``ood_ece`` is unknown, so the verdict is ``refer``."""
    reg = gate_runs["registry"]
    a = reg.load(gate_runs["a"])
    report = gate_report(compare_runs(a, a, rules_yaml=yaml.safe_dump(RULES)))
    assert (report.passed, report.verdict_b) == (False, "refer")
    assert [r.status for r in report.rules] == ["passed", "passed", "unknown", "not_applicable"]
    suite = report.to_junit().getroot().find("testsuite")
    check_junit_shape(report.to_junit().getroot())
    assert (suite.get("failures"), suite.get("skipped"), suite.get("tests")) == ("0", "2", "4")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["verdict"] == "failed"
