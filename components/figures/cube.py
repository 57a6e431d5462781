"""Figures of an executed cube: the cube drawn flat for ``k ≤ 3``, a receipt matrix for larger ``k``.

* :func:`cube_figure` draws the ``2^k`` cells (``k ≤ 3``) as a Hasse diagram,
  one row per number of replaced sources, so no cell hides another (the
  former 3D view put ``{}`` straight behind ``{G,N,A}``). Every cell carries
  its label beside the marker, receipt cells are outlined diamonds in the same
  trace (nothing is drawn over a label), and the axes are padded so no label
  is clipped.
* :func:`receipt_matrix_figure` is the readable view for ``k > 3`` (a 256-cell
  lattice is a hairball): a sources × cells matrix of the minimal receipts and
  the cells that decide them. For each receipt set ``R`` it shows the cell
  ``R`` (gives the new verdict) and each ``R − {s}`` (does not: that is why
  ``R`` is minimal), plus the two endpoints. A filled square means "this
  source is replaced in this cell"; its colour is the cell's verdict.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from audit_core.receipts import CubeResult
from .labels import BR, NO_EXTRA, figure_builder

__all__ = ["cube_figure", "receipt_matrix_figure", "cube_view", "verdict_colours", "cell_label"]

_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=60, b=10))
#: Receipt sets drawn by :func:`receipt_matrix_figure` (the title says how many more there are).
MAX_RECEIPT_SETS = 8


def verdict_colours(cube: CubeResult) -> dict[str, str]:
    """Verdict -> colour, the old verdict first (the same in every cube figure)."""
    verdicts = [cube.v_old] + sorted(set(cube.cells.values()) - {cube.v_old})
    return {v: _PALETTE[i % len(_PALETTE)] for i, v in enumerate(verdicts)}


def cell_label(cell: frozenset, sources) -> str:
    """``{G,N}``: the replaced sources in source order."""
    return "{" + ",".join(s for s in sources if s in cell) + "}"


def _positions(cube: CubeResult) -> dict[frozenset, tuple[float, float]]:
    """Hasse layout: row = number of replaced sources, cells of a row spread evenly and centred."""
    src = list(cube.sources)
    pos = {}
    for size in range(cube.k + 1):
        row = [frozenset(c) for c in itertools.combinations(src, size)]
        for i, c in enumerate(row):
            pos[c] = (i - (len(row) - 1) / 2, float(size))
    return pos


@figure_builder
def cube_figure(cube: CubeResult, *, title: str | None = None) -> go.Figure:
    """The executed cube for ``k ≤ 3``, flat: one row per number of replaced sources.

    Edges join cells that differ by one source; cells are coloured by
    verdict, receipt cells are larger outlined diamonds, and each cell's
    label sits to its right.
    """
    src = list(cube.sources)
    colours = verdict_colours(cube)
    receipt = set(cube.receipt)
    pos = _positions(cube)
    ex, ey = [], []
    for a, b in itertools.combinations(list(cube.cells), 2):
        if len(a ^ b) == 1 and a in pos and b in pos:
            ex += [pos[a][0], pos[b][0], None]
            ey += [pos[a][1], pos[b][1], None]
    fig = go.Figure(go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#c8c8c8", width=2),
                               hoverinfo="skip", showlegend=False))
    for v, col in colours.items():
        group = [c for c in cube.cells if cube.cells[c] == v and c in pos]
        if not group:
            continue
        fig.add_trace(go.Scatter(
            x=[pos[c][0] for c in group], y=[pos[c][1] for c in group], mode="markers+text", name=f"verdict: {v}",
            text=[cell_label(c, src) for c in group], textposition="middle right", textfont=dict(size=13),
            marker=dict(size=[22 if c in receipt else 13 for c in group], color=col,
                        symbol=["diamond" if c in receipt else "circle" for c in group],
                        line=dict(color="black", width=[2 if c in receipt else 0 for c in group])),
            hovertemplate="%{text}" + BR + "verdict " + v + NO_EXTRA,
        ))
    if receipt:  # legend entry for the outlined diamonds
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="receipt cell (minimal set)",
                                 marker=dict(size=14, symbol="diamond", color="white", line=dict(color="black", width=2))))
    width = max(len(r) for r in ([c for c in pos if len(c) == s] for s in range(cube.k + 1)))
    fig.update_layout(title=title or f"Executed cube: {cube.v_old} → {cube.v_new}; receipt {cube.receipt_text}",
                      height=460, legend=dict(orientation="h", y=-0.08), **_LAYOUT)
    fig.update_xaxes(visible=False, range=[-(width - 1) / 2 - 0.6, (width - 1) / 2 + 1.0])
    fig.update_yaxes(title="sources replaced (0 = old state)", range=[-0.5, cube.k + 0.5], dtick=1, zeroline=False)
    return fig


def _matrix_columns(cube: CubeResult) -> tuple[list[frozenset], list[str], int]:
    """Cells to show (endpoints, then each receipt set and its one-smaller subsets), their labels, sets left out."""
    src = list(cube.sources)
    full = frozenset(src)
    cols: list[frozenset] = [frozenset()]
    names = ["old state {}"]
    shown = list(cube.receipt)[:MAX_RECEIPT_SETS]
    for j, r in enumerate(shown, start=1):
        cols.append(r)
        names.append(f"receipt {j}: {cell_label(r, src)}")
        for s in sorted(r, key=src.index):
            cols.append(r - {s})
            names.append(f"{cell_label(r - {s}, src)} (receipt {j} − {s})")
    cols.append(full)
    names.append("new state (all)")
    return cols, names, len(cube.receipt) - len(shown)


@figure_builder
def receipt_matrix_figure(cube: CubeResult, *, title: str | None = None, source_names: Mapping[str, str] | None = None,
                          verdict_words: Mapping[str, str] | None = None) -> go.Figure:
    """Sources × cells matrix of the minimal receipts and the cells that decide them (readable for any ``k``).

    Rows are sources, columns are cells; a coloured square means the source
    is replaced in that cell, coloured by the cell's verdict (grey: the cell
    was not executed). The verdict of each column is written above it.
    ``source_names`` (source → plain words) labels the rows in words first,
    the source's symbol after them; ``verdict_words`` (verdict → words) names
    the verdicts in the legend and above the columns.
    """
    src = list(cube.sources)
    said = dict(verdict_words or {})
    rows = [f"{source_names[s]} · {s}" if source_names and s in source_names else s for s in src]
    colours = verdict_colours(cube)
    verdicts = list(colours)
    cols, names, left_out = _matrix_columns(cube)
    z = np.full((len(src), len(cols)), np.nan)
    for j, c in enumerate(cols):
        v = cube.cells.get(c)
        code = verdicts.index(v) if v in verdicts else len(verdicts)
        for i, s in enumerate(src):
            if s in c:
                z[i, j] = code
    n = len(verdicts) + 1
    scale = []
    for k, colour in enumerate([colours[v] for v in verdicts] + ["#bbbbbb"]):
        scale += [[k / n, colour], [(k + 1) / n, colour]]
    fig = go.Figure(go.Heatmap(z=z, x=names, y=rows, zmin=0, zmax=n, colorscale=scale, showscale=False, xgap=2, ygap=2,
                               hovertemplate="%{y} replaced in %{x}" + NO_EXTRA))
    for v in verdicts:  # legend: one entry per verdict
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"verdict: {said.get(v, v)}",
                                 marker=dict(size=12, symbol="square", color=colours[v])))
    for j, c in enumerate(cols):
        fig.add_annotation(x=names[j], y=1.0, yref="paper", yanchor="bottom", showarrow=False,
                           text=str(said.get(v, v) if (v := cube.cells.get(c)) is not None else "not run"), font=dict(size=11))
    more = f" ({left_out} more receipt set(s) in the table)" if left_out else ""
    fig.update_layout(
        title=title or f"Receipt matrix (k = {cube.k}, {len(cube.cells)} cells): {cube.v_old} → {cube.v_new}; "
                       f"{len(cube.receipt)} minimal set(s){more}",
        height=max(340, 26 * len(src) + 260), legend=dict(orientation="h", yanchor="bottom", y=1.1, xanchor="right", x=1),
        **{**_LAYOUT, "margin": dict(l=10, r=10, t=90, b=10)})  # the legend above: rotated cell labels below vary in height
    fig.update_xaxes(title="cell (which sources are replaced); verdict above each column", tickangle=-35, type="category")
    fig.update_yaxes(title="source", autorange="reversed", type="category")
    return fig


@figure_builder
def cube_view(cube: CubeResult, *, title: str | None = None, source_names: Mapping[str, str] | None = None,
              verdict_words: Mapping[str, str] | None = None) -> go.Figure:
    """The flat cube for ``k ≤ 3``, the receipt matrix otherwise (``source_names`` and ``verdict_words``: see
    :func:`receipt_matrix_figure`; the flat cube labels its cells by symbol)."""
    if cube.k <= 3:
        return cube_figure(cube, title=title)
    return receipt_matrix_figure(cube, title=title, source_names=source_names, verdict_words=verdict_words)
