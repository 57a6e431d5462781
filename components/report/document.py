"""Self-contained HTML report of a saved run.

* Figures are rebuilt from the run's **stored result tables** through the
  per-audit registry (:data:`components.report.builders.REPORT_FIGURES`);
  nothing is recomputed and no raw data is read. Unknown kinds fall back to
  tables only.
* It opens with a one-page **executive summary** (gate verdict, findings
  sentences, the first three figures), the part that prints; the detail
  follows, every table capped at :data:`MAX_TABLE_ROWS` rows in a closed
  ``<details>`` (the Parquet export holds all rows).
* The report opens offline: plotly.js is embedded **once** in ``<head>``
  (the partial cartesian bundle, :mod:`.plotlyjs`),
  then every figure is a ``<div>`` with a fixed id (``fig-0``, ``fig-1``, ...)
  written with ``include_plotlyjs=False``.
* Deterministic: the same run gives the same bytes except the one
  generation-timestamp field (``<meta name="generated-at">`` and the line that
  shows it).
* It is rendered from the Jinja2 template ``templates/report.html.j2`` with
  autoescape on (:mod:`.templating`): every user-provided string (config
  values, table cells, names, findings) is passed as plain text and escaped by
  Jinja, with invisible and text-moving characters (bidirectional controls,
  zero-width characters) shown as ``<U+XXXX>`` (:func:`audit_core.safe_text.reveal`).
  Only the project's own HTML (figure divs, plotly.js, the stylesheet) is
  marked safe, each where it is made.

How an audit adds its figures: a builder ``builder(record) -> [(title, figure)]``
that reads ``record.tables`` only, registered with
:func:`~components.report.builders.register_report_figures` (``model``,
``fragility``, ``transport`` and ``receipts`` are registered there; their
builders live next to the page figures, e.g.
:func:`components.figures.fragility.fragility_report_figures`)::

    register_report_figures("transport", transport_report_figures)
"""
from __future__ import annotations

import datetime as _dt
import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import plotly.graph_objects as go
from markupsafe import Markup

from audit_core.errors import AuditInputError
from audit_core.findings import Finding, gate_findings, record_findings, report_findings
from audit_core.findings.gate import VERDICT_WORDS
from audit_core.findings.glossary import explain
from audit_core.findings.records import GATE_KINDS
from audit_core.runs.bundle import write_file
from audit_core.runs.gate import GateResult, compare_runs
from audit_core.runs.privacy import case_data_held
from audit_core.runs.registry import RunRecord

from .builders import figures_for
from .forecast import forecast_report_section
from .plotlyjs import plotlyjs_for
from .style import PRINT_RESIZE_JS, REPORT_CSS
from .templating import render, table_of

__all__ = ["MAX_TABLE_ROWS", "render_report", "key_numbers_frame", "write_report"]

#: Rows of each table written into the report (the Parquet export holds them all).
MAX_TABLE_ROWS = 50
#: Figures shown in the executive summary (the first ones each audit's builder returns).
KEY_FIGURES = 3


def key_numbers_frame(record: RunRecord) -> pd.DataFrame:
    """The run's key numbers (``manifest["key_numbers"]``) as a two-column table ``item``, ``value``.

    Runs without stored key numbers (e.g. saved by the app) get the run's
    identity and table shapes instead.
    """
    key_numbers = record.manifest.get("key_numbers") if isinstance(record.manifest, dict) else None
    if not key_numbers:
        key_numbers = {
            "status": record.status,
            "tables": ", ".join(f"{n} ({df.shape[0]}×{df.shape[1]})" for n, df in record.tables.items()),
        }
    return pd.DataFrame({"item": list(key_numbers), "value": [_fmt(v) for v in key_numbers.values()]})


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, sort_keys=True)
    return "" if v is None else str(v)


class _Figure(NamedTuple):
    """A figure as the template shows it: its heading (plain text) and its ``<div>`` (Markup)."""

    title: str
    div: Markup


class _Verdict(NamedTuple):
    """The verdict line of the summary: its text and its extra CSS class (``""`` for none)."""

    text: str
    css_class: str


def _figure_div(fig: go.Figure, i: int) -> Markup:
    # Safe: HTML written by plotly.py from a figure our builders made; every name from the data in it went through
    # audit_core.safe_text.plotly_text, and plotly serialises the figure as JSON inside its own <script>.
    return Markup(fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"fig-{i}",
                              config={"displaylogo": False, "responsive": True}))


def _plain_title(text: str | None) -> str:
    """A figure's title as one line of text: its subtitle after a dash, Plotly's tags removed and its entities
    (the escaped names from data) read back, to be escaped once for HTML by the template."""
    return html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<br>", " — ", text or ""))).strip()


def _key_figure(title: str, fig: go.Figure, i: int) -> _Figure:
    """A summary figure, full width and shorter, its own title (and subtitle) moved into the heading."""
    own = _plain_title(fig.layout.title.text)
    small = go.Figure(fig).update_layout(title=None, height=300, margin=dict(t=20), legend=dict(font=dict(size=10)))
    return _Figure(own or title, _figure_div(small, i))


def _cube_verdict(record: RunRecord) -> _Verdict | None:
    """The verdict line of a receipts cube run (its two endpoint verdicts and receipt); ``None`` otherwise."""
    verdicts = record.tables.get("verdicts")
    key_numbers = record.manifest.get("key_numbers") if isinstance(record.manifest, dict) else None
    receipt = (key_numbers or {}).get("receipt")
    if verdicts is None or len(verdicts) != 2 or "verdict" not in verdicts:
        return None
    old, new = (str(v) for v in verdicts["verdict"])
    return _Verdict(f"Executed cube: verdict {old} → {new}" + (f"; receipt {receipt}" if receipt else "") + ".", "")


def _gate(record: RunRecord, gate: GateResult | None) -> tuple[_Verdict | None, list[Finding]]:
    """The gate's verdict line and the findings the first page says: the run's own, then the gate's (the
    given gate, else the gate on this run alone); a receipts cube run gets its cube's verdict line."""
    if gate is None and record.audit_kind == "receipts":
        return _cube_verdict(record), record_findings(record)
    if gate is None:
        findings = report_findings(record)  # the run's findings and the gate on this run alone
        if record.audit_kind not in GATE_KINDS or record.status != "done":
            return None, findings
        try:
            gate = compare_runs(record, record)
        except AuditInputError:  # grounds this version cannot read: no verdict line
            return None, findings
        where, receipt = f"this run alone, {gate.scope} scope", ""
    else:
        findings = record_findings(record) + gate_findings(gate)
        where = f"{' + '.join(gate.run_ids_a)} → {' + '.join(gate.run_ids_b)}, {gate.scope} scope"
        receipt = (f" · {VERDICT_WORDS.get(gate.verdict_a, gate.verdict_a)} → "
                   f"{VERDICT_WORDS.get(gate.verdict_b, gate.verdict_b)}")
    text = f"Release gate ({where}): release {VERDICT_WORDS.get(gate.verdict_b, gate.verdict_b)}{receipt}"
    return _Verdict(text, "verdict-pass" if gate.passed else "verdict-block"), findings


#: Lower-case glossary entries that are metric symbols; every other plain lower-case word in a detail line
#: ("source", "model", "threshold") is English there, not the table column the glossary explains.
_METRIC_WORDS = frozenset({"accuracy", "ace", "aurc", "auroc", "coverage", "ece", "fds", "hcep", "mce", "prevalence",
                           "qhat", "rate", "rcma", "risk"})


def _is_symbol(token: str) -> bool:
    """A symbol (``ood_ece``, ``k*``, ``OOD``, ``auroc``), not an English word that shares a glossary entry."""
    return "_" in token or "*" in token or not token.islower() or token in _METRIC_WORDS


def _symbols(details: Sequence[str]) -> list[tuple[str, str]]:
    """The glossary's plain name of every symbol the detail lines use (metric names, grounds), in order."""
    seen: dict[str, str] = {}
    for d in details:
        for token in re.findall(r"[A-Za-z_][A-Za-z0-9_*]*", d):
            text = explain(token) if _is_symbol(token) else None
            if text and token not in seen and len(token) > 2:
                seen[token] = text
    return list(seen.items())


def contents_note(record: RunRecord) -> str:
    """The report's footer: exactly what the report holds, read from the run itself.

    Whether record keys and true labels are in it follows
    :func:`audit_core.runs.privacy.case_data_held` (the run's stored choice).
    """
    head = "This report holds the run's result tables, manifest, configuration and model specification"
    keyed = [df for df in record.tables.values() if "key" in df.columns]
    if not keyed:
        return head + ": no record keys, no true labels and no rows of the audited data."
    if case_data_held(record.tables, record.manifest):
        return (f"{head}. Its per-case tables (the first {MAX_TABLE_ROWS} rows of each) show certified cases by "
                "their record keys, with their true labels: the run was saved with them on request. It holds no "
                "other values of the audited data.")
    return (f"{head}. Its per-case tables show certified cases by number (#1, #2, ...), not by record key, and "
            "no true labels; it holds no rows of the audited data.")


def render_report(record: RunRecord, *, generated_at: str | None = None, gate: GateResult | None = None) -> str:
    """The self-contained HTML report of one run: a one-page executive summary, then the detail.

    Parameters
    ----------
    record : RunRecord
        A loaded run.
    generated_at : str, optional
        The generation timestamp written into the report (default: now, UTC,
        ISO-8601). It is the only field that differs between two reports of
        the same run.
    gate : GateResult, optional
        A release gate whose candidate side holds this run
        (:func:`audit_core.runs.gate.compare_runs`); its verdict, receipt and
        findings open the summary. Without it, model, fragility and
        transport runs get the gate's verdict on this run alone (default
        rules and scope).

    Returns
    -------
    str
        A complete HTML document (plotly.js embedded once, the partial
        cartesian bundle when it draws every figure; no network access). The
        summary (``#executive-summary``: gate verdict, findings, the first
        three figures) is what prints, on one A4 page; tables are capped at
        :data:`MAX_TABLE_ROWS` rows and collapsed.
    """
    stamp = generated_at or _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    try:
        figures, figure_error = figures_for(record), None
    except AuditInputError as err:  # tables this version cannot draw: the report keeps the tables
        figures, figure_error = [], err.message
    # HOOK (forecast): a run whose tables include "forecast" (the Transport run's label-free forecast stage) gets
    # the "Forecast (target labels not yet available)" section; it keys on the tables, not on the run kind.
    forecast = (forecast_report_section(record, max_rows=MAX_TABLE_ROWS, first_figure=len(figures),
                                        figure_div=_figure_div) if "forecast" in record.tables else None)
    forecast_figures = forecast[1] if forecast is not None else []
    js, bundle = plotlyjs_for([*(fig for _, fig in figures), *forecast_figures])
    verdict, findings = _gate(record, gate)
    details = [f.detail for f in findings if f.detail]
    verdicts = record.tables.get("verdicts")
    manifest = {k: v for k, v in record.manifest.items() if k != "key_numbers"}
    documents = (("Manifest", "manifest", manifest), ("Configuration", "config", record.config),
                 ("Model specification", "model-spec", record.model_spec))
    return render(
        "report.html.j2",
        record=record, stamp=stamp, bundle=bundle, max_rows=MAX_TABLE_ROWS,
        # Safe: the project's own stylesheet and print script (constants of .style, no data in them).
        css=Markup(REPORT_CSS), print_js=Markup(PRINT_RESIZE_JS),
        # Safe: plotly.js itself, the vendored partial bundle or plotly.py's own (.plotlyjs), no data in it.
        plotlyjs=Markup(js),
        verdict=verdict, findings=findings, forecast=forecast[0] if forecast is not None else None,
        brief_key_numbers=table_of(key_numbers_frame(record).head(10), table_id="key-numbers-brief", max_rows=MAX_TABLE_ROWS),
        key_figures=[_key_figure(title, fig, i) for i, (title, fig) in enumerate(figures[:KEY_FIGURES])],
        key_numbers=table_of(key_numbers_frame(record), table_id="key-numbers-table", max_rows=MAX_TABLE_ROWS),
        details=details, symbols=_symbols(details),
        verdicts=None if verdicts is None else table_of(verdicts, table_id="verdict-table", max_rows=MAX_TABLE_ROWS),
        figure_error=figure_error,
        more_figures=[_Figure(title, _figure_div(fig, i))
                      for i, (title, fig) in enumerate(figures[KEY_FIGURES:], start=KEY_FIGURES)],
        no_figures_registered=not figures and bool(record.tables),
        tables=[(name, table_of(df, table_id=f"table-{i}", max_rows=MAX_TABLE_ROWS))
                for i, (name, df) in enumerate(record.tables.items())],
        documents=[(title, pre_id, json.dumps(obj, indent=2, sort_keys=True)) for title, pre_id, obj in documents],
        contents_note=contents_note(record),
    )


def write_report(record: RunRecord, path: str | Path, *, generated_at: str | None = None,
                 gate: GateResult | None = None) -> Path:
    """Write :func:`render_report` to ``path`` (UTF-8, atomically: :func:`audit_core.runs.bundle.write_file`)."""
    return write_file(path, render_report(record, generated_at=generated_at, gate=gate).encode("utf-8"))
