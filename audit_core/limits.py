"""Size and time caps, read from the environment in one place.

Every cap that protects the server from a large or hostile input is a field
of :class:`Limits`. :meth:`Limits.from_env` is the only code that reads the
``AUDIT_MAX_*`` variables; the app and the CLI call it where they build read
options, fragility options and the Receipts cube. A message about a cap that
was hit names the variable to change.

=========================  =======  ==============================================
variable                   default  caps
=========================  =======  ==============================================
``AUDIT_MAX_UPLOAD_MB``    200      bytes of one uploaded or configured table
``AUDIT_MAX_ROWS``         5000000  rows of a table
``AUDIT_MAX_COLUMNS``      10000    columns of a table
``AUDIT_MAX_EXPANSION_MB`` 2000     uncompressed size of an xlsx or Parquet file
``AUDIT_MAX_EXACT_GROUPS`` 20       evidence groups for the fragility exact search
``AUDIT_MAX_CUBE_K``       12       sources of a Receipts cube (2**k cells)
=========================  =======  ==============================================

Fragility work (the audit's up-front bound and the parts whose cost grows with
the square of the evidence groups):

* ``AUDIT_MAX_QUADRATIC_GROUPS`` (200): evidence groups above which group-SHAP,
  permutation importance and beam search are skipped, with a note naming it;
* ``AUDIT_MAX_FRAGILITY_CELLS`` (4e9): values (rows × transformed columns) a
  Fragility audit may build and predict; above it the audit is refused up
  front with ``FR_TOO_MUCH_WORK``.

This module is pure: it must not import streamlit or plotly.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import fail, register_messages

__all__ = ["ENV_VARS", "Limits"]

_MB = 1024 * 1024
#: Hard ceiling of AUDIT_MAX_CUBE_K: 2**20 cells is about a million adjudications.
_CUBE_K_CEILING = 20

#: field name -> (environment variable, default, minimum, maximum)
ENV_VARS: dict[str, tuple[str, float, float, float]] = {
    "max_upload_mb": ("AUDIT_MAX_UPLOAD_MB", 200, 0.001, 1_000_000),
    "max_rows": ("AUDIT_MAX_ROWS", 5_000_000, 1, 10**10),
    "max_columns": ("AUDIT_MAX_COLUMNS", 10_000, 1, 10**7),
    "max_expansion_mb": ("AUDIT_MAX_EXPANSION_MB", 2_000, 0.001, 10_000_000),
    "max_exact_groups": ("AUDIT_MAX_EXACT_GROUPS", 20, 1, 64),
    "max_cube_k": ("AUDIT_MAX_CUBE_K", 12, 1, _CUBE_K_CEILING),
    "max_quadratic_groups": ("AUDIT_MAX_QUADRATIC_GROUPS", 200, 1, 100_000),
    "max_fragility_cells": ("AUDIT_MAX_FRAGILITY_CELLS", 4e9, 1e3, 1e15),
}

register_messages(
    {
        "LIMIT_BAD_VALUE": (
            "The environment variable {var} is {value!r}; it must be a number from {low:g} to {high:g} "
            "(default {default:g}). Fix or unset {var}."
        ),
    }
)


def _read(field_name: str, env: Mapping[str, str]) -> float:
    var, default, low, high = ENV_VARS[field_name]
    raw = env.get(var, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (low <= value <= high):  # also refuses nan
        raise fail("LIMIT_BAD_VALUE", var=var, value=raw[:40], low=low, high=high, default=default)
    return value


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The caps in force; see the module docstring for the variables.

    Examples
    --------
    >>> lim = Limits.from_env({"AUDIT_MAX_COLUMNS": "50"})
    >>> lim.max_columns, lim.max_expansion_bytes
    (50, 2097152000)
    >>> Limits.from_env({}).max_cube_k
    12
    """

    max_upload_mb: float = 200
    max_rows: int = 5_000_000
    max_columns: int = 10_000
    max_expansion_mb: float = 2_000
    max_exact_groups: int = 20
    max_cube_k: int = 12
    max_quadratic_groups: int = 200
    max_fragility_cells: int = 4_000_000_000

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Limits":
        """Read the caps from ``env`` (default :data:`os.environ`).

        Raises
        ------
        AuditInputError
            ``LIMIT_BAD_VALUE`` naming the variable when a value is not a
            number in its range.
        """
        env = os.environ if env is None else env
        ints = {"max_rows", "max_columns", "max_exact_groups", "max_cube_k", "max_quadratic_groups",
                "max_fragility_cells"}
        values = {}
        for name in ENV_VARS:
            v = _read(name, env)
            values[name] = int(v) if name in ints else float(v)
        return cls(**values)

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * _MB)

    @property
    def max_expansion_bytes(self) -> int:
        return int(self.max_expansion_mb * _MB)
