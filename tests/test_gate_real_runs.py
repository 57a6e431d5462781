"""The release gate reads grounds from real Fragility and Transport runs (not hand-made tables)."""
from __future__ import annotations

import math
from pathlib import Path

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.samples import load_sample
from audit_core.fragility.audit import AuditOptions, run_fragility_audit
from audit_core.runs.gate import compare_runs, extract_gate_grounds
from audit_core.runs.registry import RunRegistry
from audit_core.runs.save import save_fragility_run
from audit_core.transport import TransportConfig, run_transport

from fragility_data import loan_workspace


def _transport_run(reg: RunRegistry, seed: int) -> str:
    frame, info = load_sample("loan_synthetic")
    cfg = DatasetConfig(
        name="loan_synthetic",
        targets=info.target_definitions[:1],
        roles={c: "ignore" for c in info.exclude_columns},
        key_column=info.key_column,
        domain_column=info.domain_column,
        source_domain=info.source_domain,
        target_domain=info.target_domain,
    )
    ds = build_dataset(frame, cfg)
    tc = TransportConfig.from_dataset(ds, n_refits=2, n_bootstrap=40, seed=seed, stresses=())
    src = ds.frame[ds.domain_mask(info.source_domain)]
    tgt = ds.frame[ds.domain_mask(info.target_domain)]
    return run_transport(src, tgt, config=tc).save_to_registry(reg, dataset_name="loan_synthetic")


def test_gate_grounds_come_from_saved_fragility_and_transport_runs(tmp_path: Path) -> None:
    reg = RunRegistry(tmp_path / "r.sqlite3")
    ws, codes = loan_workspace(n_rows=800)
    audit = run_fragility_audit(ws, options=AuditOptions(max_cases=60, missing_codes=codes, n_boot=20,
                                                         shap_max_cases=20, search_max_cases=20, temperature=False))
    frag_id = save_fragility_run(reg, ws, audit)
    tr_a, tr_b = _transport_run(reg, 0), _transport_run(reg, 1)

    grounds = extract_gate_grounds([reg.load(frag_id), reg.load(tr_a)]).values
    for name in ("ood_ece", "worst_class_coverage_90", "n_transport_sensitive", "mean_fds", "brittle_share_confident"):
        assert grounds[name] is not None and math.isfinite(grounds[name]), name
    assert 0.0 <= grounds["brittle_share_confident"] <= 1.0 and 0.0 <= grounds["ood_ece"] <= 1.0

    result = compare_runs(reg.load(tr_a), reg.load(tr_b))
    table = result.to_frame().set_index("ground")
    # Transport-only runs: the fragility and model grounds are reported absent, never guessed.
    assert table.loc["mean_fds", "status_b"].startswith("absent")
    assert table.loc["ood_ece", "status_b"] == "present"
    assert isinstance(result.passed, bool)
