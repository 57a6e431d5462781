"""Every count is bounded: the field registry of ``audit_core.limits`` against every schema that takes counts.

Two halves:

* **Guard tests** find the count fields themselves — the options a CLI audit
  entry accepts, the fields of the audit entry points' options classes, every
  integer ``number_input`` / ``slider`` of the app's widgets (read from the
  source with :mod:`ast`) and the CLI's integer arguments — and fail if one is
  neither registered in :data:`~audit_core.limits.COUNT_FIELDS` nor listed
  below as not a count (seeds, shares, switches), with the reason.
* **Generated tests** (hypothesis) go over the registry itself: for every
  registered field, a value over its bound is refused with ``LIMIT_COUNT``
  naming the field, the bound and its variable, at the library's entry
  point; the bound itself passes; raising the variable lets the value through.
"""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_core.errors import AuditInputError
from audit_core.limits import COUNT_FIELDS, COUNTS, Limits
from hardening_cases import FUZZ

ROOT = Path(__file__).resolve().parents[1]
LIMITS = Limits()

#: schema -> field -> why it is not a count of work.
NOT_COUNTS: dict[str, dict[str, str]] = {
    "model": {"bootstrap_seed": "a seed", "level": "a confidence level"},
    "fragility": {"case_seed": "a seed", "seed": "a seed", "stress_seed": "a seed",
                  "weights": "three weights, checked to be exactly three", "path": "a choice",
                  "temperature": "a switch", "baseline_sensitivity": "a switch"},
    "receipts": {"seed": "a seed", "mode": "a choice", "old": "a file", "new": "a file", "granularity": "a choice",
                 "unknown_grounds": "a switch"},
    "transport": {"seed": "a seed", "tolerances": "metric -> tolerance, keys checked against the known metrics"},
    "AuditOptions": {"config": "the FragilityConfig, its own schema", "case_seed": "a seed", "stress_seed": "a seed",
                     "exact_max_groups": "AUDIT_MAX_EXACT_GROUPS itself", "temperature": "a switch",
                     "baseline_sensitivity": "a switch",
                     "max_quadratic_groups": "AUDIT_MAX_QUADRATIC_GROUPS itself",
                     "max_cells": "AUDIT_MAX_FRAGILITY_CELLS itself"},
    "FragilityConfig": {"seed": "a seed", "weights": "three weights", "path": "a choice",
                        "chunk_rows": "rows per internal chunk, sized by the engine"},
    "BenchmarkConfig": {"seed": "a seed", "cases_per_unit": "a ratio of the generator, at most 4 in use",
                        "mutation_mix": "three shares", "splits": "three shares"},
    "TransportConfig": {"seed": "a seed", "numeric": "feature names from the dataset",
                        "categorical": "feature names from the dataset", "strata_columns": "column names from the dataset",
                        "fractions": "four shares", "input_files": "provenance names",
                        "min_subgroup": "a minimum, not work",
                        "bootstrap_chunk": "replicates per internal chunk: in no config or widget, only the library API",
                        "tolerances": "metric -> tolerance",
                        "model_params": "estimator settings per model kind, the model section's own (models.zoo)"},
    "FRResMLP": {"seed": "a seed"},
    "widgets": {"fr_seed": "a seed", "tr_seed": "a seed", "dg_seed": "a seed", "rc_bench_seed": "a seed"},
}


# ---------------------------------------------------------------------------
# Guard: every count field of every schema is registered
# ---------------------------------------------------------------------------
def _is_count_like(value) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, (list, tuple, dict))


def _cli_schemas() -> dict[str, dict]:
    from audit_core.runs.plugins import fragility, model, receipts, transport

    bench = receipts.validate_config({"mode": "benchmark"})
    return {
        "model": model.validate_model_options({}),
        "fragility": fragility.validate_config({}),
        "receipts": {**bench, "old": "", "new": "", "granularity": "", "unknown_grounds": False},
        "transport": {**{k: 0 for k in transport._INTS}, **{k: [] for k in transport._LISTS}, "tolerances": {}},
    }


def _options_classes() -> dict[str, dict]:
    from audit_core.fragility.audit import AuditOptions
    from audit_core.fragility.engine import FragilityConfig
    from audit_core.fragility.neural.network import DEFAULTS
    from audit_core.receipts.generator import BenchmarkConfig
    from audit_core.transport.config import TransportConfig

    out = {}
    for cls in (AuditOptions, FragilityConfig, BenchmarkConfig, TransportConfig):
        values = {}
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            values[f.name] = default
        out[cls.__name__] = values
    out["FRResMLP"] = dict(DEFAULTS)
    return out


def _unregistered(schema: str, values: dict) -> list[str]:
    registered, exempt = COUNT_FIELDS.get(schema, {}), NOT_COUNTS.get(schema, {})
    return sorted(k for k, v in values.items() if (_is_count_like(v) or k in registered or v is None and "max" in k)
                  and k not in registered and k not in exempt)


@pytest.mark.parametrize("schema", ["model", "fragility", "receipts", "transport"])
def test_every_cli_count_option_is_registered(schema):
    values = _cli_schemas()[schema]
    assert not _unregistered(schema, values), f"register these in COUNT_FIELDS[{schema!r}]: {_unregistered(schema, values)}"
    assert set(COUNT_FIELDS[schema]) <= set(values), "a registered field that the schema no longer has"


@pytest.mark.parametrize("schema", ["AuditOptions", "FragilityConfig", "BenchmarkConfig", "TransportConfig", "FRResMLP"])
def test_every_entry_point_count_field_is_registered(schema):
    values = _options_classes()[schema]
    missing = [k for k in _unregistered(schema, values) if not isinstance(values[k], (str, float))]
    assert not missing, f"register these in COUNT_FIELDS[{schema!r}]: {missing}"
    assert set(COUNT_FIELDS[schema]) <= set(values)


def _name(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _widget_calls() -> list[tuple[str, ast.Call]]:
    """Every number input, slider and :func:`components.counts.count_input` of the pages and widget modules."""
    calls = []
    for path in sorted([*(ROOT / "components" / "widgets").glob("*.py"), *(ROOT / "pages").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _name(node) in ("number_input", "slider", "select_slider", "count_input"):
                calls.append((path.name, node))
    return calls


def _kw(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_integer_widget(call: ast.Call) -> bool:
    """Streamlit makes a number input integer when its numbers are ints (without any, it is a float input)."""
    kinds = {type(v.value) for name in ("min_value", "value", "step")
             if isinstance(v := _kw(call, name), ast.Constant) and not isinstance(v.value, bool)}
    return int in kinds and float not in kinds


def test_the_widget_scan_finds_the_widgets():
    keys = {ast.literal_eval(_kw(c, "key")) for _, c in _widget_calls() if isinstance(_kw(c, "key"), ast.Constant)}
    assert {"fr_draws", "tr_bootstrap", "rc_bench_n", "fr_neural_epochs", "dg_seed"} <= keys


def test_every_integer_widget_is_a_registered_count_whose_maximum_is_its_bound():
    counts = COUNT_FIELDS["widgets"]
    problems = []
    for module, call in _widget_calls():
        key_node = _kw(call, "key")
        if not isinstance(key_node, ast.Constant) or not _is_integer_widget(call):
            continue
        key = key_node.value
        if key in NOT_COUNTS["widgets"]:
            continue
        if key not in counts:
            problems.append(f"{module}: widget {key!r} is an integer input but not in COUNT_FIELDS['widgets']")
            continue
        count = _kw(call, "count")
        if _name(call) != "count_input" or not isinstance(count, ast.Constant) or count.value != counts[key]:
            problems.append(f"{module}: widget {key!r} must be count_input(..., count={counts[key]!r}), "
                            "whose maximum is that bound")
    assert not problems, "\n".join(problems)
    assert set(counts) <= {ast.literal_eval(_kw(c, "key")) for _, c in _widget_calls()
                           if isinstance(_kw(c, "key"), ast.Constant)}


def test_every_integer_cli_argument_is_registered():
    tree = ast.parse((ROOT / "audit_cli" / "parser.py").read_text())
    ints = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            t = _kw(node, "type")
            if isinstance(t, ast.Name) and t.id in ("int", "_positive"):
                ints.add(node.args[0].value.lstrip("-").replace("-", "_"))
    assert ints == set(COUNT_FIELDS["cli"])


def test_every_registered_field_names_a_count_with_a_sane_bound():
    for schema, fields in COUNT_FIELDS.items():
        for name, count in fields.items():
            assert count in COUNTS, (schema, name, count)
    for name, c in COUNTS.items():
        assert c.var.startswith("AUDIT_MAX_") and 1 <= c.default <= c.ceiling, name
    assert len({c.var for c in COUNTS.values()}) == len(COUNTS)  # one variable per count


# ---------------------------------------------------------------------------
# Generated: over the bound -> LIMIT_COUNT at the entry point; at the bound -> not refused for its count
# ---------------------------------------------------------------------------
BASE = {"data": {"sample": "loan_synthetic"}, "model": {"kind": "logistic_regression"}}


def _item(schema: str, field: str, i: int, n: int):
    """A valid element of list field ``field`` (index ``i`` of ``n``)."""
    return {
        "grid": round((i + 1) / n, 12), "thresholds": 0.5, "families": "noise", "refit_seeds": i,
        "models": "logistic_regression", "mappings": "raw", "alphas": 0.1, "selection_rates": 0.5,
        "hcep_thresholds": 0.9, "stresses": "degradation", "subgroup_columns": "region",
        "targets": {"kind": "class", "name": f"t{i}", "column": "defaulted", "positive": "yes"},
    }.get(field, i)


def _value(schema: str, field: str, n: int):
    """``n`` as the value of ``field``: the number itself, or a list / mapping of ``n`` valid entries."""
    if field == "missing_codes":
        return {"income_real": list(range(n))}
    if COUNT_FIELDS.get(schema, {}).get(field) == "list_items" or field == "refit_seeds":  # bounded by length
        values = [_item(schema, field, i, n) for i in range(n)]
        return tuple(values) if schema[0].isupper() else values
    return n


def _call(schema: str, field: str, value):
    """The library entry point of ``schema`` with ``field`` set to ``value``."""
    if schema in ("model", "fragility", "receipts", "transport"):
        from audit_core.runs.config import parse_config

        entry = {"kind": schema, **({"mode": "benchmark"} if schema == "receipts" else {}), field: value}
        return parse_config({**BASE, "audits": [entry]})
    if schema == "model_params":
        from audit_core.runs.config import parse_config

        return parse_config({**BASE, "model": {"kind": "random_forest", "params": {field: value}}, "audits": [{"kind": "model"}]})
    if schema in ("AuditOptions", "FragilityConfig"):
        from audit_core.fragility.audit import AuditOptions, run_fragility_audit
        from audit_core.fragility.engine import FragilityConfig

        options = AuditOptions(**{field: value}) if schema == "AuditOptions" else AuditOptions(
            config=FragilityConfig(**{field: value}))
        return run_fragility_audit(None, options=options)  # the bounds are checked before the workspace is read
    if schema == "BenchmarkConfig":
        from audit_core.receipts.generator import generate_benchmark

        return generate_benchmark(**{field: value})
    if schema == "TransportConfig":
        from audit_core.transport.config import TransportConfig

        base = {"targets": ({"kind": "class", "name": "d", "column": "defaulted", "positive": "yes"},),
                "numeric": ("age",), "domain_column": "year", "source_value": 2019, "target_value": 2023}
        return TransportConfig(**{**base, field: value})
    if schema == "FRResMLP":
        from audit_core.fragility.neural.compare import compare_fr_resmlp

        return compare_fr_resmlp(None, params={field: value})
    if schema == "cli":  # the command's own check, before the (absent) config is read
        import contextlib
        import io

        from audit_cli import main

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["run", "nope.yaml", "--backend", "dask" if field == "dask_local" else "processes",
                         f"--{field.replace('_', '-')}", str(value)])
        message = err.getvalue().strip().removeprefix("error: ")
        raise AuditInputError("LIMIT_COUNT" if "asks for" in message else f"EXIT_{code}", message)
    raise AssertionError(schema)


FIELDS = sorted((schema, field, count) for schema, fields in COUNT_FIELDS.items() if schema != "widgets"
                for field, count in fields.items() if field != "*") + [("model_params", "num_leaves", "model_size")]
LIST_FIELDS = {"list_items"}


def _where(schema: str, field: str) -> str:
    return {"model_params": f"model.params.{field}", "cli": f"--{field.replace('_', '-')}", "FRResMLP": f"FR-ResMLP.{field}"
            }.get(schema, f"audits[0].{field}" if schema in ("model", "fragility", "receipts", "transport") else
                  f"{schema}.{field}")


def _refusal(schema, field, value):
    with pytest.raises(AuditInputError) as err:
        _call(schema, field, value)
    return err.value


def _small_over(bound: int, count: str) -> bool:
    return bound <= 200 or count in LIST_FIELDS


@settings(max_examples=len(FIELDS) * 3, **FUZZ)
@given(case=st.sampled_from(FIELDS), extra=st.integers(1, 10**6))
def test_over_the_bound_is_refused_naming_the_field_bound_and_variable(case, extra):
    schema, field, count = case
    c, bound = COUNTS[count], LIMITS.bound(count)
    listy = count == "list_items" or field == "refit_seeds"
    value = _value(schema, field, bound + (min(extra, 50) if listy else extra))
    err = _refusal(schema, field, value)
    where = _where(schema, field) + (".income_real" if field == "missing_codes" else "")
    assert err.code == "LIMIT_COUNT", err.message
    assert err.message.startswith(f"{where} asks for ") and f"the most allowed is {bound:,} (limit {c.var})" in err.message


@pytest.mark.parametrize("case", FIELDS, ids=[f"{s}.{f}" for s, f, _ in FIELDS])
def test_at_the_bound_the_count_is_not_what_refuses(case, monkeypatch):
    schema, field, count = case
    bound = LIMITS.bound(count)
    value = _value(schema, field, bound)
    if schema == "BenchmarkConfig":  # check only: generating 20,000 cases is not the point here
        from audit_core.receipts.generator import BenchmarkConfig

        BenchmarkConfig(**{field: value}).check()
    else:
        try:
            _call(schema, field, value)
        except AuditInputError as err:
            assert err.code != "LIMIT_COUNT", err.message
        except Exception:  # noqa: BLE001 - past the bounds the entry point may need a real workspace (None here)
            pass
    monkeypatch.setenv(COUNTS[count].var, str(bound - 1))  # one less, through the variable: now refused
    assert _refusal(schema, field, value).code == "LIMIT_COUNT"


@pytest.mark.parametrize("count", sorted(COUNTS))
@pytest.mark.parametrize("raw", ["lots", "0", "-3", "1.5", "nan", "1e99"])
def test_a_bad_bound_names_its_variable(count, raw):
    var = COUNTS[count].var
    with pytest.raises(AuditInputError) as err:
        Limits.from_env({var: raw})
    assert err.value.code == "LIMIT_BAD_VALUE" and var in err.value.message


def test_an_override_is_read_and_capped_by_the_ceiling():
    c = COUNTS["bootstrap"]
    assert Limits.from_env({c.var: "123"}).bound("bootstrap") == 123
    assert Limits.from_env({c.var: str(c.ceiling)}).bound("bootstrap") == c.ceiling
    with pytest.raises(AuditInputError):
        Limits.from_env({c.var: str(c.ceiling + 1)})


def test_the_receipts_widget_maximum_is_the_bound(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("AUDIT_MAX_BENCHMARK_CASES", "345")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at = at.switch_page("pages/receipts.py").run()
    assert not at.exception, at.exception
    assert at.number_input(key="rc_bench_n").max == 345 and at.number_input(key="rc_bench_n").value == 345
    monkeypatch.setenv("AUDIT_MAX_BENCHMARK_CASES", "3")  # below the widget's minimum of 40: the page still works
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run().switch_page("pages/receipts.py").run()
    assert not at.exception, at.exception
    assert at.number_input(key="rc_bench_n").max == 40
