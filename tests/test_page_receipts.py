"""AppTest of the Receipts page: smoke, cube execution, refusals, benchmark, upload, release gate."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_text import texts

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]
PAGE = "pages/receipts.py"


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path


def _page() -> AppTest:
    at = AppTest.from_file(str(ROOT / PAGE), default_timeout=120)
    return at.run()


def _texts(at: AppTest, kind: str) -> list[str]:
    return texts(at, kind)  # as rendered: user strings are Markdown-escaped


def test_page_runs_and_executes_the_example_cube(registry_path: Path) -> None:
    at = _page()
    assert not at.exception and not at.error, _texts(at, "error")
    assert at.title[0].value == "Receipts"
    at.button(key="act_rc_execute").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    assert any("{G} | {N}" in s for s in _texts(at, "success"))
    cells = at.session_state["receipts_cube"]["cube"].to_frame()
    assert len(cells) == 8 and cells["in_receipt"].sum() == 2
    controls = at.session_state["receipts_cube"]["controls"]
    assert controls["holds"].all()
    at.button(key="act_rc_save_cube").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    runs = RunRegistry(registry_path).list_runs(audit_kind="receipts")
    assert len(runs) == 1
    rec = RunRegistry(registry_path).load(runs["run_id"].iloc[0])
    assert {"cells", "trace", "controls"} <= set(rec.tables)


def test_every_example_executes(registry_path: Path) -> None:
    from components.widgets.receipts import EXAMPLES

    at = _page()
    for name in EXAMPLES:
        at.selectbox(key="rc_example").set_value(name).run()
        at.button(key="act_rc_load_example").click().run()
        at.button(key="act_rc_execute").click().run()
        assert not at.exception and not at.error, (name, _texts(at, "error"))
    # The gate example: brittle share is declared unknown, and production brings that rule into scope.
    cube = at.session_state["receipts_cube"]["cube"].cube
    assert cube.v_new == "refer" or cube.v_new == "block"


def test_bad_state_shows_message_and_keeps_text(registry_path: Path) -> None:
    at = _page()
    bad = "grounds: {x: 1}\nnorms: {default: ok, rules: [{id: r, when: \"__import__('os')\", then: no}]}\nauthority: {}\n"
    at.text_area(key="rc_old_text").set_value(bad).run()
    at.button(key="act_rc_execute").click().run()
    assert not at.exception
    errors = " ".join(_texts(at, "error"))
    assert "condition of rule 'r'" in errors and "__import__" in errors
    assert at.text_area(key="rc_old_text").value == bad


def test_benchmark_baseline_and_prediction_upload(registry_path: Path) -> None:
    at = _page()
    at.number_input(key="rc_bench_n").set_value(200).run()
    at.button(key="act_rc_generate").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    # The panel shows the balance: the change share of every stratum x split beside its quota.
    balance = next(df.value for df in at.dataframe if "change_share" in df.value.columns)
    assert set(zip(balance["stratum"], balance["split"])) == {
        (s, p) for s in ("logical", "policy") for p in ("train", "val", "test")}
    assert (balance["target"] == 0.6).all()
    assert (balance["change_share"] - 0.6).abs().max() <= 0.5 / balance["cases"].min() + 1e-12
    metrics = {m.label: m.value for m in at.metric}
    assert abs(float(metrics["Verdict changes"].rstrip("%")) - 60) <= 1
    assert "Acceptance rate" in metrics and "Generation time" in metrics
    mix = next(df.value for df in at.dataframe if "family" in df.value.columns and "in_training" in df.value.columns)
    assert set(mix["family"]) == {"single", "alternatives", "joint"}
    at.button(key="act_rc_train").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    table = next(df.value for df in at.dataframe if "receipt_acc" in df.value.columns)
    # The trivial baselines sit beside the learned model in every evaluation set.
    assert set(table["model"]) == {"tfidf-char + logistic regression", "always no-change", "majority family"}
    assert table.groupby("evaluation")["model"].nunique().eq(3).all()
    assert {"receipt_acc_changed", "receipt_acc_changed_ci", "macro_family_acc"} <= set(table.columns)
    lazy = table[(table["model"] == "always no-change") & table["evaluation"].str.startswith("locked")].iloc[0]
    assert lazy["receipt_acc"] <= 0.5 and lazy["receipt_acc_changed"] == 0.0
    findings = next(df.value for df in at.dataframe if "claim" in df.value.columns)
    assert set(findings["holds"]) <= {"holds", "does not hold"} and len(findings) == 7
    from audit_core.receipts import generate_benchmark

    bench = generate_benchmark(n_cases=200, seed=0)
    first = bench.cases[0]
    lines = [
        json.dumps({"case_id": first.case_id, "receipt": [], "v_old": first.cube.v_old, "v_new": first.cube.v_new,
                    "confidence": 0.9}),
        "{not json",
        json.dumps({"case_id": "nope", "receipt": []}),
        json.dumps({"case_id": bench.cases[1].case_id, "receipt": [["Q"]]}),
    ]
    at.file_uploader(key="up_rc_predictions").set_value(("p.jsonl", "\n".join(lines).encode(), "application/json")).run()
    assert not at.exception and not at.error, _texts(at, "error")
    errs = next(df.value for df in at.dataframe if "message" in df.value.columns)
    assert list(errs["line"]) == [2, 3, 4]
    acc = next(df.value for df in at.dataframe if "metric" in df.value.columns and "value" in df.value.columns)
    assert acc.set_index("metric").loc["n", "value"] == 1


def test_release_gate_across_saved_runs(registry_path: Path) -> None:
    reg = RunRegistry(registry_path)
    metrics = pd.DataFrame({"split": ["test", "test"], "metric": ["auroc", "log_loss"], "value": [0.82, 0.4]})
    reg.save(audit_kind="model", dataset_name="loan", dataset_fingerprint="f" * 64, grouping_hash=None,
             model_spec={"kind": "logistic_regression"}, config={}, tables={"metrics": metrics})
    at = _page()
    assert at.multiselect(key="rc_gate_old_runs").value
    at.selectbox(key="rc_gate_old_scope").set_value("internal")
    at.selectbox(key="rc_gate_new_scope").set_value("production")
    at.button(key="act_rc_gate").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    gc = at.session_state["receipts_gate"]
    assert gc.cube.cube.v_old == "release"
    # Production brings the OOD-ECE rule into scope; no transport run -> ood_ece UNKNOWN -> refer.
    assert gc.cube.cube.v_new == "refer"
    assert gc.cube.cube.receipt_text == "{G:deployment_scope}"
    assert any("ood_ece" in w for w in _texts(at, "warning"))
    # Research scope: no release rule has authority, so the gate refers (absent jurisdiction escalates).
    at.selectbox(key="rc_gate_new_scope").set_value("research")
    at.button(key="act_rc_gate").click().run()
    gc = at.session_state["receipts_gate"]
    assert gc.cube.cube.v_new == "refer" and gc.cube.adjudications[frozenset(gc.cube.cube.sources)].governed_by == "(no authority)"


def test_the_gate_defaults_to_one_scope_and_notes_runs_on_different_data(registry_path: Path) -> None:
    """Old and new scope default to the same value, so a gate of one run against itself changes nothing; two runs
    on different data are compared, with a note that says so."""
    reg = RunRegistry(registry_path)
    metrics = pd.DataFrame({"split": ["test", "test"], "metric": ["auroc", "log_loss"], "value": [0.82, 0.4]})
    loan = reg.save(audit_kind="model", dataset_name="loan", dataset_fingerprint="f" * 64, grouping_hash=None,
                    model_spec={"kind": "logistic_regression"}, config={"model": {"seed": 0}}, tables={"metrics": metrics})
    at = _page()
    assert at.selectbox(key="rc_gate_old_scope").value == at.selectbox(key="rc_gate_new_scope").value == "production"
    at.button(key="act_rc_gate").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    cube = at.session_state["receipts_gate"].cube.cube
    assert cube.v_old == cube.v_new == "refer" and not cube.changed  # no scope change added to the receipt
    assert not any("read different data" in t for t in texts(at, "info"))
    german = reg.save(audit_kind="model", dataset_name="german_*credit*", dataset_fingerprint="e" * 64,
                      grouping_hash=None, model_spec={"kind": "logistic_regression"}, config={"model": {"seed": 1}},
                      tables={"metrics": metrics})
    at.run()
    at.multiselect(key="rc_gate_old_runs").set_value([loan])
    at.multiselect(key="rc_gate_new_runs").set_value([german])
    at.button(key="act_rc_gate").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    notes = [t for t in texts(at, "info") if "different" in t]
    assert notes == ["The two sides read different data: old 'loan' (SHA-256 ffffffffffff), new 'german_*credit*' "
                     "(SHA-256 eeeeeeeeeeee). The verdicts are compared as they stand; a change may come from the data, "
                     "not the model.",
                     "The model runs were configured differently: model.seed (0 → 1)."]
