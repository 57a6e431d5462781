"""Benchmark scores that inertia cannot game: changing-case accuracy with intervals, macro accuracy, the paper's shape.

A benchmark whose cases mostly do not change the verdict rewards a lazy
evaluator: "no change" (an empty receipt) is then the majority answer. The
quantities here keep that visible.

Receipt-family types and the balance tables live in :mod:`.bench_mix`.

Scores of one evaluation set (:func:`score_predictions`)
    ``receipt_acc`` over all cases *and* ``receipt_acc_changed`` over the
    verdict-changing cases only, with a seeded **percentile bootstrap**
    interval over those cases (cases resampled with replacement; the
    interval is the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
    the resampled means). Cases of one unit share a base world, so the
    case-level interval is narrower than a unit-level one would be.
    ``macro_family_acc`` is the mean, over the family types present in the
    gold, of the exact receipt accuracy within each type.

The paper's shape (:func:`paper_shape`)
    Each claim is stated with the criterion that decides it and the numbers;
    a claim that the numbers do not support says "does not hold".
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .accounting import Gold, Prediction, account, control_consistency
from .bench_mix import FAMILY_TYPES, family_type, mean_or_nan

__all__ = [
    "bootstrap_interval",
    "score_predictions",
    "paper_shape",
]


def bootstrap_interval(values: Sequence[float], *, n_boot: int = 1000, level: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean.

    Parameters
    ----------
    values : sequence of float, shape (n,)
        Per-case scores (e.g. 1.0 = receipt right).
    n_boot : int, default 1000
        Resamples of ``n`` cases drawn with replacement.
    level : float, default 0.95
    seed : int, default 0

    Returns
    -------
    (lo, hi) : tuple of float
        ``nan`` for an empty input.

    Examples
    --------
    >>> bootstrap_interval([1.0] * 5)
    (1.0, 1.0)
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def score_predictions(gold: Mapping[str, Gold], predictions: Sequence[Prediction], *,
                      base_predictions: Sequence[Prediction] = (), control: str = "",
                      n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """Scores of one evaluation set: overall and changing-case accuracies, macro family accuracy.

    Parameters
    ----------
    gold : mapping case_id -> Gold
        The evaluation set.
    predictions : sequence of Prediction
    base_predictions : sequence of Prediction, optional
        Predictions of the base cases, for the consistency of a control set.
    control : str, default ""
        The control kind of the set (``""`` for base cases); with
        ``base_predictions`` its consistency rate is reported. ``gold`` must
        then also hold the base cases' gold (they are not scored).
    n_boot, level, seed
        Of the bootstrap interval of ``receipt_acc_changed``.

    Returns
    -------
    dict
        ``n``, ``n_changed``, ``verdict_acc``, ``verdict_acc_changed``,
        ``receipt_acc``, ``receipt_acc_changed`` with ``_lo``/``_hi``,
        ``macro_family_acc``, ``verdicts_right_receipt_wrong`` (share of
        changing cases with both endpoint verdicts right and the receipt
        wrong), ``drift``, ``inertia``, ``misattribution`` (rates) and
        ``consistency`` (``nan`` unless a control set).
    """
    scored = {k: g for k, g in gold.items() if g.control == control}
    acc = account(scored, predictions)
    pc = acc.per_case
    types = np.array([family_type(scored[c].receipt) for c in pc["case_id"]], dtype=object)
    right = pc["receipt_correct"].to_numpy(dtype=bool)
    changed = pc["gold_change"].to_numpy(dtype=bool)
    has_v = pc["verdicts_correct"].notna().to_numpy()
    v_ok = pc["verdicts_correct"].fillna(False).to_numpy(dtype=bool)
    lo, hi = bootstrap_interval(right[changed].astype(float), n_boot=n_boot, level=level, seed=seed)
    per_type = [mean_or_nan(right[types == t]) for t in FAMILY_TYPES if (types == t).any()]
    cons = float("nan")
    if control and base_predictions:
        cons = control_consistency(gold, list(base_predictions) + list(predictions)).rates.get(control, float("nan"))
    ch_v = changed & has_v
    return {
        "n": acc.n, "n_changed": int(changed.sum()),
        "verdict_acc": acc.verdict_accuracy, "verdict_acc_changed": mean_or_nan(v_ok[ch_v]),
        "receipt_acc": acc.receipt_accuracy, "receipt_acc_changed": mean_or_nan(right[changed]),
        "receipt_acc_changed_lo": lo, "receipt_acc_changed_hi": hi,
        "macro_family_acc": float(np.mean(per_type)) if per_type else float("nan"),
        "verdicts_right_receipt_wrong": mean_or_nan((v_ok & ~right)[ch_v]),
        "drift": acc.drift_rate, "inertia": acc.inertia_rate, "misattribution": acc.misattribution_rate,
        "consistency": cons,
    }


def _row(table: pd.DataFrame, evaluation: str, model: str) -> pd.Series | None:
    hit = table[(table["evaluation"] == evaluation) & (table["model"] == model)]
    return hit.iloc[0] if len(hit) else None


def paper_shape(table: pd.DataFrame, *, model: str, trivial: Sequence[str], locked: str, multi: str,
                controls: Mapping[str, str]) -> pd.DataFrame:
    """Whether "prediction is not certification" shows in a baseline table, claim by claim.

    Criteria (all on verdict-changing cases unless said otherwise):

    * *trivial baselines at most 0.5*: every trivial baseline's overall
      receipt accuracy on the locked test is at most 0.5 (inertia does not pay).
    * *beats the trivial baselines*: ``model``'s changing-case receipt
      accuracy interval on the locked test lies above every trivial
      baseline's point value.
    * *verdicts right, receipts wrong*: ``model``'s verdict accuracy on the
      locked test's changing cases is above the upper end of its receipt
      accuracy interval there.
    * *multi-source collapse*: the upper end of ``model``'s interval on
      multi-source changes is below the lower end of its locked-test interval.
    * *control inconsistency* (one claim per control): ``model``'s
      consistency rate is below 1 (executed receipts are consistent by
      construction, so each violated pair proves an error).

    Parameters
    ----------
    table : DataFrame
        ``BaselineReport.table``.
    model : str
        The evaluator examined.
    trivial : sequence of str
        Names of the trivial baselines.
    locked, multi : str
        Evaluation labels of the locked test and the multi-source set.
    controls : mapping control -> evaluation label

    Returns
    -------
    DataFrame
        ``claim``, ``holds`` (bool), ``evidence`` (the numbers).
    """
    out = []
    lk, mu = _row(table, locked, model), _row(table, multi, model)
    if lk is not None:
        triv = [(t, r) for t in trivial if (r := _row(table, locked, t)) is not None]
        out.append(("trivial baselines score at most 0.5 receipt accuracy (locked test)",
                    all(r["receipt_acc"] <= 0.5 for _, r in triv),
                    "; ".join(f"{t}: {r['receipt_acc']:.3f}" for t, r in triv)))
        out.append((f"{model} beats the trivial baselines on changing cases (locked test)",
                    all(lk["receipt_acc_changed_lo"] > r["receipt_acc_changed"] for _, r in triv),
                    f"{model}: {lk['receipt_acc_changed']:.3f} [{lk['receipt_acc_changed_lo']:.3f}, "
                    f"{lk['receipt_acc_changed_hi']:.3f}]; "
                    + "; ".join(f"{t}: {r['receipt_acc_changed']:.3f}" for t, r in triv)))
        ok = bool(lk["verdict_acc_changed"] > lk["receipt_acc_changed_hi"])
        out.append(("verdicts right, receipts wrong (locked test, changing cases)", ok,
                    f"verdict acc {lk['verdict_acc_changed']:.3f} vs receipt acc {lk['receipt_acc_changed']:.3f} "
                    f"[{lk['receipt_acc_changed_lo']:.3f}, {lk['receipt_acc_changed_hi']:.3f}]; "
                    f"{lk['verdicts_right_receipt_wrong']:.3f} of changing cases have both verdicts right "
                    "and the receipt wrong"))
    if lk is not None and mu is not None:
        ok = bool(mu["receipt_acc_changed_hi"] < lk["receipt_acc_changed_lo"])
        out.append(("collapse on unseen multi-source changes", ok,
                    f"multi-source {mu['receipt_acc_changed']:.3f} [{mu['receipt_acc_changed_lo']:.3f}, "
                    f"{mu['receipt_acc_changed_hi']:.3f}] vs locked test {lk['receipt_acc_changed']:.3f} "
                    f"[{lk['receipt_acc_changed_lo']:.3f}, {lk['receipt_acc_changed_hi']:.3f}] on changes"))
    for kind, label in controls.items():
        r = _row(table, label, model)
        if r is None or not np.isfinite(r["consistency"]):
            continue
        out.append((f"inconsistent under the {kind} control", bool(r["consistency"] < 1.0),
                    f"consistency {r['consistency']:.3f} over {int(r['n'])} pairs (executed receipts: 1.000)"))
    return pd.DataFrame(out, columns=["claim", "holds", "evidence"])
