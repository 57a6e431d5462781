"""A small saved Transport run on the loan sample (2019 → 2023), shared by the feature-shift and model-card tests."""
from __future__ import annotations

from pathlib import Path

from audit_core.runs.registry import RunRecord, RunRegistry


def loan_transport_result():
    """Run a 2-refit, Platt-only protocol with degradation on the loan sample (2019 → 2023)."""
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample
    from audit_core.transport import TransportConfig, run_transport

    frame, info = load_sample("loan_synthetic")
    ds = build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year",
                                            source_domain=2019, target_domain=2023,
                                            roles={c: "ignore" for c in info.exclude_columns}))
    return run_transport(ds.frame, config=TransportConfig.from_dataset(
        ds, n_refits=2, n_bootstrap=5, n_random_sets=3, stress_max_rows=600, mappings=("platt",),
        models=("logistic_regression",)))


def saved_loan_transport(directory: Path, *, dataset_name: str = "loan", result=None) -> RunRecord:
    """Save ``result`` (default: a new :func:`loan_transport_result`) to a registry in ``directory``.

    The tests pass the session fixture ``loan_transport_result`` (``tests/conftest.py``) to compute it once.
    """
    res = loan_transport_result() if result is None else result
    reg = RunRegistry(Path(directory) / "r.sqlite3")
    return reg.load(res.save_to_registry(reg, dataset_name=dataset_name))
