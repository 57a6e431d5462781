"""One reader for every YAML and JSON text the project reads: configs, Receipts states, gate rules, bundles.

:func:`load_yaml` is ``yaml.safe_load`` (no tags, no Python objects) with the
size of what comes out bounded *before* it is used:

* **Anchors and aliases** (``&x`` / ``*x``) are allowed, but the value tree
  they expand to is measured on the composed nodes (shared nodes are counted
  once per use, without building anything) and refused past
  :data:`MAX_EXPANDED_VALUES`; a recursive alias is refused. A 1 KB
  "billion laughs" is refused in milliseconds instead of being expanded by
  whatever reads the value next (``json.dumps`` of a run's config).
* **Duplicate keys** in one mapping are refused with the key and both lines
  (YAML and JSON both let the last one win silently otherwise).
* **Nesting** deeper than :data:`MAX_DEPTH` is refused with its line, before
  the parser's recursion could overflow the stack.
* **Text** must be UTF-8 (:func:`decode_utf8`) and at most ``max_bytes`` long.

:func:`load_json` applies the same depth and duplicate-key rules to JSON.
A syntax error is reported with its line and column, never with a copy of
the offending line: the text may be any file a config points at.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import AuditInputError, excerpt, fail, register_messages

__all__ = ["MAX_DEPTH", "MAX_EXPANDED_VALUES", "MAX_TEXT_BYTES", "decode_utf8", "load_json", "load_yaml",
           "read_text_file"]

#: Deepest nesting of mappings and lists accepted (configs nest about 5 levels).
MAX_DEPTH = 100
#: Most values (scalars, lists, mappings) a text may expand to through its aliases.
MAX_EXPANDED_VALUES = 1_000_000
#: Default cap on the size of one text.
MAX_TEXT_BYTES = 10 * 1024 * 1024

register_messages(
    {
        "TEXT_NOT_UTF8": (
            "{what} is not UTF-8 text (byte {position:,} cannot be decoded). Save it as UTF-8 and try again."
        ),
        "TEXT_TOO_LARGE": "{what} is {size:,} bytes; the limit is {limit:,} bytes.",
        "YAML_SYNTAX": "{what} is not valid YAML: {reason}",
        "JSON_SYNTAX": "{what} is not valid JSON: {reason}",
        "YAML_DUPLICATE_KEY": (
            "{what} has the key {key} twice in one mapping (line {first} and line {line}); "
            "only one can hold. Remove or rename one of them."
        ),
        "JSON_DUPLICATE_KEY": "{what} has the key {key} twice in one object; only one can hold. Remove one of them.",
        "TEXT_TOO_DEEP": (
            "{what} nests lists and mappings more than {limit} levels deep{at}; "
            "no config, state or bundle needs that many. Flatten it."
        ),
        "YAML_ALIAS_BOMB": (
            "{what} expands to more than {limit:,} values through its anchors and aliases (&name / *name) "
            "at line {line}; write the repeated parts out, or repeat them less."
        ),
        "YAML_ALIAS_RECURSIVE": (
            "{what} has an alias at line {line} that refers to a value containing itself; "
            "a recursive anchor cannot be read."
        ),
    }
)


def decode_utf8(data: bytes | str, *, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The text of ``data``, refusing non-UTF-8 bytes and oversized texts.

    Raises
    ------
    AuditInputError
        ``TEXT_NOT_UTF8`` (with the byte position), ``TEXT_TOO_LARGE``.
    """
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > max_bytes:
        raise fail("TEXT_TOO_LARGE", what=what, size=size, limit=max_bytes)
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail("TEXT_NOT_UTF8", what=what, position=exc.start) from None


def read_text_file(path: Path, *, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a file named by a config or an option, its size checked before it is read.

    Raises
    ------
    AuditInputError
        ``TEXT_TOO_LARGE``, ``TEXT_NOT_UTF8``.
    """
    size = path.stat().st_size
    if size > max_bytes:
        raise fail("TEXT_TOO_LARGE", what=what, size=size, limit=max_bytes)
    return decode_utf8(path.read_bytes(), what=what, max_bytes=max_bytes)


@functools.cache
def _loader_class():
    import yaml

    class _Loader(yaml.SafeLoader):
        """SafeLoader that bounds nesting while composing and refuses duplicate keys."""

        _depth = 0

        def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's signature
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    mark = self.peek_event().start_mark
                    raise _Refusal("TEXT_TOO_DEEP", limit=MAX_DEPTH, at=f" (line {mark.line + 1})")
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node, deep=False):  # noqa: ANN001
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # "<<": merged keys may be overridden, that is the merge's meaning
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # unhashable key: the base class raises its own error
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise _Refusal("YAML_DUPLICATE_KEY", key=excerpt(key), first=first, line=line)
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    return _Loader


class _Refusal(Exception):
    """A declared refusal raised inside the loader; ``what`` is added by :func:`load_yaml`."""

    def __init__(self, code: str, **fields: Any) -> None:
        super().__init__(code)
        self.code = code
        self.fields = fields


def _measure(root: Any) -> None:
    """Refuse a node graph that expands past the caps, without expanding it (iterative, memoised)."""
    from yaml.nodes import MappingNode, SequenceNode

    def children(node: Any) -> list:
        if isinstance(node, MappingNode):
            return [n for pair in node.value for n in pair]
        if isinstance(node, SequenceNode):
            return list(node.value)
        return []

    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            kids = children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            open_nodes.discard(key)
            line = node.start_mark.line + 1
            if size[key] > MAX_EXPANDED_VALUES:
                raise _Refusal("YAML_ALIAS_BOMB", limit=MAX_EXPANDED_VALUES, line=line)
            if depth[key] > MAX_DEPTH:
                raise _Refusal("TEXT_TOO_DEEP", limit=MAX_DEPTH, at=f" (line {line}, through aliases)")
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise _Refusal("YAML_ALIAS_RECURSIVE", line=node.start_mark.line + 1)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in children(node) if id(k) not in size)


def load_yaml(
    data: bytes | str,
    *,
    what: str,
    syntax: Callable[[str], AuditInputError] | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
) -> Any:
    """Parse one YAML document safely (see the module docstring).

    Parameters
    ----------
    data : bytes or str
        The text (bytes must be UTF-8).
    what : str
        The text's name at the start of a sentence, e.g. ``"The config file cfg.yaml"``.
    syntax : callable(reason) -> AuditInputError, optional
        Builds the error for a syntax error (a caller's own code, e.g.
        ``CONFIG_NOT_YAML``); default ``YAML_SYNTAX``.
    max_bytes : int
        Largest text accepted.

    Returns
    -------
    object
        Plain dicts, lists, strings, numbers, booleans, dates and None.

    Raises
    ------
    AuditInputError
        ``TEXT_NOT_UTF8``, ``TEXT_TOO_LARGE``, ``TEXT_TOO_DEEP``,
        ``YAML_DUPLICATE_KEY``, ``YAML_ALIAS_BOMB``,
        ``YAML_ALIAS_RECURSIVE``, or the syntax error.

    Examples
    --------
    >>> load_yaml("a: &x [1, 2]\\nb: *x", what="The text")
    {'a': [1, 2], 'b': [1, 2]}
    >>> load_yaml("a: 1\\na: 2", what="The config file c.yaml")
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: The config file c.yaml has the key 'a' twice in one mapping \
(line 1 and line 2); only one can hold. Remove or rename one of them.
    """
    import yaml

    text = decode_utf8(data, what=what, max_bytes=max_bytes)
    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node)
        return loader.construct_document(node)
    except _Refusal as r:
        raise fail(r.code, what=what, **r.fields) from None
    except yaml.YAMLError as exc:
        raise (syntax or (lambda reason: fail("YAML_SYNTAX", what=what, reason=reason)))(_reason(exc)) from None
    except RecursionError:  # pragma: no cover - the depth cap answers first
        raise fail("TEXT_TOO_DEEP", what=what, limit=MAX_DEPTH, at="") from None
    finally:
        loader.dispose()


def _reason(exc: Exception) -> str:
    """Where and what the syntax error is: line, column and the parser's problem, never the line itself."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    text = " ".join(str(problem).split())
    return f"{where}{text[:200]}."


def _no_duplicates(what: str) -> Callable[[list[tuple[str, Any]]], dict]:
    def hook(pairs: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                raise fail("JSON_DUPLICATE_KEY", what=what, key=excerpt(key))
            out[key] = value
        return out

    return hook


def _json_depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def load_json(
    data: bytes | str,
    *,
    what: str,
    syntax: Callable[[str], AuditInputError] | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
) -> Any:
    """Parse JSON with the depth and duplicate-key rules of :func:`load_yaml`.

    Raises
    ------
    AuditInputError
        ``TEXT_NOT_UTF8``, ``TEXT_TOO_LARGE``, ``TEXT_TOO_DEEP``,
        ``JSON_DUPLICATE_KEY``, or the syntax error (default ``JSON_SYNTAX``).

    Examples
    --------
    >>> load_json('{"a": [1, {"b": null}]}', what="The bundle b.json")
    {'a': [1, {'b': None}]}
    """
    text = decode_utf8(data, what=what, max_bytes=max_bytes)
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates(what))
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at line {exc.lineno}, column {exc.colno}."
        raise (syntax or (lambda r: fail("JSON_SYNTAX", what=what, reason=r)))(reason) from None
    except RecursionError:
        raise fail("TEXT_TOO_DEEP", what=what, limit=MAX_DEPTH, at="") from None
    if _json_depth(value) > MAX_DEPTH:
        raise fail("TEXT_TOO_DEEP", what=what, limit=MAX_DEPTH, at="")
    return value
