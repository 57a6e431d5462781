"""The ``receipts`` audit for ``reliability-audit run``: an executed cube or a certified benchmark.

Two modes (``mode`` is required):

``cube``
    Execute the cube of a revision between two evaluator states given as
    files (YAML or JSON, the format of the Receipts page)::

        - kind: receipts
          mode: cube
          old: gate/old.yaml          # relative to the working directory
          new: gate/new.yaml
          granularity: parts          # parts (G, N, A) | items (each changed ground/rule/authority entry)
          unknown_grounds: false      # true: a ground a hybrid lacks is UNKNOWN instead of an error

    Tables (as the Receipts page saves them, plus two): ``cells`` (every
    executed cell with the governing rule), ``trace`` (cell × rule),
    ``controls`` (the three paired controls, executed), ``receipt`` (one row
    per inclusion-minimal set) and ``verdicts`` (the two endpoint verdicts,
    compared across runs by the Runs page).

``benchmark``
    Generate and certify the seeded benchmark::

        - kind: receipts
          mode: benchmark
          n_cases: 2000
          seed: 0

    Tables: ``benchmark`` (one row per certified case and control) and
    ``by_mutation`` (stratum × mutation: cases, share changed, mean receipt
    sets, mean pruned adjudicator calls).

No model is trained for this audit (``needs_workspace=False``). The state
files are read and validated when the config is checked, so a bad file is a
config error (exit 2) and no run is saved.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pandas as pd

from audit_core.errors import fail
from audit_core.limits import Limits
from audit_core.receipts.controls import cube_controls
from audit_core.receipts.generator import BenchmarkConfig, generate_benchmark
from audit_core.receipts.state import EvaluatorState, load_state
from audit_core.receipts.state_cube import execute_state_cube
from audit_core.safe_text import read_text_file

from ..config import check_keys, expect_type
from ..context import AuditContext
from ..plugin import AuditResult, AuditRunner, Progress, register_audit

__all__ = ["RECEIPTS_AUDIT", "MODES", "validate_config", "run"]

#: The modes of a ``receipts`` config entry.
MODES: tuple[str, ...] = ("cube", "benchmark")
_CUBE_KEYS = ("mode", "old", "new", "granularity", "unknown_grounds")
_BENCH_KEYS = ("mode", "n_cases", "seed")


def _read_state(path: str, *, where: str, label: str, base: Path) -> EvaluatorState:
    p = Path(path) if Path(path).is_absolute() else base / path
    if not p.is_file():
        raise fail("CONFIG_BAD_VALUE", where=where, expected="an existing state file (YAML or JSON)", got=str(p))
    return load_state(read_text_file(p, what=f"The {label} file {p} ({where})"), label=f"{label} ({where})")


def validate_config(options: dict, *, where: str = "audits[0]", base_dir: str | Path | None = None) -> dict[str, Any]:
    """Check a ``receipts`` config entry (without ``kind``) and fill in defaults.

    In ``cube`` mode the two state files are read and parsed here (relative
    paths against ``base_dir``, default the working directory); the returned
    options hold their absolute paths.

    Raises
    ------
    AuditInputError
        ``CONFIG_MISSING_KEY`` (``mode``, ``old``, ``new``),
        ``CONFIG_UNKNOWN_KEY`` (allowed keys depend on the mode),
        ``CONFIG_WRONG_TYPE``, ``CONFIG_BAD_VALUE`` and the state parser's
        ``RC_STATE_*`` messages.

    Examples
    --------
    >>> validate_config({"mode": "benchmark", "n_cases": 200})
    {'mode': 'benchmark', 'n_cases': 200, 'seed': 0}
    >>> validate_config({"mode": "cubes"})
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: audits[0].mode must be one of 'cube', 'benchmark', got 'cubes'.
    """
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    # a mapping with a mode first; the other keys are checked against that mode's keys
    o = check_keys(options, where=where, allowed=tuple(map(str, options)) if isinstance(options, dict) else (),
                   required=("mode",))
    mode = expect_type(o["mode"], str, where=f"{where}.mode")
    if mode not in MODES:
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.mode", expected="one of 'cube', 'benchmark'", got=mode)
    if mode == "benchmark":
        o = check_keys(o, where=f"{where} (mode benchmark)", allowed=_BENCH_KEYS)
        n = expect_type(o.get("n_cases", 2000), int, where=f"{where}.n_cases")
        if n < 10:
            raise fail("CONFIG_BAD_VALUE", where=f"{where}.n_cases", expected="at least 10 cases", got=n)
        Limits.from_env().check_count("benchmark_cases", n, where=f"{where}.n_cases")
        return {"mode": mode, "n_cases": int(n), "seed": int(expect_type(o.get("seed", 0), int, where=f"{where}.seed"))}
    o = check_keys(o, where=f"{where} (mode cube)", allowed=_CUBE_KEYS, required=("old", "new"))
    gran = expect_type(o.get("granularity", "parts"), str, where=f"{where}.granularity")
    if gran not in ("parts", "items"):
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.granularity", expected="'parts' or 'items'", got=gran)
    paths = {}
    for side in ("old", "new"):
        text = expect_type(o[side], str, where=f"{where}.{side}")
        _read_state(text, where=f"{where}.{side}", label=f"{side} state", base=base)
        paths[side] = str((Path(text) if Path(text).is_absolute() else base / text).resolve())
    return {"mode": mode, **paths, "granularity": gran,
            "unknown_grounds": expect_type(o.get("unknown_grounds", False), bool, where=f"{where}.unknown_grounds")}


def _run_cube(options: dict[str, Any], progress: Progress) -> AuditResult:
    base = Path("/")
    old = _read_state(options["old"], where="old", label="old state", base=base)
    new = _read_state(options["new"], where="new", label="new state", base=base)
    missing: Literal["unknown", "error"] = "unknown" if options["unknown_grounds"] else "error"
    gran = options["granularity"]
    progress(0, 2, "cube")
    sc = execute_state_cube(old, new, granularity=gran, mode="full", missing=missing)
    pruned = execute_state_cube(old, new, granularity=gran, mode="pruned", missing=missing)
    progress(1, 2, "cube")
    controls = cube_controls(old, new, sc, granularity=gran, missing=missing)
    progress(2, 2, "cube")
    cube = sc.cube
    receipt = pd.DataFrame(
        {"set": ["{" + ",".join(sorted(s, key=cube.sources.index)) + "}" for s in cube.receipt],
         "size": [len(s) for s in cube.receipt]},
        columns=["set", "size"],
    )
    tables = {
        "cells": sc.to_frame(),
        "trace": sc.trace_frame(),
        "controls": controls,
        "receipt": receipt,
        "verdicts": pd.DataFrame({"endpoint": ["old", "new"], "verdict": [cube.v_old, cube.v_new]}),
    }
    key_numbers = {
        "v_old": cube.v_old, "v_new": cube.v_new, "changed": cube.changed, "receipt": cube.receipt_text,
        "sources": ", ".join(cube.sources), "calls_full": cube.calls, "calls_pruned": pruned.cube.calls,
        "controls_hold": bool(controls["holds"].all()),
    }
    return AuditResult(tables=tables, key_numbers=key_numbers,
                       manifest={"seeds": {"controls": 0}, "audit_options": dict(options), "receipts_kind": "cube",
                                 "cube": sc.to_dict()})


def _run_benchmark(options: dict[str, Any], progress: Progress) -> AuditResult:
    progress(0, 1, "benchmark")
    bench = generate_benchmark(BenchmarkConfig(n_cases=options["n_cases"], seed=options["seed"]))
    progress(1, 1, "benchmark")
    table = bench.to_frame()
    base = table[table["control"] == ""]
    sets = base["receipt"].map(lambda t: 0 if t in ("", "none") else len(str(t).split("|")))
    by = (base.assign(receipt_sets=sets)
          .groupby(["stratum", "mutation"], sort=True)
          .agg(cases=("case_id", "size"), share_changed=("changed", "mean"), mean_receipt_sets=("receipt_sets", "mean"),
               mean_calls_pruned=("calls_pruned", "mean"))
          .reset_index())
    key_numbers = {
        "n_base_cases": int(len(base)), "n_cases_with_controls": int(len(table)),
        "share_changed": float(base["changed"].mean()), "control_violations": len(bench.control_violations),
    }
    return AuditResult(tables={"benchmark": table, "by_mutation": by}, key_numbers=key_numbers,
                       manifest={"seeds": {"benchmark": options["seed"]}, "audit_options": dict(options),
                                 "receipts_kind": "benchmark", "benchmark_config": bench.config.to_dict()})


def run(options: dict[str, Any], *, context: AuditContext, progress: Progress) -> AuditResult:
    """Execute the configured cube or benchmark (see the module docstring)."""
    return _run_cube(options, progress) if options["mode"] == "cube" else _run_benchmark(options, progress)


#: The registered ``receipts`` runner.
RECEIPTS_AUDIT = register_audit(
    AuditRunner(kind="receipts", title="Receipts (executed cubes)", validate_config=validate_config, run=run,
                needs_workspace=False,
                tables={"cells": ("cell", "verdict", "in_receipt"), "verdicts": ("endpoint", "verdict"),
                        "by_mutation": ("stratum", "mutation", "cases", "share_changed")},
                numbers={"cells": ("in_receipt",), "by_mutation": ("cases", "share_changed")})
)
