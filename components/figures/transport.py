"""Plotly figure builders for the Transport page.

Every function takes tables computed by :mod:`audit_core.transport` (the
long-form result table or one of the result's extras) and returns a
``go.Figure``; none reads session state.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from audit_core.findings.cases import class_label
from audit_core.runs.registry import RunRecord
from audit_core.transport.config import class_names_of

from .labels import BR, figure_builder
from .shift import feature_shift_figure, pooled_domain_auroc

__all__ = [
    "reliability_figure",
    "risk_selection_figure",
    "frontier_figure",
    "stress_figure",
    "target_definition_figure",
    "heterogeneity_figure",
    "transport_report_figures",
    "not_run",
    "DOMAIN_COLOURS",
]

_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=50, b=10), height=380)
DOMAIN_COLOURS = {"id": "#1f77b4", "ood": "#d62728"}
_NAMES = {"id": "ID test (source)", "ood": "OOD (target)"}


def not_run(fig: go.Figure, message: str) -> go.Figure:
    """``fig`` emptied of traces and axes, with ``message`` (why there is nothing to draw) in its middle."""
    fig.data = ()
    fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                       font=dict(size=14, color="#52606d"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def _pick(t: pd.DataFrame, **eq) -> pd.DataFrame:
    m = np.ones(len(t), dtype=bool)
    for k, v in eq.items():
        m &= (t[k] == v).to_numpy()
    return t.loc[m]


@figure_builder
def reliability_figure(bins: pd.DataFrame, *, model: str, mapping: str) -> go.Figure:
    """Reliability diagram, ID and OOD overlaid, with bin counts underneath.

    Parameters
    ----------
    bins : DataFrame
        ``result.extras["reliability"]``: ``domain, model, mapping, lower,
        upper, count, mean_p, frac_pos`` and, when present, the band
        ``frac_pos_low, frac_pos_high`` and ``smooth_ece`` (saved runs from
        before the band are drawn without it); for the Venn-Abers mapping
        ``va_p0, va_p1``, each bin's mean ``[p0, p1]``, drawn as a dashed band
        (``nan`` for other mappings).
    """
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.06)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dot", color="grey"),
                             name="perfect calibration"), row=1, col=1)
    for dom in ("id", "ood"):
        b = _pick(bins, domain=dom, model=model, mapping=mapping)
        nz = b[b["count"] > 0]
        name = _NAMES[dom]
        if "smooth_ece" in b and len(b):
            name += f" · smooth ECE {float(b['smooth_ece'].iloc[0]):.3f}"
        if "frac_pos_low" in b and len(nz):  # 95 % bootstrap band of the observed frequency
            fig.add_trace(go.Scatter(x=np.r_[nz["mean_p"], nz["mean_p"][::-1]],
                                     y=np.r_[nz["frac_pos_high"], nz["frac_pos_low"][::-1]], fill="toself",
                                     mode="lines", line=dict(width=0), fillcolor=DOMAIN_COLOURS[dom], opacity=0.18,
                                     name=f"{_NAMES[dom]} 95 % bootstrap band", hoverinfo="skip"), row=1, col=1)
        if "va_p0" in b and len(nz) and nz["va_p0"].notna().any():  # the Venn-Abers interval, bin means
            fig.add_trace(go.Scatter(x=np.r_[nz["mean_p"], nz["mean_p"][::-1]],
                                     y=np.r_[nz["va_p1"], nz["va_p0"][::-1]], fill="toself", mode="lines",
                                     line=dict(width=1, dash="dash", color=DOMAIN_COLOURS[dom]), fillcolor="rgba(0,0,0,0)",
                                     name=f"{_NAMES[dom]} Venn-Abers [p0, p1]", hoverinfo="skip"), row=1, col=1)
        fig.add_trace(go.Scatter(x=nz["mean_p"], y=nz["frac_pos"], mode="lines+markers", name=name,
                                 line=dict(color=DOMAIN_COLOURS[dom]), customdata=nz["count"],
                                 hovertemplate="mean p̂ %{x:.3f}" + BR + "observed %{y:.3f}" + BR + "n = %{customdata}"),
                      row=1, col=1)
        fig.add_trace(go.Bar(x=(b["lower"] + b["upper"]) / 2, y=b["count"], width=(b["upper"] - b["lower"]) * 0.45,
                             offset=0 if dom == "ood" else -(b["upper"] - b["lower"]).iloc[0] * 0.45,
                             marker_color=DOMAIN_COLOURS[dom], name=f"{_NAMES[dom]} count", showlegend=False),
                      row=2, col=1)
    fig.update_layout(title=f"Reliability diagram · {model} · {mapping}", **{**_LAYOUT, "height": 460})
    fig.update_xaxes(title_text="predicted probability (bin mean)", range=[0, 1], row=2, col=1)
    fig.update_yaxes(title_text="observed frequency", range=[0, 1], row=1, col=1)
    fig.update_yaxes(title_text="records", row=2, col=1)
    return fig


@figure_builder
def risk_selection_figure(curves: pd.DataFrame, table: pd.DataFrame, *, model: str, mapping: str,
                          selection_rate: float) -> go.Figure:
    """Risk–selection curves (refit 0) with the transported operating point marked.

    The operating point uses the source threshold for ``selection_rate``;
    on the OOD curve it lands at the *achieved* rate, not the desired one.
    """
    fig = go.Figure()
    for dom in ("id", "ood"):
        c = _pick(curves, domain=dom, model=model, mapping=mapping)
        fig.add_trace(go.Scatter(x=c["coverage"], y=c["risk"], mode="lines", name=_NAMES[dom],
                                 line=dict(color=DOMAIN_COLOURS[dom])))
        sel = _pick(table, analysis="selective", domain=dom, model=model, mapping=mapping, refit=0,
                    condition="clean", weighting="unweighted")
        sel = sel[np.isclose(sel["selection_rate"], selection_rate)]
        rate = sel.loc[sel["metric"] == "rate", "value"]
        risk = sel.loc[sel["metric"] == "risk", "value"]
        if len(rate) and len(risk):
            fig.add_trace(go.Scatter(x=[rate.iloc[0]], y=[risk.iloc[0]], mode="markers",
                                     marker=dict(size=13, symbol="diamond", color=DOMAIN_COLOURS[dom],
                                                 line=dict(color="black", width=1)),
                                     name=f"transported τ (s = {selection_rate:g}) · {dom}"))
    fig.add_vline(x=selection_rate, line_dash="dot", line_color="grey")
    fig.update_layout(title=f"Risk–selection curves · {model} · {mapping}", xaxis_title="selection rate (coverage)",
                      yaxis_title="selective risk", **_LAYOUT)
    return fig


@figure_builder
def frontier_figure(table: pd.DataFrame, *, model: str, mapping: str, domain: str = "ood",
                    class_names: tuple[str, str] | None = None) -> go.Figure:
    """Coverage–set-size frontier across α, marginal vs label-conditional, with class coverage.

    Points are means over refits; each point is labelled by its α. ``class_names`` (classes 0 and 1, as
    declared: :func:`audit_core.transport.config.class_names_of`) name the class-coverage traces
    ("coverage of 'yes'"); without them they say "class 1".
    """
    fig = go.Figure()
    styles = {"marginal": ("circle", "#2ca02c", "top left"), "label_conditional": ("square", "#9467bd", "bottom right")}
    for method, (symbol, colour, where) in styles.items():  # α labels on opposite sides: the two curves run close
        t = _pick(table, analysis=f"conformal_{method}", domain=domain, model=model, mapping=mapping,
                  condition="clean", weighting="unweighted")
        g = t.groupby(["alpha", "metric"])["value"].mean().unstack("metric").reset_index().sort_values("alpha")
        if g.empty:
            continue
        label = method.replace("_", "-")
        fig.add_trace(go.Scatter(x=g["mean_set_size"], y=g["coverage"], mode="lines+markers+text", name=label,
                                 marker=dict(symbol=symbol, size=10, color=colour), line=dict(color=colour),
                                 text=[f"α={a:g}" for a in g["alpha"]], textposition=where))
        for cls, dash in (("coverage_class0", "dot"), ("coverage_class1", "dash")):
            fig.add_trace(go.Scatter(x=g["mean_set_size"], y=g[cls], mode="lines+markers",
                                     name=f"{label} · coverage of {class_label(class_names, int(cls[-1]))}",
                                     line=dict(color=colour, dash=dash),
                                     marker=dict(symbol=symbol, size=6, color=colour), opacity=0.7))
        for a in g["alpha"]:
            fig.add_hline(y=1 - a, line_dash="dot", line_color="lightgrey")
    fig.update_layout(title=f"Coverage–set-size frontier · {_NAMES.get(domain, domain)} · {model} · {mapping}",
                      xaxis_title="mean set size", yaxis_title="coverage", **{**_LAYOUT, "height": 420})
    return fig


def _not_run(fig: go.Figure, what: str, how: str) -> go.Figure:
    """A stress panel that was not run says so (title and message), instead of an empty plot."""
    fig.update_layout(**{**_LAYOUT, "title": f"{what}: not run", "height": 260})
    return not_run(fig, f"{what}: not run — {how}.")


@figure_builder
def stress_figure(table: pd.DataFrame, *, model: str, mapping: str, metric: str = "auroc") -> go.Figure:
    """Random-set deletions (the whole distribution) against targeted deletion and other conditions."""
    fig = go.Figure()
    base = _pick(table, analysis="metrics", model=model, mapping=mapping, metric=metric, weighting="unweighted")
    if not (base["condition"] != "clean").any():
        return _not_run(fig, "Evidence degradation", "turn on the degradation stress and run again")
    marks = {"targeted": ("diamond", "black"), "mcar": ("circle-open", "#ff7f0e"),
             "corruption": ("x", "#8c564b"), "oracle": ("star", "#e377c2"), "clean": ("line-ew-open", "#2ca02c")}
    for dom in ("id", "ood"):
        d = base[base["domain"] == dom]
        rnd = d[d["condition"].str.startswith("random_set:")]
        fig.add_trace(go.Box(y=rnd["value"], x=[_NAMES[dom]] * len(rnd), name=f"random {dom}", boxpoints="all",
                             jitter=0.4, marker=dict(color=DOMAIN_COLOURS[dom], size=4), showlegend=dom == "id"))
        for cond, (sym, col) in marks.items():
            v = d.loc[d["condition"] == cond, "value"]
            if len(v):
                fig.add_trace(go.Scatter(x=[_NAMES[dom]], y=[v.mean()], mode="markers",
                                         marker=dict(symbol=sym, size=14, color=col, line=dict(width=2, color=col)),
                                         name=cond + (" (bound)" if cond == "oracle" else ""), showlegend=dom == "id"))
    fig.update_layout(title=f"Evidence degradation · {metric} · random sets vs targeted deletion",
                      yaxis_title=metric, xaxis_title="test set", boxmode="group", **_LAYOUT)
    if not (base["condition"].str.startswith("random_set:") | (base["condition"] == "targeted")).any():
        return not_run(fig, "Degradation stress not run: add 'degradation' to the stresses to delete evidence "
                            "groups (targeted and random sets).")
    return fig


@figure_builder
def target_definition_figure(table: pd.DataFrame, *, domain: str = "ood") -> go.Figure:
    """D_Y (label effect) and D_P (pipeline effect) per metric, before and after prevalence alignment."""
    t = table[(table["analysis"] == "target_decomposition") & (table["domain"] == domain)]
    fig = go.Figure()
    if t.empty:
        return _not_run(fig, "Target-definition sensitivity",
                        "turn on the target-definition stress with at least two target definitions")
    pts = t[t["refit"] >= 0]
    cis = t[t["refit"] < 0]
    for cond in sorted(pts["condition"].unique()):
        p = pts[pts["condition"] == cond].groupby("metric")["value"].mean()
        c = cis[cis["condition"] == cond].set_index("metric")["value"]
        lo = np.array([c.get(f"{m}:ci_low", np.nan) for m in p.index])
        hi = np.array([c.get(f"{m}:ci_high", np.nan) for m in p.index])
        fig.add_trace(go.Bar(x=list(p.index), y=p.values, name=cond,
                             error_y=dict(type="data", symmetric=False, array=np.maximum(hi - p.values, 0),
                                          arrayminus=np.maximum(p.values - lo, 0))))
    fig.update_layout(title=f"Target-definition decomposition · {_NAMES.get(domain, domain)}", barmode="group",
                      yaxis_title="difference", xaxis_title="metric", **_LAYOUT)
    fig.update_xaxes(tickangle=-30)
    return fig


@figure_builder
def heterogeneity_figure(table: pd.DataFrame, *, model: str, mapping: str, metric: str = "brier_score",
                         class_names: tuple[str, str] | None = None) -> go.Figure:
    """A metric by class and declared subgroup, ID vs OOD (mean over refits); classes named as declared
    (``class_names``, see :func:`frontier_figure`)."""
    t = _pick(table, analysis="heterogeneity", model=model, mapping=mapping, metric=metric)
    fig = go.Figure()
    for dom in ("id", "ood"):
        g = t[t["domain"] == dom].groupby("condition")["value"].mean()
        fig.add_trace(go.Bar(x=[_condition_label(c, class_names) for c in g.index], y=g.values, name=_NAMES[dom], marker_color=DOMAIN_COLOURS[dom]))
    fig.update_layout(title=f"Heterogeneity · {metric}", barmode="group", yaxis_title=metric,
                      xaxis_title="class or subgroup", **_LAYOUT)
    fig.update_xaxes(tickangle=-30)
    if t.empty:
        return not_run(fig, f"Heterogeneity not computed for {metric}: no class or subgroup rows in this run.")
    return fig


def _condition_label(condition: str, class_names: tuple[str, str] | None) -> str:
    """``class=1`` as ``class 'yes'`` (declared names); other conditions (subgroups) unchanged."""
    kind, _, code = str(condition).partition("=")
    return f"class {class_label(class_names, int(code))}" if kind == "class" and code.isdigit() and class_names \
        else str(condition)


@figure_builder
def transport_report_figures(record: RunRecord) -> list[tuple[str, go.Figure]]:
    """Figures of a saved transport run, rebuilt from its stored tables only.

    For :func:`components.report.register_report_figures` (``"transport"``).
    """
    tables = record.tables
    t = tables.get("results")
    if t is None or t.empty or (record.manifest or {}).get("multiclass"):
        return []  # a multi-class run: components.figures.transport_mc.transport_any_report_figures draws it
    cfg = record.config or {}
    models = cfg.get("models") or sorted(t["model"].replace("", np.nan).dropna().unique())
    mappings = cfg.get("mappings") or sorted(t["mapping"].replace("", np.nan).dropna().unique())
    model = models[0]
    mapping = "platt" if "platt" in mappings else mappings[0]
    rates = cfg.get("selection_rates") or [0.8]
    s = 0.8 if 0.8 in rates else rates[len(rates) // 2]
    out = []
    if "reliability" in tables:
        out.append(("Reliability diagram", reliability_figure(tables["reliability"], model=model, mapping=mapping)))
    if "curves" in tables:
        out.append(("Risk–selection curves", risk_selection_figure(tables["curves"], t, model=model, mapping=mapping,
                                                                   selection_rate=s)))
    names = class_names_of((record.manifest or {}).get("config") or cfg)
    out.append(("Coverage–set-size frontier", frontier_figure(t, model=model, mapping=mapping, class_names=names)))
    if t["condition"].str.startswith("random_set:").any():
        out.append(("Evidence degradation", stress_figure(t, model=model, mapping=mapping)))
    if (t["analysis"] == "target_decomposition").any():
        out.append(("Target-definition decomposition", target_definition_figure(t)))
    if (t["analysis"] == "heterogeneity").any():
        out.append(("Heterogeneity", heterogeneity_figure(t, model=model, mapping=mapping, class_names=names)))
    if "feature_shift" in tables and not tables["feature_shift"].empty:
        out.append(("Why it moved (feature shift)", feature_shift_figure(tables["feature_shift"],
                                                                          domain_auroc=pooled_domain_auroc(tables))))
    return out
