"""Sections of the Home page."""
from __future__ import annotations

import streamlit as st

from components.feedback import code, guarded, md_escape
from components.state import WORKSPACE_SLOT, Keys, current_provenance, registry

__all__ = ["questions", "session_summary", "recent_runs"]


def questions() -> None:
    st.markdown(
        """
This dashboard audits a probabilistic classifier on tabular data. It answers three questions:

- **Fragility** — which confident predictions collapse when a block of evidence goes missing?
- **Transport** — do probabilities, abstention thresholds and conformal sets keep their meaning on a new domain?
- **Receipts** — when an evaluator's verdict changes, which change accounts for it?

Start on **Data & groups**: pick a bundled sample or upload a table, declare the target and the
evidence groups, then train or import a model. Every trained model is saved in the run registry.
"""
    )


def session_summary() -> None:
    from components.workspaces import DEMO, exists, label

    st.subheader("This session")
    if exists(DEMO):
        st.caption(f"Showing {md_escape(label().lower())} (switch in the sidebar).")
    table = st.session_state.get(Keys.TABLE)
    ws = st.session_state.get(Keys.WORKSPACE)
    c1, c2 = st.columns(2)
    if table is None:
        c1.info("No data loaded yet.")
    else:
        c1.metric("Data", table.name, f"{table.frame.shape[0]:,} rows × {table.frame.shape[1]} columns", delta_color="off",
                  delta_arrow="off")
    if ws is None:
        c2.info("No model yet.")
    else:
        auc = ws.metrics.query("split == 'test' and metric == 'auroc'")["value"].iloc[0]
        c2.metric("Model", str(ws.model.spec.get("kind")), f"held-out AUROC {auc:.3f}", delta_color="off", delta_arrow="off")
        changed = WORKSPACE_SLOT.changed(current_provenance())
        if changed:
            c2.caption(f"Trained on {md_escape(WORKSPACE_SLOT.describe(changed))}: retrain it on "
                       "Data & groups before auditing.")


def recent_runs() -> None:
    st.subheader("Recent runs")
    with guarded("reading the run registry"):
        reg = registry()
        runs = reg.list_runs()
        st.caption(f"Registry: {code(reg.path)}")
        if runs.empty:
            st.info("No saved runs yet.")
        else:
            st.dataframe(runs.head(20), hide_index=True, key="home_runs")
