"""The findings panel: an audit's plain-language sentences in one bordered box, shown after a run.

Every sentence is rendered with ``st.text`` (never as Markdown), because
sentences carry names that come from the user's data (domain values, model
names). Severity is an icon in front of the sentence.
"""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from audit_core.findings import Finding, fragility_findings, transport_findings

__all__ = ["ICONS", "findings_panel", "fragility_panel", "transport_panel"]

#: Severity -> icon shown before the sentence.
ICONS = {"info": "ℹ️", "good": "✓", "warning": "⚠️", "alert": "✖"}  # glyphs every text font has (no emoji font needed)
TITLE = "What this run found"


def findings_panel(findings: Sequence[Finding], *, key: str) -> None:
    """One ``st.container(border=True)`` holding the sentences in plain words, each with its severity icon, and
    below them, closed, the same findings in symbols (metric names, rule ids)."""
    with st.container(border=True, key=key):
        st.markdown(f"**{TITLE}**")
        if not findings:
            st.text("No finding could be stated for this run.")
        for f in findings:
            st.text(f"{ICONS.get(f.severity, ICONS['info'])} {f.text}")
        details = [f.detail for f in findings if f.detail]
        if details:
            with st.expander("In symbols (for analysts)"):
                for d in details:
                    st.text(d)


def fragility_panel(audit, compare=None) -> None:
    """Findings of a Fragility audit; ``compare`` is the stored ``(table, batches)`` of the model comparison."""
    findings_panel(fragility_findings(audit, models=compare[0] if compare else None), key="view_fr_findings")


def transport_panel(result, *, selection_rate: float) -> None:
    """Findings of a Transport result on its headline slice, at the operating rate chosen on the page."""
    findings_panel(transport_findings(result, selection_rate=float(selection_rate)), key="view_tr_findings")
