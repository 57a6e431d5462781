"""The "Check a forecast" section of Runs & reports: a saved forecast against the labelled run of the same data.

The user picks a label-free Transport run (its ``forecast`` table) and a
labelled Transport run; only labelled runs whose manifest's
``declaration_key`` and ``target_fingerprint`` match the forecast run's are
offered (all labelled runs on request, so a mismatch can be tried and is
refused with the library's message). The check is
:func:`audit_core.forecast.check_forecast_runs`; the sentence is
:func:`audit_core.findings.forecast_check_finding`, the figure
:func:`components.figures.forecast.forecast_check_figure`, and all three read
the same rows of the check table.

Widget keys: value widgets ``ru_fc_``, buttons ``act_ru_fc_``, display
elements ``view_ru_fc_``.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from audit_core.errors import AuditInputError
from audit_core.findings import forecast_check_finding
from audit_core.findings.forecast import DEFAULT_METHODS, headline_quantities, quantity_words, value_text
from audit_core.forecast import check_forecast_runs
from audit_core.safe_text import csv_text
from audit_core.transport.headline import pipeline_words
from components.feedback import code, md_escape
from components.figures.forecast import forecast_check_figure
from components.glossary import table as show_table
from components.report.forecast import forecast_slice_of
from components.state import PERSIST, registry
from components.widgets.findings import findings_panel

__all__ = ["check_section", "label_modes", "matching_labelled", "side_by_side", "HOW_TO_GET_ONE"]

HOW_TO_GET_ONE = ("To get one, run Transport with labels available on the same data and declaration (the same table "
                  "once the target's labels have arrived, the same domains, targets, models, mappings, refits and seed).")
_DEFAULT_ROWS, _ALL_ROWS = "default", "all"


@st.cache_data(show_spinner=False, max_entries=256)
def _keys(run_id: str, updated_at: str, path: str) -> dict[str, str | None]:
    """A Transport run's label mode, declaration key and target fingerprint (from its manifest)."""
    record = registry().load(run_id)
    m = record.manifest
    picked = forecast_slice_of(record)  # the headline slice when the forecast has it
    return {"target_labels": str(m.get("target_labels", "available")), "declaration_key": m.get("declaration_key"),
            "target_fingerprint": m.get("target_fingerprint"), "slice": "\t".join(picked) if picked else None}


def label_modes(runs: pd.DataFrame) -> pd.DataFrame:
    """The finished Transport runs of ``runs`` with their ``target_labels``, ``declaration_key`` and
    ``target_fingerprint`` columns, and ``slice`` (a forecast run's headline ``model\tmapping``; newest first)."""
    t = runs[(runs["audit_kind"] == "transport") & (runs["status"] == "done")]
    path = str(registry().path)
    keys = [_keys(str(r), str(u), path) for r, u in zip(t["run_id"], t["updated_at"], strict=True)]
    cols = ["target_labels", "declaration_key", "target_fingerprint", "slice"]
    out = t.copy()
    for c in cols:
        out[c] = pd.Series([k[c] for k in keys], index=t.index, dtype=object)
    return out


def matching_labelled(modes: pd.DataFrame, forecast_run: str) -> pd.DataFrame:
    """The labelled runs of ``modes`` (:func:`label_modes`) whose declaration key and target fingerprint are those of
    ``forecast_run``."""
    f = modes.set_index("run_id").loc[forecast_run]
    labelled = modes[modes["target_labels"] == "available"]
    return labelled[(labelled["declaration_key"] == f["declaration_key"])
                    & (labelled["target_fingerprint"] == f["target_fingerprint"])
                    & labelled["declaration_key"].notna()]


def side_by_side(rows: pd.DataFrame) -> pd.DataFrame:
    """The check rows as the page shows them: forecast, interval, realised, inside, closer than 'unchanged from
    source'; an unknown forecast shows no number (it made no trusted claim)."""
    out = []
    for r in rows.to_dict("records"):
        words, form = quantity_words(str(r["quantity"]))
        trusted = str(r["status"]) == "forecast"
        v, lo, hi, real, naive = (float(r[c]) for c in ("value", "low", "high", "realised", "naive"))
        out.append({"quantity": str(r["quantity"]), "in words": words, "method": str(r["method"]),
                    "forecast": value_text(v, form) if trusted else "unknown: not a trusted number",
                    "interval": f"[{value_text(lo, form)}, {value_text(hi, form)}]" if trusted else "—",
                    "realised": value_text(real, form),
                    "inside": ("yes" if bool(r["inside"]) else "no") if trusted else "not counted",
                    "beats 'unchanged from source'": ("yes" if bool(r["beats_naive"]) else "no") if trusted
                    else "not counted",
                    "unchanged from source": value_text(naive, form), "refits": int(r["n_refits"])})
    return pd.DataFrame(out, columns=["quantity", "in words", "method", "forecast", "interval", "realised", "inside",
                                      "beats 'unchanged from source'", "unchanged from source", "refits"])


def _label(runs: pd.DataFrame):
    info = runs.set_index("run_id")

    def fmt(run_id: str) -> str:
        r = info.loc[run_id]
        return f"{str(r['created_at'])[:19].replace('T', ' ')} · {run_id[-8:]} · {r['dataset_name']} · {r['model'] or '—'}"

    return fmt


def check_section(runs: pd.DataFrame) -> None:
    """Pick a forecast run and a labelled run of the same declaration; show how the forecast fared."""
    st.caption("A forecast made before the target's labels arrived, checked against a labelled Transport run of the "
               "same declaration on the same target records: was each realised value inside its interval, and was "
               "the forecast closer than assuming nothing changed from the source?")
    modes = label_modes(runs)
    forecasts = modes[modes["target_labels"] != "available"]
    if forecasts.empty:
        st.info("No forecast run among the listed runs: run Transport with **Target labels: not available yet** "
                "first.", icon=":material/info:")
        return
    fmt = _label(modes)
    f_id = st.selectbox("Forecast run (labels not available)", list(forecasts["run_id"]), key="ru_fc_forecast",
                        persist_state=PERSIST, format_func=fmt)
    show_all = st.checkbox("List every labelled Transport run, not only those of the same declaration and target "
                           "records", key="ru_fc_all", persist_state=PERSIST)
    candidates = modes[modes["target_labels"] == "available"] if show_all else matching_labelled(modes, f_id)
    if candidates.empty:
        st.info(("No labelled Transport run is listed. " if show_all else
                 "No labelled Transport run has this forecast's declaration and target records. ")
                + md_escape(HOW_TO_GET_ONE), icon=":material/info:")
        return
    l_id = st.selectbox("Labelled run (labels available)", list(candidates["run_id"]), key="ru_fc_labelled",
                        persist_state=PERSIST, format_func=fmt)
    try:
        check = check_forecast_runs(registry(), f_id, l_id)
    except AuditInputError as err:  # different declarations or target records, or not the runs it needs
        st.warning(md_escape(err.message), icon=":material/block:")
        return
    headline = modes.set_index("run_id").loc[f_id, "slice"]
    _show_check(check.table, f_id, l_id, tuple(str(headline).split("\t")) if isinstance(headline, str) else None)


def _show_check(table: pd.DataFrame, f_id: str, l_id: str, headline: tuple[str, ...] | None) -> None:
    if table.empty:
        st.info("The labelled run realised none of the forecast's quantities.", icon=":material/info:")
        return
    pairs = list(dict.fromkeys(zip(table["model"].astype(str), table["mapping"].astype(str), strict=True)))
    if headline in pairs:  # the forecast run's headline slice first, as the report reads it
        pairs.insert(0, pairs.pop(pairs.index(headline)))
    c1, c2 = st.columns([2, 3])
    pair = c1.selectbox("Slice (model, mapping)", pairs, key="ru_fc_slice", persist_state=PERSIST,
                        format_func=lambda p: pipeline_words(p[1], p[0]))
    which = c2.radio("Rows", [_DEFAULT_ROWS, _ALL_ROWS], key="ru_fc_rows", persist_state=PERSIST, horizontal=True,
                     format_func={_DEFAULT_ROWS: "default methods at the 80% rule and α = 0.1",
                                  _ALL_ROWS: "every quantity and method"}.__getitem__)
    model, mapping = pair
    rows = table[(table["model"].astype(str) == model) & (table["mapping"].astype(str) == mapping)]
    if which == _DEFAULT_ROWS:
        picked = rows[rows["method"].isin(DEFAULT_METHODS.values())
                      & rows["quantity"].isin(headline_quantities()[0])]
        rows = picked if not picked.empty else rows
    st.caption(f"Forecast run {code(f_id)} against labelled run {code(l_id)}: values are means over the refits both "
               "runs hold; the sentence, the figure and the table read the same rows.")
    finding = forecast_check_finding(rows, model=model, mapping=mapping)
    findings_panel([finding] if finding is not None else [], key="view_ru_fc_findings")
    st.plotly_chart(forecast_check_figure(rows, model=model, mapping=mapping), key="view_ru_fc_figure")
    show_table(side_by_side(rows), key="view_ru_fc_table", hide_index=True)
    st.download_button("Check table (CSV)", csv_text(rows, index=False), file_name="forecast_check.csv",
                       mime="text/csv", key="act_ru_fc_dl")
