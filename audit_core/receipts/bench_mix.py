"""What a Receipts benchmark is made of: receipt-family types, quota apportioning, balance and difficulty tables.

Receipt-family types (of an executed receipt, :func:`family_type`)
    ``none`` (endpoints agree, empty receipt), ``single`` (one minimal set
    of one source, ``{G}``), ``alternatives`` (two or more minimal sets,
    ``{G} | {N}`` or ``{G} | {N,A}``), ``joint`` (one minimal set of two or
    more sources, ``{G,N}``).

These functions describe the generated cases only; scoring predictions
against them is :mod:`.bench_metrics`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = ["FAMILY_TYPES", "family_type", "apportion", "balance_frame", "difficulty_frame", "mean_or_nan"]


#: Receipt-family types, in display order.
FAMILY_TYPES: tuple[str, ...] = ("none", "single", "alternatives", "joint")


def family_type(receipt: Iterable[Iterable[str]]) -> str:
    """Type of a receipt family (see module docs).

    Examples
    --------
    >>> F = frozenset
    >>> [family_type(r) for r in ((), (F("G"),), (F("G"), F("N")), (F("GN"),))]
    ['none', 'single', 'alternatives', 'joint']
    """
    sets = [frozenset(s) for s in receipt]
    if not sets:
        return "none"
    if len(sets) > 1:
        return "alternatives"
    return "single" if len(sets[0]) == 1 else "joint"


def apportion(n: int, weights: Sequence[float]) -> list[int]:
    """Split ``n`` into integer counts proportional to ``weights`` (largest remainder).

    The counts sum to ``n`` and each is within 1 of its exact share; ties in
    the remainder go to the earlier weight.

    Examples
    --------
    >>> apportion(10, (0.15, 0.5, 0.35)), apportion(7, (1, 1)), apportion(0, (0.3, 0.7))
    ([2, 5, 3], [4, 3], [0, 0])
    """
    total = float(sum(weights))
    if n <= 0 or total <= 0:
        return [0] * len(weights)
    exact = [n * w / total for w in weights]
    out = [int(np.floor(x)) for x in exact]
    # remainders rounded so that float noise never breaks a tie
    order = sorted(range(len(weights)), key=lambda i: (-round(exact[i] - out[i], 9), i))
    for i in order[: n - sum(out)]:
        out[i] += 1
    return out


def mean_or_nan(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else float("nan")


def balance_frame(frame: pd.DataFrame, *, target: float | None) -> pd.DataFrame:
    """Change share of the base cases in each stratum x split, beside its quota.

    Parameters
    ----------
    frame : DataFrame
        :meth:`Benchmark.to_frame` (controls are left out).
    target : float or None
        The configured change share (``None``: not steered).

    Returns
    -------
    DataFrame
        One row per (stratum, split): ``cases``, ``noop``, ``single``,
        ``multi``, ``changed``, ``change_share``, ``target``,
        ``change_share_single``, ``change_share_multi``.
    """
    base = frame[frame["control"] == ""]
    rows = []
    for (stratum, split), part in base.groupby(["stratum", "split"], sort=True):
        kinds = part["mutation"]
        rows.append({
            "stratum": stratum, "split": split, "cases": len(part),
            "noop": int((kinds == "noop").sum()), "single": int((kinds == "single").sum()),
            "multi": int((kinds == "multi").sum()), "changed": int(part["changed"].sum()),
            "change_share": float(part["changed"].mean()),
            "target": float("nan") if target is None else float(target),
            "change_share_single": mean_or_nan(part.loc[kinds == "single", "changed"].to_numpy(dtype=float)),
            "change_share_multi": mean_or_nan(part.loc[kinds == "multi", "changed"].to_numpy(dtype=float)),
        })
    return pd.DataFrame(rows, columns=["stratum", "split", "cases", "noop", "single", "multi", "changed",
                                       "change_share", "target", "change_share_single", "change_share_multi"])


def difficulty_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Receipt-family mix among the verdict-changing base cases.

    Returns
    -------
    DataFrame
        One row per (mutation in ``single``, ``multi``, ``all``; family type
        other than ``none``): ``cases`` and ``share`` (of that mutation's
        changing cases), and ``in_training`` (whether the learned baseline's
        training set, single-source and no-op train cases, holds any).
    """
    base = frame[(frame["control"] == "") & frame["changed"]]
    train_types = set(base.loc[(base["split"] == "train") & (base["mutation"] != "multi"), "family"])
    rows = []
    for scope, part in (("single", base[base["mutation"] == "single"]), ("multi", base[base["mutation"] == "multi"]),
                        ("all", base)):
        for t in FAMILY_TYPES[1:]:
            k = int((part["family"] == t).sum())
            rows.append({"mutation": scope, "family": t, "cases": k,
                         "share": k / len(part) if len(part) else float("nan"), "in_training": t in train_types})
    return pd.DataFrame(rows, columns=["mutation", "family", "cases", "share", "in_training"])
