"""Number inputs for counts of work: their maximum is the count's bound from :mod:`audit_core.limits`.

:func:`count_input` is ``number_input`` with ``max_value`` set to
``Limits.from_env().bound(count)`` (the same bound the library checks, so
the variable that raises a CLI bound raises the widget's too). A bound set
below the widget's minimum or default never breaks the page: the maximum is
at least the minimum and the default is clipped to it; the library still
refuses a value over the bound with its declared message.
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from audit_core.limits import Limits

__all__ = ["count_input"]


def count_input(container: Any, label: str, *, count: str, key: str, min_value: int, value: int | None = None,
                upper: int | None = None, **kwargs: Any) -> int:
    """A whole-number input bounded by ``count`` (and by ``upper``, e.g. the held-out rows, when given).

    Parameters
    ----------
    container : streamlit module or container
        Where the widget goes (``st``, a column, ...).
    label, key : str
    count : str
        A key of :data:`audit_core.limits.COUNTS`.
    min_value : int
    value : int, optional
        Default; omit it when the value comes from session state.
    upper : int, optional
        A further upper limit of this input.
    """
    bound = Limits.from_env().bound(count)
    top = max(min_value, min(bound, upper) if upper is not None else bound)
    if value is not None:
        kwargs["value"] = max(min_value, min(value, top))
    elif isinstance(st.session_state.get(key), (int, float)) and st.session_state[key] > top:
        st.session_state[key] = top  # a default from session state above a lowered bound
    return container.number_input(label, min_value=min_value, max_value=top, key=key, **kwargs)
