"""Safe text: one reader for every YAML and JSON text, and one way to show text that comes from data.

**Reading.** One reader for every YAML and JSON text the project reads: configs, Receipts states, gate rules, bundles.

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

**Showing.** Names from data (columns, categories, classes, groups, files,
targets, runs) are shown as text wherever they appear, each medium through one
function:

* :func:`reveal` (every medium): invisible characters become visible:
  bidirectional controls and zero-width characters (Unicode format
  characters, e.g. U+202E RIGHT-TO-LEFT OVERRIDE, U+200B, the isolates
  U+2066–U+2069) as ``<U+202E>``, control characters as ``\\x1b``. The
  Markdown escapes of the app and the model card, and the HTML report, apply it.
* :func:`plotly_text`: Plotly label markup (``<a href>``, ``<span style>``,
  ``<b>``, ``<br>``, entities) shown as text; applied to whole figures by
  :func:`components.figures.labels.escape_figure`.
* :func:`terminal_text`: what the CLI prints; tabs and line breaks are
  escaped too, so a name cannot forge a line of output.
* :func:`csv_cell` / :func:`csv_text`: a text cell that a spreadsheet would
  read as a formula gets a leading ``'``; numbers stay numbers.

Pure library code: never imports streamlit or plotly.
"""
from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import AuditInputError, excerpt, fail, register_messages

__all__ = ["MAX_DEPTH", "MAX_EXPANDED_VALUES", "MAX_TEXT_BYTES", "CSV_FORMULA_STARTS", "csv_cell", "csv_text",
           "decode_utf8", "html_text", "load_json", "load_yaml", "map_text", "plotly_text", "read_text_file", "reveal",
           "terminal_text"]

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
    syntax = syntax or (lambda reason: fail("YAML_SYNTAX", what=what, reason=reason))
    try:  # the reader refuses control characters such as NUL while it is being built
        loader = _loader_class()(text)
    except yaml.reader.ReaderError as exc:
        reason = f"character {exc.position + 1}: the control character U+{exc.character:04X} is not allowed in YAML."
        raise syntax(reason) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node)
        return loader.construct_document(node)
    except _Refusal as r:
        raise fail(r.code, what=what, **r.fields) from None
    except yaml.YAMLError as exc:
        raise syntax(_reason(exc)) from None
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


# ---------------------------------------------------------------------------------------------------------------
# Showing text from data
# ---------------------------------------------------------------------------------------------------------------

#: Characters that are invisible or move other text: controls (Unicode Cc), format characters (Cf: bidirectional
#: controls, zero-width characters, the BOM, soft hyphen, tag characters) and the line/paragraph separators
#: (Zl, Zp). ``tests/test_escaping.py`` checks this class against :mod:`unicodedata` over every code point.
_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_WHITESPACE_CONTROLS = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
#: Joiners that shape the letters around them (Persian, Indic scripts, emoji sequences): kept between two
#: non-ASCII characters, shown elsewhere (between ASCII letters they only hide a difference between two names).
_JOINERS = {"\u200c", "\u200d"}


def reveal(text: object, *, whitespace: bool = False) -> str:
    """``text`` (any value, via ``str``) with every invisible or text-moving character made visible.

    Bidirectional controls, zero-width and other format characters become
    ``<U+XXXX>``; control characters become ``\\x1b``-style escapes. Tab, line
    feed and carriage return are kept, unless ``whitespace`` is true (then
    they become ``\\t``, ``\\n``, ``\\r``). A zero-width (non-)joiner between two
    non-ASCII characters is kept: Persian and Indic words and emoji sequences
    need it. Backslashes are not doubled.

    Examples
    --------
    >>> reveal("abc\\u202edcba \\u200bx")
    'abc<U+202E>dcba <U+200B>x'
    >>> reveal("\\x1b]0;title\\x07a\\tb")
    '\\\\x1b]0;title\\\\x07a\\tb'
    >>> reveal("a\\tb", whitespace=True)
    'a\\\\tb'
    """
    s = str(text)
    if not _HIDDEN.search(s):
        return s

    def shown(m: re.Match) -> str:
        c, i = m.group(), m.start()
        if c in _WHITESPACE_CONTROLS:
            return _WHITESPACE_CONTROLS[c] if whitespace else c
        if c in _JOINERS and 0 < i < len(s) - 1 and not (s[i - 1].isascii() or s[i + 1].isascii()) \
                and not (_HIDDEN.match(s[i - 1]) or _HIDDEN.match(s[i + 1])):
            return c
        if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F:
            return f"\\x{ord(c):02x}"
        return f"<U+{ord(c):04X}>"

    return _HIDDEN.sub(shown, s)


def terminal_text(text: object) -> str:
    """``text`` safe to print on a terminal: :func:`reveal` with tabs and line breaks escaped too.

    An escape sequence in a name (an OSC 8 hyperlink, a clear-screen, a
    window title) is printed as ``\\x1b…``, and a line break cannot forge a
    line of the command's output.

    Examples
    --------
    >>> terminal_text("\\x1b[2J\\x1b[H col\\nerror: x")
    '\\\\x1b[2J\\\\x1b[H col\\\\nerror: x'
    """
    return reveal(text, whitespace=True)


def plotly_text(text: object) -> str:
    """``text`` as Plotly label markup that shows it literally: :func:`reveal`, then ``&``, ``<``, ``>`` as entities.

    Plotly reads ``<a href>``, ``<span style>``, ``<b>``, ``<i>``, ``<br>``,
    ``<sup>``, ``<sub>`` and entities in every label (titles, ticks, legend,
    hover, annotations); with ``<`` written ``&lt;`` no tag can start, and
    with ``&`` written ``&amp;`` an entity in the data (``&lt;``) shows as
    written. Plotly decodes each entity once, so the label reads as the name.

    Examples
    --------
    >>> plotly_text('<a href="http://x">sign in</a> &lt;')
    '&lt;a href="http://x"&gt;sign in&lt;/a&gt; &amp;lt;'
    """
    return reveal(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def html_text(text: object) -> str:
    """``text`` in HTML (element content or a quoted attribute): :func:`reveal`, then :func:`html.escape`."""
    return html.escape(reveal(text))


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """One CSV cell: a text cell that starts like a formula gets a leading ``'``; anything else is unchanged.

    The rule: only text (``str``) is neutralised, after :func:`reveal`; numbers, booleans, dates and missing
    values are written as they are, so ``-3.5`` stays a number while the text ``"-3.5"`` becomes ``'-3.5``.

    Examples
    --------
    >>> csv_cell('=HYPERLINK("http://x","y")'), csv_cell(-3.5), csv_cell("@sum"), csv_cell("ok")
    ('\\'=HYPERLINK("http://x","y")', -3.5, "'@sum", 'ok')
    """
    if not isinstance(value, str):
        return value
    s = reveal(value)
    return "'" + s if s.startswith(CSV_FORMULA_STARTS) else s


def map_text(frame, fn: Callable[[str], object]):
    """A copy of ``frame`` (a pandas DataFrame) with ``fn`` applied to every text cell, column label and index label.

    Only ``str`` values are passed to ``fn``; numeric columns are not touched (so their dtype is kept).
    """
    import pandas as pd

    def each(v: object) -> object:
        return fn(v) if isinstance(v, str) else v

    out = frame.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if col.dtype == object or isinstance(col.dtype, (pd.StringDtype, pd.CategoricalDtype)):
            values = col.astype(object) if isinstance(col.dtype, pd.CategoricalDtype) else col
            out.isetitem(i, values.map(each, na_action="ignore"))
    out.columns = out.columns.map(each) if not isinstance(out.columns, pd.MultiIndex) else out.columns
    out.index = out.index.map(each) if out.index.dtype == object else out.index
    return out


def csv_text(frame, **to_csv: Any) -> str:
    """``frame`` as CSV text, every cell and header through :func:`csv_cell` (``to_csv`` options passed on).

    Lines end with ``\\r\\n`` (RFC 4180) unless ``lineterminator`` is given: with it, a cell holding a carriage
    return or a line feed is quoted, so it cannot split a row. The one way the app and the CLI write CSV;
    ``tests/test_escaping.py`` finds every CSV writer.
    """
    return map_text(frame, csv_cell).to_csv(**{"lineterminator": "\r\n", **to_csv})
