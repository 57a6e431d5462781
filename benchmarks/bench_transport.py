"""Transport protocol cost versus bare model fits (SPEC §2 speed check).

Run from the project root::

    python benchmarks/bench_transport.py [--stresses]

Prints, in one run:
1. the whole protocol (LR, Platt, 10 refits, 500 bootstraps) on 100,000
   source and 75,000 target synthetic rows;
2. the same 10 bare fits + predict_proba calls (same preprocessing, same
   train partitions, predictions on the ID test and the target rows);
3. the protocol's cost beyond the bare fits, and peak memory (the process's
   max RSS right after the protocol). ``--tracemalloc`` also reports the
   tracemalloc peak of Python allocations. Tracing slows allocation-heavy
   code (pandas, scikit-learn) inside the protocol but not the bare fits,
   which run after it, so timings from such a run are not comparable.

``--floor`` also times, alone, the minimum work of an exact record-level
stratified bootstrap of this size: drawing the resampling counts, putting them
in each refit's score order, and one cumulative-sum pass (needed for AUROC).

``--stresses`` also runs stage 6 (degradation, capped at 20,000 rows per test
set) and reports it separately.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.models.zoo import ModelSpec, train_model  # noqa: E402
from audit_core.transport import TransportAudit, TransportConfig  # noqa: E402
from audit_core.transport.splits import PARTITIONS  # noqa: E402


def synthetic(n: int, *, shift: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(shift * 0.3, 1.0, size=(n, 10))
    cat_a = rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1] if shift == 0 else [0.25, 0.25, 0.25, 0.25])
    cat_b = rng.choice(["u", "v", "w"], n)
    logit = X[:, :5] @ np.array([1.0, -0.8, 0.6, 0.4, -0.3]) + (cat_a == "a") * 0.5 - 1.0 + shift * 0.4
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    df["cat_a"], df["cat_b"], df["y"] = cat_a, cat_b, y
    return df


def floor(audit, B: int, t_bare: float) -> None:
    """Time the irreducible per-replicate passes of the exact bootstrap, alone."""
    from threadpoolctl import threadpool_limits

    from audit_core.transport.bootstrap import stratified_counts

    c = audit.config
    y_ood = audit._ytgt[c.primary_target]
    ys = audit._ysrc[c.primary_target]
    orders = []
    for r in range(c.n_refits):
        pipe = audit._pipes[(r, c.models[0])]
        orders.append((np.argsort(pipe["raw"]["id_test"], kind="stable"), np.argsort(pipe["raw"]["ood"], kind="stable")))
    t_counts = t_gather = t_cumsum = 0.0
    n_id = 0
    with threadpool_limits(1, user_api="blas"):
        for ci, start in enumerate(range(0, B, c.bootstrap_chunk)):
            b = min(c.bootstrap_chunk, B - start)
            t = time.perf_counter()
            cood = stratified_counts(y_ood, b, np.random.default_rng([1, ci, 10**6]))
            t_counts += time.perf_counter() - t
            for r in range(c.n_refits):
                idt = audit._source_rows(r, "id_test")
                n_id = len(idt)
                t = time.perf_counter()
                cid = stratified_counts(ys[idt], b, np.random.default_rng([1, ci, r]))
                t_counts += time.perf_counter() - t
                t = time.perf_counter()
                w_id, w_ood = cid[:, orders[r][0]], cood[:, orders[r][1]]
                t_gather += time.perf_counter() - t
                t = time.perf_counter()
                np.cumsum(w_id, axis=1)
                np.cumsum(w_ood, axis=1)
                t_cumsum += time.perf_counter() - t
    tot = t_counts + t_gather + t_cumsum
    print(f"floor of the exact bootstrap ({B} replicates x {c.n_refits} refits, {n_id} ID + {len(y_ood)} OOD records): "
          f"counts {t_counts:.2f} s, score-order gather {t_gather:.2f} s, one cumsum pass {t_cumsum:.2f} s; "
          f"total {tot:.2f} s = {100 * tot / t_bare:.0f}% of the bare fits")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stresses", action="store_true")
    ap.add_argument("--refits", type=int, default=10)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--floor", action="store_true")
    ap.add_argument("--tracemalloc", action="store_true")
    args = ap.parse_args()
    src, tgt = synthetic(100_000, shift=0.0, seed=1), synthetic(75_000, shift=1.0, seed=2)
    numeric = tuple(f"x{i}" for i in range(10))
    categorical = ("cat_a", "cat_b")
    cfg = TransportConfig(targets=({"kind": "class", "name": "y", "column": "y", "positive": 1},), numeric=numeric,
                          categorical=categorical, models=("logistic_regression",), mappings=("platt",),
                          n_refits=args.refits, n_bootstrap=args.bootstrap, stresses=())
    if args.tracemalloc:
        tracemalloc.start()
    t0 = time.perf_counter()
    audit = TransportAudit(cfg)
    stage_times = {}
    audit.declare(src, tgt)
    for stage in ("split", "fit", "evaluate", "transport", "classify", "stress", "heterogeneity"):
        t = time.perf_counter()
        getattr(audit, stage)()
        stage_times[stage] = time.perf_counter() - t
    res = audit.result()
    t_protocol = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.tracemalloc:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # the same 10 bare fits + predict_proba on the same partitions
    t0 = time.perf_counter()
    for r in range(cfg.n_refits):
        tr = np.flatnonzero(audit._parts[r] == PARTITIONS.index("train"))
        fm = train_model(src.iloc[tr], src["y"].to_numpy()[tr], spec=ModelSpec(kind="logistic_regression", seed=r),
                         numeric=numeric, categorical=categorical)
        rest = np.flatnonzero(audit._parts[r] != PARTITIONS.index("train"))
        fm.predict_proba(src.iloc[rest])
        fm.predict_proba(tgt)
    t_bare = time.perf_counter() - t0
    extra = t_protocol - t_bare
    print(f"protocol (LR, Platt, {cfg.n_refits} refits, {cfg.n_bootstrap} bootstraps, 100000 source / 75000 target): "
          f"{t_protocol:.2f} s; result rows {len(res.table)}")
    print(f"bare {cfg.n_refits} x (fit + predict_proba): {t_bare:.2f} s")
    print(f"cost beyond bare fits: {extra:.2f} s = {100 * extra / t_bare:.0f}% of the bare fits (goal <= 50%)")
    print("stage seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in stage_times.items()))
    print(f"peak memory: max RSS of the process after the protocol {rss:.0f} MiB"
          + (f"; peak traced Python allocations {peak / 2**20:.0f} MiB (timings inflated by tracing)"
             if args.tracemalloc else ""))
    if args.floor:
        floor(audit, args.bootstrap, t_bare)
    if args.stresses:
        cfg2 = TransportConfig(**{**{f: getattr(cfg, f) for f in cfg.__dataclass_fields__}, "stresses": ("degradation",)})
        t0 = time.perf_counter()
        TransportAudit(cfg2).run(src, tgt)
        print(f"protocol with degradation stress (J={cfg2.n_random_sets}, cap {cfg2.stress_max_rows} rows): "
              f"{time.perf_counter() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
