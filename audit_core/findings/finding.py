"""The :class:`Finding` record and the number formats its sentences use."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Mapping

__all__ = ["Finding", "Severity", "num", "signed", "pct", "interval"]

Severity = Literal["info", "good", "warning", "alert"]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One sentence about a result.

    Attributes
    ----------
    text : str
        Plain-language sentence with its numbers (plain text, never Markdown).
    numbers : dict of str to float
        The numbers the sentence states, unrounded, by name.
    severity : {"info", "good", "warning", "alert"}
    kind : str
        What the sentence is about (e.g. ``"confident_flips"``); stable across runs.
    """

    text: str
    numbers: Mapping[str, float] = field(default_factory=dict)
    severity: Severity = "info"
    kind: str = ""

    def to_dict(self) -> dict:
        return {"kind": self.kind, "severity": self.severity, "text": self.text, "numbers": dict(self.numbers)}


def _minus(s: str) -> str:
    return s.replace("-", "\u2212")


def num(x: float, digits: int = 2) -> str:
    """``0.70``; a true minus sign for negatives."""
    return _minus(f"{x:.{digits}f}")


def signed(x: float, digits: int = 2) -> str:
    """``+0.03`` / ``−0.02``."""
    return _minus(f"{x:+.{digits}f}")


def pct(x: float) -> str:
    """A share as a whole percentage: ``0.304`` -> ``30%``."""
    return _minus(f"{100 * x:.0f}%")


def interval(lo: float, hi: float, digits: int = 2) -> str:
    """`` [−0.05, 0.01]``, or an empty string when either end is missing."""
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return ""
    return f" [{num(lo, digits)}, {num(hi, digits)}]"
