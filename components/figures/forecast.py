"""Plotly figures of a label-free forecast (``docs/forecast.md``), drawn from a saved run's forecast tables.

* :func:`forecast_figure`: per quantity, the forecast of each default method
  (:data:`~audit_core.findings.forecast.DEFAULT_METHODS`) with its interval,
  against "unchanged from source" (the source ID-test value); label-free
  quantities computed exactly on the target are marked apart; an ``unknown``
  forecast is a hollow grey marker with its reason in the hover, never a
  trusted-looking point;
* :func:`forecast_check_figure`: once labels arrived, each forecast's
  interval and point against the realised value (inside / outside coloured);
* :func:`weights_figure`: the importance weights' domain AUROC and effective
  sample size per refit against the overlap rule's thresholds
  (:mod:`audit_core.forecast.weights`).

Values are the mean over refits of one (model, mapping) slice, as the
sentences of :mod:`audit_core.findings.forecast` read them, and every title
names that slice. A forecast unknown in any refit is unknown.
"""
from __future__ import annotations

import textwrap
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from audit_core.findings.forecast import (ASSUMPTION_WORDS, DEFAULT_METHODS, forecast_slice, headline_quantities,
                                          pooled_status, quantity_words, slice_words, value_text)
from audit_core.forecast.weights import AUROC_MAX, ess_floor
from audit_core.transport.headline import pipeline_words

from .labels import BR, END_SUP, NO_EXTRA, SUP, figure_builder
from .transport import not_run

__all__ = ["forecast_figure", "forecast_check_figure", "weights_figure", "METHOD_COLOURS", "UNKNOWN_NAME",
           "EXACT_NAME", "NAIVE_NAME", "REALISED_UNKNOWN_NAME"]

_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=70, b=10))
LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0)
#: One colour per assumption's default method.
METHOD_COLOURS = {"covariate": "#1f77b4", "label": "#ff7f0e", "both": "#2ca02c"}
UNKNOWN_COLOUR = "#9aa5b1"
#: Legend names (the words the report and the page use too).
UNKNOWN_NAME = "unknown: assumption check failed"
EXACT_NAME = "computed, no labels needed"
NAIVE_NAME = "unchanged from source (ID test)"
REALISED_UNKNOWN_NAME = "realised: forecast unknown, not counted"


def _title(text: str, model: str, mapping: str, n_refits: int) -> dict:
    return dict(text=f"{text}{BR}{SUP}{slice_words(model, mapping, n_refits)}{END_SUP}", x=0.01)


def _pooled(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (quantity, method): the mean over refits of value, low, high, naive; pooled status and reason."""
    out = []
    for (q, m), g in rows.groupby(["quantity", "method"], sort=False):
        status, reason, _ = pooled_status(g)
        mean = {c: float(pd.to_numeric(g[c], errors="coerce").mean()) if c in g else np.nan
                for c in ("value", "low", "high", "naive", "level")}
        out.append({"quantity": str(q), "method": str(m), **mean, "status": status, "reason": reason})
    return pd.DataFrame(out, columns=["quantity", "method", "value", "low", "high", "naive", "level", "status",
                                      "reason"])


def _n_refits(rows: pd.DataFrame) -> int:
    return int(pd.to_numeric(rows["refit"], errors="coerce").nunique()) if "refit" in rows else 1


@figure_builder
def forecast_figure(tables: Mapping[str, pd.DataFrame], *, model: str, mapping: str,
                    quantities: tuple[str, ...] | None = None, selection_rate: float = 0.8,
                    alpha: float = 0.1) -> go.Figure:
    """Forecast against "unchanged from source", one row per quantity.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        A run's tables: ``forecast`` (and ``forecast_exact`` for the exact label-free values).
    model, mapping : str
        The slice.
    quantities : tuple of str, optional
        The rows (default: :func:`~audit_core.findings.forecast.headline_quantities` at ``selection_rate``
        and ``alpha`` that the table holds, else every forecast quantity of the slice); the exact rows are the
        label-free ones at the same rule and level (every one when ``quantities`` is given).
    selection_rate, alpha : float
        The operating rule and conformal level of the default rows.

    Returns
    -------
    go.Figure
        Traces: ``unchanged from source (ID test)``; one per assumption with a trusted forecast (points with
        error bars); ``unknown: assumption check failed`` (hollow grey, reason in the hover; no error bars);
        ``computed, no labels needed`` (exact values on the target).
    """
    fig = go.Figure()
    rows = forecast_slice(tables, "forecast", model, mapping)
    if rows.empty:
        return not_run(fig, f"No forecast for {model} / {mapping}.")
    n = _n_refits(rows)
    pooled = _pooled(rows[rows["method"].isin(DEFAULT_METHODS.values())])
    shown, exact_shown = headline_quantities(selection_rate, alpha)
    present = list(dict.fromkeys(pooled["quantity"]))
    wanted = list(quantities) if quantities else ([q for q in shown if q in present] or present)
    pooled = pooled[pooled["quantity"].isin(wanted)]
    naive = pooled.groupby("quantity", sort=False)["naive"].mean()
    fig.add_trace(go.Scatter(
        x=[naive.get(q, np.nan) for q in wanted], y=wanted, mode="markers", name=NAIVE_NAME,
        marker=dict(symbol="line-ns", size=16, line=dict(width=3, color="#323f4b")),
        hovertemplate=[f"{quantity_words(q)[0]}{BR}unchanged from source: {value_text(naive.get(q, np.nan), quantity_words(q)[1])}"
                       f"{NO_EXTRA}" for q in wanted]))
    for assumption, method in DEFAULT_METHODS.items():
        ok = pooled[(pooled["method"] == method) & (pooled["status"] == "forecast")]
        if ok.empty:
            continue
        form = [quantity_words(q)[1] for q in ok["quantity"]]
        fig.add_trace(go.Scatter(
            x=ok["value"], y=list(ok["quantity"]), mode="markers",
            name=f"{ASSUMPTION_WORDS[assumption][1]} ({method})",
            marker=dict(size=10, color=METHOD_COLOURS[assumption]),
            error_x=dict(type="data", symmetric=False, array=(ok["high"] - ok["value"]).to_numpy(),
                         arrayminus=(ok["value"] - ok["low"]).to_numpy(), color=METHOD_COLOURS[assumption]),
            hovertemplate=[f"{quantity_words(q)[0]}{BR}{method}: {value_text(v, f)} [{value_text(lo, f)}, {value_text(hi, f)}]"
                           f"{BR}unchanged from source: {value_text(nv, f)}{NO_EXTRA}"
                           for q, v, lo, hi, nv, f in zip(ok["quantity"], ok["value"], ok["low"], ok["high"],
                                                          ok["naive"], form, strict=True)]))
    bad = pooled[pooled["status"] != "forecast"]
    if not bad.empty:
        fig.add_trace(go.Scatter(
            x=bad["value"], y=list(bad["quantity"]), mode="markers", name=UNKNOWN_NAME,
            marker=dict(symbol="circle-open", size=11, color=UNKNOWN_COLOUR, line=dict(width=2)),
            hovertemplate=[f"{quantity_words(q)[0]}{BR}{m}: unknown, not a trusted number{BR}why: {r}{NO_EXTRA}"
                           for q, m, r in zip(bad["quantity"], bad["method"], bad["reason"], strict=True)]))
    exact = forecast_slice(tables, "forecast_exact", model, mapping)
    if not exact.empty and not quantities:
        exact = exact[exact["quantity"].astype(str).isin(exact_shown)]
    if not exact.empty:
        ex = exact.groupby("quantity", sort=False)["value"].mean()
        fig.add_trace(go.Scatter(
            x=ex.to_numpy(), y=[str(q) for q in ex.index], mode="markers", name=EXACT_NAME,
            marker=dict(symbol="star", size=13, color="#7b3294"),
            hovertemplate=[f"{quantity_words(str(q))[0]}{BR}computed on the target, no labels needed: "
                           f"{value_text(v, quantity_words(str(q))[1])}{NO_EXTRA}" for q, v in ex.items()]))
    rows_shown = wanted + ([] if exact.empty else [str(q) for q in exact["quantity"].unique()])
    fig.update_layout(**_LAYOUT, height=140 + 40 * len(rows_shown),
                      title=_title("Forecast against unchanged from source (mean over refits)", model, mapping, n),
                      legend=LEGEND_BELOW)
    fig.update_xaxes(title_text="value (shares as fractions; set size in classes)")
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=rows_shown,
                     ticktext=[_quantity_label(q) for q in rows_shown])
    return fig


def _quantity_label(quantity: str, *, width: int = 42) -> str:
    """A quantity's axis label: its plain words (:func:`~audit_core.findings.forecast.quantity_words`) without the
    leading article, capitalised, on at most two lines of about ``width`` characters."""
    words = quantity_words(quantity)[0]
    words = words[4:] if words.startswith("the ") else words
    lines = textwrap.wrap(words[:1].upper() + words[1:], width)
    return BR.join(lines[:1] + ([" ".join(lines[1:])] if len(lines) > 1 else []))


@figure_builder
def forecast_check_figure(check: pd.DataFrame, *, model: str, mapping: str) -> go.Figure:
    """Forecast against realised, one row per (quantity, method) of a ``ForecastCheck.table``.

    Traces: ``forecast [interval]`` (points with error bars; unknown ones hollow grey), ``realised: inside`` (green)
    and ``realised: outside`` (red) for trusted forecasts, and :data:`REALISED_UNKNOWN_NAME` (grey) for the realised
    values of unknown ones, which the check does not count.
    """
    fig = go.Figure()
    rows = forecast_slice({"c": check}, "c", model, mapping)
    if rows.empty:
        return not_run(fig, f"No checked forecast for {model} / {mapping}.")
    ylab = [f"{q} · {m}" for q, m in zip(rows["quantity"], rows["method"], strict=True)]
    ticks = {y: f"{_quantity_label(q)} · {m}" for y, q, m in zip(ylab, rows["quantity"], rows["method"], strict=True)}
    rows = rows.assign(_y=ylab)
    known = rows["status"].astype(str) == "forecast"
    for part, name, marker in ((rows[known], "forecast [interval]", dict(size=10, color="#1f77b4")),
                               (rows[~known], UNKNOWN_NAME, dict(symbol="circle-open", size=11, color=UNKNOWN_COLOUR,
                                                                 line=dict(width=2)))):
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["value"], y=part["_y"], mode="markers", name=name, marker=marker,
            error_x=dict(type="data", symmetric=False, array=(part["high"] - part["value"]).to_numpy(),
                         arrayminus=(part["value"] - part["low"]).to_numpy(),
                         color="#1f77b4" if name != UNKNOWN_NAME else UNKNOWN_COLOUR),
            hovertemplate=[f"{y}{BR}forecast {v:.3f} [{lo:.3f}, {hi:.3f}]"
                           + ("" if name != UNKNOWN_NAME else f"{BR}unknown: not a trusted number") + NO_EXTRA
                           for y, v, lo, hi in zip(part["_y"], part["value"], part["low"], part["high"],
                                                   strict=True)]))
    inside = rows["inside"].astype(bool)
    # an unknown forecast made no trusted claim: its realised value is neither inside nor outside (as the sentence
    # and the check's counts say)
    for mask, name, colour in ((known & inside, "realised: inside the interval", "#2ca02c"),
                               (known & ~inside, "realised: outside the interval", "#d62728"),
                               (~known, REALISED_UNKNOWN_NAME, UNKNOWN_COLOUR)):
        part = rows[mask]
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["realised"], y=part["_y"], mode="markers", name=name,
            marker=dict(symbol="x", size=11, color=colour),
            hovertemplate=[f"{y}{BR}realised {r:.3f}; unchanged from source {nv:.3f}{NO_EXTRA}"
                           for y, r, nv in zip(part["_y"], part["realised"], part["naive"], strict=True)]))
    fig.update_layout(**_LAYOUT, height=140 + 40 * len(rows), legend=LEGEND_BELOW,
                      title=dict(text=f"Forecast against realised{BR}{SUP}{pipeline_words(mapping, model)}, one row "
                                      f"per quantity and method{END_SUP}", x=0.01))
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=list(ticks),
                     ticktext=list(ticks.values()))
    fig.update_xaxes(title_text="value")
    return fig


@figure_builder
def weights_figure(weights: pd.DataFrame) -> go.Figure:
    """Importance-weight diagnostics per refit: domain AUROC against :data:`AUROC_MAX`, ESS against its floor.

    ``weights`` is a ``forecast_weights`` table (``refit, domain_auroc, ess, n_source, overlap_ok``…); the ESS
    floor is :func:`audit_core.forecast.weights.ess_floor` of each refit's ``n_source``.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("domain AUROC (overlap rule: below 0.95)",
                                                         "effective sample size (overlap rule: at least the floor)"))
    if not isinstance(weights, pd.DataFrame) or weights.empty:
        return not_run(go.Figure(), "No importance-weight diagnostics in this run.")
    w = weights.sort_values("refit")
    refit = [f"refit {int(r)}" for r in w["refit"]]
    ok = w["overlap_ok"].astype(bool) if "overlap_ok" in w else pd.Series(True, index=w.index)
    colours = ["#1f77b4" if o else "#d62728" for o in ok]
    reasons = w["reason"].fillna("").astype(str) if "reason" in w else pd.Series("", index=w.index)
    hover = [f"{r}: overlap rule {'holds' if o else 'fails'}" + (f"{BR}{why}" if why else "") + NO_EXTRA
             for r, o, why in zip(refit, ok, reasons, strict=True)]
    floors = [ess_floor(int(n)) for n in w["n_source"]]
    fig.add_trace(go.Bar(x=refit, y=w["domain_auroc"], marker_color=colours, name="domain AUROC",
                         hovertemplate=hover), row=1, col=1)
    fig.add_trace(go.Scatter(x=refit, y=[AUROC_MAX] * len(w), mode="lines", line=dict(dash="dash", color="#323f4b"),
                             name=f"AUROC limit {AUROC_MAX:g}"), row=1, col=1)
    fig.add_trace(go.Bar(x=refit, y=w["ess"], marker_color=colours, name="effective sample size",
                         hovertemplate=hover), row=1, col=2)
    fig.add_trace(go.Scatter(x=refit, y=floors, mode="lines+markers", line=dict(dash="dash", color="#323f4b"),
                             name="ESS floor max(30, 5% of source)"), row=1, col=2)
    fig.update_yaxes(range=[0.5, 1.0], row=1, col=1)
    fig.update_layout(**{**_LAYOUT, "margin": dict(l=10, r=10, t=105, b=10)}, height=390,  # room for the subplot titles
                      legend=LEGEND_BELOW,
                      title=dict(text=f"Importance weights: overlap check{BR}{SUP}per refit (the weights come from "
                                      f"the features, the same for every model){END_SUP}", x=0.01))
    return fig
