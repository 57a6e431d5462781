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

from dataclasses import replace
from typing import Any

from audit_core.findings.cases import class_label
from audit_core.runs.keys import headline_key, read_key
from audit_core.runs.registry import RunRecord
from audit_core.transport.config import class_names_of
from audit_core.transport.headline import HeadlineSlice, pipeline_words, recorded_headline

from .labels import BR, END_SUP, SUP, figure_builder
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
    "slice_subtitle",
    "DOMAIN_COLOURS",
    "CLASS_COLOURS",
]

_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=50, b=10), height=380)
#: A legend below the plot (below the x-axis tick labels and title): long legend entries must not squeeze a figure
#: drawn in half a 1600 px page.
LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.4, xanchor="left", x=0)
DOMAIN_COLOURS = {"id": "#1f77b4", "ood": "#d62728"}
#: One colour per class in the class-coverage lines (never a method's colour).
CLASS_COLOURS = ("#ff7f0e", "#8c564b")
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


def _aggregation(t: pd.DataFrame, what: str = "records pooled over") -> str:
    """How a figure table aggregates refits: ``records pooled over 3 refits``; ``refit 0`` for a run saved before
    the figures read every refit (its table has no ``refits`` column)."""
    if "refits" not in t or t.empty:
        return "refit 0 only"
    r = int(t["refits"].iloc[0])
    return f"{what} {r} refit{'s' if r != 1 else ''}"


def slice_subtitle(model: str, mapping: str, aggregation: str, headline: HeadlineSlice | None) -> str:
    """``Platt-calibrated logistic regression (headline slice) · records pooled over 3 refits``, as a subtitle."""
    tag = ""
    if headline is not None:
        tag = (" (headline slice)" if (model, mapping) == (headline.model, headline.mapping)
               else " (not the headline slice)")
    return f"{BR}{SUP}{pipeline_words(mapping, model)}{tag} · {aggregation}{END_SUP}"


def _slice_of(headline: HeadlineSlice | None, model: str, mapping: str, table: pd.DataFrame | None) -> HeadlineSlice:
    """The headline slice with the figure's model and mapping (the weighting and target stay the headline's)."""
    if headline is not None:
        return replace(headline, model=model, mapping=mapping)
    target = str(table["target_definition"].iloc[0]) if table is not None and len(table) else ""
    return HeadlineSlice(model=model, mapping=mapping, target_definition=target, weighting="unweighted", n_refits=1)


def _refit_mean(table: pd.DataFrame | None, h: HeadlineSlice, **kw) -> float | None:
    """A quantity's mean over refits on the slice (the key the findings and the gate read), or None."""
    if table is None or table.empty:
        return None
    v, _ = read_key({"results": table}, headline_key(h, **kw))
    return v if isinstance(v, float) else None


@figure_builder
def reliability_figure(bins: pd.DataFrame, *, model: str, mapping: str, table: pd.DataFrame | None = None,
                       headline: HeadlineSlice | None = None, smooth: bool = False,
                       metric: str = "ece") -> go.Figure:
    """Reliability diagram, ID and OOD overlaid, with bin counts underneath.

    Parameters
    ----------
    bins : DataFrame
        ``result.extras["reliability"]``: ``domain, model, mapping, lower,
        upper, count, mean_p, frac_pos`` and, when present, ``refits`` (the
        records of all R refits pooled; without it, refit 0), the band
        ``frac_pos_low, frac_pos_high`` and ``smooth_ece`` (saved runs from
        before the band are drawn without it); for the Venn-Abers mapping
        ``va_p0, va_p1``, each bin's mean ``[p0, p1]``, drawn as a dashed band
        (``nan`` for other mappings).
    table : DataFrame, optional
        The result table: each domain's legend entry then states the ECE (15
        equal-width bins) as the mean over refits, the value the findings and
        the release gate read.
    headline : HeadlineSlice, optional
        The run's headline slice: the subtitle says whether the figure shows it.
    smooth : bool, default False
        Also state the smooth ECE of the pooled records, labelled as another estimator.
    metric : str, default "ece"
        The calibration metric of the legend (``ece_top`` for a multi-class run).
    """
    h = _slice_of(headline, model, mapping, table)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.06)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dot", color="grey"),
                             name="perfect calibration"), row=1, col=1)
    other = []
    for dom in ("id", "ood"):
        b = _pick(bins, domain=dom, model=model, mapping=mapping)
        nz = b[b["count"] > 0]
        name = _NAMES[dom]
        ece = _refit_mean(table, h, analysis="metrics", metric=metric, domain=dom)
        if ece is not None:
            name += f" · {'top-label ECE' if metric == 'ece_top' else 'ECE'} {ece:.3f}"
        if smooth and "smooth_ece" in b and len(b):
            other.append(f"{'ID' if dom == 'id' else 'OOD'} {float(b['smooth_ece'].iloc[0]):.3f}")
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
                      row=1 + 1, col=1)
    agg = _aggregation(bins) + ("; ECE: mean over refits" if table is not None else "")
    fig.update_layout(title="Reliability diagram" + slice_subtitle(model, mapping, agg, headline),
                      **{**_LAYOUT, "height": 480, "margin": dict(l=10, r=10, t=70, b=10)})
    if other:
        fig.add_annotation(text="Another estimator, smooth ECE (kernel, pooled records): " + ", ".join(other),
                           x=0, y=1.0, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
                           showarrow=False, font=dict(size=11, color="#52606d"))
    fig.update_xaxes(title_text="predicted probability (bin mean)", range=[0, 1], row=2, col=1)
    fig.update_yaxes(title_text="observed frequency", range=[0, 1], row=1, col=1)
    fig.update_yaxes(title_text="records", row=2, col=1)
    return fig


@figure_builder
def risk_selection_figure(curves: pd.DataFrame, table: pd.DataFrame, *, model: str, mapping: str,
                          selection_rate: float, headline: HeadlineSlice | None = None) -> go.Figure:
    """Risk–selection curves with the transported operating point marked, both on the same refits.

    The curves are the means over refits (``refits`` column); the operating
    point uses the source threshold for ``selection_rate`` and is the mean over
    refits of the achieved rate and risk (the findings' numbers); on the OOD
    curve it lands at the *achieved* rate, not the desired one. A run saved
    before the curves read every refit draws refit 0, curve and points, and
    says so.
    """
    fig = go.Figure()
    h = _slice_of(headline, model, mapping, table)
    per_refit = "refits" in curves and len(curves)
    for dom in ("id", "ood"):
        c = _pick(curves, domain=dom, model=model, mapping=mapping)
        fig.add_trace(go.Scatter(x=c["coverage"], y=c["risk"], mode="lines", name=_NAMES[dom],
                                 line=dict(color=DOMAIN_COLOURS[dom])))
        if per_refit:
            kw = dict(analysis="selective", domain=dom, selection_rate=float(selection_rate))
            rate, risk = (_refit_mean(table, h, metric=m, **kw) for m in ("rate", "risk"))
        else:
            sel = _pick(table, analysis="selective", domain=dom, model=model, mapping=mapping, refit=0,
                        condition="clean", weighting="unweighted")
            sel = sel[np.isclose(sel["selection_rate"], selection_rate)]
            r0, k0 = sel.loc[sel["metric"] == "rate", "value"], sel.loc[sel["metric"] == "risk", "value"]
            rate, risk = (float(r0.iloc[0]), float(k0.iloc[0])) if len(r0) and len(k0) else (None, None)
        if rate is not None and risk is not None:
            fig.add_trace(go.Scatter(x=[rate], y=[risk], mode="markers",
                                     marker=dict(size=13, symbol="diamond", color=DOMAIN_COLOURS[dom],
                                                 line=dict(color="black", width=1)),
                                     name=f"threshold answering {selection_rate:.0%} of source cases · "
                                          f"{'ID' if dom == 'id' else 'OOD'}: answers {rate:.0%}, error {risk:.0%}"))
    fig.add_vline(x=selection_rate, line_dash="dot", line_color="grey")
    agg = _aggregation(curves, "mean of") if per_refit else "refit 0 only"
    fig.update_layout(title="Risk–selection curves" + slice_subtitle(model, mapping, agg, headline),
                      xaxis_title="selection rate (share answered)", yaxis_title="selective risk (error rate)",
                      legend=LEGEND_BELOW, **{**_LAYOUT, "margin": dict(l=10, r=10, t=70, b=10), "height": 520})
    return fig


@figure_builder
def frontier_figure(table: pd.DataFrame, *, model: str, mapping: str, domain: str = "ood",
                    class_names: tuple[str, str] | None = None, headline: HeadlineSlice | None = None) -> go.Figure:
    """Coverage–set-size frontier across α, marginal vs label-conditional, with class coverage.

    Points are means over refits; each point is labelled by its α, the labels of the two curves on opposite
    sides and never clipped at the plot edge. ``class_names`` (classes 0 and 1, as declared:
    :func:`audit_core.transport.config.class_names_of`) name the class-coverage traces ("coverage of class
    'yes'", "coverage of class other than 'yes'"); without them they say "class 1". Each class has its own colour
    (the method is the line's dash and marker).
    """
    fig = go.Figure()
    styles = {"marginal": ("circle", "#2ca02c", "top left", "solid"),
              "label_conditional": ("square", "#9467bd", "bottom right", "dash")}
    xs = []
    weighting = headline.weighting if headline is not None else "unweighted"
    for method, (symbol, colour, where, dash) in styles.items():  # α labels on opposite sides: the curves run close
        t = _pick(table, analysis=f"conformal_{method}", domain=domain, model=model, mapping=mapping,
                  condition="clean", weighting=weighting)
        g = t.groupby(["alpha", "metric"])["value"].mean().unstack("metric").reset_index().sort_values("alpha")
        if g.empty:
            continue
        label = method.replace("_", "-")
        xs += list(g["mean_set_size"])
        fig.add_trace(go.Scatter(x=g["mean_set_size"], y=g["coverage"], mode="lines+markers+text", name=label,
                                 marker=dict(symbol=symbol, size=10, color=colour), line=dict(color=colour, dash=dash),
                                 text=[f"α={a:g}" for a in g["alpha"]], textposition=where, cliponaxis=False))
        for cls in ("coverage_class0", "coverage_class1"):
            code = int(cls[-1])
            fig.add_trace(go.Scatter(x=g["mean_set_size"], y=g[cls], mode="lines+markers",
                                     name=f"{label} · coverage of class {class_label(class_names, code)}",
                                     line=dict(color=CLASS_COLOURS[code], dash=dash, width=1.5),
                                     marker=dict(symbol=symbol, size=7, color=CLASS_COLOURS[code])))
        for a in g["alpha"]:
            fig.add_hline(y=1 - a, line_dash="dot", line_color="lightgrey")
    if xs:  # room for the α labels left and right of the outermost points
        lo, hi = min(xs), max(xs)
        pad = max(0.12 * (hi - lo), 0.06)
        fig.update_xaxes(range=[lo - pad, hi + pad])
    fig.update_layout(title=f"Coverage–set-size frontier · {_NAMES.get(domain, domain)}"
                            + slice_subtitle(model, mapping, "means over refits", headline),
                      xaxis_title="mean set size", yaxis_title="coverage", legend=LEGEND_BELOW,
                      **{**_LAYOUT, "height": 600, "margin": dict(l=10, r=10, t=80, b=10)})
    return fig


def _not_run(fig: go.Figure, what: str, how: str, *, needs_model: bool = False) -> go.Figure:
    """A stress panel that was not run says so (title and message), instead of an empty plot.

    ``needs_model``: a run on the user's scores, which cannot run it (in words, not as an error)."""
    fig.update_layout(**{**_LAYOUT, "title": f"{what}: not run", "height": 260})
    if needs_model:
        return not_run(fig, f"{what}: not run: needs a model (this run used your scores).")
    return not_run(fig, f"{what}: not run — {how}.")


@figure_builder
def stress_figure(table: pd.DataFrame, *, model: str, mapping: str, metric: str = "auroc",
                  headline: HeadlineSlice | None = None, needs_model: bool = False) -> go.Figure:
    """Random-set deletions (the whole distribution, every refit) against targeted deletion and other conditions
    (means over refits). ``needs_model``: a run on scores (the panel says it needs a model)."""
    fig = go.Figure()
    base = _pick(table, analysis="metrics", model=model, mapping=mapping, metric=metric, weighting="unweighted")
    if needs_model or not (base["condition"] != "clean").any():
        return _not_run(fig, "Evidence degradation", "turn on the degradation stress and run again",
                        needs_model=needs_model)
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
    fig.update_layout(title=f"Evidence degradation · {metric} · random sets vs targeted deletion"
                            + slice_subtitle(model, mapping, "every refit's random sets; other marks: means over refits",
                                        headline),
                      yaxis_title=metric, xaxis_title="test set", boxmode="group",
                      **{**_LAYOUT, "margin": dict(l=10, r=10, t=70, b=10)})
    if not (base["condition"].str.startswith("random_set:") | (base["condition"] == "targeted")).any():
        return not_run(fig, "Degradation stress not run: add 'degradation' to the stresses to delete evidence "
                            "groups (targeted and random sets).")
    return fig


@figure_builder
def target_definition_figure(table: pd.DataFrame, *, domain: str = "ood", needs_model: bool = False) -> go.Figure:
    """D_Y (label effect) and D_P (pipeline effect) per metric, before and after prevalence alignment.

    ``needs_model``: a run on scores (the panel says it needs a model)."""
    t = table[(table["analysis"] == "target_decomposition") & (table["domain"] == domain)]
    fig = go.Figure()
    if needs_model or t.empty:
        return _not_run(fig, "Target-definition sensitivity",
                        "turn on the target-definition stress with at least two target definitions",
                        needs_model=needs_model)
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
                         class_names: tuple[str, str] | None = None, headline: HeadlineSlice | None = None) -> go.Figure:
    """A metric by class and declared subgroup, ID vs OOD (mean over refits); classes named as declared
    (``class_names``, see :func:`frontier_figure`)."""
    t = _pick(table, analysis="heterogeneity", model=model, mapping=mapping, metric=metric)
    fig = go.Figure()
    for dom in ("id", "ood"):
        g = t[t["domain"] == dom].groupby("condition")["value"].mean()
        fig.add_trace(go.Bar(x=[_condition_label(c, class_names) for c in g.index], y=g.values, name=_NAMES[dom],
                             marker_color=DOMAIN_COLOURS[dom]))
    fig.update_layout(title=f"Heterogeneity · {metric}" + slice_subtitle(model, mapping, "means over refits", headline),
                      barmode="group", yaxis_title=metric, xaxis_title="class or subgroup",
                      **{**_LAYOUT, "margin": dict(l=10, r=10, t=70, b=10)})
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
    h = recorded_headline(record.manifest, record.config)
    cfg = (record.manifest or {}).get("config") or record.config or {}
    if isinstance(h, str):
        return []
    model, mapping = h.model, h.mapping
    rates = cfg.get("selection_rates") or [0.8]
    s = 0.8 if 0.8 in rates else rates[len(rates) // 2]
    kw: dict[str, Any] = dict(model=model, mapping=mapping, headline=h)
    out = []
    if "reliability" in tables:
        out.append(("Reliability diagram", reliability_figure(tables["reliability"], table=t, **kw)))
    if "curves" in tables:
        out.append(("Risk–selection curves", risk_selection_figure(tables["curves"], t, selection_rate=s, **kw)))
    names = class_names_of(cfg)
    out.append(("Coverage–set-size frontier", frontier_figure(t, class_names=names, **kw)))
    if t["condition"].str.startswith("random_set:").any():
        out.append(("Evidence degradation", stress_figure(t, **kw)))
    if (t["analysis"] == "target_decomposition").any():
        out.append(("Target-definition decomposition", target_definition_figure(t)))
    if (t["analysis"] == "heterogeneity").any():
        out.append(("Heterogeneity", heterogeneity_figure(t, class_names=names, **kw)))
    if "feature_shift" in tables and not tables["feature_shift"].empty:
        out.append(("Why it moved (feature shift)", feature_shift_figure(tables["feature_shift"],
                                                                          domain_auroc=pooled_domain_auroc(tables))))
    return out
