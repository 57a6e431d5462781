"""Column roles: inferred from the data, overridable by the user.

Roles
-----
``numeric``
    Continuous or count feature: median imputation, then standardisation.
``categorical``
    Discrete feature: mode imputation, then one-hot (unknown categories ignored).
``identifier``
    A key or free text with (almost) one value per row. Never a feature.
``constant``
    One distinct value (missing aside). Never a feature: it carries no evidence.
``ignore``
    Set by the user only: kept in the table, never used as a feature.

The inference is deliberately simple and explained in ``docs/data.md``; the
user can override every role in the Data & groups page.

Proposals
---------
:func:`propose_roles` suggests a different role where the inferred one is
probably not what the user wants, with the reason; the page shows them and
applies them on one click (they are never applied silently):

* a numeric column of whole numbers with at most :data:`MAX_CODE_LEVELS`
  distinct values (codes such as 1–4), and at least twice as many rows as
  values, is proposed ``categorical``;
* a numeric column of whole numbers named like a key (``id``, ``id_…``,
  ``…_id``, ``…_key``) whose share of distinct values is at least
  :data:`MIN_ID_UNIQUE_SHARE` is proposed ``identifier``: a student or
  customer number repeated over a few records (one per course, one per
  year) is a key, not evidence, although it is not unique;
* a categorical column with more than :data:`MAX_ONEHOT_LEVELS` levels is
  proposed ``identifier`` (one-hot would add a column per level; grouping its
  rare levels into one before uploading is the other way out).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

import pandas as pd

from audit_core.errors import fail, register_messages

from .frames import from_polars

__all__ = [
    "Role", "ROLES", "FEATURE_ROLES", "MAX_CODE_LEVELS", "MAX_ONEHOT_LEVELS", "MIN_ID_UNIQUE_SHARE", "RoleProposal",
    "infer_roles", "apply_role_overrides", "propose_roles",
]

Role = Literal["numeric", "categorical", "identifier", "constant", "ignore"]
ROLES: tuple[Role, ...] = ("numeric", "categorical", "identifier", "constant", "ignore")
FEATURE_ROLES: frozenset[str] = frozenset({"numeric", "categorical"})

register_messages(
    {
        "ROLE_UNKNOWN_COLUMN": "Role override names column {column!r}, which is not in the table.",
        "ROLE_INVALID": "Role {role!r} for column {column!r} is not one of {roles}.",
        "ROLE_NOT_NUMERIC": (
            "Column {column!r} cannot be numeric: it holds text such as {example!r}. Use 'categorical'."
        ),
    }
)

#: Whole-number columns with at most this many distinct values are proposed categorical.
MAX_CODE_LEVELS = 10
#: Categorical columns with more levels than this are proposed as identifiers.
MAX_ONEHOT_LEVELS = 100
#: Whole-number columns named like a key with at least this share of distinct values are proposed as identifiers.
MIN_ID_UNIQUE_SHARE = 0.5

_ID_HINTS = ("id", "key", "uuid", "guid", "record", "code_no")


def _looks_like_id_name(col: str) -> bool:
    low = col.lower()
    return low in _ID_HINTS or low.endswith("_id") or low.endswith("_key") or low.startswith("id_")


def infer_role(s: pd.Series) -> Role:
    """Infer the role of one column; see the module docstring."""
    nonnull = s.dropna()
    n = len(nonnull)
    nunique = int(nonnull.nunique())
    if nunique <= 1:
        return "constant"
    name = str(s.name)
    if pd.api.types.is_bool_dtype(s.dtype):
        return "categorical"
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return "identifier"
    if pd.api.types.is_numeric_dtype(s.dtype):
        is_integer = bool((nonnull == nonnull.round()).all())
        if is_integer and nunique == n and n > 20 and _looks_like_id_name(name):
            return "identifier"
        return "numeric"
    if nunique == n and n > 20:
        return "identifier"
    if nunique > max(100, n // 2):
        return "identifier"
    return "categorical"


def infer_roles(frame: pd.DataFrame) -> dict[str, Role]:
    """Infer a role for every column.

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)

    Returns
    -------
    dict
        Column name -> role, in column order.

    Examples
    --------
    >>> import pandas as pd
    >>> infer_roles(pd.DataFrame({"x": [1.5, 2.0, 3.1], "c": ["a", "b", "a"], "k": [7, 7, 7]}))
    {'x': 'numeric', 'c': 'categorical', 'k': 'constant'}
    """
    frame = from_polars(frame, where="infer_roles")
    return {str(col): infer_role(frame[col]) for col in frame.columns}


def apply_role_overrides(
    frame: pd.DataFrame, roles: Mapping[str, str], overrides: Mapping[str, str]
) -> dict[str, Role]:
    """Apply user overrides to inferred roles, refusing impossible ones."""
    out: dict[str, Role] = dict(roles)  # type: ignore[arg-type]
    for col, role in overrides.items():
        if col not in frame.columns:
            raise fail("ROLE_UNKNOWN_COLUMN", column=col)
        if role not in ROLES:
            raise fail("ROLE_INVALID", role=role, column=col, roles=", ".join(ROLES))
        if role == "numeric" and not pd.api.types.is_numeric_dtype(frame[col].dtype):
            bad = pd.to_numeric(frame[col].dropna().astype(str), errors="coerce")
            if bad.isna().any():
                example = frame[col].dropna().astype(str)[bad.isna()].iloc[0]
                raise fail("ROLE_NOT_NUMERIC", column=col, example=example[:40])
        out[col] = role
    return out


@dataclass(frozen=True)
class RoleProposal:
    """A role suggested for one column, and why (in words)."""

    column: str
    role: Role
    reason: str


def propose_roles(frame: pd.DataFrame, roles: Mapping[str, str] | None = None) -> dict[str, RoleProposal]:
    """Suggest roles that differ from ``roles`` (default: the inferred ones); see the module docstring.

    Parameters
    ----------
    frame : pandas.DataFrame of shape (n_rows, n_columns)
    roles : mapping, optional
        Column -> current role.

    Returns
    -------
    dict
        Column -> :class:`RoleProposal`, only for columns with a proposal.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"code": [1, 2, 3, 4] * 10, "x": [i / 3 for i in range(40)]})
    >>> {c: (p.role, p.reason) for c, p in propose_roles(f).items()}
    {'code': ('categorical', 'whole numbers with 4 distinct values (at most 10): probably codes')}
    """
    current = dict(roles) if roles is not None else infer_roles(frame)
    out: dict[str, RoleProposal] = {}
    for col in frame.columns:
        name, s = str(col), frame[col]
        role = current.get(name)
        nonnull = s.dropna()
        nunique = int(nonnull.nunique())
        if role == "numeric" and pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            whole = bool((nonnull == nonnull.round()).all())
            share = nunique / max(len(nonnull), 1)
            if whole and _looks_like_id_name(name) and nunique > MAX_CODE_LEVELS and share >= MIN_ID_UNIQUE_SHARE:
                out[name] = RoleProposal(name, "identifier", f"named like a key, with {nunique:,} distinct whole "
                                         f"numbers in {len(nonnull):,} rows ({share:.0%}): probably a key, not evidence")
            elif whole and 2 <= nunique <= MAX_CODE_LEVELS and len(nonnull) >= 2 * nunique:
                out[name] = RoleProposal(name, "categorical", f"whole numbers with {nunique} distinct values "
                                         f"(at most {MAX_CODE_LEVELS}): probably codes")
        elif role == "categorical" and nunique > MAX_ONEHOT_LEVELS:
            out[name] = RoleProposal(name, "identifier", f"{nunique:,} levels (more than {MAX_ONEHOT_LEVELS}): "
                                     "one-hot would add a column per level; or group its rare levels before uploading")
    return out
