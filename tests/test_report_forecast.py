"""The report's forecast section on a saved run with hand-built forecast tables (tests/forecast_tables.py)."""
from __future__ import annotations

import re
from html import unescape

import pytest

from audit_core.runs.registry import RunRegistry
from components.report import render_report
from components.report.forecast import default_methods_frame

from forecast_tables import DISAGREE, forecast_tables

EVIL = "<script>alert(1)</script>"


def _save(reg: RunRegistry, model: str = "logistic_regression", kind: str = "transport") -> str:
    return reg.save(audit_kind=kind, dataset_name="toy", dataset_fingerprint="f" * 64, grouping_hash=None,
                    model_spec={"kind": "logistic_regression", "seed": 0}, config={"kind": kind},
                    tables=forecast_tables(model=model), artifacts={}, manifest={"seeds": {"split": 0}})


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory) -> RunRegistry:
    return RunRegistry(tmp_path_factory.mktemp("fc") / "r.sqlite3")


def _section(html: str) -> str:
    start = html.index("<section id='forecast'>")
    return html[start:html.index("</section>", start)]


def test_section_holds_the_sentences_tables_and_figures(reg) -> None:
    html = render_report(reg.load(_save(reg)), generated_at="t")
    s = _section(html)
    assert "<h2>Forecast (target labels not yet available)</h2>" in s
    assert ("If only the mix of cases changed (covariate shift, the model's probabilities read as the target's "
            "expected outcomes; Platt-calibrated logistic regression, mean of 2 refits): the error rate among "
            "the cases the 80% rule answers is forecast at 19% [16%, 23%]") in unescape(s)  # the apostrophes are escaped
    assert "concept shift" in s
    assert 'id="forecast-default"' in s and 'id="forecast-all-methods"' in s and 'id="forecast-weights"' in s
    # two figures (forecast, weights), each a div with a fresh id
    ids = re.findall(r'id="(fig-\d+)"', html)
    assert len(ids) == len(set(ids)) and sum(i in s for i in ids) == 2
    # all methods: covariate:weighted appears there only (17% = mean of 0.16, 0.18)
    all_methods = s[s.index('id="forecast-all-methods"'):]
    start = s.index('id="forecast-default"')
    default = s[start:s.index("</table>", start)]  # the default methods' table (the weights check names its weighting)
    assert "covariate:weighted" in all_methods and "covariate:weighted" not in default
    assert "17.0% [14.0%, 20.0%]" in all_methods


def test_unknown_forecast_shows_its_reason_not_a_number(reg) -> None:
    s = _section(render_report(reg.load(_save(reg)), generated_at="t"))
    reason = DISAGREE.replace(">", "&gt;")
    assert f"cannot be trusted (1 of 2 refits unknown: {reason})" in s
    assert f"unknown in 1 of 2 refits: {reason}; only labels can settle it" in s
    # label:em risk: 0.25 and 0.27 -> 26.0%; it must not be printed as a forecast anywhere in the section's tables
    assert "26.0%" not in s
    frame = default_methods_frame(forecast_tables()["forecast"])
    row = frame[(frame["quantity"] == "risk@s=0.8") & (frame["method"] == "label:em")].iloc[0]
    assert row["forecast [interval]"] == "unknown: not a trusted number"


def test_model_name_injection_stays_text(reg) -> None:
    html = render_report(reg.load(_save(reg, model=EVIL)), generated_at="t")
    assert EVIL not in html
    s = _section(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in s


def test_no_forecast_table_no_section(reg) -> None:
    run_id = reg.save(audit_kind="custom_audit", dataset_name="toy", dataset_fingerprint="f" * 64, grouping_hash=None,
                      model_spec={}, config={}, tables={"x": forecast_tables()["forecast_weights"]}, artifacts={},
                      manifest={})
    assert "<section id='forecast'>" not in render_report(reg.load(run_id), generated_at="t")


def test_a_stored_check_adds_its_sentence_and_figure(reg) -> None:
    from forecast_tables import check_table

    tables = {**forecast_tables(), "forecast_check": check_table()}
    run_id = reg.save(audit_kind="transport", dataset_name="toy", dataset_fingerprint="f" * 64, grouping_hash=None,
                      model_spec={}, config={"kind": "transport"}, tables=tables, artifacts={}, manifest={})
    s = _section(render_report(reg.load(run_id), generated_at="t"))
    assert "3 of 4 realised values fell inside their 90% interval" in s
    assert "<h3>Forecast against realised</h3>" in s
