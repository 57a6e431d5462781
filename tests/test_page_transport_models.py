"""AppTest of the Transport page on real data and on the session's model."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit_core.runs.registry import RunRegistry

from real_data import adult_table

ROOT = Path(__file__).resolve().parents[1]
TINY = {"tr_refits": 1, "tr_bootstrap": 10, "tr_sets": 3, "tr_cap": 2000}


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path


def _adult(at: AppTest) -> None:
    from components.state import Keys
    from components.widgets.adoption import _column_table

    table = adult_table()
    cols = _column_table(table.frame, None)
    cols.loc[cols["column"].isin(["sex", "income"]), "role"] = "ignore"
    at.session_state[Keys.TABLE] = table
    at.session_state[Keys.SAMPLE] = None
    at.session_state[Keys.COLUMNS] = cols
    at.session_state[Keys.TARGETS] = [{"kind": "class", "name": "high_income", "column": "income", "positive": ">50K"}]
    at.session_state["dg_domain"] = "sex"
    at.session_state["dg_source_value"] = "Male"
    at.session_state["dg_target_value"] = "Female"


def _run(at: AppTest, values: dict) -> None:
    at.button(key="act_tr_lock").click().run()
    for k, v in values.items():
        at.number_input(key=k).set_value(v)
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def test_adult_sex_male_to_female_with_default_stresses_on_the_page(registry_path):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    _adult(at)
    at.run()
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="tr_domain").value == "sex"
    assert (at.selectbox(key="tr_source").value, at.selectbox(key="tr_target").value) == ("Male", "Female")
    assert at.multiselect(key="tr_stresses").value == ["target_definition", "degradation"]
    _run(at, TINY)
    rec = RunRegistry(registry_path).load(RunRegistry(registry_path).list_runs()["run_id"].iloc[0])
    assert "corruption" in set(rec.tables["results"]["condition"])
    # the verdict table shows directions; an improvement is never shown in the alarm colour
    styler = at.session_state["transport_result"].verdicts
    assert {"direction", "good_direction"} <= set(styler.columns)
    better = styler[styler["direction"] == "better"]
    assert (better["verdict"] == "transport-sensitive").all()
    harm = [d.value for d in at.dataframe if "OOD: more harmful than % of random sets" in d.value.columns]
    assert harm and {"auroc", "brier_score"} <= set(harm[0]["metric"])


def _loan_with(at: AppTest, ws) -> None:
    from test_page_transport import _preset

    from components.state import Keys

    _preset(at)
    at.session_state[Keys.WORKSPACE] = ws


def _loan_dataset():
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample

    frame, info = load_sample("loan_synthetic")
    return build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year",
                                              source_domain=2019, target_domain=2023,
                                              roles={c: "ignore" for c in info.exclude_columns}))


def test_the_page_defaults_to_the_model_trained_on_data_and_groups(registry_path):
    from audit_core.models.training import train_workspace
    from audit_core.models.zoo import ModelSpec

    ws = train_workspace(_loan_dataset(), spec=ModelSpec(kind="lightgbm", seed=0, params={"n_estimators": 20}))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    _loan_with(at, ws)
    at.run()
    at.switch_page("pages/transport.py").run()
    assert at.multiselect(key="tr_models").value == ["lightgbm"]
    assert any("n_estimators" in c.value and "trained on Data & groups" in c.value for c in at.caption)
    at.multiselect(key="tr_mappings").set_value(["platt"])
    at.multiselect(key="tr_stresses").set_value([])
    _run(at, TINY)
    reg = RunRegistry(registry_path)
    runs = reg.list_runs()
    assert runs["model"].tolist() == ["lightgbm"]
    assert reg.load(runs["run_id"].iloc[0]).config["model_params"] == {"lightgbm": {"n_estimators": 20}}
    assert any("refitted on each refit's train partition" in i.value for i in at.info)


def test_an_imported_model_is_audited_as_it_is_on_the_page(registry_path):
    from test_transport_models import _imported

    ws = _imported(_loan_dataset())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    _loan_with(at, ws)
    at.run()
    at.switch_page("pages/transport.py").run()
    assert at.radio(key="tr_model_mode").value.startswith("Audit this model as it is")
    assert any("not refit" in c.value for c in at.caption)
    at.multiselect(key="tr_targets").set_value(["default"])
    at.multiselect(key="tr_mappings").set_value(["raw", "platt"])
    _run(at, TINY)
    reg = RunRegistry(registry_path)
    rec = reg.load(reg.list_runs()["run_id"].iloc[0])
    assert rec.manifest["model"]["refit"] is False and rec.model == "imported:mine.skops"
    assert any("not refit" in i.value for i in at.info)
