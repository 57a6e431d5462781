"""AppTest: the Transport page runs multi-class Transport for a class target without a positive class, and shows
the library's numbers (the same config run by ``run_multiclass_transport`` directly)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audit_core.runs.registry import RunRegistry
from audit_core.transport.multiclass.run import run_multiclass_transport
from tests.test_multiclass_run import _config, _frame
from tests.transport_page import transport_page

ROOT = Path(__file__).resolve().parents[1]
N = 1200


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    import os

    reg = tmp_path_factory.mktemp("mcpage") / "r.sqlite3"
    old = os.environ.get("AUDIT_REGISTRY_PATH")
    os.environ["AUDIT_REGISTRY_PATH"] = str(reg)
    try:
        at = transport_page(_frame(n=N), name="mc.csv")  # y has no positive class
        before = {"info": [i.value for i in at.info], "disabled": at.button(key="act_tr_run").disabled}
        at.number_input(key="tr_tol_accuracy").set_value(0.03)  # a multi-class metric's δ, declared and locked
        at.button(key="act_tr_lock").click().run()
        at.number_input(key="tr_refits").set_value(2)
        at.number_input(key="tr_bootstrap").set_value(20)
        at.button(key="act_tr_run").click().run()
        yield at, before, reg
    finally:
        if old is None:
            os.environ.pop("AUDIT_REGISTRY_PATH", None)
        else:
            os.environ["AUDIT_REGISTRY_PATH"] = old


@pytest.fixture(scope="module")
def library():
    """The page's config, run by the library: its defaults (seed 0, raw/platt/isotonic, the page's α and rates)."""
    cfg = _config(n_refits=2, n_bootstrap=20, alphas=(0.05, 0.1, 0.2), selection_rates=(0.5, 0.7, 0.8, 0.9, 0.95),
                  stresses=())
    return run_multiclass_transport(_frame(n=N), config=cfg, tolerances={"accuracy": 0.03})


def test_the_page_says_it_runs_multiclass_and_maps_the_mappings(page):
    _, before, _ = page
    note = next(i for i in before["info"] if i.startswith("**Multi-class target**"))
    assert "raw → raw, platt → temperature, isotonic → vector" in note
    assert before["disabled"]  # still behind the tolerance lock


def test_the_run_is_saved_as_a_multiclass_transport_run(page):
    at, _, reg = page
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    runs = RunRegistry(reg).list_runs()
    assert len(runs) == 1 and runs.iloc[0]["audit_kind"] == "transport"
    rec = RunRegistry(reg).load(runs.iloc[0]["run_id"])
    assert rec.manifest["multiclass"] and rec.manifest["classes"] == ["distinction", "fail", "pass", "withdrawn"]
    assert rec.config["mappings"] == ["raw", "temperature", "vector"] and rec.config["stresses"] == []
    assert {"reliability", "curves"} <= set(rec.tables)
    assert rec.manifest["tolerances"]["accuracy"] == 0.03  # the locked multi-class δ reached the run
    v = rec.tables["verdicts"]
    assert set(v.loc[v.metric == "accuracy", "tolerance"]) == {0.03}
    assert any("Saved to the registry" in s.value for s in at.success)


def test_only_tabs_with_content_and_what_was_not_run_is_said(page):
    at, _, _ = page
    assert [t.label for t in at.tabs] == ["ID vs OOD", "Calibration", "Selective", "Conformal", "Downloads"]
    assert any(c.value.startswith("Not run for a multi-class target: the target-definition and evidence-degradation "
                                  "stresses, subgroup heterogeneity and the feature shift") for c in at.caption)
    assert len(at.get("plotly_chart")) == 3


def test_shown_headline_numbers_equal_the_library_s(page, library):
    """The ID vs OOD table (mean over refits, mapping temperature: the page's default view) is the library's."""
    at, _, _ = page
    assert at.selectbox(key="tr_view_mapping").value == "temperature"
    shown = at.dataframe[0].value.set_index("metric")
    t = library.table
    t = t[(t.analysis == "metrics") & (t.mapping == "temperature") & (t.weighting == "unweighted")]
    want = t.groupby(["metric", "domain"])["value"].mean().unstack("domain")
    assert set(shown.index) == {"accuracy", "auroc_macro", "brier_multiclass", "log_loss_multiclass", "ece_top",
                                "ece_classwise"}
    for m in shown.index:
        assert shown.loc[m, "id mean"] == pytest.approx(want.loc[m, "id"], abs=1e-12)
        assert shown.loc[m, "ood mean"] == pytest.approx(want.loc[m, "ood"], abs=1e-12)
    # the verdict table shows the library's verdicts for the same pipeline
    v = library.verdicts
    v = v[(v.mapping == "temperature") & (v.weighting == "unweighted")]
    shown_v = at.dataframe[1].value
    assert list(shown_v["verdict"]) == list(v["verdict"])
    assert np.allclose(shown_v["change OOD − ID"].to_numpy(float), v["delta"].to_numpy(float), atol=1e-12)


def test_conformal_tab_redraws_for_another_alpha(page):
    at, _, _ = page
    at.selectbox(key="tr_mc_alpha").set_value(0.2).run()
    assert not at.exception, at.exception
    import json

    spec = json.loads(at.get("plotly_chart")[2].proto.spec)
    assert "α = 0.2" in spec["layout"]["title"]["text"]
    assert {s["y0"] for s in spec["layout"]["shapes"]} == {0.8}  # the 1 − α line moved with α


def test_a_mapping_without_a_multiclass_counterpart_is_refused_at_once(tmp_path, monkeypatch):
    """Venn-Abers has no multi-class counterpart: the declared message shows on the click, nothing runs or is saved."""
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "r.sqlite3"))
    at = transport_page(_frame(n=600), name="mc.csv")
    at.button(key="act_tr_lock").click().run()
    at.multiselect(key="tr_mappings").set_value(["raw", "venn_abers"]).run()
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "Unknown multi-class mapping 'venn_abers'" in errors[0], errors
    assert not (tmp_path / "r.sqlite3").exists() or RunRegistry(tmp_path / "r.sqlite3").list_runs().empty
    assert not at.tabs
