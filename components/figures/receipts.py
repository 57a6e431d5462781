"""Plotly figure builders for the Receipts page.

Each function takes computed results from :mod:`audit_core.receipts` and
returns a ``go.Figure``; none reads session state, so all are testable
without a browser.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from audit_core.receipts import CubeResult
from audit_core.runs.registry import RunRecord

from .cube import cube_figure, cube_view, receipt_matrix_figure
from .labels import NO_EXTRA, figure_builder

__all__ = ["cube_figure", "receipt_matrix_figure", "cube_view", "baseline_figure", "reason_debt_figure",
           "benchmark_figure", "receipts_report_figures"]

_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=50, b=10))


@figure_builder
def baseline_figure(table: pd.DataFrame) -> go.Figure:
    """Receipt accuracy on the changing cases of each evaluation set, per model, with its bootstrap interval."""
    fig = go.Figure()
    for model, part in table.groupby("model", sort=False):
        fig.add_trace(go.Bar(
            x=part["evaluation"], y=part["receipt_acc_changed"], name=str(model),
            error_y=dict(type="data", symmetric=False,
                         array=(part["receipt_acc_changed_hi"] - part["receipt_acc_changed"]).tolist(),
                         arrayminus=(part["receipt_acc_changed"] - part["receipt_acc_changed_lo"]).tolist())))
    fig.update_layout(title="Exact receipt accuracy on verdict-changing cases (learned vs trivial baselines)",
                      barmode="group", height=380, **_LAYOUT)
    fig.update_yaxes(range=[0, 1], title="accuracy on changes")
    return fig


@figure_builder
def reason_debt_figure(grid: pd.DataFrame) -> go.Figure:
    """Reason debt, accepted coverage and gold-change recall against the confidence threshold."""
    fig = go.Figure()
    for col, name in (("reason_debt", "reason debt"), ("accepted_coverage", "accepted coverage"),
                      ("gold_change_recall", "gold-change recall")):
        fig.add_trace(go.Scatter(x=grid["threshold"], y=grid[col], mode="lines+markers", name=name))
    fig.update_layout(title="Reason debt across confidence thresholds", height=360, **_LAYOUT)
    fig.update_xaxes(title="confidence threshold")
    fig.update_yaxes(range=[0, 1])
    return fig


@figure_builder
def benchmark_figure(by_mutation: pd.DataFrame) -> go.Figure:
    """Share of verdict changes by stratum and mutation (a saved benchmark's ``by_mutation`` table)."""
    fig = go.Figure()
    for stratum, part in by_mutation.groupby("stratum", sort=True):
        fig.add_trace(go.Bar(x=part["mutation"], y=part["share_changed"], name=str(stratum),
                             customdata=part["cases"], hovertemplate="%{x}: %{y:.2f} of %{customdata} cases" + NO_EXTRA))
    fig.update_layout(title="Benchmark: share of verdict changes by mutation", barmode="group", height=340, **_LAYOUT)
    fig.update_yaxes(range=[0, 1], title="share changed")
    return fig


@figure_builder
def receipts_report_figures(record: RunRecord) -> list[tuple[str, go.Figure]]:
    """Figures of a saved ``receipts`` run, from its stored tables only (report and Runs page).

    A cube run (table ``cells``) gets the executed cube (flat for ``k ≤ 3``,
    the receipt matrix otherwise), rebuilt with :meth:`CubeResult.from_frame`; a
    benchmark run (table ``by_mutation``) gets the change-share bars.
    """
    out: list[tuple[str, go.Figure]] = []
    cells = record.tables.get("cells")
    if cells is not None and len(cells):
        out.append(("Executed cube", cube_view(CubeResult.from_frame(cells))))
    by = record.tables.get("by_mutation")
    if by is not None and len(by):
        out.append(("Benchmark", benchmark_figure(by)))
    return out
