"""Forecast figures on hand-built tables (tests/forecast_tables.py), inspected without a browser."""
from __future__ import annotations

import pandas as pd
import pytest

from components.figures.forecast import (EXACT_NAME, NAIVE_NAME, REALISED_UNKNOWN_NAME, UNKNOWN_NAME,
                                         forecast_check_figure, forecast_figure, weights_figure)

from forecast_tables import DISAGREE, check_table, forecast_tables


def _trace(fig, name):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


def test_forecast_figure_traces_values_and_unknown_hollow():
    fig = forecast_figure(forecast_tables(), model="logistic_regression", mapping="platt")
    names = [t.name for t in fig.data]
    assert names == [NAIVE_NAME, "covariate shift (covariate:cbpe)", "label shift (label:em)",
                     "covariate or label shift (both:span)", UNKNOWN_NAME, EXACT_NAME]
    cov = _trace(fig, "covariate shift (covariate:cbpe)")
    assert list(cov.y) == ["risk@s=0.8", "ece"]
    assert cov.x[0] == pytest.approx(0.19) and cov.x[1] == pytest.approx(0.04)
    # error bars: high − value = 0.23 − 0.19, value − low = 0.19 − 0.16
    assert cov.error_x.array[0] == pytest.approx(0.04) and cov.error_x.arrayminus[0] == pytest.approx(0.03)
    assert "19.0% [16.0%, 23.0%]" in cov.hovertemplate[0]
    # label:em is trusted for ece only; risk@s=0.8 is unknown (refit 1)
    assert list(_trace(fig, "label shift (label:em)").y) == ["ece"]
    unk = _trace(fig, UNKNOWN_NAME)
    assert list(unk.y) == ["risk@s=0.8"] and unk.marker.symbol == "circle-open"
    assert unk.error_x.array is None
    assert DISAGREE.replace(">", "&gt;") in unk.hovertemplate[0] and "not a trusted number" in unk.hovertemplate[0]
    naive = _trace(fig, NAIVE_NAME)
    assert list(naive.x) == pytest.approx([0.12, 0.02])
    ex = _trace(fig, EXACT_NAME)
    assert list(ex.y) == ["rate@s=0.8", "marginal:set_size@a=0.1", "marginal:singleton@a=0.1"]
    assert list(ex.x) == pytest.approx([0.64, 1.25, 0.75])
    assert "Platt-calibrated logistic regression, mean of 2 refits" in fig.layout.title.text


def test_names_from_data_are_escaped():
    fig = forecast_figure(forecast_tables(model="<b>x</b>"), model="<b>x</b>", mapping="platt")
    assert "&lt;b&gt;x&lt;/b&gt;" in fig.layout.title.text and "<b>x" not in fig.layout.title.text
    fig = forecast_check_figure(check_table(model="<b>x</b>"), model="<b>x</b>", mapping="platt")
    assert "&lt;b&gt;x&lt;/b&gt;" in fig.layout.title.text and "<b>" not in fig.layout.title.text


def test_check_figure_inside_outside():
    fig = forecast_check_figure(check_table(), model="logistic_regression", mapping="platt")
    inside = _trace(fig, "realised: inside the interval")
    outside = _trace(fig, "realised: outside the interval")
    # the unknown forecast's realised value is neither inside nor outside: 3 inside, as "3 of 4 … inside" says
    assert len(inside.x) == 3 and list(outside.y) == ["ece · both:span"] and outside.x[0] == pytest.approx(0.09)
    assert list(_trace(fig, REALISED_UNKNOWN_NAME).y) == ["risk@s=0.8 · label:em"]
    assert _trace(fig, UNKNOWN_NAME).marker.symbol == "circle-open"
    assert list(_trace(fig, "forecast [interval]").y) == ["risk@s=0.8 · covariate:cbpe", "ece · covariate:cbpe",
                                                          "risk@s=0.8 · both:span", "ece · both:span"]


def test_weights_figure_thresholds():
    t = forecast_tables()["forecast_weights"]
    t.loc[1, ["domain_auroc", "overlap_ok", "reason"]] = [0.97, False, "domain AUROC 0.970 ≥ 0.95"]
    fig = weights_figure(t)
    limit = _trace(fig, "AUROC limit 0.95")
    assert list(limit.y) == [0.95, 0.95]
    floor = _trace(fig, "ESS floor max(30, 5% of source)")
    assert list(floor.y) == [50.0, 50.0]  # max(30, 0.05 · 1000)
    bars = _trace(fig, "domain AUROC")
    assert list(bars.marker.color) == ["#1f77b4", "#d62728"]
    assert "fails" in bars.hovertemplate[1] and "0.970" in bars.hovertemplate[1]


def test_default_rows_are_the_operating_rule():
    t = forecast_tables()
    extra = t["forecast"][t["forecast"]["quantity"] == "ece"].assign(quantity="risk@s=0.5")
    t["forecast"] = pd.concat([t["forecast"], extra])
    fig = forecast_figure(t, model="logistic_regression", mapping="platt")
    assert list(_trace(fig, NAIVE_NAME).y) == ["risk@s=0.8", "ece"]
    fig = forecast_figure(t, model="logistic_regression", mapping="platt", quantities=("risk@s=0.5",))
    assert list(_trace(fig, NAIVE_NAME).y) == ["risk@s=0.5"]


def test_the_rows_are_named_in_the_words_of_the_sentences() -> None:
    """The axis said ``risk@s=0.8`` and ``citl`` beside sentences that say "the error rate among the cases the 80%
    rule answers": each row's label is now the sentence's words, on two lines at most (the code names stay the
    category values)."""
    fig = forecast_check_figure(check_table(), model="logistic_regression", mapping="platt")
    ticks = dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext, strict=True))
    assert ticks["ece · both:span"] == "Calibration error (ECE, 15 equal-width<br>bins) · both:span"
    assert ticks["risk@s=0.8 · label:em"] == "Error rate among the cases the 80% rule<br>answers · label:em"
    fig = forecast_figure(forecast_tables(), model="logistic_regression", mapping="platt")
    words = dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext, strict=True))
    assert words["risk@s=0.8"].startswith("Error rate among the cases the 80% rule") and "@" not in " ".join(words.values())
    assert fig.layout.xaxis.title.text == "value (shares as fractions; set size in classes)"
