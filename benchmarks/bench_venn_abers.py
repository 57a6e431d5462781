"""Venn-Abers cost: our hull-link precomputation against the venn-abers package and a refit per test score.

Run from the project root::

    python benchmarks/bench_venn_abers.py [--repeats 5] [--test 100000] [--cal 15000 100000]

For each calibration size, on seeded synthetic scores (beta-distributed, so
the test scores fall between and on calibration scores; ``--decimals`` rounds
them to make ties), it times in CPU seconds (``time.process_time``), A and B
alternated within one process (the order flips each repeat), medians with the
min–max over the repeats:

* **ours** — :func:`~audit_core.transport.venn_abers.fit_venn_abers` on the
  calibration scores, then ``interval`` and ``predict`` on ``--test`` scores;
* **peer** — ``venn_abers.VennAbers`` (1.5.4, test-only dependency) ``fit`` and
  ``predict_proba`` on the same scores; the largest difference of ``p0``,
  ``p1`` and ``p`` is printed beside it;
* **refit per test score** — two scikit-learn isotonic fits per test score on
  the calibration set plus that score (the definition), timed on
  ``--naive`` test scores and scaled to ``--test`` (it grows linearly in the
  number of test scores).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.transport.venn_abers import fit_venn_abers  # noqa: E402


def cpu(f):
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def summary(v) -> str:
    return f"{statistics.median(v):8.3f} s [{min(v):.3f}–{max(v):.3f}]"


def ours(sc, yc, st):
    va = fit_venn_abers(sc, yc)
    p0, p1 = va.interval(st)
    return p0, p1, va.predict(st)


def peer(sc, yc, st):
    from venn_abers import VennAbers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        va = VennAbers()
        va.fit(np.c_[1 - sc, sc], yc.astype(int))
        pp, p01 = va.predict_proba(np.c_[1 - st, st])
    return p01[:, 0], p01[:, 1], pp[:, 1]


def naive(sc, yc, st):
    from sklearn.isotonic import IsotonicRegression

    out = np.empty((2, len(st)))
    for i, s in enumerate(st):
        for lab in (0, 1):
            out[lab, i] = IsotonicRegression().fit(np.r_[sc, s], np.r_[yc, lab]).predict([s])[0]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--test", type=int, default=100_000)
    ap.add_argument("--cal", type=int, nargs="+", default=[15_000, 100_000])
    ap.add_argument("--naive", type=int, default=200)
    ap.add_argument("--decimals", type=int, default=None)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"test scores: {a.test:,}; repeats: {a.repeats}; CPU seconds, median [min–max]")
    for n in a.cal:
        sc = rng.beta(2, 5, n)
        st = rng.beta(2, 4, a.test)
        if a.decimals is not None:
            sc, st = np.round(sc, a.decimals), np.round(st, a.decimals)
        yc = (rng.uniform(size=n) < sc).astype(float)
        times = {"ours": [], "peer": []}
        res = {}
        for r in range(a.repeats):
            for name in (("ours", "peer") if r % 2 == 0 else ("peer", "ours")):
                t, res[name] = cpu(lambda: (ours if name == "ours" else peer)(sc, yc, st))
                times[name].append(t)
        gap = max(float(np.abs(x - y).max()) for x, y in zip(res["ours"], res["peer"]))
        t_naive, _ = cpu(lambda: naive(sc, yc, st[:a.naive]))
        per = t_naive / a.naive * a.test
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"calibration {n:>7,} ({len(np.unique(sc)):,} distinct scores)")
        print(f"  ours                 {summary(times['ours'])}")
        print(f"  venn-abers 1.5.4     {summary(times['peer'])}   ours ÷ peer {med['ours'] / med['peer']:.2f}×;"
              f" largest |difference| of p0, p1, p: {gap:.1e}")
        print(f"  refit per test score {per:8.1f} s (timed on {a.naive} scores, scaled)   "
              f"÷ ours {per / med['ours']:.0f}×")


if __name__ == "__main__":
    main()
