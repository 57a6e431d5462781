"""Pages warn where a result is weak (AppTest): a model whose predictions are constant is not "ready"."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_text import texts

ROOT = Path(__file__).resolve().parents[1]


def _data_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/data_groups.py").run()
    assert not at.exception, at.exception
    return at


def test_a_model_with_constant_predictions_is_not_announced_as_ready(registry_path) -> None:
    """Breast cancer, radius 12.5-14: 122 eligible rows, 91 for training. LightGBM's 50 rows per leaf cannot split
    91 rows, so every held-out row gets the training prevalence: a warning with the numbers, no green box."""
    at = _data_page()
    at.selectbox(key="dg_sample").set_value("breast_cancer").run()
    at.text_input(key="dg_eligibility").set_value("`mean radius` > 12.5 and `mean radius` < 14").run()
    at.selectbox(key="dg_model_kind").set_value("lightgbm").run()
    at.button(key="act_train").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    assert not any("Model ready" in t for t in texts(at, "success"))
    warnings = texts(at, "warning")
    head = next(t for t in warnings if t.startswith("Model trained, but its predictions are (nearly) constant: lightgbm"))
    assert "held-out AUROC 0.500" in head
    constant = next(t for t in warnings if t.startswith("The model's predictions are (nearly) constant"))
    assert "over the 31 held-out rows no class probability moves by more than 0.0000" in constant
    assert "With 91 training rows" in constant
    # the same rows with logistic regression: a model that learned, announced as ready
    at.selectbox(key="dg_model_kind").set_value("logistic_regression").run()
    at.button(key="act_train").click().run()
    assert any(t.startswith("Model ready: logistic_regression") for t in texts(at, "success"))
    assert not any("constant" in t for t in texts(at, "warning"))


def test_transport_says_the_target_definition_stress_did_not_run_with_one_target(registry_path) -> None:
    """The loan sample with its first target only: the stress is declared (the default) but has nothing to compare."""
    from audit_core.data.samples import SAMPLES
    from audit_core.runs.registry import RunRegistry
    from components.state import Keys, sample_table
    from components.widgets.adoption import _column_table

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    info, table = SAMPLES["loan_synthetic"], sample_table("loan_synthetic")
    at.session_state[Keys.TABLE], at.session_state[Keys.SAMPLE] = table, info
    at.session_state[Keys.COLUMNS] = _column_table(table.frame, info)
    at.session_state[Keys.TARGETS] = [dict(info.target_definitions[0])]
    at.session_state["dg_domain"], at.session_state["dg_key"] = "year", "application_id"
    at.session_state["dg_source_value"], at.session_state["dg_target_value"] = "2019", "2023"
    at.run()
    at.switch_page("pages/transport.py").run()
    assert at.multiselect(key="tr_stresses").value == ["target_definition", "degradation"]
    at.button(key="act_tr_lock").click().run()
    for key, value in (("tr_refits", 2), ("tr_bootstrap", 20), ("tr_sets", 2), ("tr_cap", 600)):
        at.number_input(key=key).set_value(value)
    at.multiselect(key="tr_mappings").set_value(["platt"])
    at.button(key="act_tr_run").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    name = info.target_definitions[0]["name"]
    assert (f"The target-definition stress did not run: it compares the primary target '{name}' with another "
            "definition of the target, and only one is declared. Declare a second target to run it.") in texts(at, "warning")
    assert not any("partition holds only" in t for t in texts(at, "warning"))  # 4,000 source rows: none is short
    saved = RunRegistry(registry_path).load(RunRegistry(registry_path).list_runs().iloc[0]["run_id"])
    assert [w["code"] for w in saved.manifest["warnings"]] == ["TRANSPORT_STRESS_ONE_TARGET"]


def test_oulad_id_student_is_proposed_as_identifier_on_data_and_groups(registry_path) -> None:
    """OULAD studentInfo.csv as shipped: `id_student` is 88% distinct (inferred numeric); the page proposes it as an
    identifier with the counts, and one click takes it out of the features."""
    from real_data import DATASETS, require

    path = require(DATASETS / "oulad" / "studentInfo.csv")
    at = _data_page()
    at.radio(key="dg_source_mode").set_value("Upload a file").run()
    at.file_uploader(key="up_table").set_value([(path.name, path.read_bytes(), "text/csv")]).run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    proposals = next(df.value for df in at.dataframe if "proposed" in df.value.columns).set_index("column")
    assert proposals.loc["id_student", ["now", "proposed"]].tolist() == ["numeric", "identifier"]
    assert "28,785 distinct whole numbers in 32,593 rows (88%)" in proposals.loc["id_student", "why"]
    at.button(key="act_accept_roles").click().run()
    roles = at.session_state["columns_table"].set_index("column")["role"]
    assert roles["id_student"] == "identifier"


def test_a_saved_run_reopened_on_runs_shows_its_warnings(registry_path) -> None:
    """The warnings are kept in the run's manifest: reopening the run shows them again, escaped."""
    import pandas as pd

    from audit_core.runs.registry import RunRegistry

    message = ("The selection partition holds only 7 record(s) of class 'yes*' (fewest over 2 refit(s); the declared "
               "minimum is 20 per class)")
    metrics = pd.DataFrame({"split": ["test"], "metric": ["auroc"], "value": [0.8]})
    RunRegistry(registry_path).save(
        audit_kind="model", dataset_name="loan", dataset_fingerprint="f" * 64, grouping_hash=None,
        model_spec={"kind": "logistic_regression"}, config={}, tables={"metrics": metrics},
        manifest={"warnings": [{"code": "TRANSPORT_FEW_IN_PARTITION", "message": message}]})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    assert message in texts(at, "warning")
