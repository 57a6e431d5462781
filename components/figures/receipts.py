"""Plotly figure builders for the Receipts page.

Each function takes computed results from :mod:`audit_core.receipts` and
returns a ``go.Figure``; none reads session state, so all are testable
without a browser.
"""
from __future__ import annotations

import itertools

import pandas as pd
import plotly.graph_objects as go

from audit_core.receipts import CubeResult
from audit_core.runs.registry import RunRecord

__all__ = ["cube_figure", "lattice_figure", "cube_view", "baseline_figure", "reason_debt_figure",
           "benchmark_figure", "receipts_report_figures"]

_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=50, b=10))


def _colours(cube: CubeResult) -> dict[str, str]:
    verdicts = [cube.v_old] + sorted(set(cube.cells.values()) - {cube.v_old})
    return {v: _PALETTE[i % len(_PALETTE)] for i, v in enumerate(verdicts)}


def _label(cell: frozenset, sources) -> str:
    return "{" + ",".join(s for s in sources if s in cell) + "}"


def cube_figure(cube: CubeResult, *, title: str | None = None) -> go.Figure:
    """The executed cube for ``k ≤ 3`` as a 3D cube (one axis per source).

    Cells are coloured by verdict; receipt cells are drawn as large
    diamonds; the old endpoint is at the origin, the new one at (1, 1, 1).
    """
    src = list(cube.sources)[:3]
    axes = src + [""] * (3 - len(src))
    colours = _colours(cube)
    receipt = set(cube.receipt)
    fig = go.Figure()
    cells = list(cube.cells)

    def xyz(c):
        return [1.0 if (a and a in c) else 0.0 for a in axes]

    # edges: cells differing in one source, both executed
    ex, ey, ez = [], [], []
    for a, b in itertools.combinations(cells, 2):
        if len(a ^ b) == 1:
            pa, pb = xyz(a), xyz(b)
            ex += [pa[0], pb[0], None]
            ey += [pa[1], pb[1], None]
            ez += [pa[2], pb[2], None]
    fig.add_trace(go.Scatter3d(x=ex, y=ey, z=ez, mode="lines", line=dict(color="#bbbbbb", width=4),
                               hoverinfo="skip", showlegend=False))
    for v, col in colours.items():
        group = [c for c in cells if cube.cells[c] == v]
        if not group:
            continue
        pts = [xyz(c) for c in group]
        fig.add_trace(go.Scatter3d(
            x=[p[0] for p in pts], y=[p[1] for p in pts], z=[p[2] for p in pts],
            mode="markers+text", name=f"verdict: {v}",
            text=[_label(c, src) for c in group], textposition="top center",
            marker=dict(size=9, color=col, symbol="circle"),
            hovertemplate="%{text}<br>verdict " + v + "<extra></extra>",
        ))
    rec = [c for c in cells if c in receipt]
    if rec:
        pts = [xyz(c) for c in rec]
        fig.add_trace(go.Scatter3d(
            x=[p[0] for p in pts], y=[p[1] for p in pts], z=[p[2] for p in pts], mode="markers",
            name="receipt set", text=[_label(c, src) for c in rec],
            marker=dict(size=16, color=[colours[cube.cells[c]] for c in rec], symbol="diamond",
                        line=dict(color="black", width=4)),
            hovertemplate="receipt %{text}<extra></extra>",
        ))
    scene = dict(xaxis=dict(title=axes[0] or "-", tickvals=[0, 1], ticktext=["old", "new"]),
                 yaxis=dict(title=axes[1] or "-", tickvals=[0, 1], ticktext=["old", "new"]),
                 zaxis=dict(title=axes[2] or "-", tickvals=[0, 1], ticktext=["old", "new"]))
    fig.update_layout(title=title or f"Executed cube: {cube.v_old} → {cube.v_new}; receipt {cube.receipt_text}",
                      scene=scene, height=520, legend=dict(orientation="h"), **_LAYOUT)
    return fig


def lattice_figure(cube: CubeResult, *, title: str | None = None, max_edges: int = 6000) -> go.Figure:
    """Hasse-diagram view of the cube for any ``k``: one row per number of replaced sources.

    Edges join cells that differ by one source (omitted above ``max_edges``);
    receipt cells are large diamonds with a black outline.
    """
    src = list(cube.sources)
    colours = _colours(cube)
    receipt = set(cube.receipt)
    by_size: dict[int, list[frozenset]] = {}
    for c in cube.cells:
        by_size.setdefault(len(c), []).append(c)
    pos = {}
    for size, cs in by_size.items():
        cs.sort(key=lambda c: sorted(src.index(x) for x in c))
        n = len(cs)
        for i, c in enumerate(cs):
            pos[c] = ((i + 0.5) / n - 0.5, size)
    fig = go.Figure()
    ex, ey = [], []
    n_edges = 0
    for c in cube.cells:
        for s in src:
            if s not in c:
                d = c | {s}
                if d in pos:
                    n_edges += 1
                    ex += [pos[c][0], pos[d][0], None]
                    ey += [pos[c][1], pos[d][1], None]
    if n_edges <= max_edges:
        fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#dddddd", width=1),
                                 hoverinfo="skip", showlegend=False))
    for v, col in colours.items():
        group = [c for c in cube.cells if cube.cells[c] == v]
        if not group:
            continue
        fig.add_trace(go.Scatter(
            x=[pos[c][0] for c in group], y=[pos[c][1] for c in group], mode="markers", name=f"verdict: {v}",
            text=[_label(c, src) for c in group],
            marker=dict(size=[15 if c in receipt else 7 for c in group], color=col,
                        symbol=["diamond" if c in receipt else "circle" for c in group],
                        line=dict(color="black", width=[2 if c in receipt else 0 for c in group])),
            hovertemplate="%{text}<br>verdict " + v + "<extra></extra>",
        ))
    fig.update_layout(title=title or f"Cube lattice (k = {cube.k}): {cube.v_old} → {cube.v_new}; receipt {cube.receipt_text}",
                      height=520, legend=dict(orientation="h"), **_LAYOUT)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(title="sources replaced", dtick=1)
    return fig


def cube_view(cube: CubeResult, *, title: str | None = None) -> go.Figure:
    """The 3D cube for ``k ≤ 3``, the lattice view otherwise."""
    return cube_figure(cube, title=title) if cube.k <= 3 else lattice_figure(cube, title=title)


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


def benchmark_figure(by_mutation: pd.DataFrame) -> go.Figure:
    """Share of verdict changes by stratum and mutation (a saved benchmark's ``by_mutation`` table)."""
    fig = go.Figure()
    for stratum, part in by_mutation.groupby("stratum", sort=True):
        fig.add_trace(go.Bar(x=part["mutation"], y=part["share_changed"], name=str(stratum),
                             customdata=part["cases"], hovertemplate="%{x}: %{y:.2f} of %{customdata} cases<extra></extra>"))
    fig.update_layout(title="Benchmark: share of verdict changes by mutation", barmode="group", height=340, **_LAYOUT)
    fig.update_yaxes(range=[0, 1], title="share changed")
    return fig


def receipts_report_figures(record: RunRecord) -> list[tuple[str, go.Figure]]:
    """Figures of a saved ``receipts`` run, from its stored tables only (report and Runs page).

    A cube run (table ``cells``) gets the executed cube (3D for ``k ≤ 3``,
    lattice otherwise), rebuilt with :meth:`CubeResult.from_frame`; a
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
