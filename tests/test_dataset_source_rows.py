"""build_source_dataset: a table whose target rows have no outcome yet is checked on its source rows, and the target
rows come apart, with the same eligibility filter and numeric conversions, their labels never read."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset, build_source_dataset, frame_fingerprint
from audit_core.errors import AuditInputError


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 120
    return pd.DataFrame({
        "dom": ["s"] * 60 + ["t"] * 40 + ["u"] * 20,
        "x": rng.normal(size=n),
        "z": [str(v) for v in rng.integers(0, 5, size=n)],  # numbers as text, declared numeric
        "y": ["yes", "no"] * 30 + [None] * 40 + ["yes", "no"] * 10,
    })


def _config(**kw) -> DatasetConfig:
    base = dict(name="t", targets=({"kind": "class", "name": "y", "column": "y", "positive": "yes"},),
                domain_column="dom", source_domain="s", target_domain="t", roles={"z": "numeric"})
    return DatasetConfig(**{**base, **kw})


def test_the_labelled_declaration_refuses_the_missing_outcomes_and_the_source_one_does_not():
    with pytest.raises(AuditInputError, match="40 of 120 rows have no value"):
        build_dataset(_frame(), _config())
    ds, target = build_source_dataset(_frame(), _config())
    assert len(ds.frame) == 60 and set(ds.frame["dom"]) == {"s"}
    assert len(target) == 40 and set(target["dom"]) == {"t"} and target["y"].isna().all()
    assert ds.config.target_domain == "t"  # the run still names both domains
    assert ds.numeric == ("x", "z") and pd.api.types.is_numeric_dtype(target["z"])
    assert ds.fingerprint == frame_fingerprint(_frame()) and ds.n_input_rows == 120  # the whole table's


def test_eligibility_applies_to_the_target_rows_too():
    ds, target = build_source_dataset(_frame(), _config(eligibility="x > 0"))
    assert (ds.frame["x"] > 0).all() and (target["x"] > 0).all()
    assert len(target) == int((_frame().query("dom == 't'")["x"] > 0).sum())


def test_refusals_name_the_problem():
    with pytest.raises(AuditInputError, match="needs one table with a domain column"):
        build_source_dataset(_frame(), _config(target_domain=None))
    with pytest.raises(AuditInputError, match="dom"):
        build_source_dataset(_frame(), _config(target_domain="nowhere"))
