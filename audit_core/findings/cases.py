"""The most striking confident-and-fragile case of a Fragility audit, and the sentence that tells its story.

*Most striking* is defined once, here, for the case inspector and the guided
demo: among the confident cases (p̂ ≥ ``confident``) whose certificate flips
within the audit depth K (k* ≤ K), the one that flips with the **fewest**
evidence groups, and among those the one with the **highest p̂**. When no
confident case flips, the rule falls back to every case that flips within K,
and when none flips at all, to the most confident case (its story is then that
it held).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .finding import Finding, num

__all__ = ["STRIKING_RULE", "StrikingCase", "striking_case", "class_name", "class_label", "case_finding"]

#: The rule in words, shown in the UI next to the chosen case.
STRIKING_RULE = ("the confident case (p̂ ≥ {confident:g}) that flips with the fewest evidence groups; "
                 "ties go to the highest p̂")


@dataclass(frozen=True, kw_only=True)
class StrikingCase:
    """The chosen case.

    Attributes
    ----------
    index : int
        Row of the audit summary (and of the certificate batch).
    key : str
        The case's key.
    p_hat : float
        Probability of its predicted class.
    k_star : int
        Groups needed to flip it (``K + 1``: no flip within K).
    pool : {"confident_fragile", "fragile", "confident"}
        Which set it was chosen from (the fallbacks of the module docstring).
    n_pool : int
        How many cases that set holds.
    """

    index: int
    key: str
    p_hat: float
    k_star: int
    pool: str
    n_pool: int


def striking_case(summary: pd.DataFrame, *, k: int, confident: float = 0.8) -> StrikingCase | None:
    """Pick the most striking confident-and-fragile case (the rule of the module docstring).

    Parameters
    ----------
    summary : DataFrame
        The audit summary (``key, p_hat, k_star``), one row per case.
    k : int
        The audit depth K.
    confident : float, default 0.8

    Returns
    -------
    StrikingCase or None
        None for an empty summary.
    """
    if summary.empty:
        return None
    p = summary["p_hat"].to_numpy(dtype=float)
    ks = summary["k_star"].to_numpy(dtype=int)
    flips = ks <= k
    for pool, mask in (("confident_fragile", flips & (p >= confident)), ("fragile", flips),
                       ("confident", np.ones(len(p), dtype=bool))):
        if mask.any():
            break
    idx = np.flatnonzero(mask)
    # fewest groups first, then highest p̂, then row order (stable)
    best = int(idx[np.lexsort((idx, -p[idx], ks[idx]))[0]])
    return StrikingCase(index=best, key=str(summary["key"].iloc[best]), p_hat=float(p[best]), k_star=int(ks[best]),
                        pool=pool, n_pool=int(mask.sum()))


def class_name(names: Sequence[str], code: int) -> str:
    """The declared name of class ``code`` (``"class 1"`` when the names are unknown)."""
    return str(names[code]) if 0 <= code < len(names) else f"class {code}"


def class_label(names: Sequence[str] | None, code: int) -> str:
    """Class ``code`` as the text says it: its declared name quoted (``'yes'``), or ``class 1`` without names."""
    return repr(str(names[code])) if names and 0 <= code < len(names) else f"class {code}"


def case_finding(case: StrikingCase, *, k: int, y_hat: int, flipped_to: int, groups: Sequence[str],
                 class_names: Sequence[str], target: str | None = None) -> Finding:
    """The sentence about the chosen case.

    Parameters
    ----------
    case : StrikingCase
    k : int
        Audit depth K.
    y_hat, flipped_to : int
        Predicted class code, and the class it ends on after the removals.
    groups : sequence of str
        The evidence groups removed, in order, up to the flip (or all K).
    class_names : sequence of str
        Declared class names in code order.
    target : str, optional
        The target's name, said with the class (``default = 'yes'``).
    """
    said = (f"the model gives {target + ' = ' if target else ''}{class_name(class_names, y_hat)!r} a probability "
            f"of {num(case.p_hat, 3)}")
    removed = ", ".join(groups)
    if case.k_star <= k:
        n = case.k_star
        text = (f"Case {case.key}: {said}, yet the prediction flips to "
                f"{class_name(class_names, flipped_to)!r} once {n} evidence group{'s' if n != 1 else ''} "
                f"({removed}) {'are' if n != 1 else 'is'} set to reference values.")
        sev = "warning"
    else:
        text = (f"Case {case.key}: {said}, and the prediction holds even "
                f"with {k} evidence groups ({removed}) set to reference values.")
        sev = "good"
    return Finding(text=text, severity=sev, kind="striking_case",
                   numbers={"p_hat": case.p_hat, "k_star": float(case.k_star), "k": float(k)})
