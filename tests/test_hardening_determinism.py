"""Determinism: the same configuration twice gives result tables with identical hashes.

Covered audit kinds: model (training + held-out metrics), fragility (every
result table), receipts (the executed cube, and the benchmark with its
learned baseline) and transport (every result table, small sizes: two refits,
20 bootstrap resamples, both stresses).
"""
from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.samples import load_sample
from audit_core.fragility.audit import AuditOptions, run_fragility_audit
from audit_core.fragility.engine import FragilityConfig
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ModelSpec


def table_hash(frame: pd.DataFrame | None) -> str:
    if frame is None:
        return "none"
    h = hashlib.sha256()
    h.update(repr(list(frame.columns)).encode())
    h.update(pd.util.hash_pandas_object(frame.reset_index(drop=True).astype(str), index=False).to_numpy().tobytes())
    return h.hexdigest()


def _workspace():
    frame, info = load_sample("loan_synthetic")
    config = DatasetConfig(name="loan_synthetic.csv", targets=tuple(info.target_definitions[:1]),
                           key_column=info.key_column, domain_column=info.domain_column,
                           source_domain=info.source_domain, target_domain=info.target_domain,
                           roles={c: "ignore" for c in info.exclude_columns
                                  if c in frame.columns and c != info.key_column})
    ds = build_dataset(frame, config)
    return train_workspace(ds, spec=ModelSpec(kind="logistic_regression", seed=0), raw_groups=info.evidence_groups)


@pytest.fixture(scope="module")
def two_workspaces():
    return _workspace(), _workspace()


def test_model_audit_is_deterministic(two_workspaces):
    a, b = two_workspaces
    assert table_hash(a.metrics) == table_hash(b.metrics)
    assert table_hash(a.grouping.to_frame()) == table_hash(b.grouping.to_frame())
    assert (a.baseline == b.baseline).all()


OPTIONS = AuditOptions(config=FragilityConfig(k=3, n_draws=3, seed=0), max_cases=25, stress_draws=3, n_boot=20,
                       perm_repeats=2, search_max_cases=10, exact_budget=200)


def test_fragility_audit_is_deterministic(two_workspaces):
    a, b = (run_fragility_audit(ws, options=OPTIONS) for ws in two_workspaces)
    names = ["certificates", "scores", "auroc", "incremental", "search", "baseline"]
    assert [table_hash(getattr(a, n)) for n in names] == [table_hash(getattr(b, n)) for n in names]
    assert a.certificates.shape[0] == 25 and a.complete


def test_exact_search_cap_is_a_note_naming_its_variable(two_workspaces):
    ws = two_workspaces[0]
    opts = AuditOptions(config=OPTIONS.config, max_cases=20, stress_draws=2, n_boot=10, perm_repeats=1,
                        search_max_cases=5, exact_max_groups=1, temperature=False)
    audit = run_fragility_audit(ws, options=opts)
    assert any("AUDIT_MAX_EXACT_GROUPS" in n for n in audit.notes)
    assert list(audit.search["method"]) == ["beam(4)"] and audit.certificates["exact_min"].isna().all()


def test_receipts_audit_is_deterministic():
    from audit_core.receipts import evaluate_baseline, execute_state_cube, generate_benchmark, load_state

    old = load_state("grounds: {amount: 12000, role: clerk}\nnorms: {default: approve, rules: "
                     "[{id: r1, when: 'amount > 10000 and role == \"clerk\"', then: deny}]}\nauthority: {r1: 'true'}\n")
    new = load_state("grounds: {amount: 9000, role: manager}\nnorms: {default: approve, rules: "
                     "[{id: r1, when: 'amount > 5000', then: refer}]}\nauthority: {}\n")
    cubes = [execute_state_cube(old, new, granularity=g, mode="full") for g in ("parts", "items", "parts", "items")]
    assert table_hash(cubes[0].cube.to_frame()) == table_hash(cubes[2].cube.to_frame())
    assert table_hash(cubes[1].cube.to_frame()) == table_hash(cubes[3].cube.to_frame())
    assert table_hash(cubes[0].trace_frame()) == table_hash(cubes[2].trace_frame())
    b1, b2 = (generate_benchmark(n_cases=300, seed=3) for _ in range(2))
    assert table_hash(b1.to_frame()) == table_hash(b2.to_frame())
    r1, r2 = (evaluate_baseline(b, seed=0) for b in (b1, b2))
    f1, f2 = (pd.DataFrame([r.to_dict()]) if hasattr(r, "to_dict") else pd.DataFrame([vars(r)]) for r in (r1, r2))
    assert table_hash(f1) == table_hash(f2)


TRANSPORT_TABLES = ["table", "verdicts", "refit_summary"]
TRANSPORT_EXTRAS = ["reliability", "curves", "conformal_tally", "model_family", "degradation_percentiles",
                    "feature_shift", "domain_classifier"]


def _transport_once():
    from audit_core.transport import TransportConfig, run_transport

    frame, info = load_sample("loan_synthetic")
    config = DatasetConfig(name="loan_synthetic.csv", targets=tuple(info.target_definitions[:2]),
                           primary_target=info.target_definitions[0]["name"], key_column=info.key_column,
                           domain_column=info.domain_column, source_domain=info.source_domain,
                           target_domain=info.target_domain, group_column=info.group_column,
                           roles={c: "ignore" for c in info.exclude_columns
                                  if c in frame.columns and c not in (info.key_column, info.group_column)})
    ds = build_dataset(frame, config)
    cfg = TransportConfig.from_dataset(ds, n_refits=2, n_bootstrap=20, mappings=("raw", "platt"), n_random_sets=2,
                                       stress_max_rows=400, strata_columns=("region",), subgroup_columns=("region",),
                                       seed=0)
    return run_transport(ds.frame, config=cfg)


def test_transport_audit_is_deterministic():
    a, b = _transport_once(), _transport_once()
    ha = [table_hash(getattr(a, n)) for n in TRANSPORT_TABLES] + [table_hash(a.extras.get(n)) for n in TRANSPORT_EXTRAS]
    hb = [table_hash(getattr(b, n)) for n in TRANSPORT_TABLES] + [table_hash(b.extras.get(n)) for n in TRANSPORT_EXTRAS]
    assert ha == hb
    assert len(a.table) > 1000 and len(a.verdicts) > 0 and "none" not in ha[:3]
    assert set(a.table["refit"]) >= {0, 1}
