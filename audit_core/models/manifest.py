"""Provenance helpers shared by every saved run (pure library code).

One place for the library versions recorded in run manifests, so model,
fragility, receipts and CLI runs (and Transport, when it adopts it) record
the same set.
"""
from __future__ import annotations

import importlib.metadata as _md
import platform

__all__ = ["RECORDED_PACKAGES", "library_versions"]

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
