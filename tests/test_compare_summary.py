"""Run comparison summary: verdict changes by direction, the largest changes, one row per changed verdict.

The first test fails before the fix: ``direction`` was a key column, so a
verdict that changed together with its direction came out as two one-sided
rows, and rows told apart only by ``alpha`` were joined many-to-many.
"""
from __future__ import annotations

import numpy as np
import pytest
import pandas as pd

from audit_core.runs.compare import change_directions, compare_runs_tables, largest_changes, verdict_changes


def _verdicts(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["metric", "alpha", "delta", "verdict", "direction"])


A = _verdicts([
    ("auroc", np.nan, -0.05, "transport-sensitive", "worse"),
    ("brier", np.nan, -0.06, "transport-sensitive", "better"),
    ("coverage", 0.1, -0.01, "transport-stable", "within tolerance"),
    ("coverage", 0.2, -0.01, "transport-stable", "within tolerance"),
    ("ece", np.nan, 0.01, "indeterminate", "undetermined"),
])
B = _verdicts([
    ("auroc", np.nan, -0.01, "transport-stable", "within tolerance"),   # worse -> within: better
    ("brier", np.nan, -0.062, "transport-sensitive", "better"),          # unchanged
    ("coverage", 0.1, -0.01, "transport-stable", "within tolerance"),    # unchanged
    ("coverage", 0.2, -0.09, "transport-sensitive", "worse"),            # within -> worse: worse
    ("ece", np.nan, 0.03, "transport-sensitive", "worse"),               # undetermined -> worse: worse
])


def test_each_changed_verdict_is_one_row_even_when_its_direction_changes_too() -> None:
    ch = verdict_changes(A, B)
    assert len(ch) == 3  # auroc, coverage at α = 0.2, ece; not 6 one-sided rows, not an α cross-join
    assert list(ch["metric"]) == ["auroc", "coverage", "ece"]
    assert ch.loc[ch["metric"] == "coverage", "alpha"].tolist() == [0.2]
    assert list(ch["direction_a"]) == ["worse", "within tolerance", "undetermined"]


def test_changes_by_direction_by_hand() -> None:
    ch = verdict_changes(A, B)
    assert dict(zip(ch["metric"], change_directions(ch))) == {"auroc": "better", "coverage": "worse", "ece": "worse"}
    # an improvement named "transport-sensitive" (direction better) is not worse than a stable one
    one = pd.DataFrame({"verdict_a": ["transport-stable"], "verdict_b": ["transport-sensitive"],
                        "direction_a": ["within tolerance"], "direction_b": ["better"]})
    assert list(change_directions(one)) == ["changed"]
    sided = pd.DataFrame({"verdict_a": ["pass", None], "verdict_b": [None, "fail"]})
    assert list(change_directions(sided)) == ["only in A", "only in B"]


def test_largest_changes_by_hand() -> None:
    deltas = compare_runs_tables({"verdicts": A}, {"verdicts": B})
    top = largest_changes(deltas, top=3)
    # |Δ delta|: coverage α=0.2 0.08, auroc 0.04, ece 0.02, brier 0.002, coverage α=0.1 0
    assert list(top["row"]) == ["coverage · 0.2", "auroc", "ece"]  # a missing α is left out of the row name
    assert np.allclose(top["change"], [-0.08, 0.04, 0.02])
    assert list(top["column"]) == ["delta"] * 3
    counts = pd.DataFrame({"k": ["x", "y"], "n_rows": [10.0, 5000.0], "m": [0.1, 0.2]})
    grown = counts.assign(n_rows=[9000.0, 1.0], m=[0.15, 0.2])
    top = largest_changes(compare_runs_tables({"t": counts}, {"t": grown}))
    assert list(top["column"]) == ["m", "m"]  # a row count never outranks a metric


def test_largest_changes_rank_the_verdict_rows_when_there_are_any() -> None:
    tally = pd.DataFrame({"quantity": ["conditions"], "value": [810.0]})
    deltas = compare_runs_tables({"verdicts": A, "tally": tally}, {"verdicts": B, "tally": tally.assign(value=1350.0)})
    top = largest_changes(deltas)
    assert set(top["table"]) == {"verdicts"} and top["change"].iloc[0] == pytest.approx(-0.08)
