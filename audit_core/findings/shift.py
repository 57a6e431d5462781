"""The sentence about a Transport run's feature shift: how separable the domains are and which features moved."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .finding import Finding, num

__all__ = ["shift_finding", "PSI_MAJOR"]

#: PSI at or above which a feature's shift is called major (the usual rule of thumb: < 0.1 small, 0.1–0.25 moderate).
PSI_MAJOR = 0.25


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def shift_finding(shift: pd.DataFrame | None, domain: pd.DataFrame | None = None, *, top: int = 3) -> Finding | None:
    """One finding from the ``feature_shift`` (and ``domain_classifier``) tables; None without them.

    Parameters
    ----------
    shift : pandas.DataFrame, shape (F, ·)
        The run's ``feature_shift`` table (ranked, with the link columns).
    domain : pandas.DataFrame, optional
        The run's ``domain_classifier`` table (``part``, ``auroc``).
    top : int, default 3
        Features named.
    """
    if shift is None or shift.empty:
        return None
    head = shift.sort_values("rank").head(top)
    named = ", ".join(f"{f} (PSI {num(p)})" for f, p in zip(head["feature"], head["psi"]))
    auc = np.nan
    if domain is not None and not domain.empty and "pooled" in set(domain["part"]):
        auc = float(domain.loc[domain["part"] == "pooled", "auroc"].iloc[0])
    lead = (f"A classifier tells target from source records with a cross-fitted AUROC of {num(auc)}; the most "
            f"shifted features are {named}." if np.isfinite(auc) else f"The most shifted features are {named}.")
    flagged = head["feature"][head.get("targeted_flagged", pd.Series(False, index=head.index)).astype(bool)].tolist()
    hetero = head["feature"][head.get("heterogeneity_flagged", pd.Series(False, index=head.index)).astype(bool)].tolist()
    tail = []
    if flagged:
        tail.append(f"The targeted deletion removes {_and(flagged)} and harms the target-domain AUROC more than "
                    f"most random deletions do.")
    if hetero:
        tail.append(f"The AUROC change differs across the levels of {_and(hetero)} by more than its tolerance.")
    text = " ".join([lead, *tail])
    numbers = {"domain_auroc": auc, **{f"psi:{f}": float(p) for f, p in zip(head["feature"], head["psi"])}}
    major = float(head["psi"].iloc[0]) >= PSI_MAJOR
    return Finding(text=text, numbers=numbers, severity="warning" if major or flagged else "info", kind="feature_shift")
