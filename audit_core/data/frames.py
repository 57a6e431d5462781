"""Tables from other frame libraries: one conversion to pandas at the library's public entry points.

The library computes on pandas. :func:`as_pandas` is the one place a table from
another library is converted: a polars ``DataFrame`` goes through Arrow
(``frame.to_arrow().to_pandas()``) once, at the entry point
(:func:`audit_core.api.fragility_audit`, :func:`audit_core.api.transport_audit`,
which refuse anything else); :func:`from_polars` converts the same way and
leaves any other object to the function it is passed to
(:func:`~audit_core.data.dataset.build_dataset`, :func:`~audit_core.data.roles.infer_roles`,
:func:`~audit_core.data.targets.apply_targets`,
:meth:`audit_core.transport.runner.TransportAudit.declare`, so their own
refusals are unchanged). polars is never imported here: a frame
is recognised as a polars one by the module of its type, so a user without
polars pays nothing.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = ["as_pandas", "from_polars", "is_polars_frame"]

register_messages(
    {
        "FRAME_NOT_A_TABLE": (
            "{where} takes a table (a pandas or polars DataFrame), got {kind}."
        ),
        "FRAME_LAZY": (
            "{where} takes a polars DataFrame, got a polars LazyFrame: call .collect() on it first."
        ),
    }
)


def is_polars_frame(frame: Any) -> bool:
    """Whether ``frame``'s type comes from polars (checked by module name; polars is not imported).

    Examples
    --------
    >>> is_polars_frame(pd.DataFrame({"a": [1]}))
    False
    """
    return type(frame).__module__.split(".")[0] == "polars"


def as_pandas(frame: Any, *, where: str = "The audit") -> pd.DataFrame:
    """``frame`` as a pandas DataFrame: pandas unchanged, polars converted once through Arrow.

    Parameters
    ----------
    frame : pandas.DataFrame or polars.DataFrame of shape (n_rows, n_columns)
    where : str
        The entry point named in the refusal, e.g. ``"fragility_audit"``.

    Returns
    -------
    pandas.DataFrame of shape (n_rows, n_columns)
        The same object for a pandas frame; for a polars frame a new frame
        with the same column names and order (polars ``Int64`` becomes
        ``int64``, ``Float64`` ``float64``, ``String`` pandas' string dtype,
        ``Categorical`` ``category``).

    Raises
    ------
    AuditInputError
        ``FRAME_NOT_A_TABLE`` for anything else (an array, a dict, a Series),
        ``FRAME_LAZY`` for a polars LazyFrame.

    Examples
    --------
    >>> df = pd.DataFrame({"a": [1, 2]})
    >>> as_pandas(df) is df
    True
    >>> as_pandas([[1, 2]], where="build_dataset")
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: build_dataset takes a table (a pandas or polars DataFrame), got list.
    """
    if isinstance(frame, pd.DataFrame):
        return frame
    kind = type(frame).__name__
    if is_polars_frame(frame):
        if kind == "LazyFrame":
            raise fail("FRAME_LAZY", where=where)
        if kind == "DataFrame":
            return frame.to_arrow().to_pandas()
    raise fail("FRAME_NOT_A_TABLE", where=where, kind=kind[:60])


def from_polars(frame: Any, *, where: str = "The audit") -> Any:
    """A polars DataFrame converted by :func:`as_pandas`; anything else returned unchanged.

    Parameters
    ----------
    frame : object
        Usually a pandas or polars DataFrame of shape (n_rows, n_columns).
    where : str
        The entry point named when a polars LazyFrame is refused.

    Returns
    -------
    pandas.DataFrame of shape (n_rows, n_columns), or ``frame`` itself

    Examples
    --------
    >>> from_polars([1, 2])
    [1, 2]
    """
    return as_pandas(frame, where=where) if is_polars_frame(frame) else frame
