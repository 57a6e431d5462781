"""Does the first row of a text (or Excel) table hold column names, or data?

Evidence, column by column, from the first row's cell ``h`` and the cells
below it (the first 200 rows):

* ``h`` is a number (e.g. ``39``), a missing code (``?``) or repeats among the
  values below: the row is **data** (column names are rarely numbers, and a
  name rarely reappears as a value);
* the cells below are mostly numbers while ``h`` is not: the row is a
  **header** (``laufzeit`` over durations).

The row is a header unless the data evidence outweighs the header evidence,
so a table of text with no evidence either way keeps its first row as the
names (the common case). The decision and one example of its evidence are
reported; an explicit choice in the read options always wins.
"""
from __future__ import annotations

import re

from .options import HeaderChoice
from .report import CANDIDATE_MISSING_CODES

__all__ = ["decide_header", "looks_numeric", "generated_names"]

_NUMBER = re.compile(
    r"[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?|[+-]?\d{1,3}([,.' ]\d{3})+([.,]\d+)?"
)
_CODES = frozenset(CANDIDATE_MISSING_CODES)


def looks_numeric(text: str) -> bool:
    """True for ``39``, ``-1.5``, ``1,5``, ``12,345.6``, ``1e-3``; not for ``nan`` or ``inf``."""
    return bool(_NUMBER.fullmatch(text))


def generated_names(n: int) -> list[str]:
    """``col_1`` ... ``col_n``."""
    return [f"col_{i}" for i in range(1, n + 1)]


def decide_header(rows: list[list[str]], choice: HeaderChoice = "auto") -> tuple[bool, str]:
    """Decide whether ``rows[0]`` is a header.

    Parameters
    ----------
    rows : list of list of str
        The first rows as parsed, cells stripped of surrounding spaces.
    choice : {"auto", "first_row", "none"}

    Returns
    -------
    has_header : bool
    note : str
        The decision and why, in words.
    """
    if choice == "first_row":
        return True, "First row: the header, as chosen in Read options."
    if choice == "none":
        return False, "First row: data, as chosen in Read options."
    if not rows:
        return True, ""
    first, body = rows[0], rows[1:]
    if not body:
        return True, "First row: the header (the file has no other row)."
    data_votes: list[tuple[str, str]] = []
    header_votes: list[str] = []
    for j, h in enumerate(first):
        below = [r[j] for r in body if j < len(r) and r[j] != "" and r[j] not in _CODES]
        if h == "":
            continue
        if looks_numeric(h):
            data_votes.append((h, "is a number"))
        elif h in _CODES:
            data_votes.append((h, "is a missing-value code"))
        elif h in set(below):
            data_votes.append((h, "also appears as a value further down"))
        elif below and sum(looks_numeric(v) for v in below) >= 0.8 * len(below):
            header_votes.append(h)
    if len(data_votes) > len(header_votes):
        value, why = data_votes[0]
        return False, (
            f"First row: data, not a header — {len(data_votes)} of its {len(first)} values look like data "
            f"(e.g. {value!r} {why}). Set 'First row' to 'is the header' in Read options if this is wrong."
        )
    if header_votes:
        return True, (
            f"First row: the header — {len(header_votes)} of its {len(first)} values are names above "
            f"numeric columns (e.g. {header_votes[0]!r})."
        )
    return True, "First row: the header (nothing in it looks like data)."
