"""Words for symbols: every column header of the result tables (and every metric a table lists) has a glossary entry."""
from __future__ import annotations

import pandas as pd
import pytest

from audit_core.findings.glossary import GLOSSARY, explain
from components.figures.transport import stress_figure, target_definition_figure
from components.glossary import MISSING, display
from components.widgets import transport as tw
from components.widgets.fragility import case_values

from test_demo import _demo

#: The symbols the issue names: each needs its own entry.
SYMBOLS = ("k*", "rcma", "fds", "λ*", "d", "Δ_g", "hcep", "aurc", "excess_aurc", "D_Y/D_P", "LC", "pr_skill",
           "calibration_intercept", "calibration_slope", "δ_m")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return _demo(str(tmp_path_factory.mktemp("glossary") / "r.sqlite3"))[1]


def _result_tables(r) -> dict[str, pd.DataFrame]:
    a, tr = r.audit, r.transport
    cfg = tr.manifest["config"]
    model, mapping = cfg["models"][0], "platt"
    cert = a.batch.certificate(r.case.index)
    return {
        "fragility summary": a.certificates, "brittleness AUROC": a.auroc, "incremental value": a.incremental,
        "search": a.search, "model comparison": r.models, "case values": case_values(r.workspace, cert),
        "transport results": tr.table, "transport verdicts": tr.verdicts,
        "conformal tally": tr.extras["conformal_tally"],
        "ID vs OOD": tw.id_ood_table(tr.table, model=model, mapping=mapping),
        "verdict table (as shown)": tw.verdict_table(tr.verdicts, model=model, mapping=mapping).data,
        "gate grounds": r.gate.to_frame(),
        "gate extraction": r.gate.comparison.new_grounds.to_frame(),
    }


def test_every_symbol_the_issue_names_has_its_own_words():
    for s in SYMBOLS:
        assert s in GLOSSARY and len(GLOSSARY[s].split()) >= 6, s


def test_every_result_table_header_has_an_entry(demo):
    missing = {name: [c for c in t.columns if explain(c) is None] for name, t in _result_tables(demo).items()}
    assert not {k: v for k, v in missing.items() if v}, missing


def test_every_metric_and_ground_listed_as_rows_has_an_entry(demo):
    metrics = set(demo.transport.table["metric"]) | set(demo.transport.verdicts["metric"])
    grounds = set(demo.gate.to_frame()["ground"])
    assert not sorted(m for m in metrics | grounds if explain(m) is None)


def test_family_names_are_explained_by_pattern():
    assert explain("hcep_at_0.90") == "HCEP at 0.90: the share of answers with confidence ≥ 0.90 that are wrong."
    assert explain("d_noise").startswith("d for the noise family")
    assert explain("coverage_class1").startswith("Conformal coverage of class 1")
    assert explain("no_such_column") is None


def test_missing_values_show_as_a_dash_not_none():
    df = pd.DataFrame({"a": [1.0, None], "b": ["x", None], "c": [1, 2]})
    html = display(df).to_html()
    assert html.count(MISSING) == 2 and "None" not in html and "nan" not in html
    assert display(df[["c"]]) is not None and isinstance(display(df[["c"]]), pd.DataFrame)  # nothing to mark


def test_stress_panels_not_run_say_so(demo):
    tr = demo.transport  # the demo runs no stress
    fig = stress_figure(tr.table, model=tr.manifest["config"]["models"][0], mapping="platt")
    assert fig.layout.title.text == "Evidence degradation: not run"
    assert "not run" in fig.layout.annotations[0].text
    assert target_definition_figure(tr.table).layout.title.text == "Target-definition sensitivity: not run"


def test_model_labels_say_what_they_are_for_not_where_they_are_specified():
    from audit_core.models.zoo import ZOO

    assert ZOO["lightgbm"][0] == "LightGBM (fixed settings)"
    assert not [label for label, *_ in ZOO.values() if "SPEC" in label or "§" in label]
