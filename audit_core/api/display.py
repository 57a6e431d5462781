"""Results a notebook user holds: the audit's own result objects, wrapped so that Jupyter shows them.

:class:`FragilityReport` wraps a :class:`~audit_core.fragility.audit.FragilityAudit`
(with its workspace), :class:`TransportReport` a
:class:`~audit_core.transport.results.TransportResult` (binary) or its
multi-class subclass. Each carries the plain-language findings
(:mod:`audit_core.findings`) and renders, through ``_repr_html_``, the findings,
the head of its table (certificates; verdicts on the headline slice) and one
line naming the figure builder of :mod:`components.figures` to call. Every
string in that HTML goes through :func:`~audit_core.safe_text.html_text`:
column names, class names and values come from the data; the plain ``repr``
goes through :func:`~audit_core.safe_text.terminal_text`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit_core.findings.finding import Finding
from audit_core.fragility.audit import FragilityAudit
from audit_core.findings.forecast import DEFAULT_METHODS
from audit_core.models.training import Workspace
from audit_core.safe_text import html_text, terminal_text
from audit_core.transport.config import TransportConfig
from audit_core.transport.headline import HeadlineSlice
from audit_core.transport.results import TransportResult

from .spec import TableSpec

__all__ = ["FragilityReport", "TransportReport", "html_table", "CERTIFICATE_COLUMNS", "VERDICT_COLUMNS"]

#: Columns of :meth:`FragilityReport.certificate_table`, when present.
CERTIFICATE_COLUMNS = ("key", "y_true", "y_hat", "p_hat", "k_star", "rcma", "d", "fds", "donor_flip_rate", "donor_any")
#: Columns of :meth:`TransportReport.verdict_table`, when present.
VERDICT_COLUMNS = ("analysis", "metric", "alpha", "selection_rate", "id_value", "ood_value", "delta", "ci_low",
                   "ci_high", "tolerance", "verdict", "direction")
_SEVERITY_COLOURS = {"info": "#495057", "good": "#1b7f3b", "warning": "#9a6700", "alert": "#b42318"}
#: The columns of a label-free run's forecast rows shown in place of the verdicts (``verdict_table``).
FORECAST_VERDICT_COLUMNS = ("refit", "quantity", "method", "value", "low", "high", "naive", "status", "reason", "verdict",
                            "direction", "source")


def _cell(value: Any) -> str:
    """One table cell as escaped HTML text (floats to 4 significant digits, NaN empty)."""
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else html_text(f"{float(value):.4g}")
    return html_text(value)


def html_table(frame: pd.DataFrame, *, max_rows: int = 10) -> str:
    """The first ``max_rows`` rows of ``frame`` as an HTML table, every header and cell escaped.

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
    max_rows : int, default 10

    Returns
    -------
    str
        ``<table>…</table>``, followed by ``… N more rows`` when rows were left out.

    Examples
    --------
    >>> html_table(pd.DataFrame({"<b>": ["x & y"], "p": [0.123456]}))
    '<table><thead><tr><th>&lt;b&gt;</th><th>p</th></tr></thead><tbody><tr><td>x &amp; y</td><td>0.1235</td></tr></tbody></table>'
    """
    head = "".join(f"<th>{html_text(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in frame.head(max_rows).itertuples(index=False, name=None))
    more = len(frame) - max_rows
    tail = f"<p>… {more:,} more rows</p>" if more > 0 else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{tail}"


def _findings_html(findings: Sequence[Finding]) -> str:
    if not findings:
        return "<p>No findings: the run was stopped before its evaluation.</p>"
    items = "".join(f'<li style="color:{_SEVERITY_COLOURS.get(f.severity, "inherit")}">'
                    f"<b>{html_text(f.severity)}</b>: {html_text(f.text)}</li>" for f in findings)
    return f"<ul>{items}</ul>"


def _card(title: str, subtitle: str, findings: Sequence[Finding], table_title: str, table: pd.DataFrame,
          figures: str) -> str:
    return (f'<div class="audit-core-report"><h3>{html_text(title)}</h3><p>{html_text(subtitle)}</p>'
            f"<h4>Findings</h4>{_findings_html(findings)}"
            f"<h4>{html_text(table_title)}</h4>{html_table(table)}"
            f"<p>Figures: <code>{html_text(figures)}</code></p></div>")


def _text(title: str, findings: Sequence[Finding], figures: str) -> str:
    """The plain-text ``repr``: one line each, data text shown with :func:`terminal_text` (no escape sequences)."""
    lines = [title] + [f"- [{f.severity}] {f.text}" for f in findings] + [f"Figures: {figures}"]
    return "\n".join(terminal_text(line) for line in lines)


@dataclass(frozen=True, kw_only=True, eq=False)
class FragilityReport:
    """A Fragility audit run from a notebook: the audit, its workspace and its findings.

    Attributes
    ----------
    audit : FragilityAudit
        The audit's tables (``certificates``, ``auroc``, ``incremental``, ``search``, ...) and certificates (``batch``).
    workspace : Workspace
        The dataset, the fitted model, the evidence grouping and the held-out split.
    findings : tuple of Finding
        The plain-language sentences (:func:`audit_core.findings.fragility_findings`).
    spec : TableSpec
    """

    audit: FragilityAudit
    workspace: Workspace
    findings: tuple[Finding, ...]
    spec: TableSpec

    #: How to draw the certificate distributions (shown under the tables in Jupyter).
    FIGURES = ("from components.figures.fragility import distributions_figure; "
               "distributions_figure(report.audit.certificates, k=report.depth)")

    @property
    def depth(self) -> int:
        """The audit depth K."""
        return int(self.audit.batch.protocol.k)

    def certificate_table(self) -> pd.DataFrame:
        """One row per audited case: :data:`CERTIFICATE_COLUMNS` of the audit's ``certificates``.

        Returns
        -------
        pandas.DataFrame of shape (n_cases, <= 10)
        """
        s = self.audit.certificates
        return s.loc[:, [c for c in CERTIFICATE_COLUMNS if c in s.columns]].reset_index(drop=True)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The audit's tables by name (as a saved run stores them)."""
        return self.audit.tables()

    def _title(self) -> tuple[str, str]:
        p = self.audit.batch.protocol
        model = str(self.workspace.model.spec.get("kind", "model"))
        return (f"Fragility audit of {model} on {self.spec.name}",
                f"{len(self.audit.batch)} held-out cases, {p.n_groups} evidence groups, depth K = {p.k}, "
                f"baseline {p.baseline_kind}" + ("" if self.audit.complete else " (stopped before the evaluation)"))

    def _repr_html_(self) -> str:
        title, sub = self._title()
        return _card(title, sub, self.findings, "Certificates (first rows)", self.certificate_table(), self.FIGURES)

    def __repr__(self) -> str:
        title, sub = self._title()
        return _text(f"{title} ({sub})", self.findings, self.FIGURES)


@dataclass(frozen=True, kw_only=True, eq=False)
class TransportReport:
    """A Transport audit run from a notebook: the result, its declaration, headline slice and findings.

    Attributes
    ----------
    result : TransportResult
        The long-form ``table``, the ``verdicts``, the across-refit ``refit_summary``,
        the figure tables in ``extras`` and the ``manifest``
        (a :class:`~audit_core.transport.multiclass.run.MulticlassTransportResult` for a multi-class target).
    config : TransportConfig
        The declaration derived from the :class:`TableSpec`.
    headline : HeadlineSlice
        The slice the findings and :meth:`verdict_table` read.
    findings : tuple of Finding
        The plain-language sentences (:func:`audit_core.findings.transport_findings`).
    multiclass : bool
    spec : TableSpec
    """

    result: TransportResult
    config: TransportConfig
    headline: HeadlineSlice
    findings: tuple[Finding, ...]
    multiclass: bool
    spec: TableSpec

    @property
    def figures(self) -> str:
        """How to draw the reliability diagram of the headline slice (shown under the tables in Jupyter)."""
        if self.config.label_free:
            return ("from components.figures.forecast import forecast_figure; forecast_figure("
                    "report.result.extras, model=report.headline.model, mapping=report.headline.mapping)")
        if self.multiclass:
            return ("from components.figures.transport_mc import mc_reliability_figure; mc_reliability_figure("
                    "report.result.extras['reliability'], table=report.result.table, **report.figure_slice())")
        return ("from components.figures.transport import reliability_figure; reliability_figure("
                "report.result.extras['reliability'], table=report.result.table, **report.figure_slice())")

    def figure_slice(self) -> dict[str, Any]:
        """``model``, ``mapping`` and ``headline`` keywords of the :mod:`components.figures` transport builders."""
        return {"model": self.headline.model, "mapping": self.headline.mapping, "headline": self.headline}

    def verdict_table(self) -> pd.DataFrame:
        """Paired OOD − ID changes with intervals and tolerance verdicts on the headline slice.

        Returns
        -------
        pandas.DataFrame of shape (n_quantities, <= 12)
            :data:`VERDICT_COLUMNS` of ``result.verdicts`` for the headline model, mapping and weighting.
        """
        v, h = self.result.verdicts, self.headline
        if self.config.label_free:  # no target labels: the forecast's own verdicts, default methods, marked as such
            v = self.result.extras.get("forecast", pd.DataFrame())
            if v.empty:
                return v
            v = v[(v["model"] == h.model) & (v["mapping"] == h.mapping) & v["method"].isin(DEFAULT_METHODS.values())]
            return v.loc[:, list(FORECAST_VERDICT_COLUMNS)].reset_index(drop=True)
        if v.empty:
            return v
        v = v[(v["model"] == h.model) & (v["mapping"] == h.mapping) & (v["weighting"] == h.weighting)]
        return v.loc[:, [c for c in VERDICT_COLUMNS if c in v.columns]].reset_index(drop=True)

    def _title(self) -> tuple[str, str]:
        m = self.result.manifest
        kind = "multi-class" if self.multiclass else "binary"
        what = "Transport forecast (target labels not available yet)" if self.config.label_free else "Transport audit"
        return (f"{what} on {self.spec.name} ({kind} target {self.headline.target_definition})",
                (f"{self.spec.domain} = {self.spec.source_domain!r} (source, {m.get('n_source', '?')} records) "
                 f"to {self.spec.target_domain!r} (target, {m.get('n_target', '?')} records); "
                 f"headline slice: {self.headline.describe()}"))

    def _repr_html_(self) -> str:
        title, sub = self._title()
        head = ("Forecasts on the headline slice (first rows; refit by refit)" if self.config.label_free
                else "Verdicts on the headline slice (first rows)")
        return _card(title, sub, self.findings, head, self.verdict_table(),
                     self.figures)

    def __repr__(self) -> str:
        title, sub = self._title()
        return _text(f"{title} ({sub})", self.findings, self.figures)
