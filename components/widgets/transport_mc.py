"""Widget helpers of the Transport page for a multi-class target (a class target without a positive class).

The page's flow is the binary one (declaration, locked tolerances, model
section, a :class:`components.jobs.Job` with progress and Cancel, a saved
registry run); :func:`components.widgets.transport.run_section` dispatches
to :func:`audit_core.transport.multiclass.run.run_multiclass_transport` when
the primary target is multi-class. This module holds what differs: the
notes said before the run (:func:`setup_note`) and the result tabs
(:func:`results_view`). Display keys ``view_tr_mc_``, value widgets ``tr_mc_``.
"""
from __future__ import annotations

import streamlit as st

from audit_core.transport.multiclass.classes import is_multiclass_definition
from audit_core.transport.multiclass.run import multiclass_mappings
from components.feedback import md_escape
from components.figures import transport_mc as tmf
from components.glossary import symbols_expander, table as show_table
from components.state import PERSIST
from components.widgets.transport import downloads, id_ood_table, verdict_table

__all__ = ["is_multiclass_choice", "setup_note", "results_view", "NOT_RUN"]

#: What the multi-class run does not run, and where its place on the page is taken.
NOT_RUN = ("Not run for a multi-class target: the target-definition and evidence-degradation stresses, subgroup "
           "heterogeneity and the feature shift (*Why it moved*). Per-class coverage and set size (Conformal tab) "
           "are its class heterogeneity.")


def is_multiclass_choice(ds_config, decl: dict) -> bool:
    """Whether the primary target chosen on the page is a class target without a positive class."""
    chosen = decl.get("targets") or []
    first = next((t for t in ds_config.targets if t["name"] == chosen[0]), None) if chosen else None
    return first is not None and is_multiclass_definition(first)


def setup_note(mappings) -> None:
    """Say before the run what the multi-class protocol runs instead (mappings, targets, stresses)."""
    try:
        mc = multiclass_mappings(mappings)
    except Exception:  # an unknown name is refused at the run, with its declared message
        mc = ()
    pairs = {"platt": "temperature", "temperature": "temperature", "isotonic": "vector", "beta": "vector",
             "raw": "raw"}
    said = ", ".join(f"{m} → {pairs[m]}" for m in mappings if m in pairs)
    st.info("**Multi-class target** (no positive class): the run is multi-class Transport. The mappings chosen run "
            f"as their multi-class counterparts ({md_escape(said or 'none chosen')}; runs "
            f"{md_escape(', '.join(mc) or 'nothing')}): Platt's slope becomes a temperature, the flexible maps become "
            "vector scaling. Only the primary target definition is audited; the stresses chosen above are not run. "
            "Venn-Abers has no multi-class counterpart. Conformal sets use the LAC, APS and RAPS scores.",
            icon=":material/category:")


def results_view(result, *, model: str, mapping: str, selection_rate: float, stale: bool = False,
                 headline=None) -> None:
    """The result tabs of a multi-class run: only tabs with content; what was not run is said above them."""
    classes = list(result.classes or result.manifest.get("classes", []))
    st.caption("Classes (code order): " + ", ".join(f"`{md_escape(c)}`" for c in classes))
    st.caption(NOT_RUN)
    tabs = st.tabs(["ID vs OOD", "Calibration", "Selective", "Conformal", "Downloads"])
    with tabs[0]:
        idood = id_ood_table(result.table, model=model, mapping=mapping)
        show_table(idood, key="view_tr_idood", hide_index=True)
        show_table(verdict_table(result.verdicts, model=model, mapping=mapping), key="view_tr_verdicts",
                   hide_index=True)
        symbols_expander(idood["metric"], key="view_tr_symbols")
    with tabs[1]:
        st.plotly_chart(tmf.mc_reliability_figure(result.extras["reliability"], model=model, mapping=mapping,
                                                  table=result.table, headline=headline),
                        key="view_tr_mc_reliability")
        st.caption("Top-label calibration: records binned by their largest probability; a bin's accuracy is the "
                   "share whose most probable class is right (records of every refit pooled, 95 % bootstrap band).")
    with tabs[2]:
        st.plotly_chart(tmf.mc_risk_selection_figure(result.extras["curves"], result.table, model=model,
                                                     mapping=mapping, selection_rate=selection_rate,
                                                     headline=headline),
                        key="view_tr_mc_risk")
    with tabs[3]:
        alphas = result.manifest["config"]["alphas"]
        c1, c2 = st.columns(2)
        alpha = c1.selectbox("Conformal α", alphas, index=min(1, len(alphas) - 1), key="tr_mc_alpha",
                             persist_state=PERSIST)
        method = c2.radio("Sets", ["marginal", "label_conditional"], horizontal=True, key="tr_mc_method",
                          format_func=lambda m: m.replace("_", "-"), persist_state=PERSIST)
        st.plotly_chart(tmf.mc_class_conformal_figure(result.table, model=model, mapping=mapping, alpha=float(alpha),
                                                      class_names=classes, method=method, headline=headline),
                        key="view_tr_mc_conformal")
    with tabs[4]:
        downloads(result, stale=stale)
