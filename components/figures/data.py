"""Plotly figure builders for the Data & groups step.

Each function takes computed tables and returns a ``go.Figure``; none reads
session state, so all are testable without a browser.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .labels import BR, NO_EXTRA, figure_builder

__all__ = ["group_sizes_figure", "class_balance_figure", "missingness_figure"]

_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=40, b=10), height=320)


@figure_builder
def group_sizes_figure(sizes: pd.DataFrame) -> go.Figure:
    """Bar chart of transformed features per evidence group.

    Parameters
    ----------
    sizes : pandas.DataFrame
        From :meth:`audit_core.data.groups.Grouping.group_sizes`: ``group``,
        ``raw_columns``, ``n_features``.
    """
    fig = go.Figure(
        go.Bar(
            x=sizes["n_features"],
            y=sizes["group"],
            orientation="h",
            customdata=sizes["raw_columns"],
            hovertemplate="%{y}: %{x} features" + BR + "%{customdata}" + NO_EXTRA,
        )
    )
    fig.update_layout(title="Evidence groups (transformed features per group)", **_LAYOUT)
    fig.update_yaxes(autorange="reversed", title="evidence group")
    fig.update_xaxes(title="features")
    return fig


@figure_builder
def class_balance_figure(counts: pd.Series, *, title: str) -> go.Figure:
    """Bar chart of class counts for one target definition."""
    fig = go.Figure(go.Bar(x=[str(i) for i in counts.index], y=counts.to_numpy()))
    fig.update_layout(title=title, **_LAYOUT)
    fig.update_yaxes(title="rows")
    fig.update_xaxes(title="class")
    return fig


@figure_builder
def missingness_figure(columns: pd.DataFrame) -> go.Figure:
    """Share of missing values per column (only columns with any); says "no missing values" when none has any,
    instead of an empty chart on a meaningless axis."""
    part = columns[columns["missing_share"] > 0].sort_values("missing_share", ascending=False)
    if part.empty:
        fig = go.Figure()
        fig.update_layout(title="Missing values by column: none", **{**_LAYOUT, "height": 160})
        fig.add_annotation(text=f"No missing values in any of the {len(columns)} columns.", x=0.5, y=0.5,
                           xref="paper", yref="paper", showarrow=False, font=dict(size=14, color="#52606d"))
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return fig
    fig = go.Figure(go.Bar(x=part["column"], y=part["missing_share"]))
    fig.update_layout(title="Missing values by column", **_LAYOUT)
    fig.update_yaxes(title="share missing", tickformat=".0%", range=[0, 1])
    fig.update_xaxes(title="column")
    return fig
