"""What else differs between the two sides of a release gate: the data and the configurations.

The gate compares the grounds of two sets of saved runs; it does not know
whether they describe one model's change on one dataset or two unrelated
audits. :func:`comparison_notes` says when the two sides read different data
(by the datasets' SHA-256 fingerprints) or when runs of one kind were made
under different configurations (naming the settings that differ), so a
verdict that passes across unrelated runs is not read as a like-for-like
comparison. The CLI ``gate`` prints the notes; the Receipts page shows them
beside the verdict. This module is pure.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .registry import RunRecord

__all__ = ["comparison_notes"]

#: A differing setting whose values are at most this long (as JSON) is shown with them; longer ones by name only.
_SHORT = 40
#: Differing settings listed by name; more are counted.
_LISTED = 8


def _datasets(runs: Sequence[RunRecord]) -> dict[str, str]:
    """Fingerprint -> dataset name, in run order."""
    out: dict[str, str] = {}
    for r in runs:
        out.setdefault(str(r.dataset_fingerprint), str(r.dataset_name))
    return out


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _names(datasets: dict[str, str]) -> str:
    return ", ".join(f"{name!r} (SHA-256 {fp[:12]})" for fp, name in datasets.items())


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings and lists as ``{"a.b.0.c": leaf}``."""
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        items = enumerate(value)
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, v in items:
        out.update(_flat(v, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _differences(old: dict, new: dict) -> list[str]:
    """The settings (dotted paths) whose values differ, with the values when short, at most :data:`_LISTED`."""
    a, b = _flat(old), _flat(new)
    out = []
    for key in sorted(set(a) | set(b)):
        ta, tb = _text(a.get(key)), _text(b.get(key))
        if ta != tb:
            out.append(f"{key} ({ta} → {tb})" if max(len(ta), len(tb)) <= _SHORT else key)
    if len(out) > _LISTED:
        out = out[:_LISTED] + [f"and {len(out) - _LISTED} more"]
    return out


def comparison_notes(runs_a: Sequence[RunRecord], runs_b: Sequence[RunRecord]) -> list[str]:
    """Sentences saying what differs between the gate's sides besides the model: data, configurations.

    Parameters
    ----------
    runs_a, runs_b : sequence of RunRecord
        The old (baseline) and new (candidate) sides, newest first as the gate reads them.

    Returns
    -------
    list of str
        Empty when both sides read the same data and every audit kind on both sides was configured alike.
        Otherwise one sentence for the data (the names and fingerprints of each side) and one per audit kind
        whose configurations differ (the settings that differ, as dotted paths, with the old and new values
        when short).
    """
    notes = []
    data_a, data_b = _datasets(runs_a), _datasets(runs_b)
    if set(data_a) != set(data_b):
        notes.append(f"The two sides read different data: old {_names(data_a)}, new {_names(data_b)}. The verdicts "
                     "are compared as they stand; a change may come from the data, not the model.")
    kinds = [k for k in dict.fromkeys(r.audit_kind for r in runs_a) if any(r.audit_kind == k for r in runs_b)]
    for kind in kinds:
        old = next(r for r in runs_a if r.audit_kind == kind).config or {}
        new = next(r for r in runs_b if r.audit_kind == kind).config or {}
        diff = _differences(dict(old), dict(new))
        if diff:
            notes.append(f"The {kind} runs were configured differently: " + "; ".join(diff) + ".")
    return notes
