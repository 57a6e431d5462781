"""Plotly figure builders for the Fragility page.

Each takes computed results (tables or a certificate) and returns a
``go.Figure``; none reads session state, so all are testable without a browser.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from audit_core.fragility.certificate import Certificate
from audit_core.fragility.evaluation import CONFIDENCE
from audit_core.runs.registry import RunRecord
from .labels import BR, NO_EXTRA, figure_builder

__all__ = [
    "distributions_figure",
    "auroc_figure",
    "runs_heatmap_figure",
    "delta_heatmap_figure",
    "trajectory_figure",
    "degradation_figure",
    "temperature_figure",
    "neural_comparison_figure",
    "fragility_report_figures",
]

_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=50, b=10))
_METHOD_COLOURS = ("#7f7f7f", "#1f77b4", "#d62728", "#2ca02c", "#9467bd")
_METRIC_NAMES = {"ece": "ECE", "nll": "NLL", "brier": "Brier"}


@figure_builder
def distributions_figure(certificates: pd.DataFrame, *, k: int | None = None) -> go.Figure:
    """Histograms of ``k*``, RCMA and FDS over the audited cases.

    With the audit depth ``k`` the k* panel is one bar per value ``1..K``
    and a last bar labelled "no flip within K" (``k* = K + 1``).
    """
    fig = make_subplots(rows=1, cols=3, subplot_titles=("k*: evidence groups removed to flip", "RCMA", "FDS"))
    if k is None:
        fig.add_trace(go.Histogram(x=certificates["k_star"], name="k*"), row=1, col=1)
    else:
        counts = certificates["k_star"].clip(upper=k + 1).value_counts()
        labels = [str(i) for i in range(1, k + 1)] + [f"no flip within {k}"]
        fig.add_trace(go.Bar(x=labels, y=[int(counts.get(i, 0)) for i in range(1, k + 2)], name="k*",
                             hovertemplate="k* %{x}: %{y} cases" + NO_EXTRA), row=1, col=1)
        fig.update_xaxes(type="category", title_text="groups removed (k*)", row=1, col=1)
        fig.update_yaxes(title_text="cases", row=1, col=1)
    fig.add_trace(go.Histogram(x=np.minimum(certificates["rcma"], 5), name="RCMA (capped at 5)", nbinsx=30), row=1, col=2)
    fig.add_trace(go.Histogram(x=certificates["fds"], name="FDS", nbinsx=20, xbins=dict(start=0, end=1)), row=1, col=3)
    fig.update_layout(title="Distributions over audited cases", showlegend=False, height=300, **_LAYOUT)
    for col, what in enumerate(("k* (groups removed to flip)", "RCMA (capped at 5)", "FDS"), start=1):
        fig.update_xaxes(title_text=what, row=1, col=col)
    fig.update_yaxes(title_text="cases", row=1, col=1)
    return fig


@figure_builder
def auroc_figure(table: pd.DataFrame, *, label: str, stratum: str) -> go.Figure:
    """Ranking of brittleness scores by AUROC with bootstrap intervals.

    In a binary task the four confidence scores rank identically, so they are
    drawn as one bar named ``confidence (4 scores, identical ranking)``.
    """
    part = table[(table["label"] == label) & (table["stratum"] == stratum)].copy()
    if part["same_ranking"].any():
        conf = part[part["score"].isin(CONFIDENCE)].iloc[[0]].copy()
        conf["score"] = "confidence (4 scores, identical ranking)"
        part = pd.concat([conf, part[~part["score"].isin(CONFIDENCE)]])
    part = part.sort_values("auroc", ascending=True)
    colors = ["#d62728" if s in ("fds", "rcma") else "#7f7f7f" if s.startswith("confidence") or s in CONFIDENCE else "#1f77b4"
              for s in part["score"]]
    fig = go.Figure(
        go.Bar(
            x=part["auroc"], y=part["score"], orientation="h", marker_color=colors,
            error_x=dict(type="data", symmetric=False, array=part["hi"] - part["auroc"], arrayminus=part["auroc"] - part["lo"]),
            hovertemplate="%{y}: AUROC %{x:.3f}" + NO_EXTRA,
        )
    )
    fig.add_vline(x=0.5, line_dash="dot")
    n = int(part["n"].iloc[0]) if len(part) else 0
    k = int(part["n_brittle"].iloc[0]) if len(part) else 0
    fig.update_layout(title=f"AUROC for '{label}' · {stratum} · n={n}, brittle={k}", height=360, **_LAYOUT)
    fig.update_xaxes(range=[0, 1], title="AUROC (95% bootstrap interval)")
    fig.update_yaxes(title="score", type="category", dtick=1)
    return fig


@figure_builder
def runs_heatmap_figure(overview: pd.DataFrame, *, value: str = "mean_fds") -> go.Figure:
    """Dataset × model heatmap of one summary (mean FDS or share brittle among confident), coloured per dataset.

    Datasets are unrelated, so the colour is scaled **within each row**: 0 is
    that dataset's lowest value across models, 1 its highest (a row with one
    value, or equal values, is mid-scale). The cells show the raw values.
    """
    grid = overview.pivot_table(index="dataset", columns="model", values=value, aggfunc="mean")
    raw = grid.to_numpy(dtype=float)
    lo, hi = np.nanmin(raw, axis=1, keepdims=True), np.nanmax(raw, axis=1, keepdims=True)
    span = hi - lo
    scaled = np.where(span > 0, (raw - lo) / np.where(span > 0, span, 1.0), 0.5)
    fig = go.Figure(go.Heatmap(z=scaled, x=list(grid.columns), y=list(grid.index), colorscale="Reds", zmin=0, zmax=1,
                               text=np.round(raw, 3), texttemplate="%{text}", customdata=raw,
                               hovertemplate="%{y} · %{x}: " + value + " %{customdata:.3f}" + NO_EXTRA,
                               colorbar=dict(title="within dataset", tickvals=[0, 1], ticktext=["lowest", "highest"])))
    fig.update_layout(title=f"Saved fragility runs: {value} by dataset × model (colour scaled per dataset row)",
                      height=300, **_LAYOUT)
    fig.update_xaxes(title="model")
    fig.update_yaxes(title="dataset")
    return fig


@figure_builder
def delta_heatmap_figure(delta: pd.DataFrame, *, max_cases: int = 40) -> go.Figure:
    """Case × group heatmap of one-step drops ``Δ_g`` (first ``max_cases`` rows).

    ``delta`` is indexed by case key (``CertificateBatch.delta_frame()``) or,
    as stored in a run, has the key in a ``key`` column.
    """
    if "key" in delta.columns:
        delta = delta.set_index("key")
    part = delta.iloc[:max_cases]
    fig = go.Figure(go.Heatmap(z=part.to_numpy(), x=list(part.columns), y=[str(k) for k in part.index],
                               colorscale="RdBu_r", zmid=0, colorbar=dict(title="Δ_g")))
    fig.update_layout(title="One-step margin drop Δ_g (case × group)", height=max(300, 14 * len(part) + 120), **_LAYOUT)
    fig.update_yaxes(autorange="reversed", type="category", title="case")
    fig.update_xaxes(title="evidence group")
    return fig


@figure_builder
def trajectory_figure(cert: Certificate, *, title: str | None = None) -> go.Figure:
    """Collapse trajectory: margin of ``ŷ`` along the removal path, flip point marked."""
    names = ["(none)"] + [f"−{n}" for n in cert.removal_order_names()]
    k = list(range(len(cert.path_margins)))
    fig = go.Figure(go.Scatter(x=k, y=cert.path_margins, mode="lines+markers", name="margin of the predicted class",
                               customdata=names, hovertemplate="step %{x}: %{customdata}" + BR + "margin %{y:.3f}" + NO_EXTRA))
    fig.add_hline(y=0, line_dash="dot", annotation_text="flip boundary")
    K = cert.protocol.k
    if cert.k_star <= K:
        fig.add_trace(go.Scatter(x=[cert.k_star], y=[cert.path_margins[cert.k_star]], mode="markers",
                                 marker=dict(size=14, symbol="x", color="#d62728"),
                                 name=f"flips after {cert.k_star} group{'s' if cert.k_star != 1 else ''} removed (k*)"))
    fig.update_layout(title=title or f"Collapse trajectory · case {cert.key} · k*={cert.k_star}, RCMA={cert.rcma:.2f}, FDS={cert.fds:.2f}",
                      height=340, **_LAYOUT)
    fig.update_xaxes(tickmode="array", tickvals=k, ticktext=names, title="removal path")
    fig.update_yaxes(title="margin: how far from a flip (log-odds)")
    return fig


@figure_builder
def degradation_figure(cert: Certificate) -> go.Figure:
    """Margin versus severity per operator family (top-K groups degraded jointly)."""
    grid = list(cert.protocol.grid)
    fig = go.Figure()
    for fam, curve in cert.curves.items():
        lam = cert.lambda_star.get(fam)
        fig.add_trace(go.Scatter(x=grid, y=curve, mode="lines+markers",
                                 name=f"{fam} (λ*={'none' if lam is None else f'{lam:g}'})"))
    fig.add_hline(y=0, line_dash="dot")
    fig.update_layout(title=f"Degradation curves · d={cert.d:.2f}", height=320, **_LAYOUT)
    fig.update_xaxes(title="severity λ")
    fig.update_yaxes(title="margin of the predicted class" + BR + "(mean over draws)")  # one line ran into the title
    return fig


@figure_builder
def temperature_figure(table: pd.DataFrame) -> go.Figure:
    """ECE, NLL and Brier of uncalibrated, global-T and brittleness-T, overall and on the fragile quartile."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=("ECE (15 bins)", "NLL", "Brier"))
    methods = list(table["method"].unique())
    colour = {m: _METHOD_COLOURS[i % len(_METHOD_COLOURS)] for i, m in enumerate(methods)}  # one colour per method, all panels
    for j, metric in enumerate(("ece", "nll", "brier"), start=1):
        for method in methods:
            part = table[table["method"] == method]
            fig.add_trace(go.Bar(x=part["subset"], y=part[metric], name=method, showlegend=j == 1,
                                 legendgroup=method, marker_color=colour[method]), row=1, col=j)
        fig.update_yaxes(title_text=f"{_METRIC_NAMES[metric]} (lower is better)", row=1, col=j)
        fig.update_xaxes(title_text="cases", row=1, col=j)
    fig.update_layout(title="Global vs brittleness-aware temperature (held-out half)", barmode="group", height=340, **_LAYOUT)
    return fig


@figure_builder
def neural_comparison_figure(table: pd.DataFrame) -> go.Figure:
    """FR-ResMLP vs the same network at α = γ = 0: held-out AUROC, mean RCMA and mean FDS side by side."""
    metrics = [("heldout_auroc", "held-out AUROC (higher better)"), ("mean_rcma", "mean RCMA (lower = less fragile)"),
               ("mean_fds", "mean FDS (lower = less fragile)")]
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t for _, t in metrics])
    colors = {name: c for name, c in zip(table["model"], ("#d62728", "#7f7f7f", "#1f77b4", "#2ca02c"), strict=False)}
    for j, (col, _) in enumerate(metrics, start=1):
        fig.add_trace(go.Bar(x=table["model"], y=table[col], marker_color=[colors[m] for m in table["model"]],
                             text=np.round(table[col].to_numpy(dtype=float), 3), textposition="auto",
                             showlegend=False, hovertemplate="%{x}: %{y:.4f}" + NO_EXTRA), row=1, col=j)
    fig.update_layout(title="FR-ResMLP vs plain ResMLP (α = γ = 0)", height=320, **_LAYOUT)
    return fig


@figure_builder
def fragility_report_figures(record: RunRecord) -> list[tuple[str, go.Figure]]:
    """Figures of a saved ``fragility`` run, from its stored tables only (report and Runs page).

    Distributions (``certificates``), the AUROC ranking for the default brittle
    label on all cases and on the first confident stratum (``auroc``), the
    case × group ``Δ_g`` heatmap (``delta``) and the temperature comparison
    (``temperature``); missing or empty tables are skipped.
    """
    t = record.tables
    out: list[tuple[str, go.Figure]] = []
    certificates = t.get("certificates")
    if certificates is not None and len(certificates):
        out.append(("Certificate distributions", distributions_figure(certificates)))
    auroc = t.get("auroc")
    if auroc is not None and len(auroc):
        label = "donor_any" if (auroc["label"] == "donor_any").any() else str(auroc["label"].iloc[0])
        strata = list(dict.fromkeys(auroc.loc[auroc["label"] == label, "stratum"]))
        for stratum in strata[:2]:
            out.append((f"Brittleness AUROC · {label} · {stratum}", auroc_figure(auroc, label=label, stratum=stratum)))
    delta = t.get("delta")
    if delta is not None and len(delta):
        out.append(("One-step drops Δ_g", delta_heatmap_figure(delta)))
    temp = t.get("temperature")
    if temp is not None and len(temp):
        out.append(("Brittleness-aware temperature", temperature_figure(temp)))
    return out
