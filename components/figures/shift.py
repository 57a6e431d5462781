"""Plotly figure of a Transport run's feature shift ("Why it moved"): ranked PSI bars, coloured by their link."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .labels import BR, figure_builder

__all__ = ["feature_shift_figure", "pooled_domain_auroc", "LINK_COLOURS"]

#: bar colour by what the feature is linked to in the run's results
LINK_COLOURS = {"targeted deletion flagged": "#d62728", "heterogeneity flagged": "#ff7f0e", "not flagged": "#7b8794"}


def pooled_domain_auroc(tables) -> float | None:
    """The pooled AUROC of a ``domain_classifier`` table in ``tables`` (a mapping), or None."""
    d = tables.get("domain_classifier")
    if d is None or d.empty or "pooled" not in set(d["part"]):
        return None
    return float(d.loc[d["part"] == "pooled", "auroc"].iloc[0])


def _link_class(row) -> str:
    if bool(row.get("targeted_flagged", False)):
        return "targeted deletion flagged"
    if bool(row.get("heterogeneity_flagged", False)):
        return "heterogeneity flagged"
    return "not flagged"


@figure_builder
def feature_shift_figure(shift: pd.DataFrame, *, top: int = 15, domain_auroc: float | None = None) -> go.Figure:
    """Horizontal PSI bars of the ``top`` most shifted features, most shifted on top.

    Parameters
    ----------
    shift : pandas.DataFrame, shape (F, ·)
        The run's ``feature_shift`` table (:func:`audit_core.transport.shift_link.link_shift`).
    top : int, default 15
    domain_auroc : float, optional
        The pooled domain-classifier AUROC, written in the title.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace per link class (:data:`LINK_COLOURS`, empty classes
        left out); the hover names the test, its p-value, the Wasserstein
        distance in source SDs, the per-feature domain AUROC and the link.
    """
    t = shift.sort_values("rank").head(top).copy()
    t["cls"] = [_link_class(r) for r in t.to_dict("records")]
    fig = go.Figure()
    for cls, colour in LINK_COLOURS.items():
        part = t[t["cls"] == cls]
        if part.empty:
            continue
        hover = [f"{r['feature']} ({r['kind']}){BR}PSI {r['psi']:.3f} · {r['test']} p = {r['p_value']:.2g}"
                 + (f"{BR}Wasserstein {r['wasserstein_sd']:.3f} source SDs" if np.isfinite(r["wasserstein_sd"]) else "")
                 + f"{BR}domain AUROC {r['domain_auroc']:.3f}{BR}{r.get('link', '')}" for r in part.to_dict("records")]
        fig.add_trace(go.Bar(x=part["psi"], y=part["feature"].astype(str), orientation="h", name=cls,
                             marker_color=colour, hovertext=hover, hoverinfo="text"))
    title = "Why it moved: PSI of the most shifted features"
    if domain_auroc is not None and np.isfinite(domain_auroc):
        title += f" (domain classifier AUROC {domain_auroc:.3f})"
    fig.update_layout(title=title, template="plotly_white", margin=dict(l=10, r=10, t=50, b=10),
                      height=max(300, 28 * len(t) + 120), barmode="overlay", legend=dict(orientation="h"))
    fig.update_yaxes(categoryorder="array", categoryarray=t["feature"].astype(str).tolist()[::-1])
    fig.add_vline(x=0.1, line_dash="dot", line_color="#9aa5b1")
    fig.add_vline(x=0.25, line_dash="dash", line_color="#9aa5b1")
    fig.update_xaxes(title="PSI (dotted 0.1: moderate, dashed 0.25: major)")
    return fig
