"""Receipts benchmark: generate + certify ~20,000 cases and ~7,000 controls, measure pruning, train the baseline.

Run:  python benchmarks/bench_receipts.py [--n-cases 20000] [--seed 0] [--no-baseline]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.receipts import evaluate_baseline, execute_state_cube, generate_benchmark  # noqa: E402
from audit_core.receipts.adjudicate import Judge  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n-cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()

    t0 = time.perf_counter()
    bench = generate_benchmark(n_cases=args.n_cases, seed=args.seed)
    t_gen = time.perf_counter() - t0
    df = bench.to_frame()
    base, ctl = df[df.control == ""], df[df.control != ""]
    print(f"generated + certified (full 2^3 cubes): {len(base)} cases + {len(ctl)} controls "
          f"in {t_gen:.1f} s; control relations violated: {len(bench.control_violations)}")
    print(f"verdict changed: {base.changed.mean():.3f} of cases; mutation mix: "
          + ", ".join(f"{k}={v}" for k, v in base.mutation.value_counts().items()))

    # Re-certify every cube in pruned mode with a fresh adjudicator and count the real calls.
    t0 = time.perf_counter()
    pruned = full = 0
    for c in bench.cases:
        r = execute_state_cube(c.old, c.new, mode="pruned", sources=c.source_order, judge=Judge()).cube
        assert set(r.receipt) == set(c.cube.receipt)
        pruned += r.calls
        full += 2 ** r.k
    t_pr = time.perf_counter() - t0
    print(f"pruned certification of all {len(bench.cases)} cubes: {t_pr:.1f} s; adjudicator calls "
          f"{pruned} vs {full} for all 2^k cells -> {1 - pruned / full:.1%} saved "
          f"(interior: {pruned - 2 * len(bench.cases)} vs {full - 2 * len(bench.cases)}, "
          f"{1 - (pruned - 2 * len(bench.cases)) / (full - 2 * len(bench.cases)):.1%} saved)")
    ch = df[df.changed]
    print(f"on changed cases only: mean pruned calls {ch.calls_pruned.mean():.2f} of 8")

    if not args.no_baseline:
        t0 = time.perf_counter()
        rep = evaluate_baseline(bench, seed=args.seed)
        print(f"learned baseline trained on {rep.n_train} single-source/no-op train cases and scored "
              f"in {time.perf_counter() - t0:.1f} s")
        print(rep.to_markdown())


if __name__ == "__main__":
    main()
