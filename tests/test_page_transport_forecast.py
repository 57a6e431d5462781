"""AppTest of the Transport page before the target's labels arrive: the label mode, the forecast view, the saved
forecast and realised tables, and the label mode chosen by itself when the target rows have no outcome."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]


def _preset(at: AppTest, *, blank_target_labels: bool = False) -> None:
    """The loan sample declared as on Data & groups (2019 → 2023); optionally with no `defaulted` on 2023 rows."""
    from dataclasses import replace

    from audit_core.data.samples import SAMPLES
    from components.state import Keys, sample_table
    from components.widgets.adoption import _column_table

    info = SAMPLES["loan_synthetic"]
    table = sample_table("loan_synthetic")
    if blank_target_labels:
        frame = table.frame.copy()
        frame.loc[frame["year"] == 2023, "defaulted"] = np.nan
        table = replace(table, frame=frame)
    at.session_state[Keys.TABLE] = table
    at.session_state[Keys.SAMPLE] = info
    at.session_state[Keys.COLUMNS] = _column_table(table.frame, info)
    at.session_state[Keys.TARGETS] = [dict(t) for t in info.target_definitions]
    at.session_state["dg_domain"] = "year"
    at.session_state["dg_key"] = "application_id"
    at.session_state["dg_group_col"] = "branch_id"
    at.session_state["dg_source_value"] = "2019"
    at.session_state["dg_target_value"] = "2023"


def _page(blank: bool = False) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    _preset(at, blank_target_labels=blank)
    at.run()
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    return at


def _small_run(at: AppTest) -> AppTest:
    at.button(key="act_tr_lock").click().run()
    at.number_input(key="tr_refits").set_value(1)
    at.number_input(key="tr_bootstrap").set_value(20)
    at.multiselect(key="tr_mappings").set_value(["platt"])
    at.multiselect(key="tr_targets").set_value(["default"])
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def _texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def _saved(registry_path: Path):
    reg = RunRegistry(registry_path)
    runs = reg.list_runs()
    assert len(runs) == 1
    return reg.load(runs.iloc[0]["run_id"])


def test_forecast_chosen_runs_and_shows_the_forecast(registry_path):
    at = _page()
    radio = at.radio(key="tr_target_labels")
    assert radio.value == "available" and not radio.disabled  # labels present: the user chooses
    radio.set_value("forecast").run()
    assert any("present but hidden from the run" in c.value for c in at.caption)
    assert any("need the target's labels" in c.value for c in at.caption)  # stresses and heterogeneity not offered
    assert at.multiselect(key="tr_stresses").disabled  # kept in the declaration, not run
    _small_run(at)
    texts = _texts(at)
    assert any("(covariate shift, the model's probabilities read as the target's expected outcomes;" in t
               for t in texts), texts
    assert any("concept shift" in t for t in texts), texts
    assert any("Saved to the registry" in s.value for s in at.success)
    # the labelled tabs are not shown: the forecast's own
    assert [t.label for t in at.tabs][:5] == ["Forecast", "Computed without labels", "Overlap and weights",
                                              "All methods", "Downloads"]
    default, every = [df.value for df in at.dataframe if "forecast [interval]" in df.value.columns]  # tab order
    assert len(default) > 0 and set(default["method"]) <= {"covariate:cbpe", "label:em", "both:span"}
    # an unknown forecast shows its reason and no number
    unknown = every[every["status / reason"].str.startswith("unknown")]
    assert len(unknown) > 0
    assert (unknown["forecast [interval]"] == "unknown: not a trusted number").all()
    assert unknown["status / reason"].str.contains(":").all()
    rec = _saved(registry_path)
    assert {"forecast", "forecast_exact", "forecast_checks", "forecast_weights", "forecast_prevalence"} <= set(rec.tables)
    assert "verdicts" not in rec.tables or rec.tables["verdicts"].empty
    assert rec.manifest["target_labels"] == "hidden"
    # the page's table reads the saved forecast: the same quantities at the operating rule
    saved = rec.tables["forecast"]
    assert set(default["quantity"]) <= set(saved["quantity"])


def test_blank_target_labels_select_the_forecast_by_itself(registry_path):
    at = _page(blank=True)
    radio = at.radio(key="tr_target_labels")
    assert radio.value == "forecast" and radio.disabled
    said = [i.value for i in at.info if "have no" in i.value]
    assert said and "2023" in said[0] and "defaulted" in said[0] and "forecasts" in said[0]
    _small_run(at)
    assert any("concept shift" in t for t in _texts(at))
    rec = _saved(registry_path)
    assert rec.manifest["target_labels"] == "absent" and "forecast" in rec.tables


def test_labelled_page_run_saves_realised_and_matches_the_forecast_of_the_same_settings(registry_path):
    at = _page()
    assert at.radio(key="tr_target_labels").value == "available"
    at.multiselect(key="tr_stresses").set_value([])
    at.radio(key="tr_target_labels").set_value("forecast").run()
    _small_run(at)  # the forecast first, then the labelled run of the same settings
    at.radio(key="tr_target_labels").set_value("available").run()
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert "What this run found" in " ".join(m.value for m in at.markdown)  # the labelled view, unchanged
    assert "ID vs OOD" in [t.label for t in at.tabs]
    reg = RunRegistry(registry_path)
    runs = reg.list_runs()
    assert len(runs) == 2
    labelled, forecast = (reg.load(r) for r in runs["run_id"])  # newest first
    assert labelled.manifest["target_labels"] == "available" and forecast.manifest["target_labels"] == "hidden"
    assert "realised" in labelled.tables and len(labelled.tables["realised"]) > 0
    assert "forecast" not in labelled.tables and {"results", "verdicts"} <= set(labelled.tables)
    # only the label mode differs: the check can pair them
    for key in ("declaration_key", "target_fingerprint"):
        assert labelled.manifest[key] == forecast.manifest[key]


def test_multiclass_target_without_outcomes_forecasts(registry_path):
    from tests.test_multiclass_run import _frame
    from tests.transport_page import transport_page

    frame = _frame(n=1200)
    frame.loc[frame["dom"] == "t", "y"] = np.nan  # the target rows have no class yet
    at = transport_page(frame, name="mc_unlabelled.csv")
    assert not at.exception, at.exception
    assert at.radio(key="tr_target_labels").value == "forecast"
    assert any("have no" in i.value and "`y`" in i.value for i in at.info)
    at.button(key="act_tr_lock").click().run()
    at.number_input(key="tr_refits").set_value(1)
    at.number_input(key="tr_bootstrap").set_value(20)
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("concept shift" in t for t in _texts(at))
    rec = _saved(registry_path)
    assert rec.manifest["target_labels"] == "absent" and rec.manifest.get("multiclass")
    assert len(rec.tables["forecast_prevalence"]["class"].unique()) > 2  # one share per class
