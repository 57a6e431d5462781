"""The report's "Forecast (target labels not yet available)" section, built when a run's tables include ``forecast``.

It reads one (model, mapping) slice: the run's headline slice when the
forecast covers it, else the first slice of the ``forecast`` table, and
shows, for that slice:

* the sentences of :func:`audit_core.findings.forecast.forecast_findings`;
* :func:`components.figures.forecast.forecast_figure` (forecast against
  "unchanged from source") and the weights' overlap diagnostics
  (:func:`~components.figures.forecast.weights_figure`);
* the default methods' table (quantity, assumption, forecast [interval],
  unchanged from source, status / reason): an ``unknown`` forecast shows
  its reason and no number;
* the importance weights' table and checks;
* the "all methods" table (every method, the same columns);
* when the run also stores the forecast checked against the labels (``forecast_check``, a
  ``ForecastCheck.table``), the sentence on how it fared and the forecast-against-realised figure.

Both tables show the quantities at the operating rule (80% selection rate, α = 0.1:
:func:`audit_core.findings.forecast.headline_quantities`) when the forecast has them; the whole ``forecast``
table is among the run's result tables.

Values are the mean over refits (a forecast unknown in any refit is unknown),
as in the sentences. Everything is passed to the template as text and
escaped there; the figure divs are the project's own HTML (their names from
data escaped by :func:`components.figures.labels.escape_figure`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
from markupsafe import Markup

from audit_core.findings.forecast import (DEFAULT_METHODS, forecast_check_finding, forecast_findings, forecast_slice, headline_quantities,
                                          pooled_status, quantity_words, slice_words, value_text)
from audit_core.runs.registry import RunRecord
from audit_core.transport.headline import recorded_headline
from components.figures.forecast import forecast_check_figure, forecast_figure, weights_figure

from .templating import Table, table_of

__all__ = ["ForecastSection", "forecast_report_section", "forecast_slice_of", "default_methods_frame",
           "all_methods_frame", "SECTION_TITLE", "CHECK_TABLE"]

SECTION_TITLE = "Forecast (target labels not yet available)"
#: The table name under which a run may store a ``ForecastCheck.table`` (the forecast checked once labels arrived).
CHECK_TABLE = "forecast_check"


@dataclass(frozen=True)
class ForecastSection:
    """What the template shows: the slice in words, sentences, figures (title, div) and tables."""

    title: str
    slice_words: str
    sentences: tuple[tuple[str, str], ...]
    figures: tuple[tuple[str, Markup], ...]
    default_table: Table
    weights_table: Table | None
    checks_table: Table | None
    all_methods_table: Table


def forecast_slice_of(record: RunRecord) -> tuple[str, str] | None:
    """The (model, mapping) the section reads: the headline slice when the forecast has it, else its first slice."""
    df = record.tables.get("forecast")
    if not isinstance(df, pd.DataFrame) or df.empty or not {"model", "mapping"} <= set(df.columns):
        return None
    pairs = list(dict.fromkeys(zip(df["model"].astype(str), df["mapping"].astype(str), strict=True)))
    h = recorded_headline(record.manifest, record.config)
    if not isinstance(h, str) and (h.model, h.mapping) in pairs:
        return h.model, h.mapping
    return pairs[0]


def _rows(forecast: pd.DataFrame, methods: tuple[str, ...] | None) -> pd.DataFrame:
    """One row per (quantity, method), pooled over refits; an unknown forecast's cell holds no number."""
    part = forecast if methods is None else forecast[forecast["method"].isin(methods)]
    out = []
    for (q, m), g in part.groupby(["quantity", "method"], sort=False):
        words, form = quantity_words(str(q))
        status, reason, n_unknown = pooled_status(g)
        mean = {c: float(pd.to_numeric(g[c], errors="coerce").mean()) for c in ("value", "low", "high", "naive")}
        n = int(pd.to_numeric(g["refit"], errors="coerce").nunique()) if "refit" in g else 1
        if status == "forecast":
            shown = f"{value_text(mean['value'], form)} [{value_text(mean['low'], form)}, {value_text(mean['high'], form)}]"
            state = "forecast"
        else:
            shown = "unknown: not a trusted number"
            state = f"unknown in {n_unknown} of {n} refits: {reason}; only labels can settle it"
        out.append({"quantity": str(q), "in words": words, "method": str(m),
                    "assumption": str(g["assumption"].iloc[0]) if "assumption" in g else str(m).split(":")[0],
                    "forecast [interval]": shown, "unchanged from source": value_text(mean["naive"], form),
                    "status / reason": state})
    cols = ["quantity", "in words", "method", "assumption", "forecast [interval]", "unchanged from source",
            "status / reason"]
    return pd.DataFrame(out, columns=cols)


def default_methods_frame(forecast: pd.DataFrame) -> pd.DataFrame:
    """The default methods' table (:data:`~audit_core.findings.forecast.DEFAULT_METHODS`), one row per quantity and
    assumption; an ``unknown`` forecast shows its reason, not its number."""
    return _rows(forecast, tuple(DEFAULT_METHODS.values()))


def all_methods_frame(forecast: pd.DataFrame) -> pd.DataFrame:
    """Every method's forecast, the columns of :func:`default_methods_frame` (an ``unknown`` one without its number)."""
    return _rows(forecast, None)


def forecast_report_section(record: RunRecord, *, max_rows: int, first_figure: int,
                            figure_div: Callable[[go.Figure, int], Markup]) -> tuple[ForecastSection, list[go.Figure]] | None:
    """The forecast section of a run whose tables include ``forecast``, and its figures; ``None`` otherwise.

    Parameters
    ----------
    record : RunRecord
    max_rows : int
        Rows shown per table.
    first_figure : int
        The first figure div id number (``fig-N``) free in the report.
    figure_div : callable
        ``(figure, i) -> Markup``: the report's figure writer.

    Returns
    -------
    (ForecastSection, list of go.Figure) or None
    """
    tables = record.tables
    if "forecast" not in tables:
        return None
    picked = forecast_slice_of(record)
    if picked is None:
        return None
    model, mapping = picked
    rows = forecast_slice(tables, "forecast", model, mapping)
    n = int(pd.to_numeric(rows["refit"], errors="coerce").nunique()) if "refit" in rows else 1
    shown = rows[rows["quantity"].astype(str).isin(headline_quantities()[0])]
    rows = shown if not shown.empty else rows  # the operating rule's quantities; the full table is in the tables
    findings = forecast_findings(tables, model=model, mapping=mapping)
    check = tables.get(CHECK_TABLE)
    checked = forecast_check_finding(check, model=model, mapping=mapping) if isinstance(check, pd.DataFrame) else None
    if checked is not None:  # labels arrived: how the forecast fared
        findings.append(checked)
    figs: list[tuple[str, go.Figure]] = [("Forecast against unchanged from source",
                                          forecast_figure(tables, model=model, mapping=mapping))]
    if checked is not None and isinstance(check, pd.DataFrame):
        figs.append(("Forecast against realised", forecast_check_figure(check, model=model, mapping=mapping)))
    weights = tables.get("forecast_weights")
    if isinstance(weights, pd.DataFrame) and not weights.empty:
        figs.append(("Importance weights: overlap check", weights_figure(weights)))
    checks = forecast_slice(tables, "forecast_checks", model, mapping)
    section = ForecastSection(
        title=SECTION_TITLE, slice_words=slice_words(model, mapping, n),
        sentences=tuple((f.severity, f.text) for f in findings),
        figures=tuple((title, figure_div(fig, first_figure + i)) for i, (title, fig) in enumerate(figs)),
        default_table=table_of(default_methods_frame(rows), table_id="forecast-default", max_rows=max_rows),
        weights_table=(table_of(weights, table_id="forecast-weights", max_rows=max_rows)
                       if isinstance(weights, pd.DataFrame) and not weights.empty else None),
        checks_table=(table_of(checks, table_id="forecast-checks", max_rows=max_rows) if not checks.empty else None),
        all_methods_table=table_of(_rows(rows, None), table_id="forecast-all-methods", max_rows=max_rows))
    return section, [fig for _, fig in figs]

