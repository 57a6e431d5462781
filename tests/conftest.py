"""Shared fixtures. (Older test modules define their own ``registry_path``; theirs take precedence.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from audit_core.native_threads import pin_blas_threads

pin_blas_threads()  # as app.py and the CLI do: every test computes with the entry points' BLAS thread count


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh run registry file for this test, used by the app through ``AUDIT_REGISTRY_PATH``."""
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path
