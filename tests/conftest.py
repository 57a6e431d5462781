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


# ------------------------------------------------------------------ session-scoped results shared by several modules
# Each is computed once per pytest process (once per xdist worker) and kept pickled: every module gets its own
# unpickled copy (as its module-scoped fixture had), so no module can change what another module sees.
@pytest.fixture(scope="session")
def _loan_fragility_audit_pickled() -> bytes:
    import pickle

    from audit_core.fragility.audit import AuditOptions, run_fragility_audit
    from fragility_data import loan_workspace

    ws, _ = loan_workspace()
    return pickle.dumps(run_fragility_audit(ws, options=AuditOptions(max_cases=60, n_boot=50)))


@pytest.fixture(scope="module")
def loan_fragility_audit(_loan_fragility_audit_pickled: bytes):
    """A private copy of the Fragility audit of ``fragility_data.loan_workspace()`` (``max_cases=60, n_boot=50``).

    Used by ``test_findings.py`` and ``test_report_fragility_findings.py`` (which computed it each).
    """
    import pickle

    return pickle.loads(_loan_fragility_audit_pickled)


@pytest.fixture(scope="session")
def _loan_transport_result_pickled() -> bytes:
    import pickle

    from shift_data import loan_transport_result

    return pickle.dumps(loan_transport_result())


@pytest.fixture(scope="module")
def loan_transport_result(_loan_transport_result_pickled: bytes):
    """A private copy of ``shift_data.loan_transport_result()``: the small loan Transport run (2019 → 2023).

    Used by ``test_model_card.py`` and ``test_page_shift.py`` (through ``shift_data.saved_loan_transport``).
    """
    import pickle

    return pickle.loads(_loan_transport_result_pickled)


# ------------------------------------------------------------------ one app server for the browser tests
@pytest.fixture(scope="session")
def shared_app_url(tmp_path_factory: pytest.TempPathFactory):
    """The URL of one ``streamlit run app.py`` per pytest process (per xdist worker), started on first use.

    For browser tests that need neither a fresh server (first-paint tests start their own) nor a registry of
    their own (tests that save runs and check them start their own): each still gets a new browser, hence a
    new Streamlit session. Its registry starts empty; tests using it may save runs there but must not count them.
    """
    from browser import chromium_path, serve_app

    chromium_path()  # fails under CI=true when Chromium is missing
    with serve_app(tmp_path_factory.mktemp("shared_app") / "registry.sqlite3") as url:
        yield url
