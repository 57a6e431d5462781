"""The fragility plug-in: certificate chunks through the execution backend give identical tables."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.fragility.engine import certify
from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.parallel import local_cluster, map_batches
from audit_core.runs.plugin import ExecutionOptions
from audit_core.runs.registry import RunRegistry
from tests.runs_data import ROOT

CONFIG = {
    "data": {"sample": "loan_synthetic"},
    "model": {"kind": "logistic_regression", "seed": 0},
    "audits": [{"kind": "fragility", "max_cases": 30, "chunk_size": 8, "n_boot": 5, "shap_max_cases": 0,
                "search_max_cases": 5, "perm_repeats": 1, "stress_draws": 3, "temperature": False}],
}


def test_serial_and_dask_store_identical_certificate_tables(tmp_path) -> None:
    reg = RunRegistry(tmp_path / "r.sqlite3")
    cfg = parse_config(CONFIG)
    (serial,) = run_config(cfg, registry=reg, base_dir=ROOT)
    with local_cluster(1):
        (dask,) = run_config(cfg, registry=reg, base_dir=ROOT, execution=ExecutionOptions(backend="dask"))
    a, b = reg.load(serial.run_id), reg.load(dask.run_id)
    assert (a.manifest["execution"]["backend"], b.manifest["execution"]["backend"]) == ("serial", "dask")
    assert list(a.tables) == list(b.tables)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name], check_exact=True)


@pytest.mark.parametrize("path", ["static", "random"])
def test_mapped_chunks_equal_the_in_process_loop(path: str) -> None:
    from sklearn.linear_model import LogisticRegression

    from audit_core.data.groups import Grouping

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    model = LogisticRegression().fit(X, y)
    grouping = Grouping(features=tuple("uvwxyz"), raw_columns=tuple("uvwxyz"), group_of=("a", "a", "b", "b", "c", "c"),
                        names=("a", "b", "c"))
    from audit_core.fragility.engine import FragilityConfig

    kw = dict(grouping=grouping, baseline=X.mean(0), scale=X.std(0), config=FragilityConfig(path=path, n_draws=3),
              chunk_cases=7)
    loop = certify(model, X, **kw)
    mapped = certify(model, X, map_chunks=lambda f, items, progress=None: map_batches(f, items), **kw)
    pd.testing.assert_frame_equal(loop.to_frame(), mapped.to_frame(), check_exact=True)
    np.testing.assert_array_equal(loop.delta, mapped.delta)
