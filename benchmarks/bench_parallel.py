"""Throughput of a batch job: serial vs loky processes vs a Dask LocalCluster with 1 and 2 workers.

Usage (from the project root)::

    python benchmarks/bench_parallel.py                       # every registered job
    python benchmarks/bench_parallel.py --job refit --items 8

The job is a parameter: :data:`JOBS` maps a name to a builder returning
``(func, items)`` for :func:`audit_core.runs.parallel.map_batches`. An audit adds
its own batch job by adding one entry (e.g. ``"certificates"`` building
certificate chunks from a trained workspace). Each configuration also checks
that its results equal the serial ones. Cluster start-up is timed separately
from the work.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.models.batch_jobs import BootstrapChunk, RefitItem, bootstrap_auroc_job, chunk_seeds, refit_job  # noqa: E402
from audit_core.runs.parallel import local_cluster, map_batches  # noqa: E402

JobBuilder = Callable[[int], tuple[Callable[[Any], Any], list[Any]]]


def bootstrap_job(n_items: int) -> tuple[Callable, list]:
    """Bootstrap AUROC on 20,000 held-out rows, 25 replicates per item."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 20_000)
    score = y + rng.normal(size=20_000)
    return bootstrap_auroc_job, [BootstrapChunk(y, score, s) for s in chunk_seeds(25 * n_items, seed=1, chunk_size=25)]


def refit_job_items(n_items: int) -> tuple[Callable, list]:
    """Refits by seed: a random forest on the loan sample's source rows (one refit per item)."""
    from audit_core.runs.config import load_data, parse_config
    from audit_core.models.training import split_holdout

    cfg = parse_config({"data": {"sample": "loan_synthetic"}, "model": {"kind": "random_forest"}, "audits": [{"kind": "model"}]})
    ds = load_data(cfg, base_dir=Path.cwd()).dataset
    train, test = split_holdout(ds, seed=0)
    X = ds.frame.loc[:, list(ds.features)]
    y = ds.primary.y
    items = [
        RefitItem(X_train=X.iloc[train], y_train=y[train], X_test=X.iloc[test], y_test=y[test], numeric=ds.numeric,
                  categorical=ds.categorical, missing_indicators=False, kind="random_forest", seed=s,
                  params={})
        for s in range(n_items)
    ]
    return refit_job, items


def certificate_job_items(n_items: int, *, cases_per_item: int = 25) -> tuple[Callable, list]:
    """Certificate chunks: logistic regression on the loan sample, 25 held-out cases per item (K=5, 3 families, R=10)."""
    from audit_core.runs.config import load_data, parse_config
    from audit_core.fragility.engine import FragilityConfig, certificate_chunks, certify_chunk_job, column_scale, protocol_for
    from audit_core.models.zoo import ModelSpec
    from audit_core.models.training import train_workspace

    cfg = parse_config({"data": {"sample": "loan_synthetic"}, "model": {"kind": "logistic_regression"},
                        "audits": [{"kind": "model"}]})
    data = load_data(cfg, base_dir=Path.cwd())
    ws = train_workspace(data.dataset, spec=ModelSpec(kind="logistic_regression", seed=0), raw_groups=data.raw_groups)
    frame = ws.dataset.frame
    X = ws.model.transform(frame.iloc[ws.test_index[: n_items * cases_per_item]])
    scale = column_scale(ws.model.transform(frame.iloc[ws.train_index]))
    proto = protocol_for(ws.grouping, baseline=ws.baseline, scale=scale, baseline_kind=ws.baseline_kind,
                         config=FragilityConfig())
    return certify_chunk_job, certificate_chunks(ws.model, X, proto, step=cases_per_item)


#: job name -> builder(n_items) -> (func, items). Add audit jobs here.
JOBS: dict[str, JobBuilder] = {"bootstrap": bootstrap_job, "refit": refit_job_items, "certificates": certificate_job_items}


def _equal(x: Any, y: Any) -> bool:
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_equal(x[k], y[k]) for k in x)
    return np.array_equal(np.asarray(x), np.asarray(y))


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))


def bench(name: str, n_items: int, repeat: int) -> None:
    func, items = JOBS[name](n_items)
    print(f"job={name} items={len(items)} (best of {repeat})")

    def timed(**kw: Any) -> tuple[float, list]:
        best, out = float("inf"), []
        for _ in range(repeat):
            t = time.perf_counter()
            out = map_batches(func, items, **kw)
            best = min(best, time.perf_counter() - t)
        return best, out

    base, ref = timed(backend="serial")
    print(f"  serial            {base:8.2f} s  {len(items) / base:8.2f} items/s  x1.00")
    t, out = timed(backend="processes", n_jobs=2)
    print(f"  loky processes=2  {t:8.2f} s  {len(items) / t:8.2f} items/s  x{base / t:.2f}  identical={_same(ref, out)}")
    for workers in (1, 2):
        start = time.perf_counter()
        with local_cluster(workers):
            up = time.perf_counter() - start
            t, out = timed(backend="dask")
        print(f"  dask workers={workers}    {t:8.2f} s  {len(items) / t:8.2f} items/s  x{base / t:.2f}  "
              f"identical={_same(ref, out)}  (cluster start {up:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--job", choices=sorted(JOBS), action="append")
    p.add_argument("--items", type=int, default=16)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args(argv)
    for name in args.job or list(JOBS):
        bench(name, args.items, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
