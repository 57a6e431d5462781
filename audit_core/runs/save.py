"""Saving what the app computed as runs: a workspace (trained or imported model), a fragility audit."""
from __future__ import annotations

import pandas as pd

from audit_core.fragility.audit import FragilityAudit, fragility_run_parts
from audit_core.models.manifest import workspace_manifest
from audit_core.models.training import Workspace

from .privacy import store_case_data_choice
from .registry import RunRegistry

__all__ = ["save_workspace", "save_fragility_run"]


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


def save_fragility_run(registry: RunRegistry, ws: Workspace, audit: FragilityAudit, *,
                       models: pd.DataFrame | None = None, store_case_data: bool = False) -> str:
    """Save an audit as an ``audit_kind="fragility"`` run and return its id (with the model comparison
    table ``models`` when given).

    Without ``store_case_data`` the run holds case numbers instead of record
    keys and no true labels (:func:`audit_core.runs.privacy.without_case_data`).
    """
    parts = fragility_run_parts(ws, audit, models=models)
    parts["tables"], parts["manifest"] = store_case_data_choice(parts["tables"], parts["manifest"],
                                                                store=store_case_data)
    return registry.save(
        audit_kind="fragility",
        dataset_name=ws.dataset.config.name,
        dataset_fingerprint=ws.dataset.fingerprint,
        grouping_hash=audit.batch.protocol.grouping_hash,
        model_spec=dict(ws.model.spec),
        **parts,
    )
