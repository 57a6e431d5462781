"""Smooth ECE against relplot's ``smECE`` (the authors' package), CPU time alternated in one run.

Run: ``python benchmarks/smooth_ece_speed.py`` (needs the test requirements: relplot is a test-only
oracle). Prints, for 2,000, 20,000 and 200,000 seeded records, the median CPU time of each over
``--repeats`` alternations (warm: one call of each before timing), the ratio median [min–max], and both
values.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.metrics import smooth_ece  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    import relplot

    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    for n in (2_000, 20_000, 200_000):
        p = rng.beta(2, 5, n)
        y = (rng.random(n) < np.clip(p * 1.1, 0, 1)).astype(float)
        smooth_ece(y, p), relplot.smECE(p, y)  # warm
        ours, theirs = [], []
        for r in range(args.repeats):
            pair = [(ours, lambda: smooth_ece(y, p)), (theirs, lambda: relplot.smECE(p, y))]
            for sink, fn in pair if r % 2 == 0 else pair[::-1]:
                t = time.process_time()
                value = fn()
                sink.append((time.process_time() - t, value))
        a = np.array([t for t, _ in ours])
        b = np.array([t for t, _ in theirs])
        ratio = a / b
        print(f"n={n:,}: ours {np.median(a) * 1e3:.1f} ms, relplot {np.median(b) * 1e3:.1f} ms -> "
              f"{np.median(ratio):.2f}x [{ratio.min():.2f}-{ratio.max():.2f}]; "
              f"smECE ours {ours[-1][1]:.5f}, relplot {theirs[-1][1]:.5f}")


if __name__ == "__main__":
    main()
