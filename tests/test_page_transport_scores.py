"""AppTest of the Transport page's "I have predictions, not a model" choice (bring your own scores)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]
TINY = {"tr_refits": 2, "tr_bootstrap": 10}


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path


def _predictions(n: int = 800, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    return pd.DataFrame({"p_yes": p.round(6), "y": np.where(rng.uniform(size=n) < p, "yes", "no"),
                         "dom": np.where(np.arange(n) % 2 == 0, "s", "t"), "x": rng.normal(size=n).round(4)})


def _page() -> AppTest:
    from audit_core.data.intake import read_table
    from components.state import Keys
    from components.widgets.adoption import _column_table

    table = read_table(_predictions().to_csv(index=False).encode(), name="predictions.csv")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    cols = _column_table(table.frame, None)
    cols.loc[cols["column"].isin(["y", "dom"]), "role"] = "ignore"
    at.session_state[Keys.TABLE], at.session_state[Keys.SAMPLE], at.session_state[Keys.COLUMNS] = table, None, cols
    at.session_state[Keys.TARGETS] = [{"kind": "class", "name": "yes", "column": "y", "positive": "yes"}]
    at.session_state["dg_domain"], at.session_state["dg_source_value"], at.session_state["dg_target_value"] = "dom", "s", "t"
    at.run()
    return at.switch_page("pages/transport.py").run()


def test_predictions_instead_of_a_model_run_on_the_named_probability_column(registry_path):
    from components.widgets.transport import MODEL_INPUT, SCORES_INPUT

    at = _page()
    assert not at.exception, at.exception
    assert at.radio(key="tr_input").value == MODEL_INPUT
    assert not [m for m in at.multiselect if m.key == "tr_score_columns"]
    assert [m for m in at.multiselect if m.key == "tr_stresses"]  # a model run offers the stresses
    at.radio(key="tr_input").set_value(SCORES_INPUT).run()
    assert "p_yes" in at.multiselect(key="tr_score_columns").options
    # on scores the stresses are not offered (they need a model); the section says so instead
    assert not [m for m in at.multiselect if m.key == "tr_stresses"]
    assert not [n for n in at.number_input if n.key in ("tr_m", "tr_sets", "tr_cap")]
    assert any("stresses need a model that can score changed records" in c.value for c in at.caption)
    at.button(key="act_tr_lock").click().run()
    assert at.button(key="act_tr_run").disabled  # no probability column named yet
    assert any("Name the probability columns" in c.value for c in at.caption)
    at.multiselect(key="tr_score_columns").set_value(["p_yes"])
    at.multiselect(key="tr_mappings").set_value(["raw", "platt"])
    for k, v in TINY.items():
        at.number_input(key=k).set_value(v)
    at.run()
    assert not at.button(key="act_tr_run").disabled
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]

    reg = RunRegistry(registry_path)
    rec = reg.load(reg.list_runs()["run_id"].iloc[0])
    assert rec.manifest["model"]["kind"] == "scores" and rec.manifest["model"]["score_columns"] == ["p_yes"]
    assert rec.config["numeric"] == ["x"]  # the probability column is not a feature
    note = [i.value for i in at.info if "no model" in i.value]
    assert len(note) == 1 and "Not run: needs a model: target-definition stress" in note[0]
    assert any(t.value.endswith("This run used your scores from column 'p_yes', not a model. Target-definition "
                                "stress, evidence-degradation stress and model-family sensitivity: not run: needs "
                                "a model.") for t in at.text)
    assert any(c.value == "Evidence degradation was not run: needs a model." for c in at.caption)
    charts = [str(c.proto.spec) for c in at.get("plotly_chart")]
    assert sum("Evidence degradation: not run: needs a model (this run used your scores)." in c for c in charts) == 1
    assert sum("Target-definition sensitivity: not run: needs a model" in c for c in charts) == 1


def test_multiclass_predictions_with_one_column_per_class(registry_path):
    from components.widgets.transport import SCORES_INPUT
    from transport_page import transport_page

    rng = np.random.default_rng(5)
    n = 900
    P = rng.dirichlet([2, 2, 2], n).round(6)
    P[:, 2] = 1 - P[:, 0] - P[:, 1]
    y = np.array([rng.choice(3, p=np.clip(row, 0, 1) / np.clip(row, 0, 1).sum()) for row in P])
    frame = pd.DataFrame({"p_a": P[:, 0], "p_b": P[:, 1], "p_c": P[:, 2], "y": np.array(["a", "b", "c"])[y],
                          "dom": np.where(np.arange(n) % 2 == 0, "s", "t"), "x": rng.normal(size=n).round(3)})
    at = transport_page(frame, name="mc_predictions.csv")
    assert not at.exception, at.exception
    at.radio(key="tr_input").set_value(SCORES_INPUT).run()
    at.button(key="act_tr_lock").click().run()
    at.multiselect(key="tr_score_columns").set_value(["p_a", "p_b", "p_c"])
    at.multiselect(key="tr_mappings").set_value(["raw"])
    for k, v in TINY.items():
        at.number_input(key=k).set_value(v)
    at.run()
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    reg = RunRegistry(registry_path)
    rec = reg.load(reg.list_runs()["run_id"].iloc[0])
    assert rec.manifest["multiclass"] is True and rec.manifest["model"]["kind"] == "scores"
    assert rec.config["numeric"] == ["x"]
    assert any("not run: needs a model" in s for s in rec.manifest["not_run"])
