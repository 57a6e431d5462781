"""What a user reads in an AppTest element: its Markdown with backslash escapes resolved.

The app escapes every user- or file-derived string before Streamlit renders it
as Markdown (``components.feedback.md_escape``), so AppTest sees ``no\\_such``
where the browser shows ``no_such``. Tests compare what the browser shows.
"""
from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before any ASCII punctuation (CommonMark)


def rendered(markdown: object) -> str:
    """``markdown`` with its backslash escapes resolved (what the browser shows)."""
    return _ESCAPE.sub(r"\1", str(markdown)).replace("\u2060", "")  # the invisible word joiner that stops autolinks


def texts(at, kind: str) -> list[str]:
    """The rendered text of every element of ``kind`` (``"error"``, ``"caption"``, …) in an AppTest."""
    return [rendered(el.value) for el in getattr(at, kind)]
