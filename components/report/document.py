"""Self-contained HTML report of a saved run.

* Figures are rebuilt from the run's **stored result tables** through the
  per-audit registry (:data:`components.report.builders.REPORT_FIGURES`);
  nothing is recomputed and no raw data is read. Unknown kinds fall back to
  tables only.
* The report opens offline: plotly.js is embedded **once** in ``<head>``,
  then every figure is a ``<div>`` with a fixed id (``fig-0``, ``fig-1``, ...)
  written with ``include_plotlyjs=False``.
* Deterministic: the same run gives the same bytes except the one
  generation-timestamp field (``<meta name="generated-at">`` and the line that
  shows it).
* Every user-provided string (config values, table cells, names) is escaped.

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
from pathlib import Path

import pandas as pd
from plotly.offline import get_plotlyjs

from audit_core.errors import AuditInputError
from audit_core.findings import record_findings
from audit_core.runs.bundle import write_file
from audit_core.runs.registry import RunRecord

from .builders import figures_for

__all__ = ["MAX_TABLE_ROWS", "render_report", "summary_frame", "write_report"]

#: Rows of each table written into the report (the exports hold them all).
MAX_TABLE_ROWS = 200


def summary_frame(record: RunRecord) -> pd.DataFrame:
    """The run's summary (``manifest["summary"]``) as a two-column table ``item``, ``value``.

    Runs without a stored summary (e.g. saved by the app) get the run's
    identity and table shapes instead.
    """
    summary = record.manifest.get("summary") if isinstance(record.manifest, dict) else None
    if not summary:
        summary = {
            "status": record.status,
            "tables": ", ".join(f"{n} ({df.shape[0]}×{df.shape[1]})" for n, df in record.tables.items()),
        }
    return pd.DataFrame({"item": list(summary), "value": [_fmt(v) for v in summary.values()]})


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, sort_keys=True)
    return "" if v is None else str(v)


def _table_html(df: pd.DataFrame, *, table_id: str) -> str:
    note = ""
    if len(df) > MAX_TABLE_ROWS:
        note = f"<p class='note'>First {MAX_TABLE_ROWS} of {len(df):,} rows; the Parquet export holds all.</p>"
        df = df.head(MAX_TABLE_ROWS)
    body = df.to_html(index=False, escape=True, na_rep="—", border=0, table_id=table_id, classes="tbl")
    return body + note


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#1f2933;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #d9e2ec;padding-bottom:.3rem}
.meta{color:#52606d}.note{color:#52606d;font-size:.9rem}
table.tbl{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
table.tbl th,table.tbl td{border:1px solid #d9e2ec;padding:.25rem .5rem;text-align:left}
table.tbl th{background:#f0f4f8}pre{background:#f5f7fa;padding:.8rem;overflow:auto;font-size:.8rem}
.status-failed{color:#b42318;font-weight:600}.status-done{color:#1e7b34;font-weight:600}
"""


def render_report(record: RunRecord, *, generated_at: str | None = None) -> str:
    """The self-contained HTML report of one run.

    Parameters
    ----------
    record : RunRecord
        A loaded run.
    generated_at : str, optional
        The generation timestamp written into the report (default: now, UTC,
        ISO-8601). It is the only field that differs between two reports of
        the same run.

    Returns
    -------
    str
        A complete HTML document (plotly.js embedded once; no network access).
    """
    stamp = generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<meta name='generated-at' content='{e(stamp)}'>",
        f"<title>Reliability audit report · {e(record.audit_kind)} · {e(record.run_id)}</title>",
        f"<style>{_CSS}</style>",
        f"<script type='text/javascript'>{get_plotlyjs()}</script>",
        "</head><body>",
        f"<h1>Reliability audit report: {e(record.audit_kind)}</h1>",
        f"<p class='meta'>Run <code>{e(record.run_id)}</code> · created {e(record.created_at)} · status "
        f"<span class='status-{e(record.status)}'>{e(record.status)}</span></p>",
        f"<p class='meta'>Dataset <b>{e(record.dataset_name)}</b> · fingerprint <code>{e(record.dataset_fingerprint)}</code>"
        f" · grouping <code>{e(record.grouping_hash or '—')}</code> · model <code>{e(record.model or '—')}</code></p>",
        f"<p class='meta' id='generated-at'>Report generated at {e(stamp)}</p>",
    ]
    if record.error:
        parts.append(f"<p class='status-failed'>Error: {e(record.error)}</p>")
    findings = record_findings(record)
    if findings:  # first, before any table: what the run found, in words
        parts += ["<h2>Findings</h2>", "<ul id='findings'>"]
        parts += [f"<li class='finding-{e(f.severity)}'>{e(f.text)}</li>" for f in findings]
        parts.append("</ul>")
    parts += ["<h2>Summary</h2>", _table_html(summary_frame(record), table_id="summary-table")]
    verdicts = record.tables.get("verdicts")
    if verdicts is not None:
        parts += ["<h2>Verdicts</h2>", _table_html(verdicts, table_id="verdict-table")]
    try:
        figures = figures_for(record)
    except AuditInputError as err:  # tables this version cannot draw: the report keeps the tables
        figures = []
        parts.append(f"<p class='note'>{e(err.message)}</p>")
    if figures:
        parts.append("<h2>Figures</h2>")
        for i, (title, fig) in enumerate(figures):
            div = fig.to_html(
                full_html=False,
                include_plotlyjs=False,
                div_id=f"fig-{i}",
                config={"displaylogo": False, "responsive": True},
            )
            parts.append(f"<h3>{e(title)}</h3>{div}")
    elif record.tables:
        parts.append("<p class='note'>No figures are registered for this audit kind; the tables follow.</p>")
    parts.append("<h2>Result tables</h2>")
    for i, (name, df) in enumerate(record.tables.items()):
        parts += [f"<h3>{e(name)} <span class='note'>({df.shape[0]:,} × {df.shape[1]})</span></h3>",
                  _table_html(df, table_id=f"table-{i}")]
    manifest = {k: v for k, v in record.manifest.items() if k != "summary"}
    parts += [
        "<h2>Manifest</h2><p class='note'>Seeds, SHA-256 of the inputs, library versions and execution backend.</p>",
        f"<pre id='manifest'>{e(json.dumps(manifest, indent=2, sort_keys=True))}</pre>",
        "<h2>Configuration</h2>",
        f"<pre id='config'>{e(json.dumps(record.config, indent=2, sort_keys=True))}</pre>",
        "<h2>Model specification</h2>",
        f"<pre id='model-spec'>{e(json.dumps(record.model_spec, indent=2, sort_keys=True))}</pre>",
        "<p class='note'>This report holds result tables only, never the audited data.</p>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_report(record: RunRecord, path: str | Path, *, generated_at: str | None = None) -> Path:
    """Write :func:`render_report` to ``path`` (UTF-8, atomically: :func:`audit_core.runs.bundle.write_file`)."""
    return write_file(path, render_report(record, generated_at=generated_at).encode("utf-8"))
