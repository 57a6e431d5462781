"""Fuzz, round 2: hostile YAML, counts past their bounds, malformed and bomb bundles.

Hostile YAML (alias bombs, recursive aliases, duplicate keys, deep nesting,
bytes that are not UTF-8) goes through configs, Receipts state files and gate
rules; configs carry counts drawn around and far past their bounds; run
bundles are malformed, deeply nested, edited or decompression bombs. The case
budgets and shared strategies are those of ``test_hardening_fuzz.py``, whose
:func:`test_generated_case_count` counts these cases too.
"""
from __future__ import annotations

import collections
import json
import tempfile
from pathlib import Path

import pandas as pd
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.receipts.state import load_state
from audit_core.runs.config import load_config, parse_config

from hardening_cases import FUZZ, declared_or_valid
from test_hardening_fuzz import BUDGET, JSONISH, shaped_configs

_TMP = Path(tempfile.mkdtemp(prefix="hardening_cfg2_"))


# ---------------------------------------------------------------------------
# Round 2: hostile YAML, counts past their bounds, malformed and bomb bundles
# ---------------------------------------------------------------------------
@st.composite
def hostile_yaml(draw):
    """YAML of one of the round-2 classes, or a near miss that must load, as text or bytes."""
    kind = draw(st.sampled_from(["bomb", "recursive", "duplicate", "deep", "not_utf8", "anchors_ok", "config"]))
    width = draw(st.integers(2, 12))
    if kind == "bomb":
        levels = draw(st.integers(2, 12))
        text = f"a0: &a0 [{', '.join(['x'] * width)}]\n" + "".join(
            f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]\n" for i in range(1, levels + 1))
    elif kind == "recursive":
        text = draw(st.sampled_from(["a: &x [*x]", "a: &x {b: *x}", "- &x [1, [*x]]", "a: &x\n  b: [*x]"])) + "\n"
    elif kind == "duplicate":
        key = draw(st.sampled_from(["data", "model", "audits", "x", "grounds", "norms"]))
        text = f"{key}: 1\n" + "".join(f"k{i}: {i}\n" for i in range(draw(st.integers(0, 4)))) + f"{key}: 2\n"
        if draw(st.booleans()):
            text = "outer:\n" + "".join("  " + line + "\n" for line in text.splitlines())
    elif kind == "deep":
        depth = draw(st.integers(50, 6000))
        opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
        text = "x: " + opener * depth + ("1" if opener != "[" else "") + closer * depth + "\n"
    elif kind == "anchors_ok":
        text = "base: &b {kind: model}\naudits: [*b, *b]\ndata: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\n"
    else:
        text = yaml.safe_dump(draw(shaped_configs()), allow_unicode=True)
    data = text.encode("utf-8")
    if kind == "not_utf8" or draw(st.integers(0, 9)) == 0:
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.sampled_from([b"\xff", b"\xc3(", b"\xe9", b"\x80\x80"])) + data[pos:]
    return data


@settings(max_examples=BUDGET["hostile_yaml"], **FUZZ)
@given(data=hostile_yaml(), reader=st.sampled_from(["config", "state", "rules"]))
def test_hostile_yaml(data, reader):
    from audit_core.runs.gate import extract_gate_grounds, gate_state

    if reader == "config":
        path = _TMP / "hostile.yaml"
        path.write_bytes(data)
        declared_or_valid(lambda: load_config(path))
    elif reader == "state":
        def state():
            from audit_core.safe_text import decode_utf8

            return load_state(decode_utf8(data, what="The state"), fmt="yaml")

        declared_or_valid(state)
    else:
        declared_or_valid(lambda: gate_state(extract_gate_grounds([]), deployment_scope="production", rules_yaml=data))


_COUNT_OPTIONS = {
    "model": ["bootstrap", "chunk_size", "refit_seeds"],
    "fragility": ["max_cases", "chunk_size", "k", "n_draws", "donor_groups", "stress_draws", "n_boot", "perm_repeats",
                  "shap_max_cases", "search_max_cases", "exact_budget", "beam_width", "grid", "thresholds", "families"],
    "receipts": ["n_cases"],
    "transport": ["n_refits", "n_bootstrap", "degradation_m", "n_random_sets", "stress_max_rows", "alphas", "models"],
}
_LIST_ITEM = {"grid": lambda i, n: (i + 1) / n, "thresholds": lambda i, n: 0.5, "families": lambda i, n: "noise",
              "refit_seeds": lambda i, n: i, "alphas": lambda i, n: 0.1, "models": lambda i, n: "logistic_regression"}


@st.composite
def oversized_counts(draw):
    from audit_core.limits import COUNT_FIELDS, Limits

    kind = draw(st.sampled_from(sorted(_COUNT_OPTIONS)))
    entry = {"kind": kind, **({"mode": "benchmark"} if kind == "receipts" else {})}
    for field in draw(st.lists(st.sampled_from(_COUNT_OPTIONS[kind]), min_size=1, max_size=3, unique=True)):
        bound = Limits().bound(COUNT_FIELDS[kind][field])
        n = draw(st.one_of(st.integers(bound - 2, bound + 2), st.integers(bound, bound * 1000), st.just(2**63),
                           st.integers(-3, 3)))
        if field in _LIST_ITEM:
            n = max(0, min(n, bound + 60))
            entry[field] = [_LIST_ITEM[field](i, max(n, 1)) for i in range(n)]
        else:
            entry[field] = n if draw(st.integers(0, 9)) else draw(JSONISH)
    model = {"kind": "random_forest", "params": {"n_estimators": draw(st.integers(1, 10**9))}} if draw(
        st.booleans()) else {"kind": "logistic_regression"}
    return {"data": {"sample": "loan_synthetic"}, "model": model, "audits": [entry]}


COUNT_OUTCOMES: collections.Counter = collections.Counter()


@settings(max_examples=BUDGET["oversized_counts"], **FUZZ)
@given(raw=oversized_counts())
def test_oversized_counts(raw):
    COUNT_OUTCOMES[declared_or_valid(lambda: parse_config(raw, source="fuzz.yaml"))] += 1


def test_oversized_counts_reach_the_bound_check():
    """The generated configs are not all refused earlier: some pass, some are refused for their count."""
    if not COUNT_OUTCOMES:
        test_oversized_counts()
    assert COUNT_OUTCOMES["LIMIT_COUNT"] > 20 and COUNT_OUTCOMES["ok"] > 5, COUNT_OUTCOMES


def _bundle_of(tables: dict, run_extra: dict) -> dict:
    from audit_core.runs.bundle import bundle_from_record
    from audit_core.runs.registry import RunRecord

    run = dict(run_id="20240101T000000000000-00000001", created_at="2024-01-01T00:00:00.000000+00:00",
               updated_at="2024-01-01T00:00:00.000000+00:00", audit_kind="fragility", status="done", dataset_name="d",
               dataset_fingerprint="f", grouping_hash=None, model_spec={}, config={}, manifest={}, error=None)
    run.update(run_extra)
    return bundle_from_record(RunRecord(**run, tables=tables))


@st.composite
def bundles(draw):
    import numpy as _np

    rows = draw(st.integers(0, 2_000))
    summary = pd.DataFrame({"key": _np.arange(rows), "p_hat": 0.5, "k_star": 1, "rcma": 0.1, "fds": 0.2})
    drop = draw(st.lists(st.sampled_from(list(summary.columns)), max_size=2, unique=True))
    tables = {"certificates": summary.drop(columns=drop)}
    if draw(st.booleans()):
        tables["zeros"] = pd.DataFrame({"z": _np.zeros(draw(st.integers(0, 400_000)), dtype="int64")})
    obj = _bundle_of(tables, {"audit_kind": draw(st.sampled_from(["fragility", "model", "custom", "transport"])),
                              "status": draw(st.sampled_from(["done", "failed", "running", "interrupted", "odd"]))})
    how = draw(st.integers(0, 6))
    if how == 1:
        obj["tables"][0]["sha256"] = "0" * 64
    elif how == 2:
        obj["run"].pop(draw(st.sampled_from(sorted(obj["run"]))))
    elif how == 3:
        obj["run"]["config"] = draw(JSONISH)
    text = json.dumps(obj)
    if how == 4:
        text = text[: draw(st.integers(0, len(text)))]
    elif how == 5:
        text = '{"format": "reliability-audit-run", "x": ' + "[" * draw(st.integers(90, 3000)) + "]" * 3000 + "}"
    elif how == 6:
        text = text.replace('"format_version": 1', '"format_version": 1, "format_version": 1')
    return text.encode()


@settings(max_examples=BUDGET["bundles"], **FUZZ)
@given(data=bundles(), cap=st.sampled_from(["1", "3", "2000"]))
def test_bundles(data, cap):
    from unittest import mock

    from audit_core.runs.bundle import import_bundle
    from audit_core.runs.registry import RunRegistry

    reg = RunRegistry(Path(tempfile.mkdtemp(prefix="fuzz_bundle_")) / "reg.sqlite3")
    with mock.patch.dict("os.environ", {"AUDIT_MAX_EXPANSION_MB": cap}):
        outcome = declared_or_valid(lambda: import_bundle(reg, data, name="fuzz.json"))
    assert (outcome == "ok") == (len(reg.list_runs()) == 1)  # refused bundles write nothing
