"""Saving workspaces (trained or imported models) to the run registry."""
from __future__ import annotations

from typing import Any

import pandas as pd

from audit_core.models.manifest import library_versions
from .registry import RunRegistry
from audit_core.models.training import Workspace

__all__ = ["library_versions", "workspace_manifest", "save_workspace"]


def workspace_manifest(ws: Workspace) -> dict[str, Any]:
    """Seeds, input fingerprint, partition sizes and library versions of a workspace."""
    return {
        "dataset_fingerprint": ws.dataset.fingerprint,
        "n_input_rows": int(ws.dataset.n_input_rows),
        "n_eligible_rows": int(len(ws.dataset.frame)),
        "n_train": int(len(ws.train_index)),
        "n_test": int(len(ws.test_index)),
        "seed": int(ws.model.spec.get("seed", 0)),
        "grouping_hash": ws.grouping.hash,
        "versions": library_versions(),
    }


def save_workspace(registry: RunRegistry, ws: Workspace) -> str:
    """Save a workspace as a ``model`` run and return its id.

    The run holds the dataset declaration, the model spec, the grouping and
    origin tables, the held-out metrics and the baseline vector; the raw data
    itself is never stored.
    """
    baseline = pd.DataFrame({"feature": list(ws.grouping.features), "baseline": ws.baseline})
    config = {
        "dataset": ws.dataset.config.to_dict(),
        "baseline_kind": ws.baseline_kind,
        "raw_groups": ws.grouping.raw_map(),
    }
    return registry.save(
        audit_kind="model",
        dataset_name=ws.dataset.config.name,
        dataset_fingerprint=ws.dataset.fingerprint,
        grouping_hash=ws.grouping.hash,
        model_spec=dict(ws.model.spec),
        config=config,
        tables={
            "metrics": ws.metrics,
            "grouping": ws.grouping.to_frame(),
            "baseline": baseline,
        },
        manifest=workspace_manifest(ws),
    )
