"""Provenance shared by every saved run (pure library code).

One place for the library versions recorded in run manifests, so model,
fragility, receipts and CLI runs (and Transport, when it adopts it) record
the same set, and for what a manifest records about a workspace
(:func:`workspace_manifest`: seeds, input fingerprint, partition sizes).
"""
from __future__ import annotations

import importlib.metadata as _md
import platform
from typing import Any

from .training import Workspace

__all__ = ["RECORDED_PACKAGES", "library_versions", "workspace_manifest"]

#: Packages whose versions every run manifest records.
RECORDED_PACKAGES: tuple[str, ...] = ("numpy", "pandas", "scipy", "scikit-learn", "lightgbm")


def library_versions() -> dict[str, str]:
    """Python and numerical-library versions, for run manifests.

    Returns
    -------
    dict of str to str
        ``{"python": ..., "numpy": ..., ...}``; a package that is not
        installed is recorded as ``"absent"``.

    Examples
    --------
    >>> v = library_versions()
    >>> sorted(v) == sorted(("python",) + RECORDED_PACKAGES)
    True
    """
    out = {"python": platform.python_version()}
    for pkg in RECORDED_PACKAGES:
        try:
            out[pkg] = _md.version(pkg)
        except _md.PackageNotFoundError:  # pragma: no cover - all pinned
            out[pkg] = "absent"
    return out


def workspace_manifest(ws: Workspace) -> dict[str, Any]:
    """Seeds, input fingerprint, partition sizes, library versions and held-out warnings of a workspace."""
    return {
        "dataset_fingerprint": ws.dataset.fingerprint,
        "n_input_rows": int(ws.dataset.n_input_rows),
        "n_eligible_rows": int(len(ws.dataset.frame)),
        "n_train": int(len(ws.train_index)),
        "n_test": int(len(ws.test_index)),
        "seed": int(ws.model.spec.get("seed", 0)),
        "grouping_hash": ws.grouping.hash,
        "versions": library_versions(),
        # the declared warnings of the held-out check (few held-out rows of a class, constant predictions)
        "warnings": [{"code": code, "message": message} for code, message in ws.warnings],
    }
