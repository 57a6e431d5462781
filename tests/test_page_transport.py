"""AppTest for the Transport page: guidance without data, and a full small run
preset from the loan sample, saved to a temporary registry."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path


def _app() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def test_without_data_points_to_data_groups(registry_path, monkeypatch):

    at = _app()
    at.session_state["table"] = None
    at.run()
    # the app loads the sample on first start; remove the targets to see the guidance
    at.session_state["targets"] = []
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    assert any("Data & groups first" in i.value for i in at.info)


def _preset(at: AppTest) -> None:
    from components.widgets.adoption import _column_table
    from components.state import Keys, sample_table
    from audit_core.data.samples import SAMPLES

    info = SAMPLES["loan_synthetic"]
    table = sample_table("loan_synthetic")
    at.session_state[Keys.TABLE] = table
    at.session_state[Keys.SAMPLE] = info
    at.session_state[Keys.COLUMNS] = _column_table(table.frame, info)
    at.session_state[Keys.TARGETS] = [dict(t) for t in info.target_definitions]
    at.session_state["dg_domain"] = "year"
    at.session_state["dg_key"] = "application_id"
    at.session_state["dg_group_col"] = "branch_id"
    at.session_state["dg_source_value"] = "2019"
    at.session_state["dg_target_value"] = "2023"


def test_run_small_transport_and_save(registry_path):
    at = _app()
    _preset(at)
    at.run()
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="tr_domain").value == "year"
    assert at.selectbox(key="tr_source").value == "2019"
    assert at.selectbox(key="tr_target").value == "2023"
    assert any("binary-only" in c.value for c in at.caption)
    # the run is disabled until the tolerances are locked
    assert at.button(key="act_tr_run").disabled
    at.number_input(key="tr_tol_auroc").set_value(0.03)
    at.button(key="act_tr_lock").click().run()
    assert at.number_input(key="tr_tol_auroc").disabled
    at.number_input(key="tr_refits").set_value(2)
    at.number_input(key="tr_bootstrap").set_value(20)
    at.number_input(key="tr_sets").set_value(3)
    at.number_input(key="tr_cap").set_value(800)
    at.multiselect(key="tr_mappings").set_value(["platt"])
    at.multiselect(key="tr_subgroups").set_value(["region"])
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    runs = RunRegistry(registry_path).list_runs()
    assert len(runs) == 1 and runs.iloc[0]["audit_kind"] == "transport"
    rec = RunRegistry(registry_path).load(runs.iloc[0]["run_id"])
    assert {"results", "verdicts"} <= set(rec.tables)
    assert rec.config["tolerances"]["auroc"] == 0.03
    assert rec.config["targets"][0]["name"] == "default"
    assert len(at.get("plotly_chart")) >= 6
    assert any("Saved to the registry" in s.value for s in at.success)
    # the findings panel shows after the run: its title and sentences in plain text, led by the operating threshold
    texts = [t.value for t in at.text]
    assert "What this run found" in " ".join(m.value for m in at.markdown)
    # the threshold is a confidence, never the selection rate ("the 0.8 selection threshold")
    assert any("the threshold that answers 80% of source cases" in t for t in texts), texts
    assert not any("selection threshold" in t for t in texts), texts
    assert any("label-conditional sets" in t for t in texts), texts


def test_page_smoke_through_app(registry_path):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Transport"


def test_figure_builders_return_figures():
    import plotly.graph_objects as go

    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample
    from audit_core.transport import TransportConfig, run_transport
    from audit_core.transport.config import class_names_of
    from components.figures import transport as tf

    frame, info = load_sample("loan_synthetic")
    ds = build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:2], domain_column="year",
                                            source_domain=2019, target_domain=2023, group_column="branch_id",
                                            roles={c: "ignore" for c in info.exclude_columns}))
    res = run_transport(ds.frame, config=TransportConfig.from_dataset(
        ds, n_refits=1, n_bootstrap=10, n_random_sets=3, stress_max_rows=800, mappings=("platt",),
        subgroup_columns=("region",)))
    kw = dict(model="logistic_regression", mapping="platt")
    figs = [
        tf.reliability_figure(res.extras["reliability"], **kw),
        tf.risk_selection_figure(res.extras["curves"], res.table, selection_rate=0.8, **kw),
        tf.frontier_figure(res.table, **kw),
        tf.stress_figure(res.table, **kw),
        tf.target_definition_figure(res.table),
        tf.heterogeneity_figure(res.table, **kw),
    ]
    for f in figs:
        assert isinstance(f, go.Figure) and len(f.data) > 0
    # the frontier has one point per alpha for each method, and class-specific coverage traces
    names = [t.name for t in figs[2].data]
    assert "marginal" in names and "label-conditional" in names
    assert any("class 0" in n for n in names)  # no names given: the class codes
    assert len(figs[2].data[0].x) == 3
    # with the declared classes (the loan target is `defaulted` == 'yes'), the traces and bars name them
    declared = class_names_of(res.manifest["config"])
    assert declared == ("not yes", "yes")
    named = [t.name for t in tf.frontier_figure(res.table, class_names=declared, **kw).data]
    assert ("marginal · coverage of class 'yes'" in named
            and "label-conditional · coverage of class other than 'yes'" in named)
    assert not any("class 1" in n or "class 0" in n for n in named)
    bars = set(tf.heterogeneity_figure(res.table, class_names=declared, **kw).data[0].x)
    assert {"class 'yes'", "class other than 'yes'"} <= bars and not {"class=0", "class=1"} & bars
    # the transported operating point is marked on both curves
    assert sum((t.name or "").startswith("threshold answering 80% of source cases · ") for t in figs[1].data) == 2


def test_report_figures_from_saved_run(tmp_path):
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample
    from audit_core.transport import TransportConfig, run_transport
    from components.figures.transport import transport_report_figures

    frame, info = load_sample("loan_synthetic")
    ds = build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year",
                                            source_domain=2019, target_domain=2023,
                                            roles={c: "ignore" for c in info.exclude_columns}))
    res = run_transport(ds.frame, config=TransportConfig.from_dataset(
        ds, n_refits=1, n_bootstrap=5, stresses=(), mappings=("platt",)))
    reg = RunRegistry(tmp_path / "r.sqlite3")
    rec = reg.load(res.save_to_registry(reg, dataset_name="loan"))
    figures = transport_report_figures(rec)
    titles = [t for t, _ in figures]
    assert titles[:3] == ["Reliability diagram", "Risk–selection curves", "Coverage–set-size frontier"]
    assert "marginal · coverage of class 'yes'" in [t.name for t in figures[2][1].data]  # the saved run's classes
