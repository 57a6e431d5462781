"""map_batches: identical results on serial, loky processes and a Dask LocalCluster."""
from __future__ import annotations

import numpy as np
import pytest

from audit_core.errors import AuditInputError
from audit_core.metrics import auroc
from audit_core.models.batch_jobs import BootstrapChunk, bootstrap_auroc_job, chunk_seeds
from audit_core.runs.parallel import local_cluster, map_batches


def _items(n_chunks: int = 6) -> list[BootstrapChunk]:
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, size=400)
    score = y * 0.8 + rng.normal(size=400)
    return [BootstrapChunk(y=y, score=score, seeds=s) for s in chunk_seeds(n_chunks * 5, seed=3, chunk_size=5)]


def _noisy_lstsq(item: tuple[int, int]) -> np.ndarray:
    """A nontrivial numpy job: least squares on seeded random data."""
    seed, n = item
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    y = X @ np.arange(8.0) + rng.standard_t(3, size=n)
    return np.linalg.lstsq(X, y, rcond=None)[0]


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


def test_backends_give_identical_results(cluster) -> None:
    items = _items()
    serial = map_batches(bootstrap_auroc_job, items)
    procs = map_batches(bootstrap_auroc_job, items, backend="processes", n_jobs=2)
    dask_current = map_batches(bootstrap_auroc_job, items, backend="dask")
    dask_addr = map_batches(bootstrap_auroc_job, items, backend="dask", scheduler_address=cluster.scheduler_address)
    for other in (procs, dask_current, dask_addr):
        assert len(other) == len(serial)
        for a, b in zip(serial, other):
            np.testing.assert_array_equal(a, b)  # bit-identical, not approximately equal
    lsq = [(s, 300) for s in range(5)]
    a = map_batches(_noisy_lstsq, lsq)
    b = map_batches(_noisy_lstsq, lsq, backend="dask")
    c = map_batches(_noisy_lstsq, lsq, backend="processes", n_jobs=2)
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)


def test_results_keep_input_order_and_progress_reaches_total(cluster) -> None:
    seen: list[tuple[int, int]] = []
    out = map_batches(abs, [-5, 4, -3, 2, -1], backend="dask", progress=lambda d, t: seen.append((d, t)))
    assert out == [5, 4, 3, 2, 1]
    assert seen[0] == (0, 5) and seen[-1] == (5, 5) and len(seen) == 6


def test_chunking_does_not_change_replicates() -> None:
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0, 0, 1])
    s = np.linspace(0, 1, 10)
    one = np.concatenate([bootstrap_auroc_job(BootstrapChunk(y, s, c)) for c in chunk_seeds(9, seed=1, chunk_size=9)])
    many = np.concatenate([bootstrap_auroc_job(BootstrapChunk(y, s, c)) for c in chunk_seeds(9, seed=1, chunk_size=2)])
    np.testing.assert_array_equal(one, many)


def test_auroc_matches_sklearn() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + y, 1)  # ties on purpose
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"backend": "threads"}, "PARALLEL_BAD_BACKEND"),
        ({"n_jobs": 0}, "PARALLEL_BAD_N_JOBS"),
        ({"backend": "serial", "scheduler_address": "tcp://x:1"}, "PARALLEL_SCHEDULER_WITHOUT_DASK"),
    ],
)
def test_bad_options_are_declared_errors(kwargs, code) -> None:
    with pytest.raises(AuditInputError) as info:
        map_batches(abs, [1], **kwargs)
    assert info.value.code == code


def test_unreachable_scheduler_is_a_declared_error() -> None:
    with pytest.raises(AuditInputError) as info:
        map_batches(abs, [1], backend="dask", scheduler_address="tcp://127.0.0.1:9")
    assert info.value.code == "PARALLEL_SCHEDULER_UNREACHABLE"
    assert "tcp://127.0.0.1:9" in info.value.message


def test_model_audit_tables_identical_on_every_backend(cluster, tmp_path) -> None:
    """The whole model audit (bootstrap + refits by seed) gives the same tables everywhere."""
    import pandas as pd

    from audit_core.runs.plugin import ExecutionOptions
    from audit_core.runs.registry import RunRegistry
    from tests.runs_data import save_model_run

    reg = RunRegistry(tmp_path / "r.sqlite3")
    options = [
        ExecutionOptions(),
        ExecutionOptions(backend="processes", n_jobs=2),
        ExecutionOptions(backend="dask", scheduler_address=cluster.scheduler_address),
    ]
    records = [reg.load(save_model_run(reg, execution=o, bootstrap=30, refit_seeds=(1, 2))) for o in options]
    first = records[0]
    assert {"metric_intervals", "seed_variability"} <= set(first.tables)
    for other in records[1:]:
        for name, df in first.tables.items():
            pd.testing.assert_frame_equal(other.tables[name], df, check_exact=True)
