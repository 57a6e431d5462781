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
