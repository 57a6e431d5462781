"""The per-audit figure registry: which figures a stored run of each audit kind gets, rebuilt from its tables.

A builder ``builder(record) -> [(title, figure)]`` reads ``record.tables``
only; nothing is recomputed and no raw data is read. The Runs page and the
HTML report (:mod:`components.report.document`) use the same registry, so
both show the same pictures. ``model`` runs are drawn here; the audits'
builders live next to their page figures (``components.figures.<audit>``).
"""
from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go

from audit_core.errors import excerpt, fail
from audit_core.runs.registry import RunRecord
from components.figures.fragility import fragility_report_figures
from components.figures.labels import figure_builder
from components.figures.receipts import receipts_report_figures
from components.figures.transport_mc import transport_any_report_figures

__all__ = ["REPORT_FIGURES", "FigureBuilder", "figures_for", "model_report_figures", "register_report_figures"]

FigureBuilder = Callable[[RunRecord], list[tuple[str, go.Figure]]]
_LAYOUT = dict(template="plotly_white", margin=dict(l=10, r=10, t=50, b=10), height=360)


@figure_builder
def model_report_figures(record: RunRecord) -> list[tuple[str, go.Figure]]:
    """Figures of a ``model`` run from its stored ``metrics``, ``grouping`` and interval tables.

    Parameters
    ----------
    record : RunRecord
        A run with ``audit_kind == "model"``.

    Returns
    -------
    list of (title, plotly.graph_objects.Figure)
        Held-out metrics by split (with the bootstrap AUROC interval when
        stored), features per evidence group, and AUROC by refit seed when
        stored. Missing tables are skipped.
    """
    out: list[tuple[str, go.Figure]] = []
    metrics = record.tables.get("metrics")
    if metrics is not None and not metrics.empty:
        part = metrics[metrics["metric"] != "n_rows"]
        fig = go.Figure()
        intervals = record.tables.get("metric_intervals")
        for split in dict.fromkeys(part["split"]):
            rows = part[part["split"] == split]
            error = None
            if split == "test" and intervals is not None and not intervals.empty:
                iv = intervals.set_index("metric")
                est = rows["value"].to_numpy()
                up = [float(iv.loc[m, "upper"]) - v if m in iv.index else 0.0 for m, v in zip(rows["metric"], est, strict=True)]
                lo = [v - float(iv.loc[m, "lower"]) if m in iv.index else 0.0 for m, v in zip(rows["metric"], est, strict=True)]
                error = dict(type="data", array=up, arrayminus=lo, visible=True)
            fig.add_trace(go.Bar(name=str(split), x=rows["metric"], y=rows["value"], error_y=error))
        fig.update_layout(title="Model check by split (bars: held-out interval where stored)", barmode="group", **_LAYOUT)
        fig.update_xaxes(title="metric")
        fig.update_yaxes(title="value")
        out.append(("Held-out metrics", fig))
    grouping = record.tables.get("grouping")
    if grouping is not None and not grouping.empty:
        counts = grouping.groupby("group", sort=True).size().sort_values(ascending=False)
        fig = go.Figure(go.Bar(x=counts.to_numpy(), y=[str(g) for g in counts.index], orientation="h"))
        fig.update_layout(title="Evidence groups (transformed features per group)", **_LAYOUT)
        fig.update_yaxes(autorange="reversed")
        fig.update_xaxes(title="features")
        fig.update_yaxes(title="evidence group")
        out.append(("Evidence groups", fig))
    seeds = record.tables.get("seed_variability")
    if seeds is not None and not seeds.empty:
        fig = go.Figure(go.Scatter(x=seeds["seed"].astype(str), y=seeds["auroc"], mode="markers+lines"))
        fig.update_layout(title="Held-out AUROC by refit seed", **_LAYOUT)
        fig.update_xaxes(title="seed", type="category")
        fig.update_yaxes(title="held-out AUROC")
        out.append(("Refits by seed", fig))
    return out


#: audit kind -> builder of ``[(title, figure), ...]`` from a stored run.
REPORT_FIGURES: dict[str, FigureBuilder] = {
    "model": model_report_figures,
    "fragility": fragility_report_figures,
    "receipts": receipts_report_figures,
    "transport": transport_any_report_figures,  # binary or multi-class
}


def register_report_figures(kind: str, builder: FigureBuilder) -> None:
    """Register (or replace) the report/Runs-page figures of one audit kind."""
    REPORT_FIGURES[kind] = builder


@figure_builder
def figures_for(record: RunRecord) -> list[tuple[str, go.Figure]]:
    """The figures of a run, rebuilt from its stored tables; ``[]`` for unknown kinds.

    Raises
    ------
    AuditInputError
        ``RUN_TABLES_UNREADABLE`` when the stored tables do not have what the
        builder reads (a run saved by another version, or an edited bundle):
        callers show the tables without figures.
    """
    builder = REPORT_FIGURES.get(record.audit_kind)
    if builder is None:
        return []
    try:
        return builder(record)
    except Exception as exc:  # noqa: BLE001 - any stored table may be malformed; the message names the failure
        raise fail("RUN_TABLES_UNREADABLE", run_id=record.run_id,
                   reason=excerpt(f"{type(exc).__name__}: {exc}", 120)) from exc
