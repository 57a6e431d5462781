"""The "Why it moved" view: its figure (no browser), its finding, the report section and the Transport page tab (AppTest)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from audit_core.findings.shift import shift_finding
from tests.shift_data import saved_loan_transport
from components.figures.shift import LINK_COLOURS, feature_shift_figure

ROOT = Path(__file__).resolve().parents[1]


def _table():
    return pd.DataFrame({
        "rank": [2, 1, 3, 4], "feature": ["b", "a", "c", "d"], "kind": ["categorical", "numeric", "numeric", "numeric"],
        "psi": [0.2, 0.4, 0.05, 0.01], "test": ["chi2", "ks", "ks", "ks"], "p_value": [1e-5, 1e-9, 0.2, 0.9],
        "wasserstein_sd": [np.nan, 0.8, 0.1, 0.02], "domain_auroc": [0.6, 0.7, 0.52, 0.5],
        "targeted_flagged": [False, True, False, False], "heterogeneity_flagged": [True, False, False, False],
        "link": ["x", "y", "z", "w"]})


def test_figure_ranks_and_colours_by_link():
    fig = feature_shift_figure(_table(), top=3, domain_auroc=0.81)
    by_name = {t.name: t for t in fig.data}
    assert set(by_name) == set(LINK_COLOURS)  # all three classes present
    assert list(by_name["targeted deletion flagged"].y) == ["a"] and list(by_name["targeted deletion flagged"].x) == [0.4]
    assert list(by_name["heterogeneity flagged"].y) == ["b"]
    assert list(by_name["not flagged"].y) == ["c"]  # top=3 leaves d out
    assert list(fig.layout.yaxis.categoryarray) == ["c", "b", "a"]  # most shifted drawn on top
    assert "0.810" in fig.layout.title.text
    assert "Wasserstein 0.800 source SDs" in by_name["targeted deletion flagged"].hovertext[0]


def test_finding_names_the_top_features_and_links():
    dom = pd.DataFrame({"part": ["pooled", "fold 0"], "auroc": [0.81, 0.8]})
    f = shift_finding(_table(), dom)
    assert f.text.startswith("A classifier tells target from source records with a cross-fitted AUROC of 0.81; "
                             "the most shifted features are a (PSI 0.40), b (PSI 0.20), c (PSI 0.05).")
    assert f.text.endswith(" The targeted deletion removes a and harms the target-domain AUROC more than most random "
                           "deletions do. The AUROC change differs across the levels of b by more than its tolerance.")
    assert f.severity == "warning" and f.numbers["psi0"] == 0.4 and f.labels["feature0"] == "a"
    small = _table().assign(psi=[0.02, 0.03, 0.01, 0.0], targeted_flagged=False, heterogeneity_flagged=False)
    g = shift_finding(small)
    assert g.severity == "info" and g.text == ("The most shifted features are a (PSI 0.03), b (PSI 0.02), "
                                               "c (PSI 0.01).")
    assert shift_finding(None) is None
    two = shift_finding(_table().assign(targeted_flagged=[True, True, False, False]))
    assert "The targeted deletion removes a and b and harms" in two.text


@pytest.fixture(scope="module")
def saved(tmp_path_factory, loan_transport_result):
    return saved_loan_transport(tmp_path_factory.mktemp("reg"), result=loan_transport_result)


@pytest.mark.xdist_group("loan_transport_result")  # on the worker that has the session fixture
def test_report_has_the_shift_figure_and_finding(saved):
    from components.figures.transport import transport_report_figures
    from components.report import render_report

    titles = [t for t, _ in transport_report_figures(saved)]
    assert "Why it moved (feature shift)" in titles
    html = render_report(saved, generated_at="t")
    assert "<h3>Why it moved (feature shift)</h3>" in html
    assert "the most shifted features are interest_rate (PSI" in html


def test_transport_page_shows_the_why_it_moved_tab(registry_path):
    from tests.test_page_transport import _preset

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    _preset(at)
    at.run()
    at.switch_page("pages/transport.py").run()
    at.button(key="act_tr_lock").click().run()
    at.number_input(key="tr_refits").set_value(2)
    at.number_input(key="tr_bootstrap").set_value(10)
    at.number_input(key="tr_sets").set_value(3)
    at.number_input(key="tr_cap").set_value(500)
    at.multiselect(key="tr_mappings").set_value(["platt"])
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs][-1] == "Why it moved"
    tab = at.tabs[-1]
    assert any("ranked by PSI" in c.value for c in tab.caption)
    shown = tab.dataframe[0].value
    assert shown["feature"].iloc[0] == "interest_rate" and list(shown["rank"]) == list(range(1, len(shown) + 1))
    assert "link" in shown.columns
    # p-values as short text (two significant digits), not 40-digit decimals
    assert all(len(p) <= 8 and 0 <= float(p) <= 1 for p in shown["p_value"]), shown["p_value"].tolist()
