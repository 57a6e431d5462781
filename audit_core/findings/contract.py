"""Sentence contracts: a finding is a record of the numbers it reads and of the words it may use.

A sentence is never typed beside its numbers. Each finding is built from

* **facts** (:class:`~audit_core.findings.finding.Fact`): every number (or table text) it states, with
  its value, the :class:`~audit_core.runs.keys.TableKey` it was read from
  (``None`` for a declared constant: a tolerance, a rule's limit, the
  confidence cut-off 0.8) and the format it is printed in;
* **words** (:class:`~audit_core.findings.finding.Word`): every logical word whose truth depends on the
  numbers (*restores*, *rises*, *instead of*, *most stable*, *brittle*, …),
  each with the named condition (:data:`CONDITIONS`) that licenses it and the
  facts that condition reads;
* a **template** with ``{name}`` slots for facts, words and labels (names
  from the data: a domain value, a class, a model).

:func:`~audit_core.findings.finding.render` fills the template (:meth:`Finding.of`); :func:`audit_core.findings.check.check_findings`
re-reads every fact from the saved run, re-evaluates every word's condition
and re-renders the sentence, so a sentence that its tables do not support is
reported.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from .finding import Fact, Word

__all__ = ["CONDITIONS", "RESTRICTED", "holds", "restricted_words", "printed_value"]


def printed_value(f: Fact) -> float:
    """The value as printed, back as a number (``81%`` -> 0.81), so conditions can compare at printed precision."""
    text = f.printed.replace("\u2212", "-").rstrip("%")
    return float(text) / (100 if f.form == "pct" else 1)


def _reads(*parts: str) -> Callable[[Fact], bool]:
    """Whether a fact's key reads any of ``parts`` (its column, a filter column or a filter value)."""
    def test(f: Fact) -> bool:
        named = {f.key.column, *(c for c, _, _ in f.key.where), *(str(v) for _, _, v in f.key.where)} if f.key else ()
        return any(p in named for p in parts)
    return test


_certificate, _donor = _reads("k_star"), _reads("donor_any", "donor_flip_rate")


def _most_stable(*facts: Fact) -> bool:
    """Facts in threes (mean RCMA, mean FDS, mean k*) per model, the claimed most stable model first."""
    (r0, f0, k0), others = facts[:3], [facts[i:i + 3] for i in range(3, len(facts), 3)]
    return all(float(r0.value) < float(r.value) and float(f0.value) < float(f.value) and float(k0.value) > float(k.value)
               for r, f, k in others)


#: Condition name -> (what it requires, in words; test on the facts).
CONDITIONS: dict[str, tuple[str, Callable[..., bool]]] = {
    "differ_printed": ("the two numbers differ at the printed precision", lambda a, b: a.printed != b.printed),
    "same_printed": ("the two numbers are equal at the printed precision", lambda a, b: a.printed == b.printed),
    "above_zero": ("the interval lies above zero", lambda lo: float(lo.value) > 0),
    "below_zero": ("the interval lies below zero", lambda hi: float(hi.value) < 0),
    "spans_zero": ("the interval contains zero", lambda lo, hi: not (float(lo.value) > 0 or float(hi.value) < 0)),
    "greater_printed": ("the first number is larger at the printed precision",
                        lambda a, b: printed_value(a) > printed_value(b)),
    "not_greater_printed": ("the first number is not larger at the printed precision",
                            lambda a, b: printed_value(a) <= printed_value(b)),
    "reaches": ("the value reaches the target", lambda v, target: float(v.value) >= float(target.value)),
    "below": ("the value is below the target", lambda v, target: float(v.value) < float(target.value)),
    "restores": ("the class reaches its target coverage and the worst class under label-conditional sets is better "
                 "than the worst class under marginal sets (at the printed precision)",
                 lambda cls_new, worst_new, target, worst_old: float(cls_new.value) >= float(target.value)
                 and printed_value(worst_new) > printed_value(worst_old)),
    "above_limit": ("the value exceeds the limit", lambda v, limit: float(v.value) > float(limit.value)),
    "within_limit": ("the value does not exceed the limit", lambda v, limit: float(v.value) <= float(limit.value)),
    "below_limit": ("the value is below the limit", lambda v, limit: float(v.value) < float(limit.value)),
    "at_least_limit": ("the value is at least the limit", lambda v, limit: float(v.value) >= float(limit.value)),
    "equals": ("the text equals the expected text", lambda a, b: str(a.value) == str(b.value)),
    "flag": ("the flag is set", lambda f: bool(float(f.value))),
    "most_stable": ("the model has the lowest mean RCMA, the lowest mean FDS and the highest mean k* of all",
                    _most_stable),
    "certificate_count": ("the count reads the certificate (k* within the audit depth)",
                          lambda n: _certificate(n) and not _donor(n)),
    "donor_count": ("the count reads the donor-replacement test", lambda n: _donor(n) and not _certificate(n)),
    "positive": ("the number is above zero", lambda v: float(v.value) > 0),
    "reads_threshold": ("the number is a confidence threshold fitted on the source (metric = threshold)",
                        lambda f: f.key is not None and ("metric", "=", "threshold") in f.key.where),
    **{f"verdict:{v}": (f"the verdict is {v}", (lambda want: lambda f: str(f.value) == want)(v))
       for v in ("transport-stable", "transport-sensitive", "indeterminate")},
}

#: Words a sentence may only use when a :class:`Word` of its contract licenses them (regular expressions).
RESTRICTED = {
    "restore": r"\brestor\w*", "raise": r"\braises?\b", "lower": r"\blowers?\b", "rise": r"\brises?\b",
    "fall": r"\bfalls?\b", "instead of": r"\binstead of\b", "most stable": r"\bmost stable\b",
    "improve": r"\bimprov\w*", "fragile": r"\bfragile\b", "brittle": r"\bbrittle\b", "threshold": r"\bthreshold\b",
    "better": r"\bbetter\b",
}


def restricted_words(text: str) -> list[str]:
    """The restricted words (keys of :data:`RESTRICTED`) that ``text`` uses."""
    return [w for w, rx in RESTRICTED.items() if re.search(rx, text, flags=re.IGNORECASE)]


def holds(word: Word, facts: Mapping[str, Fact]) -> bool | None:
    """Whether ``word``'s condition holds on ``facts``; ``None`` when the condition or a fact is unknown."""
    entry = CONDITIONS.get(word.condition)
    if entry is None or any(a not in facts for a in word.args):
        return None
    try:
        return bool(entry[1](*(facts[a] for a in word.args)))
    except (TypeError, ValueError):
        return None
