"""Plotly figure builders for a multi-class Transport run (a class target with C > 2 classes).

Every function takes tables of a
:class:`~audit_core.transport.multiclass.run.MulticlassTransportResult` (its
long-form table or its extras ``reliability`` and ``curves``, or the same
tables of a saved run) and returns a ``go.Figure``; none reads session state.
Classes are named as the result names them (``result.classes``, code order).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from audit_core.transport.headline import recorded_headline

from .labels import BR, END_EXTRA, END_SUP, EXTRA, figure_builder
from .transport import (DOMAIN_COLOURS, slice_subtitle, not_run, reliability_figure, risk_selection_figure,
                        transport_report_figures)

__all__ = ["mc_reliability_figure", "mc_class_conformal_figure", "mc_risk_selection_figure", "mc_report_figures",
           "SCORE_LABELS", "transport_any_report_figures"]

_NAMES = {"id": "ID test (source)", "ood": "OOD (target)"}
#: How the page and the figures name the conformal scores.
SCORE_LABELS = {"lac": "LAC", "aps": "APS", "raps": "RAPS"}


@figure_builder
def mc_reliability_figure(bins: pd.DataFrame, *, model: str, mapping: str, table: pd.DataFrame | None = None,
                          headline=None) -> go.Figure:
    """Top-label reliability diagram, ID vs OOD: each bin's accuracy against its mean ``max_c P_c``.

    ``bins`` is ``result.extras["reliability"]`` of a multi-class run (the binary diagram's columns, with
    ``frac_pos`` the share of records whose arg-max class is right), drawn by the binary builder and relabelled;
    with ``table`` the legend states the top-label ECE (mean over refits).
    """
    fig = reliability_figure(bins, model=model, mapping=mapping, table=table, headline=headline, metric="ece_top")
    fig.update_layout(title=fig.layout.title.text.replace("Reliability diagram", "Top-label reliability diagram", 1))
    fig.update_xaxes(title_text="confidence max_c P_c (bin mean)", row=2, col=1)
    fig.update_yaxes(title_text="accuracy of the arg-max class", row=1, col=1)
    return fig


def _class_means(table: pd.DataFrame, *, analysis: str, domain: str, model: str, mapping: str, alpha: float,
                 metric: str, n_classes: int) -> np.ndarray:
    """Mean over refits of ``<metric>_class<c>`` for c = 0 … C−1 (clean, unweighted); shape (C,)."""
    t = table[(table["analysis"] == analysis) & (table["domain"] == domain) & (table["model"] == model)
              & (table["mapping"] == mapping) & (table["condition"] == "clean") & (table["weighting"] == "unweighted")
              & np.isclose(table["alpha"].to_numpy(dtype=float), alpha)]
    means = t.groupby("metric")["value"].mean()
    return np.array([means.get(f"{metric}_class{c}", np.nan) for c in range(n_classes)], dtype=float)


@figure_builder
def mc_class_conformal_figure(table: pd.DataFrame, *, model: str, mapping: str, alpha: float,
                              class_names, scores=("lac", "aps", "raps"), method: str = "marginal",
                              headline=None) -> go.Figure:
    """Per-class conformal coverage (top row, with the ``1 − α`` line) and mean set size (bottom row), ID vs OOD.

    One column per conformal score (LAC, APS, RAPS); bars are means over refits of the rows
    ``<score>:coverage_class<c>`` and ``<score>:mean_set_size_class<c>`` of ``conformal_<method>``
    (``marginal`` or ``label_conditional``), one bar per class, named by ``class_names`` (code order).
    """
    names = [str(c) for c in class_names]
    scores = [s for s in scores if table["metric"].eq(f"{s}:coverage").any()]
    fig = make_subplots(rows=2, cols=max(len(scores), 1), shared_yaxes="rows", vertical_spacing=0.12,
                        horizontal_spacing=0.04, subplot_titles=[SCORE_LABELS.get(s, s) for s in scores] or None)
    label = method.replace("_", "-")
    fig.update_layout(title=f"Per-class conformal sets ({label}, α = {alpha:g})"
                            + slice_subtitle(model, mapping, "means over refits", headline),
                      template="plotly_white", margin=dict(l=10, r=10, t=80, b=10), height=560, barmode="group")
    if not scores:
        return not_run(fig, "No conformal rows in this run.")
    for j, s in enumerate(scores, start=1):
        for dom in ("id", "ood"):
            kw: dict[str, Any] = dict(analysis=f"conformal_{method}", domain=dom, model=model, mapping=mapping, alpha=alpha,
                      n_classes=len(names))
            for row, metric in ((1, "coverage"), (2, "mean_set_size")):
                fig.add_trace(go.Bar(x=names, y=_class_means(table, metric=f"{s}:{metric}", **kw), name=_NAMES[dom],
                                     marker_color=DOMAIN_COLOURS[dom], legendgroup=dom, showlegend=(j == 1 and row == 1),
                                     hovertemplate=f"{SCORE_LABELS.get(s, s)} · %{{x}}{BR}{metric.replace('_', ' ')} "
                                                   "%{y:.3f}" + EXTRA + _NAMES[dom] + END_EXTRA),
                              row=row, col=j)
        line_label = dict(annotation_text=f"1 − α = {1 - alpha:g}", annotation_position="bottom left") if j == 1 else {}
        fig.add_hline(y=1 - alpha, line_dash="dot", line_color="black", row=1, col=j, **line_label)  # no "new text"
    fig.update_yaxes(title_text="coverage of the class", range=[0, 1.05], row=1, col=1)
    fig.update_yaxes(title_text="mean set size", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text="true class", row=2)
    return fig


@figure_builder
def mc_risk_selection_figure(curves: pd.DataFrame, table: pd.DataFrame, *, model: str, mapping: str,
                             selection_rate: float, headline=None) -> go.Figure:
    """Selective risk of the arg-max answer against the selection rate (accept when ``max_c P_c ≥ τ``), means over
    refits, with the transported operating point; the binary builder on the multi-class tables, relabelled. The
    axis titles are short (they must fit the plot); the subtitle says what the risk counts."""
    fig = risk_selection_figure(curves, table, model=model, mapping=mapping, selection_rate=selection_rate,
                                headline=headline)
    title = fig.layout.title.text.replace("Risk–selection curves", "Max-probability selective risk", 1)
    fig.update_layout(title=title.replace(END_SUP, " · risk: the most probable class is wrong" + END_SUP),
                      xaxis_title="share answered (most confident first)", yaxis_title="selective risk")
    return fig


@figure_builder
def mc_report_figures(tables, *, model: str, mapping: str, class_names, alphas, selection_rates,
                      headline=None) -> list:
    """The figures of a saved multi-class run (for the report), from its stored tables only."""
    t = tables["results"]
    out = []
    if "reliability" in tables:
        out.append(("Top-label reliability diagram", mc_reliability_figure(tables["reliability"], model=model,
                                                                           mapping=mapping, table=t,
                                                                           headline=headline)))
    if "curves" in tables:
        s = 0.8 if 0.8 in selection_rates else selection_rates[len(selection_rates) // 2]
        out.append(("Max-probability selective risk", mc_risk_selection_figure(tables["curves"], t, model=model,
                                                                               mapping=mapping, selection_rate=s,
                                                                               headline=headline)))
    if alphas:
        a = 0.1 if any(np.isclose(alphas, 0.1)) else alphas[len(alphas) // 2]
        out.append(("Per-class conformal sets", mc_class_conformal_figure(t, model=model, mapping=mapping, alpha=a,
                                                                          class_names=class_names, headline=headline)))
    return out


@figure_builder
def transport_any_report_figures(record) -> list:
    """The report figures of any saved transport run: the multi-class ones for a multi-class run
    (manifest ``multiclass``), else :func:`components.figures.transport.transport_report_figures`."""
    manifest = record.manifest or {}
    t = record.tables.get("results")
    if not manifest.get("multiclass"):
        return transport_report_figures(record)
    if t is None or t.empty:
        return []
    cfg = manifest.get("config") or record.config or {}
    h = recorded_headline(manifest, record.config)
    if isinstance(h, str):
        return []
    return mc_report_figures(record.tables, model=h.model, mapping=h.mapping, class_names=manifest.get("classes", []),
                             alphas=list(cfg.get("alphas") or []), selection_rates=list(cfg.get("selection_rates") or [0.8]),
                             headline=h)
