"""Receipts benchmark: generate and certify the balanced benchmark, show its balance, train and score the baselines.

Prints, in order: the generation time at the requested size (default 20,000
cases plus the locked-test controls) with the candidates executed and the
acceptance rate; the change share of every stratum x split beside its quota;
the receipt-family mix of the changing cases; the cost of steering (balanced
against natural generation, alternated, CPU time medians and min-max); a
pruned re-certification of every cube with fresh adjudicators; the baseline
table (learned model, always no-change, majority family) and the findings on
"prediction is not certification".

Run:  python benchmarks/bench_receipts.py [--n-cases 20000] [--seed 0] [--ratio-cases 4000] [--repeats 3]
                                          [--no-ratio] [--no-recertify] [--no-baseline] [--full-table]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from audit_core.native_threads import pin_blas_threads  # noqa: E402
from audit_core.receipts import execute_state_cube, generate_benchmark  # noqa: E402
from audit_core.receipts.adjudicate import Judge  # noqa: E402
from audit_core.receipts.baseline import evaluate_baseline  # noqa: E402


def _fmt(df: pd.DataFrame) -> str:
    return df.to_string(index=False, float_format=lambda v: f"{v:.3f}")


def _cpu(**kw) -> tuple[float, object]:
    c0 = time.process_time()
    b = generate_benchmark(**kw)
    return time.process_time() - c0, b


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s [{min(xs):.2f}-{max(xs):.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ratio-cases", type=int, default=4000, help="size of the balanced-vs-natural timing runs")
    ap.add_argument("--repeats", type=int, default=3, help="alternated runs of each arm in the timing comparison")
    ap.add_argument("--no-ratio", action="store_true")
    ap.add_argument("--no-recertify", action="store_true")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--full-table", action="store_true", help="print every column of the baseline table")
    args = ap.parse_args()
    print(f"BLAS threads: {pin_blas_threads()} (AUDIT_BLAS_THREADS)")

    t0, c0 = time.perf_counter(), time.process_time()
    bench = generate_benchmark(n_cases=args.n_cases, seed=args.seed)
    t_gen, c_gen = time.perf_counter() - t0, time.process_time() - c0
    cfg, st = bench.config, bench.stats
    df = bench.to_frame()
    base, ctl = df[df.control == ""], df[df.control != ""]
    print(f"config: seed={cfg.seed} n_cases={cfg.n_cases} mutation_mix(noop,single,multi)={cfg.mutation_mix} "
          f"change_share={cfg.change_share} budget={cfg.budget} splits(units)={cfg.splits}")
    print(f"generated + certified (full 2^3 cubes): {len(base)} cases + {len(ctl)} controls in {t_gen:.1f} s wall, "
          f"{c_gen:.1f} s CPU; control relations violated: {len(bench.control_violations)}")
    print(f"steering: {st.candidates} candidate mutations executed for {st.accepted} single/multi cases -> "
          f"acceptance rate {st.acceptance_rate:.3f}; {st.swaps} target swaps, {st.redraws} worlds redrawn")
    bal = bench.balance_frame()
    worst = (bal.change_share - bal.target).abs().max()
    print(f"\nbalance (base cases; largest |change share - quota| over cells: {worst:.4f}):")
    print(_fmt(bal))
    print(f"overall: {base.changed.mean():.3f} of cases change the verdict; "
          f"no-ops {(base.mutation == 'noop').mean():.3f}")
    print("\nacceptance by stratum x mutation:")
    print(_fmt(bench.acceptance_frame()))
    print("\nreceipt-family mix of the changing cases:")
    print(_fmt(bench.difficulty_frame()))

    if not args.no_ratio and args.repeats > 0:
        bal_t, nat_t, nat_share = [], [], 0.0
        for _ in range(args.repeats):  # A and B alternated
            t, _b = _cpu(n_cases=args.ratio_cases, seed=args.seed)
            bal_t.append(t)
            t, nb = _cpu(n_cases=args.ratio_cases, seed=args.seed, change_share=None)
            nat_t.append(t)
            nat_share = float(nb.to_frame().query("control == ''").changed.mean())
        print(f"\ncost of steering at {args.ratio_cases} cases, {args.repeats} alternated runs (CPU): balanced "
              f"{_spread(bal_t)}, natural (change_share=None) {_spread(nat_t)} -> ratio "
              f"{statistics.median(bal_t) / statistics.median(nat_t):.2f}; the natural benchmark changes the "
              f"verdict in {nat_share:.3f} of cases")

    if not args.no_recertify:
        t0 = time.perf_counter()
        pruned = full = 0
        for c in bench.cases:
            r = execute_state_cube(c.old, c.new, mode="pruned", sources=c.source_order, judge=Judge()).cube
            if set(r.receipt) != set(c.cube.receipt):
                raise SystemExit(f"re-certification disagrees on {c.case_id}")
            pruned += r.calls
            full += 2 ** r.k
        n = len(bench.cases)
        print(f"\npruned re-certification of all {n} cubes (fresh adjudicators): {time.perf_counter() - t0:.1f} s; "
              f"adjudicator calls {pruned} vs {full} for all 2^k cells -> {1 - pruned / full:.1%} saved "
              f"(interior: {pruned - 2 * n} vs {full - 2 * n}, {1 - (pruned - 2 * n) / (full - 2 * n):.1%} saved)")
        print(f"on changed cases only: mean pruned calls {df[df.changed].calls_pruned.mean():.2f} of 8")

    if not args.no_baseline:
        t0 = time.perf_counter()
        rep = evaluate_baseline(bench, seed=args.seed)
        sizes = rep.config["sizes"]
        print(f"\nbaselines trained on {rep.n_train} single-source/no-op train cases (multi-source held out) and "
              f"scored in {time.perf_counter() - t0:.1f} s; seed {args.seed}; set sizes: "
              + ", ".join(f"{k}={v}" for k, v in sizes.items()))
        print(f"interval: {rep.config['interval']} ({rep.config['n_boot']} resamples, level {rep.config['level']})")
        print(rep.to_markdown(compact=not args.full_table))
        print("\nprediction is not certification:")
        print(rep.findings_markdown())


if __name__ == "__main__":
    main()
