"""The "Why it moved" tab of the Transport page: the ranked feature shift and its link to the run's results."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.figures.shift import feature_shift_figure, pooled_domain_auroc

__all__ = ["SHIFT_VIEW_COLUMNS", "shift_view_table", "shift_tab"]

#: Columns of the tab's table, in order.
SHIFT_VIEW_COLUMNS = ("rank", "feature", "kind", "psi", "test", "p_value", "wasserstein_sd", "domain_auroc",
                      "missing_source", "missing_target", "targeted_share", "targeted_harm_ood",
                      "subgroup_auroc_spread", "link")


def shift_view_table(shift: pd.DataFrame) -> pd.DataFrame:
    """The ranked shift table with the columns the page shows (:data:`SHIFT_VIEW_COLUMNS`); p-values as text (``1.2e-34``)."""
    out = shift.sort_values("rank")[[c for c in SHIFT_VIEW_COLUMNS if c in shift.columns]].reset_index(drop=True)
    if "p_value" in out:
        out["p_value"] = [f"{p:.2g}" if pd.notna(p) else "" for p in out["p_value"]]
    return out


def shift_tab(extras) -> None:
    """Render the tab from a result's extras (``feature_shift``, ``domain_classifier``)."""
    shift = extras.get("feature_shift")
    if shift is None or shift.empty:
        st.caption("The feature shift needs a target domain (it is not computed in single-domain runs).")
        return
    st.caption("Which raw features moved between the source and the target, ranked by PSI (source-quantile bins, "
               "missing values a bin of their own), with KS (numeric) or χ² (categorical), the Wasserstein distance "
               "in source SDs and a cross-fitted domain-classifier AUROC (0.5: the feature cannot tell the domains "
               "apart). Each feature is linked to the run: whether the targeted deletion removed it, and how much "
               "the AUROC change differs across its levels when it is a declared subgroup column.")
    st.plotly_chart(feature_shift_figure(shift, domain_auroc=pooled_domain_auroc(extras)), key="view_tr_shift")
    st.dataframe(shift_view_table(shift), key="view_tr_shift_table", hide_index=True)
