"""The sentence about a Transport run's feature shift: how separable the domains are and which features moved."""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core.runs.keys import TableKey, read_key

from .finding import Fact, Finding, Word, and_list

__all__ = ["shift_finding", "PSI_MAJOR"]

#: PSI at or above which a feature's shift is called major (the usual rule of thumb: < 0.1 small, 0.1–0.25 moderate).
PSI_MAJOR = 0.25


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
    tables = {"feature_shift": shift, **({"domain_classifier": domain} if domain is not None else {})}
    head = shift.sort_values("rank").head(top)
    facts, words, labels, named = [], [], {}, []
    for i, rank in enumerate(head["rank"].tolist()):
        key = TableKey.of("feature_shift", "psi", rank=int(rank))
        psi, _ = read_key(tables, key)
        if psi is None:
            return None
        facts.append(Fact(f"psi{i}", psi, key, "num2"))
        labels[f"feature{i}"] = str(head["feature"].iloc[i])
        named.append(f"{{feature{i}}} (PSI {{psi{i}}})")
    auc_key = TableKey.of("domain_classifier", "auroc", part="pooled")
    auc, _ = read_key(tables, auc_key)
    if auc is not None:
        facts.append(Fact("domain_auroc", auc, auc_key, "num2"))
        template = ("A classifier tells target from source records with a cross-fitted AUROC of {domain_auroc}; the "
                    "most shifted features are " + ", ".join(named) + ".")
    else:
        template = "The most shifted features are " + ", ".join(named) + "."
    for col, said in (("targeted_flagged", "The targeted deletion removes {0} and harms the target-domain AUROC more "
                                           "than most random deletions do."),
                      ("heterogeneity_flagged", "The AUROC change differs across the levels of {0} by more than "
                                                "its tolerance.")):
        flagged = [i for i in range(len(head)) if col in head and bool(head[col].iloc[i])]
        for i in flagged:
            key = TableKey.of("feature_shift", col, rank=int(head["rank"].iloc[i]))
            facts.append(Fact(f"{col}{i}", 1.0, key, "int"))
            words.append(Word("", "flag", (f"{col}{i}",)))
        if flagged:
            template += " " + said.format(and_list([f"{{feature{i}}}" for i in flagged]))
    major = float(head["psi"].iloc[0]) >= PSI_MAJOR
    targeted = bool(head.get("targeted_flagged", pd.Series(False, index=head.index)).astype(bool).any())
    return Finding.of(kind="feature_shift", severity="warning" if major or targeted else "info", template=template,
                      facts=facts, words=words, labels=labels,
                      detail="PSI: population stability index of each feature, source vs target" if np.isfinite(
                          float(head["psi"].iloc[0])) else "")
