"""Turn errors into messages: the user never sees a traceback and loses nothing."""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator

import streamlit as st

from audit_core.errors import AuditInputError

__all__ = ["guarded"]

log = logging.getLogger("reliability_audit")


@contextlib.contextmanager
def guarded(action: str) -> Iterator[None]:
    """Run a block; show a declared error as ``st.error`` and keep all inputs.

    Unexpected exceptions are logged with their traceback on the server and
    shown to the user as one sentence; session state is left untouched.
    """
    try:
        yield
    except AuditInputError as err:
        st.error(err.message, icon=":material/error:")
    except Exception as err:  # noqa: BLE001 - the UI boundary: never a traceback
        log.exception("unexpected error while %s", action)
        st.error(
            f"Unexpected problem while {action}: {type(err).__name__}: {str(err)[:300]}. "
            "Your inputs are kept; please report this.",
            icon=":material/report:",
        )
