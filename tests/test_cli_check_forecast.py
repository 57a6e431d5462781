"""``reliability-audit run`` with ``target_labels: hidden``, then ``check-forecast`` against the labelled run."""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """\
data: {{sample: loan_synthetic}}
dataset: {{domain_column: year, source_domain: 2019, target_domain: 2023}}
model: {{kind: logistic_regression, seed: 0}}
audits: [{{kind: transport, n_refits: 1, n_bootstrap: 10, mappings: [platt], stresses: [], seed: {seed}{extra}}}]
"""


def cli(*args: str) -> subprocess.CompletedProcess:
    """This worktree's CLI (``python -m audit_cli`` from the repository root)."""
    return subprocess.run([sys.executable, "-m", "audit_cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("cf")
    reg = d / "r.sqlite3"
    ids = {}
    for name, seed, extra in (("hidden", 0, ", target_labels: hidden"), ("labelled", 0, ""), ("other", 3, "")):
        cfg = d / f"{name}.yaml"
        cfg.write_text(CONFIG.format(seed=seed, extra=extra))
        done = cli("run", str(cfg), "--registry", str(reg), "--out", str(d / "out"))
        assert done.returncode == 0, done.stderr
        ids[name] = done.stdout.split("\t")[2]
    return reg, ids


def test_runs_save_the_forecast_and_realised_tables(runs):
    reg, ids = runs
    r = RunRegistry(reg)
    f, lab = r.load(ids["hidden"]), r.load(ids["labelled"])
    assert {"forecast", "forecast_exact", "forecast_checks", "forecast_weights", "forecast_prevalence"} <= set(f.tables)
    assert "realised" not in f.tables and "realised" in lab.tables
    assert list(f.tables["forecast_weights"].columns) == ["refit", "domain_auroc", "ess", "n_source", "n_target", "cap",
                                                           "n_clipped", "overlap_ok", "reason"]
    assert f.manifest["target_labels"] == "hidden" and lab.manifest["target_labels"] == "available"
    assert f.manifest["target_fingerprint"] == lab.manifest["target_fingerprint"]
    assert f.manifest["declaration_key"] == lab.manifest["declaration_key"]


def test_check_forecast_prints_the_table_and_the_counts(runs):
    reg, ids = runs
    text = cli("check-forecast", ids["hidden"], ids["labelled"], "--registry", str(reg))
    assert text.returncode == 0, text.stderr
    last = text.stdout.strip().splitlines()[-1]
    m = re.match(r"(\d+) of (\d+) realised values fell inside their 95% interval; the forecast beat 'unchanged from "
                 r"source' on (\d+) of (\d+)", last)
    assert m, last
    js = cli("check-forecast", ids["hidden"], ids["labelled"], "--registry", str(reg), "--format", "json")
    doc = json.loads(js.stdout)
    assert (int(m[1]), int(m[2]), int(m[3])) == (doc["n_inside"], doc["n"], doc["n_beats_naive"])
    table = pd.DataFrame(doc["table"])
    ok = table[table["status"] == "forecast"]
    assert doc["n"] == len(ok) and doc["n_unknown"] == len(table) - len(ok)
    # inside is read off the interval, beats_naive off the two errors
    assert (ok["inside"] == ((ok["low"] <= ok["realised"]) & (ok["realised"] <= ok["high"]))).all()
    assert doc["n_inside"] == int(ok["inside"].sum())
    csv = cli("check-forecast", ids["hidden"], ids["labelled"], "--registry", str(reg), "--format", "csv")
    back = pd.read_csv(io.StringIO(csv.stdout))
    assert len(back) == len(table) and "realised" in back.columns


def test_check_forecast_refuses_runs_that_do_not_match(runs):
    reg, ids = runs
    bad = cli("check-forecast", ids["hidden"], ids["other"], "--registry", str(reg))
    assert bad.returncode == 2
    assert "declaration keys differ" in bad.stderr and "Traceback" not in bad.stderr
    swapped = cli("check-forecast", ids["labelled"], ids["hidden"], "--registry", str(reg))
    assert swapped.returncode == 2 and "not a label-free (forecast) run" in swapped.stderr
    assert "Traceback" not in swapped.stderr
