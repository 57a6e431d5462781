"""The CLI config's ``scores:`` block: a Transport run on a table of predictions, saved like any run."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.registry import RunRegistry


def _table(path: Path, n: int = 1000, seed: int = 4) -> Path:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    pd.DataFrame({"id": np.arange(n), "p_yes": p, "outcome": np.where(rng.uniform(size=n) < p, "yes", "no"),
                  "site": np.where(np.arange(n) % 2 == 0, "north", "south"),
                  "age": rng.integers(20, 70, n)}).to_csv(path, index=False)
    return path


def _config(data: Path, **entry) -> dict:
    return {"name": "scores", "data": {"path": str(data)},
            "dataset": {"targets": [{"kind": "class", "name": "yes", "column": "outcome", "positive": "yes"}],
                        "key_column": "id", "domain_column": "site", "source_domain": "north",
                        "target_domain": "south"},
            "audits": [{"kind": "transport", "n_refits": 2, "n_bootstrap": 20, "mappings": ["raw", "platt"],
                        "scores": {"columns": ["p_yes"]}, **entry}]}


def test_a_scores_block_runs_transport_on_the_table_without_a_model_section(tmp_path: Path) -> None:
    data = _table(tmp_path / "preds.csv")
    reg = RunRegistry(tmp_path / "registry.sqlite3")
    (outcome,) = run_config(parse_config(_config(data)), registry=reg, base_dir=tmp_path)
    assert outcome.status == "done", outcome.error
    record = reg.load(outcome.run_id)
    manifest = outcome.result.manifest
    assert manifest["model"]["kind"] == "scores" and manifest["model"]["score_columns"] == ["p_yes"]
    assert "target-definition stress: not run: needs a model" in manifest["not_run"]
    assert record.model_spec["kind"] == "scores from column 'p_yes'" and record.model_spec["refit"] is False
    results = outcome.result.tables["results"]
    assert set(results["model"]) == {"scores from column 'p_yes'"}
    # the score column is the prediction, not a feature: the feature shift covers the declared raw columns only
    assert outcome.result.tables["feature_shift"]["feature"].tolist() == ["age"]
    # the saved run's report says the scores were used, and every sentence re-derives from the stored tables
    from audit_core.findings.check import check_findings
    from audit_core.findings.records import report_findings

    said = [f.text for f in report_findings(record)]
    assert "This run used your scores from column 'p_yes', not a model. Target-definition stress, evidence-" \
           "degradation stress and model-family sensitivity: not run: needs a model." in said
    assert check_findings(record) == []


@pytest.mark.parametrize("entry, words", [
    ({"models": ["lightgbm"]}, "audits[0].models must be left out: a run on scores audits the scores"),
    ({"scores": {"column": ["p_yes"]}}, "'column'"),
    ({"scores": {"columns": []}}, "audits[0].scores.columns must be one or more column names"),
    ({"scores": {"columns": [3]}}, "audits[0].scores.columns[0]"),
])
def test_bad_scores_blocks_are_refused_naming_the_key(tmp_path: Path, entry: dict, words: str) -> None:
    with pytest.raises(AuditInputError) as e:
        parse_config(_config(tmp_path / "x.csv", **entry))
    assert words in e.value.message


def test_a_config_with_a_model_audit_still_needs_its_model_section(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "x.csv")
    cfg["audits"].append({"kind": "model"})
    with pytest.raises(AuditInputError) as e:
        parse_config(cfg)
    assert e.value.code == "CONFIG_MISSING_KEY" and "'model'" in e.value.message


def test_a_score_column_out_of_range_fails_the_run_with_its_name(tmp_path: Path) -> None:
    data = tmp_path / "preds.csv"
    t = pd.read_csv(_table(data))
    t.loc[3, "p_yes"] = 1.5
    t.to_csv(data, index=False)
    (outcome,) = run_config(parse_config(_config(data)), registry=RunRegistry(tmp_path / "r.sqlite3"),
                            base_dir=tmp_path)
    assert outcome.status == "failed"
    assert "Score column 'p_yes' holds 1.5 in row 3 of the target records" in outcome.error
