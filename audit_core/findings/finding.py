"""The :class:`Finding` record and the number formats its sentences use."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable, Sequence
from typing import Any, Literal, Mapping

from audit_core.runs.keys import TableKey

__all__ = ["Finding", "Fact", "Word", "Severity", "FORMATS", "fmt", "render", "num", "signed", "pct", "interval",
           "ALARM", "and_list"]

Severity = Literal["info", "good", "warning", "alert"]
#: Severities shown in alarm colour (a sentence in them may never say "improves").
ALARM = ("warning", "alert")


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One sentence about a result, with the contract it was rendered from.

    Attributes
    ----------
    text : str
        Plain-language sentence with its numbers (plain text, never Markdown).
    numbers : dict of str to float
        The numbers the sentence states, unrounded, by name (the facts' values).
    severity : {"info", "good", "warning", "alert"}
    kind : str
        What the sentence is about (e.g. ``"confident_flips"``); stable across runs.
    template : str
        The sentence with ``{name}`` slots (:func:`~audit_core.findings.contract.render`);
        empty for a sentence that states no number.
    facts : tuple of Fact
        Every value it reads, each with its table key.
    words : tuple of Word
        Every logical word it uses, each with the condition that licenses it.
    labels : dict of str to str
        Names from the data or the config filled into the template.
    detail : str
        The same finding in symbols (metric names, rule ids), shown below the
        plain sentence; may be empty.
    """

    text: str
    numbers: Mapping[str, float] = field(default_factory=dict)
    severity: Severity = "info"
    kind: str = ""
    template: str = ""
    facts: tuple[Fact, ...] = ()
    words: tuple[Word, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    detail: str = ""

    @classmethod
    def of(cls, *, kind: str, severity: Severity, template: str, facts=(), words=(), labels=None,
           detail: str = "") -> "Finding":
        """Render a finding from its contract: the text is ``template`` filled with the facts, words and labels."""
        facts, words, labels = tuple(facts), tuple(words), dict(labels or {})
        text = render(template, facts, words, labels)
        numbers = {f.name: float(f.value) for f in facts if not isinstance(f.value, str)}
        return cls(text=text, numbers=numbers, severity=severity, kind=kind, template=template, facts=facts,
                   words=words, labels=labels, detail=detail)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "severity": self.severity, "text": self.text, "numbers": dict(self.numbers),
                "detail": self.detail, "facts": [f.to_dict() for f in self.facts],
                "words": [w.to_dict() for w in self.words]}


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


def _points(x: float) -> str:
    """A share as percentage points, one decimal: ``0.071`` -> ``7.1``."""
    return num(100 * x, 1)


#: How a fact is printed (the precision every word condition on printed values uses).
FORMATS: dict[str, Callable[[float], str]] = {
    "pct": lambda x: pct(x), "num2": lambda x: num(x, 2), "num3": lambda x: num(x, 3),
    "signed2": lambda x: signed(x, 2), "signed3": lambda x: signed(x, 3), "int": lambda x: str(int(round(x))),
    "g": lambda x: f"{x:g}", "points": lambda x: _points(x), "points_g": lambda x: f"{100 * x:g}",
}


def fmt(value: float | str, form: str) -> str:
    """``value`` printed as ``form`` (a text value is printed as it is)."""
    return str(value) if isinstance(value, str) else FORMATS[form](float(value))


@dataclass(frozen=True)
class Fact:
    """One value a sentence states or reasons on.

    Attributes
    ----------
    name : str
        Its slot in the template.
    value : float or str
    key : TableKey or None
        Where it was read in the run's tables; ``None`` for a declared constant
        (a tolerance, a rule's limit, the confidence cut-off).
    form : str
        Key of :data:`FORMATS`.
    run_id : str
        The saved run whose tables ``key`` reads (``""``: the run the finding is about).
    """

    name: str
    value: float | str
    key: TableKey | None = None
    form: str = "num2"
    run_id: str = ""

    @property
    def printed(self) -> str:
        return fmt(self.value, self.form)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "form": self.form, "run_id": self.run_id,
                "key": None if self.key is None else self.key.to_dict()}


@dataclass(frozen=True)
class Word:
    """A logical word of a sentence and the condition that licenses it.

    ``condition`` names an entry of :data:`audit_core.findings.contract.CONDITIONS`; ``args`` name the facts it
    reads. In the template the word's slot is ``{w0}``, ``{w1}``, … by position.
    """

    text: str
    condition: str
    args: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "condition": self.condition, "args": list(self.args)}


def render(template: str, facts: Sequence[Fact], words: Sequence[Word], labels: Mapping[str, str]) -> str:
    """The sentence: ``template`` with each ``{name}`` filled by a fact (printed), a word (``{w0}``…) or a label."""
    slots: dict[str, str] = {f.name: f.printed for f in facts}
    slots.update({f"w{i}": w.text for i, w in enumerate(words)})
    slots.update({str(k): str(v) for k, v in labels.items()})
    return template.format_map(slots)


def all_read(facts: Sequence[Fact | None]) -> list[Fact] | None:
    """``facts`` as a list when every one was read, else None (a finding needs all of its numbers).

    Examples
    --------
    >>> all_read([Fact("a", 1, None, "int")]) is not None, all_read([Fact("a", 1, None, "int"), None])
    (True, None)
    """
    read = [f for f in facts if f is not None]
    return read if len(read) == len(facts) else None


def and_list(names: list[str]) -> str:
    """Names as an English list.

    Examples
    --------
    >>> and_list(["a"]), and_list(["a", "b"]), and_list(["a", "b", "c"])
    ('a', 'a and b', 'a, b and c')
    """
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
