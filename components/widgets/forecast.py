"""Widgets of a Transport run before the target's labels arrive: the label mode, and the forecast results view.

* :func:`label_mode_section`: the declaration's "Target labels" choice
  (``tr_target_labels``). When every target row of the primary target's
  label column is missing, the forecast is chosen by itself and one
  sentence says why; with labels present the user may still forecast (the
  labels are then hidden from the run, so the forecast can be checked
  against them later). The run's ``target_labels`` is ``absent`` or
  ``hidden`` accordingly (``docs/forecast.md``).
* :func:`results_view`: a label-free result's forecast, for one
  (model, mapping) slice. Every sentence comes from
  :func:`audit_core.findings.forecast_findings`, the figures from
  :mod:`components.figures.forecast` and the tables from
  :mod:`components.report.forecast`, so the page, the report and the CLI
  say the same thing.

Widget keys: value widgets ``tr_``, buttons ``act_tr_fc_``, display
elements ``view_tr_fc_``.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from audit_core.data.targets import target_from_dict, value_mask
from audit_core.findings import forecast_findings
from audit_core.findings.forecast import forecast_slice, headline_quantities, quantity_words, slice_words
from audit_core.forecast.transport_stage import FORECAST_TABLES
from audit_core.safe_text import csv_text
from components.feedback import code, md_escape
from components.figures.forecast import forecast_figure, weights_figure
from components.glossary import Width, table as show_table
from components.report.forecast import all_methods_frame, default_methods_frame
from components.state import PERSIST
from components.widgets.findings import findings_panel

__all__ = ["AVAILABLE", "FORECAST", "LABEL_MODES", "label_mode_section", "missing_label_columns",
           "needs_labels_caption", "is_forecast", "results_view", "operating_alpha"]

AVAILABLE, FORECAST = "available", "forecast"
#: The label-mode radio's options in words.
LABEL_MODES = {AVAILABLE: "available now", FORECAST: "not available yet — forecast from the source"}
#: Column widths of the forecast tables at 1600 px: the numbers and the reason of an unknown forecast first and
#: wide enough to read, the words and the assumption after them (the sentences above say both).
FORECAST_WIDTHS: dict[str, Width] = {"quantity": 110, "method": 125, "forecast [interval]": 200,
                                     "unchanged from source": 100, "status / reason": 560}
FORECAST_ORDER = ("quantity", "method", "forecast [interval]", "unchanged from source", "status / reason", "in words",
                  "assumption")



def missing_label_columns(frame: pd.DataFrame, target: dict, domain: str, value: str) -> list[str]:
    """The primary target's label columns that have no value on any row of the target domain ``value``.

    Parameters
    ----------
    frame : DataFrame
        The whole table.
    target : dict
        The primary target definition (its ``columns`` are the label columns).
    domain, value : str
        The domain column and the target value as the selector shows it.
    """
    try:
        columns = [c for c in target_from_dict(dict(target)).columns if c in frame.columns]
    except Exception:  # noqa: BLE001 - an unreadable definition is refused, with its message, when the run starts
        return []
    rows = frame.loc[value_mask(frame[domain], value)]
    if rows.empty:
        return []
    return [c for c in columns if rows[c].isna().all()]


def label_mode_section(frame: pd.DataFrame, ds_config, decl: dict) -> dict:
    """The "Target labels" choice; returns ``decl`` with ``target_labels`` (``available``, ``hidden`` or ``absent``)."""
    chosen = decl.get("targets") or []
    primary = next((t for t in ds_config.targets if chosen and t["name"] == chosen[0]), None)
    target_value = str(st.session_state.get("tr_target", ""))
    missing = missing_label_columns(frame, primary, decl["domain"], target_value) if primary is not None else []
    if missing:  # nothing to evaluate against: the forecast is the only run there is
        st.session_state["tr_target_labels"] = FORECAST
    st.session_state.setdefault("tr_target_labels", AVAILABLE)
    mode = st.radio("Target labels", list(LABEL_MODES), key="tr_target_labels", persist_state=PERSIST,
                    format_func=LABEL_MODES.__getitem__, horizontal=True, disabled=bool(missing),
                    help="Not available yet: Transport fits and calibrates on the source as usual, then forecasts "
                         "the target's error rates, calibration and conformal coverage from its unlabelled records, "
                         "under two named assumptions (covariate shift, label shift).")
    if missing:
        st.info(f"The {md_escape(target_value)} rows have no " + ", ".join(map(code, missing))
                + f" values yet: Transport forecasts their reliability from the "
                  f"{md_escape(st.session_state.get('tr_source', ''))} rows, under two named assumptions, and the "
                  "forecast can be checked once the labels arrive.", icon=":material/schedule:")
    elif mode == FORECAST:
        st.caption("The labels are present but hidden from the run, so you can check the forecast against them "
                   "later (Runs & reports: Check a forecast, with a run of the same declaration with labels available).")
    labels = AVAILABLE if mode != FORECAST else ("absent" if missing else "hidden")
    return {**decl, "target_labels": labels}


def needs_labels_caption() -> None:
    """The caption above the options a forecast does not run (shown disabled, kept in the declaration)."""
    st.caption("The stresses, subgroup heterogeneity and the feature-shift analysis need the target's labels: a "
               "forecast does not run them. Their settings stay in the declaration (the subgroup columns still "
               "stratify the source split), so the labelled run of the same settings can check the forecast.")


def is_forecast(result) -> bool:
    """Whether a Transport result is label-free (its extras hold the forecast tables)."""
    return "forecast" in result.extras


def operating_alpha(alphas) -> float:
    """The conformal level the findings and the default table read: α = 0.1 when the run has it, else the closest."""
    values = [float(a) for a in alphas] or [0.1]
    return min(values, key=lambda a: (abs(a - 0.1), a))


def _exact_frame(exact: pd.DataFrame) -> pd.DataFrame:
    """The exact label-free quantities of one slice, the mean over refits, in words."""
    if exact.empty:
        return pd.DataFrame(columns=["quantity", "in words", "computed on the target"])
    mean = exact.groupby("quantity", sort=False)["value"].mean()
    rows = []
    for q, v in mean.items():
        words, form = quantity_words(str(q))
        rows.append({"quantity": str(q), "in words": words,
                     "computed on the target": f"{100 * v:.1f}%" if form == "pct" else f"{v:.3f}"})
    return pd.DataFrame(rows)


def _csv_buttons(extras, stale: bool) -> None:
    cols = st.columns(len(FORECAST_TABLES))
    for col, name in zip(cols, FORECAST_TABLES, strict=True):
        df = extras.get(name)
        col.download_button(f"{name} (CSV)", csv_text(df if isinstance(df, pd.DataFrame) else pd.DataFrame(),
                                                      index=False),
                            file_name=f"transport_{name}.csv", mime="text/csv", key=f"act_tr_fc_dl_{name}",
                            disabled=stale or not isinstance(df, pd.DataFrame))


def results_view(result, *, model: str, mapping: str, selection_rate: float, stale: bool = False,
                 downloads: Any = None) -> None:
    """A label-free result's forecast for one (model, mapping) slice: sentences, figure, tables and downloads.

    Parameters
    ----------
    result : TransportResult
        Label-free (:func:`is_forecast`).
    model, mapping : str
        The slice (the page's selectors).
    selection_rate : float
        The operating rule.
    stale : bool
        The result no longer matches the inputs: downloads are off.
    downloads : callable, optional
        ``downloads(result, stale=...)``: the run's own downloads (result table, manifest), shown above the CSVs.
    """
    tables = result.extras
    cfg = result.manifest["config"]
    alpha = operating_alpha(cfg.get("alphas") or ())
    rows = forecast_slice(tables, "forecast", model, mapping)
    n = int(pd.to_numeric(rows["refit"], errors="coerce").nunique()) if "refit" in rows else 0
    st.caption(f"Forecast for the {md_escape(cfg.get('target_value'))} rows, whose labels the run never read: "
               f"{md_escape(slice_words(model, mapping, n))}. Two assumptions: **covariate shift** (the same features "
               "mean the same outcome, only the mix of cases changed) and **label shift** (each outcome looks the "
               "same, only the share of each outcome changed); a forecast whose assumption's check fails is *unknown*, with its "
               "reason.")
    findings_panel(forecast_findings(tables, model=model, mapping=mapping, selection_rate=float(selection_rate),
                                     alpha=alpha), key="view_tr_fc_findings")
    st.plotly_chart(forecast_figure(tables, model=model, mapping=mapping, selection_rate=float(selection_rate),
                                    alpha=alpha), key="view_tr_fc_figure")
    shown = rows[rows["quantity"].astype(str).isin(headline_quantities(float(selection_rate), alpha)[0])]
    tabs = st.tabs(["Forecast", "Computed without labels", "Overlap and weights", "All methods", "Downloads"])
    with tabs[0]:
        st.caption(f"The quantities of the figure (the {float(selection_rate):.0%} rule, α = {alpha:g}), by the "
                   f"default method of each assumption; mean over refits ({md_escape(slice_words(model, mapping, n))}). "
                   "Unchanged from source: the source ID test. An unknown forecast shows its reason, not a number.")
        show_table(default_methods_frame(shown if not shown.empty else rows), key="view_tr_fc_default",
                   hide_index=True, widths=FORECAST_WIDTHS,
                   column_order=FORECAST_ORDER)
    with tabs[1]:
        st.caption("What needs no labels is computed exactly on the target (mean over refits); the weights check "
                   "compares each weighting's source value with it, per refit.")
        show_table(_exact_frame(forecast_slice(tables, "forecast_exact", model, mapping)), key="view_tr_fc_exact",
                   hide_index=True)
        show_table(forecast_slice(tables, "forecast_checks", model, mapping), key="view_tr_fc_checks", hide_index=True)
    with tabs[2]:
        weights = tables.get("forecast_weights")
        st.plotly_chart(weights_figure(weights), key="view_tr_fc_weights_fig")
        if isinstance(weights, pd.DataFrame):
            show_table(weights, key="view_tr_fc_weights", hide_index=True)
        st.caption("Class shares per refit: `source` on the source selection partition (where the rules are fitted; "
                   "the label-shift sentence reads it), `em` and `bbse` on the target as estimated without labels. "
                   "The Forecast tab's *unchanged from source* is the source ID test.")
        show_table(forecast_slice(tables, "forecast_prevalence", model, mapping), key="view_tr_fc_prevalence",
                   hide_index=True)
    with tabs[3]:
        st.caption(f"Every method and quantity ({md_escape(slice_words(model, mapping, n))}).")
        show_table(all_methods_frame(rows), key="view_tr_fc_all", hide_index=True, widths=FORECAST_WIDTHS,
                   column_order=FORECAST_ORDER)
    with tabs[4]:
        if downloads is not None:
            downloads(result, stale=stale)
        _csv_buttons(tables, stale)
