"""Shared fixtures for the Fragility tests: a loan-sample workspace built via the library."""
from __future__ import annotations

from functools import lru_cache

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.roles import infer_roles
from audit_core.data.samples import load_sample
from audit_core.models.training import Workspace, train_workspace
from audit_core.models.zoo import ModelSpec


@lru_cache(maxsize=4)
def loan_workspace(kind: str = "logistic_regression", n_rows: int = 1500) -> tuple[Workspace, dict]:
    """A trained workspace on the first ``n_rows`` source-year rows of the loan sample."""
    frame, info = load_sample("loan_synthetic")
    frame = frame[frame[info.domain_column] == info.source_domain].head(n_rows).reset_index(drop=True)
    roles = infer_roles(frame)
    roles.update({c: "ignore" for c in info.exclude_columns})
    cfg = DatasetConfig(
        name="loan_synthetic",
        targets=(info.target_definitions[0],),
        roles=roles,
        key_column=info.key_column,
    )
    ds = build_dataset(frame, cfg)
    ws = train_workspace(ds, spec=ModelSpec(kind=kind, seed=0), raw_groups=info.evidence_groups)
    return ws, dict(info.missing_codes)


def wide_workspace(n_cols: int, n_rows: int, kind: str, seed: int, params: dict | None = None) -> Workspace:
    """A trained workspace on a generated wide frame: every column its own group, one in ten categorical.

    ``n_cols - n_cols // 10`` normal numeric columns and ``n_cols // 10``
    categorical columns of 3 levels, ``n_rows`` rows, seeded; the target
    depends on the first five numeric columns. Used by the wide-table tests
    and ``benchmarks/bench_fragility_width.py`` (run in fresh subprocesses).
    """
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_cat = n_cols // 10
    num = rng.normal(size=(n_rows, n_cols - n_cat))
    frame = pd.DataFrame(num, columns=[f"x{j}" for j in range(num.shape[1])])
    for j in range(n_cat):
        frame[f"c{j}"] = rng.choice(["a", "b", "c"], size=n_rows)
    frame["y"] = (num[:, :5].sum(axis=1) + rng.normal(size=n_rows) > 0).astype(int)
    roles = {c: ("numeric" if c.startswith("x") else "categorical") for c in frame.columns if c != "y"}
    roles["y"] = "ignore"
    ds = build_dataset(frame, DatasetConfig(name="wide", targets=({"kind": "class", "name": "y", "column": "y",
                                                                   "positive": 1},), roles=roles))
    return train_workspace(ds, spec=ModelSpec(kind=kind, seed=0, params=params or {}))
