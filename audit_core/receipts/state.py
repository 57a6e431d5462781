"""Evaluator state ``I = (G, N, A)``: typed grounds, ordered norms, authority.

A state is plain data held in frozen dataclasses. It loads from and saves to
JSON or YAML (:mod:`audit_core.safe_text`: safe loading, bounded). Loading is strict: unknown fields,
ill-typed values, duplicate rule ids, conditions that do not parse and
references to undeclared grounds are refused with a declared error that names
the field at fault.

Text format (YAML shown; JSON is the same structure)::

    name: loan policy v2          # optional label
    grounds:                      # typed facts
      amount: {type: number, value: 12000}
      role: {type: text, value: clerk}
      filed: {type: date, value: 2024-03-01}
      income: {type: number, value: null}   # declared UNKNOWN
      vip: true                   # shorthand: type inferred from a non-null scalar
    norms:
      default: approve            # verdict when no authorised rule fires
      on_unknown: refer           # refer | skip (see adjudicate.py)
      rules:                      # ordered; the first authorised rule that fires decides
        - {id: big_clerk, when: 'amount > 10000 and role == "clerk"', then: deny}
    authority:                    # rule id -> scope (an expression, or true / false)
      big_clerk: 'region in ["EU", "US"]'

Ground types are ``number`` (int or float, never a boolean), ``text``,
``bool`` and ``date`` (``YYYY-MM-DD`` or a YAML date). A rule without an
authority entry has no authority: it never decides a case.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import pandas as pd

from audit_core.errors import AuditInputError, excerpt, fail, register_messages
from audit_core.expr import Expr, parse_expression, referenced_names
from audit_core.safe_text import load_json, load_yaml

__all__ = [
    "GROUND_TYPES",
    "Ground",
    "Rule",
    "Norms",
    "EvaluatorState",
    "load_state",
    "state_from_dict",
    "dump_state",
    "compile_expression",
]

#: Allowed ground types.
GROUND_TYPES: tuple[str, ...] = ("number", "text", "bool", "date")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RULE_ID_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false"})
_MAX_TEXT = 1_000_000

register_messages(
    {
        "RC_STATE_SYNTAX": "Cannot read the {label} as {fmt}: {reason}",
        "RC_STATE_NOT_MAPPING": (
            "The {label} must be a mapping with the keys {allowed}; got {got}."
        ),
        "RC_STATE_UNKNOWN_FIELD": (
            "Unknown field {field!r} in {where}; the allowed fields are {allowed}."
        ),
        "RC_STATE_MISSING_FIELD": "Missing field {field!r} in {where}.",
        "RC_STATE_TYPE": "{where} must be {expected}, got {got}.",
        "RC_STATE_BAD_NAME": (
            "{what} {name!r} is not allowed: {reason}."
        ),
        "RC_STATE_DUPLICATE_RULE": (
            "Rule id {rule_id!r} appears more than once in the norms; rule ids "
            "must be unique."
        ),
        "RC_STATE_EXPRESSION": "In {where}: {message}",
        "RC_STATE_UNDECLARED_GROUND": (
            "{where} refers to the ground `{name}`, which the grounds do not "
            "declare. Declare it (use `value: null` to declare it unknown); "
            "grounds are never guessed."
        ),
        "RC_STATE_AUTHORITY_RULE": (
            "The authority names rule {rule_id!r}, which is not among the "
            "norms ({rules})."
        ),
        "RC_STATE_TOO_LARGE": "The {label} is {size} characters long; the limit is {limit}.",
    }
)


def _got(v: object) -> str:
    return f"{type(v).__name__} {excerpt(v, 60)}"


# --------------------------------------------------------------------------
# Dataclasses
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Ground:
    """One typed fact.

    Parameters
    ----------
    name : str
        Identifier used in conditions.
    type : {"number", "text", "bool", "date"}
    value : int, float, str, bool, datetime.date or None
        ``None`` declares the ground *unknown*: conditions on it evaluate to
        UNKNOWN (three-valued logic), they are never guessed.
    """

    name: str
    type: str
    value: Any = None

    def to_dict(self) -> dict[str, Any]:
        v = self.value.isoformat() if isinstance(self.value, _dt.date) else self.value
        return {"type": self.type, "value": v}


@dataclass(frozen=True)
class Rule:
    """One norm: ``if <when> then <then>``.

    Parameters
    ----------
    id : str
    when : str
        Condition in the expression language (``docs/expressions.md``).
    then : str
        Disposition (the verdict the rule gives when it fires).
    note : str, optional
        Free text for people; never evaluated.
    """

    id: str
    when: str
    then: str
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "when": self.when, "then": self.then}
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Norms:
    """Ordered rules, the declared default and the UNKNOWN policy.

    Parameters
    ----------
    rules : tuple of Rule
    default : str
        Verdict when authorised rules exist but none fires.
    on_unknown : {"refer", "skip"}, default "refer"
        What an authorised rule whose condition (or scope) is UNKNOWN does:
        ``"refer"`` makes the verdict ``refer`` (the case cannot be decided
        without the missing ground); ``"skip"`` passes over the rule and
        records it in the trace.
    """

    rules: tuple[Rule, ...]
    default: str
    on_unknown: Literal["refer", "skip"] = "refer"

    def rule(self, rule_id: str) -> Rule | None:
        for r in self.rules:
            if r.id == rule_id:
                return r
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "default": self.default,
            "on_unknown": self.on_unknown,
            "rules": [r.to_dict() for r in self.rules],
        }


@dataclass(frozen=True)
class EvaluatorState:
    """An evaluator ``I = (G, N, A)``.

    Parameters
    ----------
    grounds : tuple of Ground
        Sorted by name.
    norms : Norms
    authority : tuple of (rule_id, scope) pairs
        ``scope`` is an expression text (``"true"`` = every case). Rules
        without an entry have no authority.
    name : str, optional
        A label (e.g. ``"policy v2"``); not part of the judgment.
    """

    grounds: tuple[Ground, ...]
    norms: Norms
    authority: tuple[tuple[str, str], ...]
    name: str = ""
    _record: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_record", {g.name: g.value for g in self.grounds})

    @property
    def record(self) -> Mapping[str, Any]:
        """Ground name -> value (``None`` for declared unknown)."""
        return self._record

    @property
    def ground_map(self) -> dict[str, Ground]:
        return {g.name: g for g in self.grounds}

    @property
    def authority_map(self) -> dict[str, str]:
        return dict(self.authority)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        out["grounds"] = {g.name: g.to_dict() for g in self.grounds}
        out["norms"] = self.norms.to_dict()
        out["authority"] = {rid: scope for rid, scope in self.authority}
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per element: ``part``, ``item``, ``detail``."""
        rows = [("G", g.name, f"{g.type} = {g.value!r}" if g.value is not None else f"{g.type} = UNKNOWN")
                for g in self.grounds]
        rows += [("N", r.id, f"if {r.when} then {r.then}") for r in self.norms.rules]
        rows.append(("N", "(default)", f"{self.norms.default}; on_unknown={self.norms.on_unknown}"))
        rows += [("A", rid, scope) for rid, scope in self.authority]
        return pd.DataFrame(rows, columns=["part", "item", "detail"])


# --------------------------------------------------------------------------
# Expressions (parsed once, cached by text)
# --------------------------------------------------------------------------
@lru_cache(maxsize=65536)
def compile_expression(text: str) -> Expr:
    """Parse a condition or scope (cached by its text).

    Raises
    ------
    AuditInputError
        The expression-language errors (``EXPR_*``).
    """
    return parse_expression(text)


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------
def _mapping(obj: object, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> Mapping:
    if not isinstance(obj, Mapping):
        raise fail("RC_STATE_TYPE", where=where, expected="a mapping", got=_got(obj))
    for k in obj:
        if k not in allowed:
            raise fail("RC_STATE_UNKNOWN_FIELD", field=k, where=where,
                       allowed=", ".join(allowed))
    for k in required:
        if k not in obj:
            raise fail("RC_STATE_MISSING_FIELD", field=k, where=where)
    return obj


def _text(v: object, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(v, str) or (not allow_empty and not v.strip()):
        raise fail("RC_STATE_TYPE", where=where, expected="a non-empty text" if not allow_empty else "a text",
                   got=_got(v))
    return v


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise fail("RC_STATE_BAD_NAME", what="Ground name", name=name,
                   reason="use letters, digits and '_' and start with a letter or '_'")
    if name in _KEYWORDS or name.startswith("__"):
        raise fail("RC_STATE_BAD_NAME", what="Ground name", name=name,
                   reason="it is a keyword of the expression language or starts with '__'")
    return name


def _typed_value(name: str, typ: str, value: object) -> Any:
    where = f"the value of ground {name!r}"
    if value is None:
        return None
    if typ == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail("RC_STATE_TYPE", where=where, expected="a number (type: number)", got=_got(value))
        if isinstance(value, float) and not math.isfinite(value):
            raise fail("RC_STATE_TYPE", where=where, expected="a finite number", got=_got(value))
        return value
    if typ == "text":
        if not isinstance(value, str):
            raise fail("RC_STATE_TYPE", where=where, expected="a text (type: text)", got=_got(value))
        return value
    if typ == "bool":
        if not isinstance(value, bool):
            raise fail("RC_STATE_TYPE", where=where, expected="true or false (type: bool)", got=_got(value))
        return value
    # date
    if isinstance(value, _dt.datetime):
        raise fail("RC_STATE_TYPE", where=where, expected="a date YYYY-MM-DD without time", got=_got(value))
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise fail("RC_STATE_TYPE", where=where, expected="a date written YYYY-MM-DD (type: date)", got=_got(value))


def _infer_type(name: str, value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, _dt.datetime):
        raise fail("RC_STATE_TYPE", where=f"ground {name!r}", expected="a date without time", got=_got(value))
    if isinstance(value, _dt.date):
        return "date"
    if isinstance(value, str):
        return "text"
    raise fail("RC_STATE_TYPE", where=f"ground {name!r}",
               expected="{type: ..., value: ...} or a non-null number, text, true/false or date",
               got=_got(value))


def _ground(name: object, spec: object) -> Ground:
    name = _check_name(name)
    if isinstance(spec, Mapping):
        _mapping(spec, f"ground {name!r}", ("type", "value"), ("type",))
        typ = spec["type"]
        if typ not in GROUND_TYPES:
            raise fail("RC_STATE_TYPE", where=f"the type of ground {name!r}",
                       expected="one of " + ", ".join(GROUND_TYPES), got=_got(typ))
        return Ground(name, typ, _typed_value(name, typ, spec.get("value")))
    typ = _infer_type(name, spec)
    return Ground(name, typ, _typed_value(name, typ, spec))


def _expr(text: object, where: str) -> tuple[str, Expr]:
    if isinstance(text, bool):  # YAML true/false as a scope shorthand
        text = "true" if text else "false"
    s = _text(text, where)
    try:
        return s, compile_expression(s)
    except AuditInputError as err:
        raise fail("RC_STATE_EXPRESSION", where=where, message=err.message) from None


def state_from_dict(data: object, *, label: str = "state") -> EvaluatorState:
    """Build a validated :class:`EvaluatorState` from plain data.

    Parameters
    ----------
    data : mapping
        ``{"name"?, "grounds", "norms", "authority"}`` as in the module
        docstring.
    label : str, default "state"
        How messages refer to this state (e.g. ``"old state"``).

    Raises
    ------
    AuditInputError
        ``RC_STATE_*`` naming the field at fault.
    """
    top = ("name", "grounds", "norms", "authority")
    if not isinstance(data, Mapping):
        raise fail("RC_STATE_NOT_MAPPING", label=label, allowed=", ".join(top), got=_got(data))
    _mapping(data, f"the {label}", top, ("grounds", "norms", "authority"))
    name = _text(data.get("name", ""), f"the name of the {label}", allow_empty=True)
    graw = data["grounds"] if data["grounds"] is not None else {}
    if not isinstance(graw, Mapping):
        raise fail("RC_STATE_TYPE", where=f"'grounds' of the {label}", expected="a mapping name -> ground",
                   got=_got(graw))
    grounds = tuple(sorted((_ground(k, v) for k, v in graw.items()), key=lambda g: g.name))
    declared = {g.name for g in grounds}

    nraw = _mapping(data["norms"], f"'norms' of the {label}", ("rules", "default", "on_unknown"), ("default",))
    default = _text(nraw["default"], f"the default of the {label}'s norms")
    on_unknown = nraw.get("on_unknown", "refer")
    if on_unknown not in ("refer", "skip"):
        raise fail("RC_STATE_TYPE", where=f"'on_unknown' of the {label}'s norms",
                   expected="'refer' or 'skip'", got=_got(on_unknown))
    rraw = nraw.get("rules") or []
    if not isinstance(rraw, list):
        raise fail("RC_STATE_TYPE", where=f"'rules' of the {label}'s norms", expected="a list of rules",
                   got=_got(rraw))
    rules: list[Rule] = []
    seen: set[str] = set()
    for i, r in enumerate(rraw):
        where = f"rule {i + 1} of the {label}"
        _mapping(r, where, ("id", "when", "then", "note"), ("id", "when", "then"))
        rid = r["id"]
        if not isinstance(rid, str) or not _RULE_ID_RE.match(rid):
            raise fail("RC_STATE_BAD_NAME", what="Rule id", name=rid,
                       reason="use letters, digits, '_', '.' or '-'")
        if rid in seen:
            raise fail("RC_STATE_DUPLICATE_RULE", rule_id=rid)
        seen.add(rid)
        when, tree = _expr(r["when"], f"the condition of rule {rid!r} ({label})")
        for n in sorted(referenced_names(tree)):
            if n not in declared:
                raise fail("RC_STATE_UNDECLARED_GROUND", where=f"The condition of rule {rid!r} ({label})", name=n)
        then = _text(r["then"], f"the disposition ('then') of rule {rid!r}")
        note = _text(r.get("note", ""), f"the note of rule {rid!r}", allow_empty=True)
        rules.append(Rule(rid, when, then, note))

    araw = data["authority"] if data["authority"] is not None else {}
    if not isinstance(araw, Mapping):
        raise fail("RC_STATE_TYPE", where=f"'authority' of the {label}", expected="a mapping rule id -> scope",
                   got=_got(araw))
    authority: list[tuple[str, str]] = []
    for rid, scope in araw.items():
        if rid not in seen:
            raise fail("RC_STATE_AUTHORITY_RULE", rule_id=rid, rules=", ".join(sorted(seen)) or "no rules")
        s, tree = _expr(scope, f"the authority scope of rule {rid!r} ({label})")
        for n in sorted(referenced_names(tree)):
            if n not in declared:
                raise fail("RC_STATE_UNDECLARED_GROUND", where=f"The authority scope of rule {rid!r} ({label})",
                           name=n)
        authority.append((rid, s))
    order = {r.id: i for i, r in enumerate(rules)}
    authority.sort(key=lambda p: order[p[0]])
    return EvaluatorState(grounds=grounds, norms=Norms(tuple(rules), default, on_unknown),
                          authority=tuple(authority), name=name)


def load_state(text: str, *, fmt: Literal["auto", "yaml", "json"] = "auto",
               label: str = "state") -> EvaluatorState:
    """Parse a state from JSON or YAML text.

    Parameters
    ----------
    text : str
    fmt : {"auto", "yaml", "json"}, default "auto"
        ``"auto"`` reads JSON when the text starts with ``{``, else YAML.
        Read with :func:`audit_core.safe_text.load_yaml` / ``load_json``: no
        tags or objects; aliases, duplicate keys and nesting are bounded.
    label : str
        Name used in messages, e.g. ``"old state"``.

    Examples
    --------
    >>> s = load_state('{"grounds": {"x": 3}, "norms": {"default": "ok", '
    ...                '"rules": [{"id": "r", "when": "x > 2", "then": "no"}]}, '
    ...                '"authority": {"r": true}}')
    >>> s.norms.rules[0].then, s.authority
    ('no', (('r', 'true'),))
    """
    if not isinstance(text, str):
        raise fail("RC_STATE_TYPE", where=f"the {label}", expected="text", got=_got(text))
    if len(text) > _MAX_TEXT:
        raise fail("RC_STATE_TOO_LARGE", label=label, size=len(text), limit=_MAX_TEXT)
    if fmt == "auto":
        fmt = "json" if text.lstrip().startswith("{") else "yaml"
    if fmt not in ("json", "yaml"):
        raise ValueError("fmt must be 'auto', 'yaml' or 'json'")
    fmt_name = fmt.upper()
    load = load_json if fmt == "json" else load_yaml
    data = load(text, what=f"The {label}", max_bytes=4 * _MAX_TEXT,  # characters are capped above
                syntax=lambda reason: fail("RC_STATE_SYNTAX", label=label, fmt=fmt_name, reason=reason))
    return state_from_dict(data, label=label)


def dump_state(state: EvaluatorState, *, fmt: Literal["yaml", "json"] = "yaml") -> str:
    """Serialise a state; :func:`load_state` reads the text back to an equal state."""
    data = state.to_dict()
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=False)
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    raise ValueError("fmt must be 'yaml' or 'json'")
