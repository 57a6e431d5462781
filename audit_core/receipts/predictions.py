"""Prediction upload: JSONL validated line by line against the gold cases.

One JSON object per line::

    {"case_id": "p00012-1", "v_old": "approve", "v_new": "deny",
     "receipt": [["G"], ["N"]], "confidence": 0.8,
     "cube": {"": "approve", "G": "deny", "N": "deny", "A": "approve",
              "G+N": "deny", "G+A": "deny", "N+A": "deny", "G+N+A": "deny"}}

* ``case_id`` (text) and ``receipt`` are required. ``receipt`` is a list of
  sets (lists of source names; ``[]`` = no change) or the text form
  ``"{G} | {N}"`` / ``"none"``.
* ``v_old``/``v_new`` (texts, both or neither), ``confidence`` (a number in
  [0, 1]) and ``cube`` (every one of the ``2^k`` cells, keyed by the
  replaced sources joined with ``+``, ``""`` for the old endpoint) are
  optional.
* Unknown fields, unknown case ids, source names the case does not have,
  empty or repeated sets, families that are not antichains and repeated case
  ids are refused. Bad lines are reported (line number and reason) and
  skipped; good lines are kept and scored.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from audit_core.errors import AuditInputError, fail, register_messages

from .accounting import Gold, Prediction
from .cube import parse_family

__all__ = ["LineError", "PredictionUpload", "parse_predictions"]

_FIELDS = ("case_id", "v_old", "v_new", "receipt", "cube", "confidence")
_MAX_BYTES = 50 * 1024 * 1024

register_messages(
    {
        "RC_UPLOAD_TOO_LARGE": "The prediction file is {size} bytes; the limit is {limit} bytes.",
        "RC_UPLOAD_ENCODING": "The prediction file is not UTF-8 text ({reason}).",
        "RC_UPLOAD_EMPTY": "The prediction file has no prediction lines.",
    }
)


@dataclass(frozen=True)
class LineError:
    """One refused line."""

    line: int
    case_id: str
    message: str


@dataclass(frozen=True)
class PredictionUpload:
    """Parsed predictions and the refused lines."""

    predictions: tuple[Prediction, ...]
    errors: tuple[LineError, ...]
    n_lines: int

    def errors_frame(self) -> pd.DataFrame:
        return pd.DataFrame([e.__dict__ for e in self.errors], columns=["line", "case_id", "message"])


class _Bad(Exception):
    pass


def _family(raw: object, sources: tuple[str, ...]):
    if isinstance(raw, str):
        try:
            fam = list(parse_family(raw))
        except AuditInputError as err:
            raise _Bad(err.message) from None
    elif isinstance(raw, list):
        fam = []
        for s in raw:
            if not isinstance(s, list) or not all(isinstance(x, str) for x in s):
                raise _Bad("'receipt' must be a list of lists of source names, e.g. [[\"G\"], [\"N\", \"A\"]]")
            if not s:
                raise _Bad("'receipt' contains an empty set; write [] for no change")
            if len(set(s)) != len(s):
                raise _Bad(f"the set {s} repeats a source")
            fam.append(frozenset(s))
    else:
        raise _Bad("'receipt' must be a list of sets or a text like \"{G} | {N}\"")
    for s in fam:
        bad = sorted(set(s) - set(sources))
        if bad:
            raise _Bad(f"unknown source(s) {bad}; this case's sources are {list(sources)}")
    if len(set(fam)) != len(fam):
        raise _Bad("'receipt' repeats a set")
    for a in fam:
        for b in fam:
            if a < b:
                raise _Bad(f"'receipt' is not inclusion-minimal: {sorted(a)} is a subset of {sorted(b)}")
    return frozenset(fam)


def _cube(raw: object, sources: tuple[str, ...]):
    if not isinstance(raw, dict):
        raise _Bad("'cube' must be an object mapping cells (e.g. \"G+N\", \"\" for old) to verdicts")
    out = {}
    for key, v in raw.items():
        names = [x for x in key.split("+") if x] if key not in ("", "{}", "old") else []
        bad = sorted(set(names) - set(sources))
        if bad:
            raise _Bad(f"cube cell {key!r} names unknown source(s) {bad}")
        cell = frozenset(names)
        if cell in out:
            raise _Bad(f"cube cell {key!r} is given twice")
        if not isinstance(v, str) or not v:
            raise _Bad(f"cube cell {key!r} must map to a verdict text")
        out[cell] = v
    if len(out) != 2 ** len(sources):
        raise _Bad(f"'cube' has {len(out)} cells; it must give all {2 ** len(sources)} cells")
    return out


def _line(obj: object, gold: Mapping[str, Gold], seen: set[str]) -> Prediction:
    if not isinstance(obj, dict):
        raise _Bad("each line must be a JSON object")
    unknown = sorted(set(obj) - set(_FIELDS))
    if unknown:
        raise _Bad(f"unknown field(s) {unknown}; allowed: {list(_FIELDS)}")
    cid = obj.get("case_id")
    if not isinstance(cid, str) or not cid:
        raise _Bad("'case_id' is required and must be a text")
    if cid not in gold:
        raise _Bad(f"unknown case id {cid!r} (not in the benchmark being scored)")
    if cid in seen:
        raise _Bad(f"case id {cid!r} appears on an earlier line")
    if "receipt" not in obj:
        raise _Bad("'receipt' is required ([] for no change)")
    g = gold[cid]
    fam = _family(obj["receipt"], g.sources)
    vo, vn = obj.get("v_old"), obj.get("v_new")
    if (vo is None) != (vn is None):
        raise _Bad("give both 'v_old' and 'v_new', or neither")
    for name, v in (("v_old", vo), ("v_new", vn)):
        if v is not None and (not isinstance(v, str) or not v):
            raise _Bad(f"'{name}' must be a verdict text")
    conf = obj.get("confidence")
    if conf is not None:
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not math.isfinite(conf) or not 0 <= conf <= 1:
            raise _Bad(f"'confidence' must be a number between 0 and 1, got {conf!r}")
        conf = float(conf)
    cube = _cube(obj["cube"], g.sources) if obj.get("cube") is not None else None
    return Prediction(cid, fam, vo, vn, cube, conf)


def parse_predictions(data: bytes | str, *, gold: Mapping[str, Gold]) -> PredictionUpload:
    """Validate a JSONL prediction file line by line.

    Parameters
    ----------
    data : bytes or str
    gold : mapping case_id -> Gold
        The executed cases the predictions refer to.

    Returns
    -------
    PredictionUpload
        Good lines as predictions; bad lines as :class:`LineError` (1-based
        line numbers). Blank lines are ignored.

    Raises
    ------
    AuditInputError
        ``RC_UPLOAD_TOO_LARGE``, ``RC_UPLOAD_ENCODING``, ``RC_UPLOAD_EMPTY``.
    """
    if isinstance(data, bytes):
        if len(data) > _MAX_BYTES:
            raise fail("RC_UPLOAD_TOO_LARGE", size=len(data), limit=_MAX_BYTES)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise fail("RC_UPLOAD_ENCODING", reason=str(err)[:200]) from None
    else:
        text = data
    preds: list[Prediction] = []
    errors: list[LineError] = []
    seen: set[str] = set()
    n = 0
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        n += 1
        cid = ""
        try:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise _Bad(f"not valid JSON ({err.msg} at column {err.colno})") from None
            if isinstance(obj, dict) and isinstance(obj.get("case_id"), str):
                cid = obj["case_id"]
            p = _line(obj, gold, seen)
        except _Bad as bad:
            errors.append(LineError(i, cid, str(bad)))
            continue
        seen.add(p.case_id)
        preds.append(p)
    if n == 0:
        raise fail("RC_UPLOAD_EMPTY")
    return PredictionUpload(tuple(preds), tuple(errors), n)
