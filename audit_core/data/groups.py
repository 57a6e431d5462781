"""Evidence groups over the transformed feature space.

Groups are assigned to *raw* variables and inherited by every transformed
column that came from the variable (its one-hot levels and its missingness
indicator), so a group can never split a variable. The default is one group
per raw variable. Users may instead assign groups by editing a table, by
ordered regex or prefix rules, or by uploading a ``column,group`` CSV.

Regex rules run on RE2 (``google-re2``), whose matching time is linear in the
column name: a user's pattern cannot backtrack catastrophically, and Python's
``re``, which holds the interpreter lock while it backtracks, would freeze
every session of the app. RE2 has no backreferences or lookaround;
such a pattern is refused with ``GROUP_BAD_REGEX``.

Every grouping has a stable SHA-256 hash over its canonical JSON form
(transformed feature → group, in feature order).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
import re2

from audit_core.errors import fail, register_messages

__all__ = [
    "Grouping",
    "GroupRule",
    "raw_origin_grouping",
    "grouping_from_raw_map",
    "apply_group_rules",
    "parse_group_csv",
]

register_messages(
    {
        "GROUP_UNKNOWN_COLUMN": (
            "The group assignment names column {column!r}, which is not a feature. Features are: {features}."
        ),
        "GROUP_BLANK_NAME": "Column {column!r} is assigned a blank group name. Give it a group name.",
        "GROUP_CSV_HEADER": (
            "The group CSV must have the header 'column,group' (found {header!r})."
        ),
        "GROUP_CSV_DUPLICATE": "The group CSV assigns column {column!r} twice (rows {rows}).",
        "GROUP_CSV_UNPARSEABLE": "Could not read the group CSV: {detail}",
        "GROUP_BAD_REGEX": (
            "The group rule pattern {pattern!r} is not a regular expression this tool runs: {detail}. Rules use "
            "RE2 syntax (no backreferences such as \\1, no lookahead or lookbehind); or use 'prefix:'."
        ),
        "GROUP_REGEX_TOO_LONG": (
            "The group rule pattern is {length} characters long; the limit is {limit}. Split it into several rules."
        ),
        "GROUP_NO_FEATURES": "There are no feature columns to group. Mark at least one column numeric or categorical.",
    }
)


@dataclass(frozen=True)
class Grouping:
    """A partition of transformed features into named evidence groups.

    Attributes
    ----------
    features : tuple of str, length n_features
        Transformed feature names, in matrix column order.
    raw_columns : tuple of str, length n_features
        The raw variable each transformed feature came from.
    group_of : tuple of str, length n_features
        The group of each transformed feature.
    names : tuple of str, length n_groups
        Group names in order of first appearance among the features.
    """

    features: tuple[str, ...]
    raw_columns: tuple[str, ...]
    group_of: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def n_groups(self) -> int:
        return len(self.names)

    @property
    def index(self) -> tuple[np.ndarray, ...]:
        """Column indices of each group, aligned with :attr:`names`."""
        arr = np.asarray(self.group_of, dtype=object)
        return tuple(np.flatnonzero(arr == g) for g in self.names)

    @property
    def membership(self) -> np.ndarray:
        """Boolean matrix of shape (n_groups, n_features)."""
        arr = np.asarray(self.group_of, dtype=object)
        return np.stack([arr == g for g in self.names])

    @property
    def hash(self) -> str:
        """Stable SHA-256 of the feature → group assignment."""
        payload = json.dumps(
            [list(self.features), list(self.group_of)], separators=(",", ":"), ensure_ascii=True
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    def raw_map(self) -> dict[str, str]:
        """Raw column → group name."""
        return dict(zip(self.raw_columns, self.group_of, strict=True))

    def to_frame(self) -> pd.DataFrame:
        """Transformed column → raw column → group, one row per feature."""
        return pd.DataFrame(
            {"feature": self.features, "raw_column": self.raw_columns, "group": self.group_of}
        )

    def group_sizes(self) -> pd.DataFrame:
        """One row per group: its raw columns and number of transformed features."""
        df = self.to_frame()
        rows = []
        for g in self.names:
            part = df[df["group"] == g]
            rows.append(
                {
                    "group": g,
                    "raw_columns": ", ".join(dict.fromkeys(part["raw_column"])),
                    "n_features": len(part),
                }
            )
        return pd.DataFrame(rows)


def grouping_from_raw_map(origins: pd.DataFrame, raw_to_group: Mapping[str, str]) -> Grouping:
    """Build a grouping from a raw column → group map.

    Parameters
    ----------
    origins : pandas.DataFrame
        From :func:`audit_core.data.preprocess.feature_origins`.
    raw_to_group : mapping
        Raw column → group name. Unmapped raw columns form their own group.

    Returns
    -------
    Grouping
    """
    if len(origins) == 0:
        raise fail("GROUP_NO_FEATURES")
    raws = list(dict.fromkeys(origins["raw_column"]))
    unknown = [c for c in raw_to_group if c not in raws]
    if unknown:
        raise fail("GROUP_UNKNOWN_COLUMN", column=unknown[0], features=", ".join(raws[:20]))
    groups = []
    for raw in origins["raw_column"]:
        g = raw_to_group.get(raw, raw)
        g = str(g).strip() if g is not None and not (isinstance(g, float) and np.isnan(g)) else ""
        if g == "":
            raise fail("GROUP_BLANK_NAME", column=raw)
        groups.append(g)
    return Grouping(
        features=tuple(origins["feature"]),
        raw_columns=tuple(origins["raw_column"]),
        group_of=tuple(groups),
        names=tuple(dict.fromkeys(groups)),
    )


def raw_origin_grouping(origins: pd.DataFrame) -> Grouping:
    """The default partition: one group per raw variable."""
    return grouping_from_raw_map(origins, {})


@dataclass(frozen=True, kw_only=True)
class GroupRule:
    """Assign every raw column that matches ``pattern`` to ``group``.

    ``kind="prefix"`` matches columns that start with the pattern;
    ``kind="regex"`` searches the column name with RE2 (linear time; Python
    ``re`` syntax without backreferences and lookaround). Earlier rules win.
    """

    pattern: str
    group: str
    kind: Literal["prefix", "regex"] = "prefix"


def apply_group_rules(raw_columns: Iterable[str], rules: Sequence[GroupRule]) -> dict[str, str]:
    """Resolve ordered rules into a raw column → group map.

    Columns that no rule matches are left out (they keep their own group).

    Examples
    --------
    >>> apply_group_rules(["bureau_score", "bureau_n", "age"], [GroupRule(pattern="bureau_", group="bureau")])
    {'bureau_score': 'bureau', 'bureau_n': 'bureau'}
    """
    compiled = []
    for rule in rules:
        if rule.kind == "regex":
            rx = _compile_rule(rule.pattern)
            compiled.append((lambda c, rx=rx: rx.search(c) is not None, rule.group))
        else:
            compiled.append((lambda c, p=rule.pattern: c.startswith(p), rule.group))
    out: dict[str, str] = {}
    for col in raw_columns:
        for match, group in compiled:
            if match(col):
                out[col] = group
                break
    return out


#: Longest regex rule pattern accepted (characters); RE2 also bounds the compiled program's memory.
MAX_RULE_PATTERN = 1000
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is the user's message, not a server log line
_RE2_OPTIONS.max_mem = 8 << 20


def _compile_rule(pattern: str):
    """Compile a rule pattern with RE2, or refuse it with a declared message."""
    if len(pattern) > MAX_RULE_PATTERN:
        raise fail("GROUP_REGEX_TOO_LONG", length=len(pattern), limit=MAX_RULE_PATTERN)
    try:
        return re2.compile(pattern, options=_RE2_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise fail("GROUP_BAD_REGEX", pattern=pattern, detail=detail[:200]) from None


def parse_group_csv(data: bytes | str, raw_columns: Sequence[str]) -> dict[str, str]:
    """Read a ``column,group`` CSV into a raw column → group map.

    Parameters
    ----------
    data : bytes or str
        CSV text with the header ``column,group``.
    raw_columns : sequence of str
        The feature columns; any other column in the file is refused.
    """
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        rows = list(csv.reader(io.StringIO(text)))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise fail("GROUP_CSV_UNPARSEABLE", detail=str(exc)[:200]) from None
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows or [c.strip().lower() for c in rows[0][:2]] != ["column", "group"] or len(rows[0]) != 2:
        raise fail("GROUP_CSV_HEADER", header=",".join(rows[0]) if rows else "")
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != 2:
            raise fail("GROUP_CSV_UNPARSEABLE", detail=f"row {lineno} has {len(row)} fields, expected 2")
        col, group = row[0].strip(), row[1].strip()
        if col not in raw_columns:
            raise fail("GROUP_UNKNOWN_COLUMN", column=col, features=", ".join(list(raw_columns)[:20]))
        if col in seen:
            raise fail("GROUP_CSV_DUPLICATE", column=col, rows=f"{seen[col]} and {lineno}")
        if group == "":
            raise fail("GROUP_BLANK_NAME", column=col)
        seen[col] = lineno
        out[col] = group
    return out
