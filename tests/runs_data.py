"""Saved runs for the Runs/report/bundle tests, made through the library (fast, seeded)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.plugin import ExecutionOptions
from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]


def model_config(*, bootstrap: int = 20, refit_seeds: tuple[int, ...] = (), seed: int = 0):
    """A small ``model`` audit on the loan sample."""
    return parse_config(
        {
            "name": "loan-test",
            "data": {"sample": "loan_synthetic"},
            "model": {"kind": "logistic_regression", "seed": seed},
            "audits": [{"kind": "model", "bootstrap": bootstrap, "chunk_size": 10, "refit_seeds": list(refit_seeds)}],
        }
    )


def save_model_run(registry: RunRegistry, *, execution: ExecutionOptions | None = None, **kwargs) -> str:
    """Run the model audit through :func:`run_config` and return the run id."""
    (outcome,) = run_config(model_config(**kwargs), registry=registry, base_dir=ROOT, execution=execution)
    assert outcome.status == "done", outcome.error
    return outcome.run_id


def odd_tables() -> dict[str, pd.DataFrame]:
    """Tables with every dtype the registry promises to round-trip, and a verdicts table."""
    return {
        "verdicts": pd.DataFrame(
            {"check": ["coverage", "calibration", "abstention"], "verdict": ["pass", "fail", "pass"], "delta": [0.01, 0.2, np.nan]}
        ),
        "mixed": pd.DataFrame(
            {
                "i": np.array([1, 2, 3], dtype="int64"),
                "f": [0.5, np.nan, 1e-300],
                "s": pd.array(["a", None, "<script>alert(1)</script>"], dtype="string"),
                "b": [True, False, True],
                "n": pd.array([1, None, 3], dtype="Int64"),
                "t": pd.to_datetime(["2024-01-01", "2024-06-01", None]).tz_localize("UTC"),
            },
            index=pd.Index(["x", "y", "z"], name="row"),
        ),
    }


def save_custom_run(registry: RunRegistry, *, kind: str = "custom_audit", verdicts: tuple[str, ...] = ("pass", "fail", "pass")) -> str:
    """A run of a kind without registered figures (tables-only fallback)."""
    tables = odd_tables()
    tables["verdicts"] = tables["verdicts"].assign(verdict=list(verdicts))
    return registry.save(
        audit_kind=kind,
        dataset_name="toy <b>data</b>",
        dataset_fingerprint="f" * 64,
        grouping_hash=None,
        model_spec={"kind": "lightgbm", "seed": 1},
        config={"note": "<img src=x onerror=alert(1)>", "alpha": 0.1},
        tables=tables,
        artifacts={"model.txt": b"\x00\x01binary"},
        manifest={"seeds": {"split": 3}, "key_numbers": {"verdict": "fail", "coverage_gap": 0.031}},
    )


def save_fragility_run(registry: RunRegistry, *, max_cases: int = 30, store_case_data: bool = False) -> str:
    """A small ``fragility`` audit on the loan sample through :func:`run_config`; returns the run id."""
    cfg = parse_config(
        {
            "name": "loan-test",
            "data": {"sample": "loan_synthetic"},
            "model": {"kind": "logistic_regression", "seed": 0},
            "audits": [{"kind": "fragility", "max_cases": max_cases, "chunk_size": 10, "n_boot": 5,
                        "shap_max_cases": 0, "search_max_cases": 5, "perm_repeats": 1, "stress_draws": 3,
                        "store_case_data": store_case_data}],
        }
    )
    (outcome,) = run_config(cfg, registry=registry, base_dir=ROOT)
    assert outcome.status == "done", outcome.error
    return outcome.run_id
