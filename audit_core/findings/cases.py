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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit_core.data.targets import ClassTarget, ThresholdTarget, target_from_dict
from audit_core.errors import AuditInputError

from audit_core.runs.keys import TableKey

from .finding import Fact, Finding, Severity, Word

__all__ = ["STRIKING_RULE", "StrikingCase", "striking_case", "class_name", "class_label", "class_words",
           "case_finding", "confident_fragile", "confident_brittle"]

#: The rule in words, shown in the UI next to the chosen case.
STRIKING_RULE = ("the confident case (probability ≥ {confident:g}) that flips with the fewest evidence groups; "
                 "ties go to the highest probability")


@dataclass(frozen=True, kw_only=True)
class StrikingCase:
    """The chosen case.

    Attributes
    ----------
    index : int
        Row of the audit's certificates table (and of the certificate batch).
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


def striking_case(certificates: pd.DataFrame, *, k: int, confident: float = 0.8) -> StrikingCase | None:
    """Pick the most striking confident-and-fragile case (the rule of the module docstring).

    Parameters
    ----------
    certificates : DataFrame
        The audit's certificates table (``key, p_hat, k_star``), one row per case.
    k : int
        The audit depth K.
    confident : float, default 0.8

    Returns
    -------
    StrikingCase or None
        None for an empty table.
    """
    if certificates.empty:
        return None
    p = certificates["p_hat"].to_numpy(dtype=float)
    ks = certificates["k_star"].to_numpy(dtype=int)
    flips = ks <= k
    for pool, mask in (("confident_fragile", flips & (p >= confident)), ("fragile", flips),  # noqa: B007 read after the loop
                       ("confident", np.ones(len(p), dtype=bool))):
        if mask.any():
            break
    idx = np.flatnonzero(mask)
    # fewest groups first, then highest p̂, then row order (stable)
    best = int(idx[np.lexsort((idx, -p[idx], ks[idx]))[0]])
    return StrikingCase(index=best, key=str(certificates["key"].iloc[best]), p_hat=float(p[best]), k_star=int(ks[best]),
                        pool=pool, n_pool=int(mask.sum()))


def confident_fragile(certificates: pd.DataFrame, *, k: int, confident: float = 0.8) -> pd.DataFrame:
    """The confident *fragile* cases: p̂ ≥ ``confident`` and a certificate that flips within K (k* ≤ K), fewest
    groups first, then highest p̂. The case inspector lists them; the certificate sentence counts them with the
    same filters (``certificate_flips``, fact ``confident_fragile``)."""
    pool = certificates[(certificates["p_hat"] >= confident) & (certificates["k_star"] <= k)]
    return pool.sort_values(["k_star", "p_hat"], ascending=[True, False], kind="stable")


def confident_brittle(certificates: pd.DataFrame, *, confident: float = 0.8, label: str = "donor_any") -> pd.DataFrame:
    """The confident *brittle* cases: p̂ ≥ ``confident`` that change class under the donor test (``label``), highest
    p̂ first: the cases the brittle sentence counts (``confident_flips``, fact ``flipped``)."""
    if label not in certificates:
        return certificates.iloc[:0]
    pool = certificates[(certificates["p_hat"] >= confident) & certificates[label].astype(bool)]
    return pool.sort_values("p_hat", ascending=False, kind="stable")


def class_name(names: Sequence[str], code: int) -> str:
    """The declared name of class ``code`` (``"class 1"`` when the names are unknown)."""
    return str(names[code]) if 0 <= code < len(names) else f"class {code}"


def class_label(names: Sequence[str] | None, code: int) -> str:
    """Class ``code`` as a label says it after the word "class": its declared name quoted (``'yes'``); the
    complement of a class target's positive class as ``other than 'yes'`` (never the made-up name ``not yes``);
    the bare code (``1``) without names."""
    if not names or not 0 <= code < len(names):
        return str(code)
    if code == 0 and len(names) == 2 and str(names[0]) == f"not {names[1]}":
        return f"other than {str(names[1])!r}"
    return repr(str(names[code]))


def class_words(config: Mapping[str, Any], target: str | None = None,
                classes: Sequence[str] | None = None) -> tuple[str, ...]:
    """The classes of a target as a sentence names them, in code order, without a made-up class name.

    A class target ``default`` with positive class ``yes`` gives ``("cases with default other than 'yes'",
    "cases with default = 'yes'")``; a threshold target on ``num`` gives ``("cases with num <= 0",
    "cases with num > 0")``; an expression target ``e`` gives ``("cases outside e", "cases in e")``; the
    ``classes`` of a multi-class run give ``("class 'Pass'", …)``. Unknown targets give ``("class 0", "class 1")``.

    Parameters
    ----------
    config : Mapping
        A transport config dict (``targets``, the primary first).
    target : str, optional
        The target's name (default: the primary one).
    classes : sequence of str, optional
        A multi-class run's class names (``manifest["classes"]``).
    """
    if classes:
        return tuple(f"class {str(c)!r}" for c in classes)
    targets = [t for t in config.get("targets") or () if isinstance(t, Mapping)]
    chosen = next((t for t in targets if t.get("name") == target), targets[0] if targets else None)
    try:
        t = target_from_dict(dict(chosen)) if chosen else None
    except AuditInputError:
        t = None
    names = t.binary_names if t is not None else None
    if t is None or not names:
        return ("class 0", "class 1")
    if isinstance(t, ClassTarget):  # target_from_dict builds the class of the dict's "kind"
        return (f"cases with {t.name} other than {str(t.positive)!r}", f"cases with {t.name} = {str(t.positive)!r}")
    if isinstance(t, ThresholdTarget):
        return (f"cases with {t.column} {names[0]}", f"cases with {t.column} {names[1]}")
    return (f"cases outside {t.name}", f"cases in {t.name}")


def case_finding(case: StrikingCase, *, k: int, y_hat: int, flipped_to: int, groups: Sequence[str],
                 classes: Sequence[str], run_id: str = "") -> Finding:
    """The sentence about the chosen case, its probability and k* keyed into the fragility run's ``certificates``.

    Parameters
    ----------
    case : StrikingCase
    k : int
        Audit depth K.
    y_hat, flipped_to : int
        Predicted class code, and the class it ends on after the removals.
    groups : sequence of str
        The evidence groups removed, in order, up to the flip (or all K).
    classes : sequence of str
        The classes in code order as a sentence names them (:func:`class_words`).
    run_id : str, optional
        The saved fragility run whose ``certificates`` the facts read.
    """
    def said(code: int) -> str:
        name = str(classes[code]) if 0 <= code < len(classes) else f"class {code}"
        return name[len("cases with "):] if name.startswith("cases with ") else name

    key = TableKey.of("certificates", "p_hat", key=case.key)
    facts = [Fact("p_hat", case.p_hat, key, "num3", run_id),
             Fact("k_star", float(case.k_star), TableKey(key.table, "k_star", key.where), "int", run_id),
             Fact("k", float(k), None, "int")]
    labels = {"case": case.key, "predicted": said(y_hat), "flipped": said(flipped_to), "removed": ", ".join(groups)}
    sev: Severity
    if case.k_star <= k:
        n = case.k_star
        template = ("Case {case}: the model says {predicted} with probability {p_hat}, yet the prediction flips to "
                    "{flipped} once {k_star} evidence group" + ("s ({removed}) are" if n != 1 else " ({removed}) is")
                    + " set to reference values.")
        word, sev = Word("flips", "within_limit", ("k_star", "k")), "warning"
    else:
        template = ("Case {case}: the model says {predicted} with probability {p_hat}, and the prediction holds even "
                    "with {k} evidence groups ({removed}) set to reference values.")
        word, sev = Word("holds", "above_limit", ("k_star", "k")), "good"
    return Finding.of(kind="striking_case", severity=sev, template=template, facts=facts, words=(word,),
                      labels=labels, detail=f"k* = {case.k_star}, p̂ = {case.p_hat:.3f}, K = {k}")
