"""Peak memory of a large certification: 1,000,000 cases × 30 groups, in a fresh subprocess.

Run: ``python benchmarks/bench_fragility_memory.py`` (defaults: 1,000,000 cases, logistic regression on
the linear path, float64 curves). Options: ``--cases N``, ``--engine auto|distinct|generic``,
``--curves float64|float32``.

The child process builds 1,000,000 synthetic cases (30 features, one per group), fits a logistic
regression on 20,000 training rows, certifies every case at ``K = 5`` and the default protocol, and
prints its peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, which includes Python, NumPy,
scikit-learn, the 240 MB input matrix and the outputs) and the certification's CPU time. Target: < 2 GB.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_fragility import memory  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1_000_000)
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--curves", default="float64", choices=("float64", "float32"))
    args = ap.parse_args()
    print(memory(args.cases, args.engine, args.curves), flush=True)


if __name__ == "__main__":
    main()
