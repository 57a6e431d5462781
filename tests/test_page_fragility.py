"""AppTest of the Fragility page: preset a workspace built via the library, run with a small cap."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_text import texts

from audit_core.data.samples import load_sample
from audit_core.runs.registry import RunRegistry

from fragility_data import loan_workspace

ROOT = Path(__file__).resolve().parents[1]


def _texts(at: AppTest, kind: str) -> list[str]:
    return texts(at, kind)  # as rendered: user strings are Markdown-escaped


def _fragility_page(ws=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, at.exception
    if ws is not None:
        at.session_state["workspace"] = ws
        at.session_state["sample_info"] = load_sample("loan_synthetic")[1]
    return at.switch_page("pages/fragility.py").run()


def test_without_workspace_points_to_data_groups(registry_path: Path) -> None:
    at = _fragility_page()
    assert not at.exception
    at.session_state["workspace"] = None
    at.run()
    assert any("Train a model on Data & groups first" in t for t in _texts(at, "info"))


def test_run_shows_results_and_saves_a_run(registry_path: Path) -> None:
    ws, _ = loan_workspace()
    at = _fragility_page(ws)
    assert not at.exception and not at.error, _texts(at, "error")
    at.number_input(key="fr_max_cases").set_value(40)
    at.button(key="act_fr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, _texts(at, "error")
    success = " ".join(_texts(at, "success"))
    assert "Certified 40 cases" in success and "saved as run" in success
    headings = " ".join(_texts(at, "subheader") + _texts(at, "markdown"))
    for part in ("Which score finds brittle cases?", "Case inspector", "Case trajectory", "Greedy vs exact"):
        assert part in headings
    # Binary task: the page says the confidence scores rank identically.
    assert any("rank identically" in c for c in _texts(at, "caption"))
    search = next(df.value for df in at.dataframe if "share_equal" in df.value.columns)
    assert set(search["method"]) == {"exact", "beam(4)"}
    runs = RunRegistry(registry_path).list_runs(audit_kind="fragility")
    assert len(runs) == 1 and runs["status"].iloc[0] == "done"
    rec = RunRegistry(registry_path).load(runs["run_id"].iloc[0])
    assert {"certificates", "auroc"} <= set(rec.tables)
    assert len(rec.tables["certificates"]) == 40
    assert {"key", "y_hat", "p_hat", "k_star", "rcma", "d", "fds", "donor_any"} <= set(rec.tables["certificates"].columns)
    # private by default: the opt-in box is off, so the run holds case numbers and no true labels
    box = at.checkbox(key="fr_store_case_data")
    assert box.value is False and box.label.startswith("Store the record keys and true labels")
    assert "y_true" not in rec.tables["certificates"].columns and rec.manifest["case_data"] is False
    assert rec.tables["certificates"]["key"].str.fullmatch(r"#\d+").all()
    assert {"score", "stratum", "auroc", "lo", "hi"} <= set(rec.tables["auroc"].columns)
    assert rec.manifest["grouping_hash"] == ws.grouping.hash and "seeds" in rec.manifest
    # Pick another case from the "confident but fragile" list: the inspector follows.
    at.radio(key="fr_case_mode").set_value("Confident and fragile (the certificate flips within K groups)").run()
    assert not at.exception
    assert any(t.startswith("#### Case trajectory") for t in _texts(at, "markdown"))
    # the findings panel shows after the run, with the confident-flip count and the certificate-vs-confidence sentence
    texts = [t.value for t in at.text]
    assert "What this run found" in headings
    assert any("confident predictions (probability ≥ 0.8;" in t and "are brittle" in t for t in texts), texts
    # the two meanings are named apart: the brittle list holds exactly the cases the brittle sentence counts
    at.radio(key="fr_case_mode").set_value("Confident and brittle (they flip under the donor test)").run()
    s = rec.tables["certificates"]
    n = int(((s["p_hat"] >= 0.8) & s["donor_any"].astype(bool)).sum())
    assert any(f" {n} of " in t and "are brittle" in t for t in [t.value for t in at.text])  # after the icon
    if n:
        assert any(f"Listed: the {n} confident cases" in c and "brittle" in c for c in _texts(at, "caption"))
    assert any("than plain confidence" in t for t in texts), texts


def test_opting_in_stores_record_keys_and_true_labels(registry_path: Path) -> None:
    ws, _ = loan_workspace()
    at = _fragility_page(ws)
    at.number_input(key="fr_max_cases").set_value(20)
    at.checkbox(key="fr_store_case_data").check()
    at.button(key="act_fr_run").click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    (run_id,) = RunRegistry(registry_path).list_runs(audit_kind="fragility")["run_id"]
    rec = RunRegistry(registry_path).load(run_id)
    keys = set(map(str, ws.dataset.keys))
    assert rec.manifest["case_data"] is True and "y_true" in rec.tables["certificates"].columns
    assert set(rec.tables["certificates"]["key"]) <= keys and len(rec.tables["certificates"]) == 20


def test_stop_button_says_stopped(registry_path: Path) -> None:
    ws, _ = loan_workspace()
    at = _fragility_page(ws)
    at.button(key="act_fr_stop").click().run()
    assert not at.exception
    assert any("stopped by the user" in w for w in _texts(at, "warning"))
    assert RunRegistry(registry_path).list_runs(audit_kind="fragility").empty
