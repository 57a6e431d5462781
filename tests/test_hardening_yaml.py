"""Hostile YAML through every reader (configs, Receipts states, gate rules), generated per class.

Classes: alias bombs (any width and depth past the cap), recursive aliases,
duplicate keys at any depth (block and flow style, and JSON), nesting past
the depth cap (lists, mappings, mixed), bytes that are not UTF-8. Each must
be refused with its declared code and the details the message promises
(key and both lines, line of the nesting, byte position); texts just inside
the caps must still load, and load the same values ``yaml.safe_load`` gives.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.errors import AuditInputError
from audit_core.receipts.state import load_state
from audit_core.runs.config import load_config
from audit_core.runs.gate import gate_state, extract_gate_grounds
from audit_core.safe_text import MAX_DEPTH, MAX_EXPANDED_VALUES, load_json, load_yaml
from hardening_cases import FUZZ

_TMP = Path(tempfile.mkdtemp(prefix="hardening_yaml_"))


def _via_config(text: str | bytes):
    path = _TMP / "cfg.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return load_config(path)


def _via_state(text: str | bytes):
    return load_state(text if isinstance(text, str) else text.decode("utf-8", "surrogateescape"), fmt="yaml")


def _via_rules(text: str | bytes):
    return gate_state(extract_gate_grounds([]), deployment_scope="production", rules_yaml=text)


READERS = {"config": _via_config, "state": _via_state, "rules": _via_rules, "loader": lambda t: load_yaml(t, what="T")}


def _code(reader, text) -> tuple[str, str]:
    with pytest.raises(AuditInputError) as err:
        READERS[reader](text)
    return err.value.code, err.value.message


def bomb(width: int, levels: int) -> str:
    names = [f"l{i}" for i in range(levels + 1)]
    lines = [f"{names[0]}: &{names[0]} [" + ", ".join(["lol"] * width) + "]"]
    for prev, name in zip(names, names[1:]):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _expanded(width: int, levels: int) -> int:
    """Values the last anchor expands to: a list of ``width`` lists ... of ``width`` scalars."""
    n = width + 1
    for _ in range(levels):
        n = 1 + width * n
    return n


@settings(max_examples=60, **FUZZ)
@given(width=st.integers(2, 12), reader=st.sampled_from(sorted(READERS)), data=st.data())
def test_alias_bombs_are_refused_before_expansion(width, reader, data):
    levels = data.draw(st.integers(1, 30).filter(lambda k: _expanded(width, k) > MAX_EXPANDED_VALUES))
    code, message = _code(reader, bomb(width, levels))
    assert code == "YAML_ALIAS_BOMB", message
    assert f"more than {MAX_EXPANDED_VALUES:,} values" in message and "line " in message


@settings(max_examples=30, **FUZZ)
@given(width=st.integers(2, 6), levels=st.integers(1, 4))
def test_aliases_within_the_cap_load_like_safe_load(width, levels):
    text = bomb(width, levels)
    assert _expanded(width, levels) < MAX_EXPANDED_VALUES
    assert load_yaml(text, what="T") == yaml.safe_load(text)


@settings(max_examples=40, **FUZZ)
@given(shape=st.sampled_from(["a: &x [1, *x]", "a: &x {b: *x}", "a: &x [[[*x]]]", "- &x [*x, 2]",
                              "a: &x\n  b:\n    c: *x", "a: &x {b: [1, {c: *x}]}"]),
       reader=st.sampled_from(sorted(READERS)))
def test_recursive_aliases_are_refused(shape, reader):
    code, message = _code(reader, shape + "\n")
    assert code == "YAML_ALIAS_RECURSIVE", message


@st.composite
def nested_with_duplicate(draw):
    """Block YAML of nested mappings with one key repeated in one mapping: (text, key, first line, second line)."""
    depth = draw(st.integers(0, 6))
    lines, indent = [], ""
    for d in range(depth):
        lines.append(f"{indent}k{d}:")
        indent += "  "
    keys = draw(st.lists(st.sampled_from(["name", "model", "seed", "x", "été", "a b", "1"]), min_size=1, max_size=5,
                         unique=True))
    dup = draw(st.sampled_from(keys))
    first = None
    for k in keys:
        lines.append(f"{indent}{k!r}: {draw(st.integers(0, 9))}" if k == "1" else f"{indent}{k}: {draw(st.integers(0, 9))}")
        if k == dup:
            first = len(lines)
    lines.extend(f"{indent}filler{i}: 0" for i in range(draw(st.integers(0, 3))))
    lines.append(f"{indent}{dup!r}: 7" if dup == "1" else f"{indent}{dup}: 7")
    return "\n".join(lines) + "\n", dup, first, len(lines)


@settings(max_examples=80, **FUZZ)
@given(case=nested_with_duplicate(), reader=st.sampled_from(sorted(READERS)))
def test_duplicate_keys_are_refused_with_the_key_and_both_lines(case, reader):
    text, key, first, second = case
    code, message = _code(reader, text)
    assert code == "YAML_DUPLICATE_KEY", message
    assert f"has the key {key!r} twice in one mapping (line {first} and line {second})" in message


@settings(max_examples=30, **FUZZ)
@given(key=st.sampled_from(["a", "model", "ünï", "k"]), n=st.integers(2, 4))
def test_duplicate_keys_in_flow_style_and_json(key, n):
    flow = "{" + ", ".join(f"{key}: {i}" for i in range(n)) + "}"
    assert _code("loader", flow)[0] == "YAML_DUPLICATE_KEY"
    with pytest.raises(AuditInputError) as err:
        load_json("{" + ", ".join(f'"{key}": {i}' for i in range(n)) + "}", what="The bundle b.json")
    assert err.value.code == "JSON_DUPLICATE_KEY" and repr(key) in err.value.message
    with pytest.raises(AuditInputError) as err:
        load_state(json.dumps({"grounds": {}}).replace('{"grounds"', '{"name": "a", "name": "b", "grounds"'), fmt="json")
    assert err.value.code == "JSON_DUPLICATE_KEY"


def _nested(depth: int, style: str) -> str:
    if style == "flow-list":
        return "a: " + "[" * depth + "]" * depth + "\n"
    if style == "flow-map":
        return "a: " + "{b: " * depth + "1" + "}" * depth + "\n"
    if style == "mixed":
        return "a: " + "".join("[" if i % 2 else "{b: " for i in range(depth)) + "1" + "".join(
            "]" if i % 2 else "}" for i in reversed(range(depth))) + "\n"
    return "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v: 1\n"  # block


@settings(max_examples=60, **FUZZ)
@given(depth=st.integers(MAX_DEPTH + 1, 6000), style=st.sampled_from(["flow-list", "flow-map", "mixed", "block"]),
       reader=st.sampled_from(sorted(READERS)))
def test_nesting_past_the_cap_is_refused_not_a_recursion_error(depth, style, reader):
    if style == "block":
        depth = min(depth, 300)  # block indentation grows quadratically in text size
    code, message = _code(reader, _nested(depth, style))
    assert code == "TEXT_TOO_DEEP", message
    assert f"more than {MAX_DEPTH} levels deep (line " in message


@pytest.mark.parametrize("style", ["flow-list", "flow-map", "mixed", "block"])
def test_nesting_at_the_cap_loads(style):
    text = _nested(MAX_DEPTH - 2, style)  # the top mapping and its value count as levels too
    assert load_yaml(text, what="T") == yaml.safe_load(text)


@settings(max_examples=40, **FUZZ)
@given(pos=st.integers(0, 200), junk=st.sampled_from([b"\xff", b"\xfe", b"\xc3(", b"\xe9", b"\x80", b"\xed\xa0\x80"]),
       reader=st.sampled_from(["config", "loader"]))
def test_bytes_that_are_not_utf8_are_refused_with_their_position(pos, junk, reader):
    text = b"data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\naudits: [{kind: model}]\n"
    pos = min(pos, len(text))
    code, message = _code(reader, text[:pos] + junk + text[pos:])
    assert code == "TEXT_NOT_UTF8", message
    assert f"(byte {pos:,} cannot be decoded)" in message


def test_a_non_utf8_state_file_is_a_config_error(tmp_path):
    from audit_core.runs.plugins.receipts import validate_config

    state = 'grounds: {x: 3}\nnorms: {default: ok, rules: [{id: r, when: "x > 2", then: "no"}]}\nauthority: {r: "true"}\n'
    (tmp_path / "old.yaml").write_bytes(state.encode() + b"# caf\xe9\n")
    (tmp_path / "new.yaml").write_text(state)
    with pytest.raises(AuditInputError) as err:
        validate_config({"mode": "cube", "old": "old.yaml", "new": "new.yaml"}, base_dir=tmp_path)
    assert err.value.code == "TEXT_NOT_UTF8" and "old.yaml (audits[0].old)" in err.value.message


def test_syntax_errors_keep_their_codes_and_never_quote_the_line():
    secret = "password123-do-not-echo"
    for reader, code in (("config", "CONFIG_NOT_YAML"), ("state", "RC_STATE_SYNTAX"), ("rules", "RC_STATE_SYNTAX")):
        got, message = _code(reader, f"a: [1, 2\nb: {secret}\n\tc: 3\n")
        assert got == code and "line " in message and secret not in message


@pytest.mark.parametrize(("reader", "code"), [("config", "CONFIG_NOT_YAML"), ("state", "RC_STATE_SYNTAX"),
                                              ("rules", "RC_STATE_SYNTAX"), ("loader", "YAML_SYNTAX")])
@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b"])
def test_control_characters_are_a_declared_syntax_error_with_their_position(reader, code, char):
    # PyYAML's reader refuses these while the loader is being built, before parsing starts
    got, message = _code(reader, "model: {kind: logistic_regression}\n" + char + "audits: []\n")
    assert got == code, message
    assert f"character 36: the control character U+{ord(char):04X} is not allowed in YAML." in message
