"""Fuzz every user-input entry point beyond table intake: valid result or declared error.

Entry points: target expressions (parse, then evaluate on a frame with NaN,
inf, missing and dates), target definitions, ``column,group`` CSVs, Receipts
evaluator states (as dicts and as YAML/JSON text) and their rule conditions
(executed through the cube), prediction JSONL, CLI configs (dicts and YAML
files) and model files (random skops-like zips, random bytes, LightGBM-like
text), and the Transport audit's options: CLI ``transport`` entries through
``parse_config`` and the runner's option handling up to the protocol's
``declare`` stage, and :class:`TransportConfig` built directly with hostile
tolerances, alphas, selection rates, counts and fractions. The Transport
page's widgets with odd values are driven by AppTest in
``test_hardening_inputs.py``. Round 2 (``test_hardening_fuzz_round2.py``) adds hostile YAML (alias bombs,
recursive aliases, duplicate keys, deep nesting, bytes that are not UTF-8)
through configs, Receipts state files and gate rules, configs whose counts
are drawn around and far past their bounds, and run bundles that are
malformed, deeply nested, edited or decompression bombs. Table uploads are fuzzed in
``test_intake_fuzz.py`` (345 cases) and the hand-written hostile cases live in ``test_hardening_inputs.py``.

Generated cases here (all ``derandomize=True``): see :data:`BUDGET`; with
the intake suite the total is asserted to be at least 2,000 in
:func:`test_generated_case_count`.
"""
from __future__ import annotations

import collections
import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.data.groups import parse_group_csv
from audit_core.data.targets import apply_targets
from audit_core.expr import evaluate_frame, evaluate_mask, evaluate_record, parse_expression
from audit_core.models.importing import import_model
from audit_core.receipts.predictions import parse_predictions
from audit_core.receipts.state import load_state, state_from_dict
from audit_core.receipts.state_cube import execute_state_cube
from audit_core.runs.config import load_config, parse_config

from hardening_cases import FUZZ, declared_or_valid, expr_frame, tiny_gold

BUDGET = {
    "expression_text": 400,
    "target_definitions": 150,
    "group_csv": 250,
    "state_dicts": 250,
    "state_text": 150,
    "rule_conditions": 200,
    "prediction_jsonl": 250,
    "config_dicts": 200,
    "config_files": 100,
    "model_files": 150,
    "transport_entries": 250,
    "transport_options": 250,
    "hostile_yaml": 200,
    "oversized_counts": 200,
    "bundles": 150,
}
INTAKE_FUZZ_CASES = 345  # tests/test_intake_fuzz.py TOTAL_CASES, asserted below


def test_generated_case_count():
    import test_intake_fuzz

    assert test_intake_fuzz.TOTAL_CASES == INTAKE_FUZZ_CASES
    total = sum(BUDGET.values()) + INTAKE_FUZZ_CASES
    print(f"generated fuzz cases: {total} ({BUDGET} + intake {INTAKE_FUZZ_CASES})")
    assert total >= 2_000


FRAME = expr_frame()

# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------
TOKENS = st.sampled_from(
    ["a", "n", "b", "flag", "d", "income_real", "missing_col", "__import__", "os", "__class__", "lambda",
     "and", "or", "not", "in", "true", "false", "null", "is_missing", "abs", "log", "min", "max", "date",
     "year", "(", ")", "[", "]", ",", ".", "+", "-", "*", "/", "%", "**", "//", "==", "!=", "<", "<=", ">", ">=",
     "=", "!", "~", "&", "|", "^", "@", ";", ":", "`", "'x'", '"y"', "'unterminated", "0", "1", "-1", "1e308",
     "1e999", "0.5", "nan", "inf", "2020-01-01", "date('2021-01-01')", "\\", "#", "$", "{", "}", "\x00", "é",
     "`a`", "`weird name`", "if", "else", "for", "import", "eval", "exec", "open"]
)
EXPR_TEXT = st.one_of(
    st.lists(TOKENS, min_size=0, max_size=25).map(" ".join),
    st.lists(TOKENS, min_size=0, max_size=25).map("".join),
    st.text(max_size=60),
)


def _check_mask(m) -> None:
    assert isinstance(m, np.ndarray) and m.shape == (len(FRAME),) and m.dtype == bool


@settings(max_examples=BUDGET["expression_text"], **FUZZ)
@given(text=EXPR_TEXT)
def test_expression_text(text):
    code = declared_or_valid(lambda: parse_expression(text))
    if code != "ok":
        return
    tree = parse_expression(text)
    declared_or_valid(lambda: evaluate_mask(tree, FRAME), _check_mask)
    declared_or_valid(lambda: evaluate_frame(tree, FRAME), lambda s: len(s) == len(FRAME))
    record = {"a": float("inf"), "n": 3, "b": None, "flag": True, "d": "2020-01-01", "income_real": float("nan")}
    declared_or_valid(lambda: evaluate_record(tree, record))


TARGET_DICTS = st.fixed_dictionaries(
    {"kind": st.sampled_from(["class", "threshold", "expression", "bogus", 3])},
    optional={
        "name": st.one_of(st.sampled_from(["t", "", "<script>", "x" * 500]), st.integers()),
        "column": st.sampled_from(["a", "n", "b", "flag", "d", "nope", "", 5]),
        "positive": st.one_of(st.none(), st.sampled_from(["x", "y", 1, 2.5, True, float("nan")])),
        "threshold": st.one_of(st.floats(allow_nan=True), st.sampled_from(["10", None])),
        "op": st.sampled_from([">=", ">", "<", "<=", "==", "=>", "", None]),
        "expression": EXPR_TEXT,
        "extra": st.just(1),
    },
)


COND = st.builds(lambda c, op, v: f"{c} {op} {v}", st.sampled_from(["a", "n", "income_real", "b", "d", "flag"]),
                 st.sampled_from([">=", "<", "==", "!="]),
                 st.sampled_from(["1", "2.5", "'x'", "50000", "date('2021-01-01')", "true", "null", "1e999"]))
GOOD_EXPR = st.lists(COND, min_size=1, max_size=3).map(" and ".join) | COND.map(lambda c: f"not is_missing(a) or {c}")
SHAPED_TARGETS = st.one_of(
    st.builds(lambda n, c, p: {"kind": "class", "name": n, "column": c, "positive": p},
              st.sampled_from(["t", "u", "<script>"]), st.sampled_from(["b", "flag", "n", "a", "d"]),
              st.sampled_from(["x", "y", True, 1, 2, None, "absent"])),
    st.builds(lambda n, c, t, o: {"kind": "threshold", "name": n, "column": c, "threshold": t, "op": o},
              st.sampled_from(["t", "v"]), st.sampled_from(["a", "n", "income_real", "b", "d"]),
              st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([">=", ">", "<", "<="])),
    st.builds(lambda n, e: {"kind": "expression", "name": n, "expression": e}, st.sampled_from(["t", "w"]),
              st.one_of(GOOD_EXPR, EXPR_TEXT)),
)


@settings(max_examples=BUDGET["target_definitions"], **FUZZ)
@given(defs=st.lists(st.one_of(SHAPED_TARGETS, SHAPED_TARGETS, TARGET_DICTS), min_size=1, max_size=3))
def test_target_definitions(defs):
    declared_or_valid(lambda: apply_targets(defs, FRAME),
                      lambda out: all(len(t.y) == len(FRAME) for t in out.values()))


# ---------------------------------------------------------------------------
# Group CSVs
# ---------------------------------------------------------------------------
RAW = ["age", "income", "région", "<b>x</b>", "a,b"]
CELL = st.one_of(st.sampled_from(RAW + ["", " ", "unknown", "g1", "g2", "<script>alert(1)</script>", "=1+1"]),
                 st.text(max_size=8))


@st.composite
def group_csvs(draw):
    header = draw(st.sampled_from(["column,group", "Column, Group", "col,grp", "column,group,extra", "", "column"]))
    rows = [",".join(draw(st.lists(CELL.map(lambda c: f'"{c}"' if draw(st.booleans()) else c),
                                   min_size=0, max_size=3)))
            for _ in range(draw(st.integers(0, 6)))]
    text = "\n".join([header] + rows)
    enc = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    data = text.encode(enc, errors="replace")
    return data if draw(st.booleans()) else text


@settings(max_examples=BUDGET["group_csv"], **FUZZ)
@given(data=group_csvs())
def test_group_csv(data):
    def check(out):
        assert set(out) <= set(RAW) and all(isinstance(g, str) and g for g in out.values())

    declared_or_valid(lambda: parse_group_csv(data, RAW), check)


# ---------------------------------------------------------------------------
# Receipts states, conditions, prediction JSONL
# ---------------------------------------------------------------------------
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                   st.text(max_size=10), st.dates().map(str))
JSONISH = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                       max_leaves=8)
GROUND = st.one_of(SCALAR, st.fixed_dictionaries({"type": st.sampled_from(["number", "text", "bool", "date", "blob"])},
                                                 optional={"value": SCALAR, "extra": SCALAR}))
NAME = st.one_of(st.sampled_from(["amount", "role", "region", "__class__", "and", "9x", "", "a b"]), st.text(max_size=6))
RULE = st.fixed_dictionaries({}, optional={"id": st.one_of(NAME, st.integers()), "when": st.one_of(EXPR_TEXT, SCALAR),
                                           "then": st.one_of(st.sampled_from(["deny", "approve"]), SCALAR),
                                           "note": SCALAR, "bogus": SCALAR})
STATE = st.fixed_dictionaries(
    {},
    optional={
        "name": SCALAR,
        "grounds": st.one_of(st.dictionaries(NAME, GROUND, max_size=4), JSONISH),
        "norms": st.one_of(
            st.fixed_dictionaries({}, optional={"default": st.one_of(st.just("approve"), SCALAR),
                                                "on_unknown": st.sampled_from(["refer", "skip", "x"]),
                                                "rules": st.one_of(st.lists(RULE, max_size=3), JSONISH)}),
            JSONISH),
        "authority": st.one_of(st.dictionaries(NAME, st.one_of(EXPR_TEXT, SCALAR), max_size=3), JSONISH),
        "extra": SCALAR,
    },
)


GROUND_NAMES = st.sampled_from(["amount", "role", "region", "filed", "vip"])
SHAPED_GROUND = st.one_of(st.integers(-5, 20000), st.floats(allow_nan=True), st.sampled_from(["clerk", "EU", True, None]),
                          st.fixed_dictionaries({"type": st.sampled_from(["number", "text", "bool", "date"]),
                                                 "value": st.one_of(st.none(), st.integers(0, 20000),
                                                                    st.sampled_from(["clerk", "2024-03-01", "x", True]))}))
SHAPED_COND = st.one_of(
    st.builds(lambda g, op, v: f"{g} {op} {v}", GROUND_NAMES, st.sampled_from([">", "<=", "==", "!=", "in"]),
              st.sampled_from(["10000", "'clerk'", "['EU', 'US']", "true", "date('2024-01-01')", "null", "1e999"])),
    st.builds(lambda g: f"is_missing({g})", GROUND_NAMES),
    st.sampled_from(["true", "false", "amount > 10000 and role == 'clerk'", "not vip or region in ['EU']"]),
)


@st.composite
def shaped_states(draw):
    grounds = draw(st.dictionaries(GROUND_NAMES, SHAPED_GROUND, min_size=1, max_size=5))
    ids = draw(st.lists(st.sampled_from(["r1", "r2", "big.clerk", "r-3"]), max_size=3, unique=True))
    rules = [{"id": i, "when": draw(SHAPED_COND), "then": draw(st.sampled_from(["deny", "refer", "approve"]))} for i in ids]
    authority = {i: draw(st.one_of(SHAPED_COND, st.just("true"))) for i in ids if draw(st.booleans())}
    state = {"grounds": grounds, "norms": {"default": "approve", "rules": rules,
                                           "on_unknown": draw(st.sampled_from(["refer", "skip"]))},
             "authority": authority}
    if draw(st.integers(0, 3)) == 0:  # one random mutation
        key = draw(st.sampled_from(["grounds", "norms", "authority", "name", "extra"]))
        state[key] = draw(JSONISH)
    return state


@settings(max_examples=BUDGET["state_dicts"], **FUZZ)
@given(data=st.one_of(shaped_states(), shaped_states(), STATE, JSONISH))
def test_state_dicts(data):
    declared_or_valid(lambda: state_from_dict(data, label="fuzz"))


@settings(max_examples=BUDGET["state_text"], **FUZZ)
@given(data=st.one_of(shaped_states(), STATE, JSONISH), fmt=st.sampled_from(["auto", "yaml", "json"]),
       how=st.integers(0, 3))
def test_state_text(data, fmt, how):
    import yaml

    text = {0: lambda: json.dumps(data, default=str), 1: lambda: yaml.safe_dump(data, allow_unicode=True),
            2: lambda: "!!python/object/apply:os.system ['echo pwned']", 3: lambda: "{a: [1, 2"}[how]()
    declared_or_valid(lambda: load_state(text, fmt=fmt))


def _state(when: str, scope: str, grounds: dict) -> dict:
    return {"grounds": grounds, "norms": {"default": "approve", "rules": [{"id": "r1", "when": when, "then": "deny"}]},
            "authority": {"r1": scope}}


GROUNDS = {"amount": {"type": "number", "value": 12000}, "role": "clerk", "region": {"type": "text", "value": None},
           "filed": {"type": "date", "value": "2024-03-01"}, "vip": True}
COND_TOKENS = st.sampled_from(["amount", "role", "region", "filed", "vip", "nope", ">", "<", "==", "and", "or", "not",
                               "in", "[", "]", "(", ")", ",", "'clerk'", "10000", "1e999", "true", "null",
                               "date('2024-01-01')", "is_missing", "__import__", ".", "+", "/", "0"])
CONDITION = st.one_of(st.lists(COND_TOKENS, min_size=1, max_size=12).map(" ".join), st.text(max_size=30))
CONDITION = st.one_of(CONDITION, SHAPED_COND, SHAPED_COND, st.lists(SHAPED_COND, min_size=2, max_size=3).map(" or ".join))


@settings(max_examples=BUDGET["rule_conditions"], **FUZZ)
@given(when=CONDITION, scope=st.one_of(CONDITION, st.just("true")), new_when=CONDITION,
       missing=st.sampled_from(["error", "unknown"]), gran=st.sampled_from(["parts", "items"]))
def test_rule_conditions_through_the_cube(when, scope, new_when, missing, gran):
    def run():
        old = state_from_dict(_state(when, scope, GROUNDS), label="old")
        new = state_from_dict(_state(new_when, "true", {**GROUNDS, "amount": 5}), label="new")
        return execute_state_cube(old, new, granularity=gran, mode="full", missing=missing)

    declared_or_valid(run, lambda sc: sc.cube.v_old is not None)


GOLD = tiny_gold()
LINE = st.one_of(
    st.fixed_dictionaries(
        {"case_id": st.one_of(st.sampled_from(["c1", "c2", "c3", ""]), SCALAR)},
        optional={
            "receipt": st.one_of(st.sampled_from(["{G}", "none", "{G} | {N}", "{X}", "{}", "{G", [["G"]], [], [["G"], ["G", "N"]]]),
                                 JSONISH),
            "v_old": SCALAR, "v_new": SCALAR, "confidence": st.one_of(st.floats(allow_nan=True), SCALAR),
            "cube": st.one_of(st.dictionaries(st.sampled_from(["", "G", "N", "A", "G+N", "G+N+A", "Z"]),
                                              st.sampled_from(["approve", "deny", 1]), max_size=8), JSONISH),
            "bogus": SCALAR,
        },
    ).map(lambda d: json.dumps(d, default=str)),
    st.text(max_size=40),
    JSONISH.map(lambda v: json.dumps(v, default=str)),
)


@settings(max_examples=BUDGET["prediction_jsonl"], **FUZZ)
@given(lines=st.lists(LINE, max_size=6), as_bytes=st.booleans(), junk=st.binary(max_size=3))
def test_prediction_jsonl(lines, as_bytes, junk):
    text = "\n".join(lines)
    data = (text.encode("utf-8") + junk) if as_bytes else text

    def check(up):
        assert len(up.predictions) + len(up.errors) <= up.n_lines if hasattr(up, "n_lines") else True
        assert all(p.case_id in GOLD for p in up.predictions)

    declared_or_valid(lambda: parse_predictions(data, gold=GOLD), check)


# ---------------------------------------------------------------------------
# CLI configs
# ---------------------------------------------------------------------------
CONFIG = st.fixed_dictionaries(
    {},
    optional={
        "name": SCALAR,
        "data": st.one_of(st.fixed_dictionaries({}, optional={"sample": st.sampled_from(["loan_synthetic", "nope", 3]),
                                                               "path": st.sampled_from(["x.csv", "../../etc/passwd", ""]),
                                                               "delimiter": SCALAR, "bogus": SCALAR}), JSONISH),
        "dataset": st.one_of(st.fixed_dictionaries({}, optional={"targets": st.lists(TARGET_DICTS, max_size=2),
                                                                  "primary_target": SCALAR, "key": SCALAR,
                                                                  "source_domain": SCALAR}), JSONISH),
        "model": st.one_of(st.fixed_dictionaries({}, optional={"kind": st.sampled_from(["logistic_regression", "pickle", 1]),
                                                                "seed": SCALAR, "baseline": SCALAR,
                                                                "test_size": SCALAR}), JSONISH),
        "audits": st.one_of(st.lists(st.fixed_dictionaries({"kind": st.sampled_from(["model", "fragility", "nope", 1])},
                                                           optional={"bootstrap": SCALAR, "x": SCALAR}), max_size=2),
                            JSONISH),
        "bogus": SCALAR,
    },
)


@st.composite
def shaped_configs(draw):
    cfg = {"name": draw(st.sampled_from(["c", "<script>", "x" * 300])), "data": {"sample": "loan_synthetic"},
           "dataset": {"primary_target": "default",
                       "targets": [{"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"}]},
           "model": {"kind": draw(st.sampled_from(["logistic_regression", "random_forest", "lightgbm"])), "seed": 0,
                     "baseline": draw(st.sampled_from(["mean", "median", "mode", "zero"])), "test_size": 0.25},
           "audits": [{"kind": "model", "bootstrap": draw(st.integers(-1, 300)), "bootstrap_seed": 0}]}
    for _ in range(draw(st.integers(0, 2))):  # mutations at random depth
        section = draw(st.sampled_from(["name", "data", "dataset", "model", "audits"]))
        if isinstance(cfg[section], dict) and draw(st.booleans()):
            cfg[section][draw(st.sampled_from(["kind", "seed", "path", "targets", "test_size", "bogus"]))] = draw(JSONISH)
        elif isinstance(cfg[section], list) and cfg[section]:
            cfg[section][0][draw(st.sampled_from(["kind", "bootstrap", "refit_seeds", "bogus"]))] = draw(JSONISH)
        else:
            cfg[section] = draw(JSONISH)
    return cfg


@settings(max_examples=BUDGET["config_dicts"], **FUZZ)
@given(raw=st.one_of(shaped_configs(), shaped_configs(), CONFIG, JSONISH))
def test_config_dicts(raw):
    declared_or_valid(lambda: parse_config(raw, source="fuzz.yaml"))


_TMP = Path(tempfile.mkdtemp(prefix="hardening_cfg_"))


@settings(max_examples=BUDGET["config_files"], **FUZZ)
@given(raw=st.one_of(shaped_configs(), CONFIG, JSONISH), how=st.integers(0, 4), junk=st.binary(max_size=4))
def test_config_files(raw, how, junk):
    import yaml

    texts = {
        0: lambda: yaml.safe_dump(raw, allow_unicode=True).encode(),
        1: lambda: json.dumps(raw, default=str).encode(),
        2: lambda: b"!!python/object/apply:os.system ['touch /tmp/pwned']\n",
        3: lambda: yaml.safe_dump(raw).encode() + junk,
        4: lambda: b"a: &x [*x]\n" + junk,
    }
    path = _TMP / "config.yaml"
    path.write_bytes(texts[how]())
    declared_or_valid(lambda: load_config(path))


# ---------------------------------------------------------------------------
# Model files
# ---------------------------------------------------------------------------
SKOPS_NODE = st.recursive(
    st.fixed_dictionaries(
        {"__class__": st.sampled_from(["LogisticRegression", "system", "str", "dict", "Popen", "function"]),
         "__module__": st.sampled_from(["sklearn.linear_model._logistic", "posix", "builtins", "subprocess", "os"]),
         "__loader__": st.sampled_from(["ObjectNode", "JsonNode", "DictNode", "FunctionNode", "TypeNode", "Bogus"])},
        optional={"content": st.one_of(st.just("\"x\""), st.just({}), st.integers()), "is_json": st.booleans(),
                  "__id__": st.integers(0, 10)},
    ),
    lambda inner: st.fixed_dictionaries({"__class__": st.just("dict"), "__module__": st.just("builtins"),
                                         "__loader__": st.just("DictNode"),
                                         "content": st.dictionaries(st.text(max_size=5), inner, max_size=3)}),
    max_leaves=5,
)


def _real_skops() -> bytes:
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "n": [1, 0, 1, 0]})
    return sio.dumps(LogisticRegression().fit(X, [0, 1, 0, 1]))


REAL_SKOPS = _real_skops()


def _swap_schema(data: bytes, schema: dict) -> bytes:
    src, buf = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for info in src.infolist():
            zf.writestr(info.filename, json.dumps(schema) if info.filename == "schema.json" else src.read(info))
    return buf.getvalue()


@st.composite
def model_files(draw):
    kind = draw(st.integers(0, 5))
    if kind >= 4:  # a real skops file with one node of its schema swapped for another type
        schema = json.loads(zipfile.ZipFile(io.BytesIO(REAL_SKOPS)).read("schema.json"))
        node = schema if draw(st.booleans()) else schema["content"]["content"].get("C", schema)
        node["__class__"] = draw(st.sampled_from(["system", "Popen", "LogisticRegression", "eval", "loads", "str"]))
        node["__module__"] = draw(st.sampled_from(["posix", "os", "subprocess", "builtins", "pickle",
                                                  "sklearn.linear_model._logistic"]))
        if draw(st.booleans()):
            node["__loader__"] = draw(st.sampled_from(["ObjectNode", "FunctionNode", "TypeNode", "MethodNode"]))
        return _swap_schema(REAL_SKOPS, schema) if draw(st.integers(0, 5)) else REAL_SKOPS
    if kind == 0:  # skops-like zip with a random schema
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            if draw(st.booleans()):
                zf.writestr("schema.json", json.dumps(draw(SKOPS_NODE)))
            for i in range(draw(st.integers(0, 2))):
                zf.writestr(f"{i}.npy", draw(st.binary(max_size=20)))
            if draw(st.booleans()):  # an MLflow-like folder: its MLmodel file is read with the safe YAML loader
                zf.writestr("model/MLmodel", draw(st.one_of(st.binary(max_size=40), st.sampled_from(
                    [b"flavors: {sklearn: {}}", b"flavors: [1, 2]", b"flavors:\n  ? [a]\n  : 1", b"- x", b"&a [*a]",
                     b"flavors: !!python/name:os.system"]))))
        return buf.getvalue()
    if kind == 1:
        return b"PK" + draw(st.binary(max_size=80))
    if kind == 2:
        return b"tree\n" + "\n".join(draw(st.lists(st.sampled_from(
            ["version=v4", "num_class=1", "objective=binary", "feature_names=a n", "max_feature_idx=1",
             "Tree=0", "num_leaves=1", "leaf_value=0.5", "end of trees", "garbage"]), max_size=8))).encode()
    return draw(st.binary(max_size=80))


@settings(max_examples=BUDGET["model_files"], **FUZZ)
@given(data=model_files(), name=st.sampled_from(["m.skops", "m.txt", "m.pkl", "m", "m.joblib", "MLmodel", "m.onnx"]))
def test_model_files(data, name):
    table = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "n": [1, 0, 1, 0]})
    declared_or_valid(lambda: import_model(data, name=name, table=table),
                      lambda m: hasattr(m, "estimator"))


# ---------------------------------------------------------------------------
# Transport: CLI entries and options
# ---------------------------------------------------------------------------
NUMBERISH = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**20, 10**20), st.booleans(),
                      st.none(), st.text(max_size=5), st.sampled_from(["0.1", "nan", "inf", "1e-9"]))
PROPORTION = st.one_of(st.floats(-1, 2), st.sampled_from([0.0, 1.0, 0.05, 0.5, 0.999999, 1e-300, -0.0]), NUMBERISH)
TOL_METRICS = st.sampled_from(["auroc", "ece", "brier", "log_loss", "coverage", "set_size", "bogus", "", "<b>x</b>"])
TOLERANCES = st.one_of(st.dictionaries(TOL_METRICS, st.one_of(st.floats(-1, 1), NUMBERISH), max_size=4), JSONISH)
TR_COLUMNS = st.sampled_from(["region", "employment_type", "application_id", "nope", "", "year", "defaulted"])
TR_VALUES = {
    "n_refits": st.one_of(st.integers(-2, 3), NUMBERISH),
    "n_bootstrap": st.one_of(st.integers(-2, 30), NUMBERISH),
    "degradation_m": st.one_of(st.integers(-2, 40), NUMBERISH),
    "n_random_sets": st.one_of(st.integers(-2, 5), NUMBERISH),
    "stress_max_rows": st.one_of(st.integers(-2, 10**6), NUMBERISH),
    "seed": st.one_of(st.integers(-10**12, 10**12), NUMBERISH),
    "models": st.lists(st.one_of(st.sampled_from(["logistic_regression", "random_forest", "lightgbm", "pickle"]),
                                 NUMBERISH), max_size=3),
    "mappings": st.lists(st.one_of(st.sampled_from(["raw", "platt", "isotonic", "Platt", "beta"]), NUMBERISH),
                         max_size=4),
    "alphas": st.lists(PROPORTION, max_size=4),
    "selection_rates": st.lists(PROPORTION, max_size=4),
    "stresses": st.lists(st.one_of(st.sampled_from(["target_definition", "degradation", "shift"]), NUMBERISH),
                         max_size=3),
    "subgroup_columns": st.lists(st.one_of(TR_COLUMNS, NUMBERISH), max_size=3),
    "tolerances": TOLERANCES,
}


@st.composite
def transport_entries(draw):
    """A valid ``kind: transport`` entry with 1-3 keys set to drawn (often hostile) values, or junk."""
    entry = {"kind": "transport", "n_refits": 1, "n_bootstrap": 10, "n_random_sets": 2}
    for key in draw(st.lists(st.sampled_from(sorted(TR_VALUES) + ["bogus", "n_refit", "alpha"]), max_size=3)):
        entry[key] = draw(TR_VALUES.get(key, JSONISH))
    if draw(st.integers(0, 9)) == 0:
        entry[draw(st.sampled_from(sorted(TR_VALUES)))] = draw(JSONISH)
    return entry


class _Declared(Exception):
    """Raised by the stand-in protocol once the declaration stage has passed."""


def _transport_dataset():
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample

    frame, info = load_sample("loan_synthetic")
    frame = frame.groupby("year", group_keys=False).head(300)  # small: the declaration stage reads every row
    config = DatasetConfig(name="loan.csv", targets=tuple(info.target_definitions[:2]), key_column=info.key_column,
                           domain_column="year", source_domain=2019, target_domain=2023,
                           strata_columns=("region",),
                           roles={c: "ignore" for c in info.exclude_columns if c in frame.columns and c != "application_id"})
    return build_dataset(frame, config)


_TR_DS = []
TR_OUTCOMES: collections.Counter = collections.Counter()


def _declare_only(source, target=None, *, config, progress=None, should_stop=None):
    from audit_core.transport import TransportAudit

    TransportAudit(config).declare(source, target)
    raise _Declared


@settings(max_examples=BUDGET["transport_entries"], **FUZZ)
@given(entry=st.one_of(transport_entries(), transport_entries(), transport_entries(),
                       st.fixed_dictionaries({"kind": st.just("transport")}, optional={k: JSONISH for k in TR_VALUES})))
def test_transport_config_entries(entry):
    """``audits: [{kind: transport, ...}]`` → parse_config, then the runner up to the protocol's declaration."""
    from types import SimpleNamespace
    from unittest import mock

    from audit_core.runs.plugins import transport as runner

    if not _TR_DS:
        _TR_DS.append(_transport_dataset())
    raw = {"data": {"sample": "loan_synthetic"}, "model": {"kind": "logistic_regression"}, "audits": [entry]}

    def call():
        cfg = parse_config(raw, source="fuzz.yaml")
        options = {k: v for k, v in cfg.audits[0].items() if k != "kind"}
        context = SimpleNamespace(data=SimpleNamespace(dataset=_TR_DS[0]), config=cfg)
        with mock.patch.object(runner, "run_transport_with_forecast", _declare_only):
            try:
                runner.run(options, context=context, progress=lambda *a: None)
            except _Declared:
                return "declared"
        raise AssertionError("the stand-in protocol was not reached")

    TR_OUTCOMES[declared_or_valid(call)] += 1


@settings(max_examples=BUDGET["transport_options"], **FUZZ)
@given(opts=st.fixed_dictionaries({}, optional={
    "alphas": st.one_of(st.lists(PROPORTION, max_size=4), NUMBERISH),
    "selection_rates": st.one_of(st.lists(PROPORTION, max_size=4), NUMBERISH),
    "hcep_thresholds": st.lists(PROPORTION, max_size=3),
    "tolerances": TOLERANCES,
    "n_refits": TR_VALUES["n_refits"], "n_bootstrap": TR_VALUES["n_bootstrap"], "n_bins": TR_VALUES["n_refits"],
    "degradation_m": TR_VALUES["degradation_m"], "n_random_sets": TR_VALUES["n_random_sets"],
    "fractions": st.one_of(st.lists(PROPORTION, max_size=5), st.just((0.25, 0.25, 0.25, 0.25))),
    "corruption_rate": PROPORTION, "oracle_rate": PROPORTION, "corruption_sd": NUMBERISH, "level": PROPORTION,
    "seed": TR_VALUES["seed"], "stress_max_rows": TR_VALUES["stress_max_rows"],
    "mi_max_rows": TR_VALUES["stress_max_rows"], "min_subgroup": TR_VALUES["n_refits"],
    "models": TR_VALUES["models"], "mappings": TR_VALUES["mappings"], "stresses": TR_VALUES["stresses"],
    "targets": st.lists(st.one_of(TARGET_DICTS, st.just({"kind": "class", "name": "d", "column": "defaulted",
                                                             "positive": "yes"})), max_size=2),
}))
def test_transport_options(opts):
    """:class:`TransportConfig` with hostile values: a frozen config or ``TRANSPORT_*`` / target codes."""
    from audit_core.transport import TransportConfig

    base = {"targets": ({"kind": "class", "name": "d", "column": "defaulted", "positive": "yes"},),
            "numeric": ("age",), "domain_column": "year", "source_value": 2019, "target_value": 2023}
    base.update(opts)

    def check(cfg):
        assert all(0 < a < 1 for a in cfg.alphas) and all(0 < s <= 1 for s in cfg.selection_rates)
        assert all(np.isfinite(v) and v >= 0 for v in cfg.tolerances.values())
        cfg.to_dict()

    declared_or_valid(lambda: TransportConfig(**base), check)
