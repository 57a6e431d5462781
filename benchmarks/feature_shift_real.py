"""Feature shift on OULAD 2013 → 2014 (the Transport real-data split) and its CPU cost.

Usage: ``python benchmarks/feature_shift_real.py [--landmark 60] [--repeats 3]``

Prints the ranked shift table (Markdown) of ``docs/transport.md`` and the
CPU time (``time.process_time``) of :func:`feature_shift` with and without the
domain classifiers, alternated, medians and min–max over the repeats.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from audit_core.transport.shift_link import feature_shift  # noqa: E402
from transport_real_data import OULAD_CATEGORICAL, OULAD_NUMERIC, load_oulad  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--landmark", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    df, _ = load_oulad(args.landmark)
    src = df[df["year"] == 2013].reset_index(drop=True)
    tgt = df[df["year"] == 2014].reset_index(drop=True)
    kw = dict(numeric=OULAD_NUMERIC, categorical=OULAD_CATEGORICAL, seed=0)
    times = {"with classifiers": [], "statistics only": []}
    res = None
    for _ in range(args.repeats):
        for label, clf in (("with classifiers", True), ("statistics only", False)):
            t0 = time.process_time()
            r = feature_shift(src, tgt, classifier=clf, **kw)
            times[label].append(time.process_time() - t0)
            res = r if clf else res
    print(f"source {len(src):,} registrations, target {len(tgt):,}; {len(OULAD_NUMERIC)} numeric and "
          f"{len(OULAD_CATEGORICAL)} categorical features")
    for label, ts in times.items():
        print(f"{label}: CPU median {np.median(ts):.2f} s (min {min(ts):.2f}, max {max(ts):.2f}) over {len(ts)}")
    print(f"joint domain-classifier AUROC {res.domain_auroc:.3f} (folds {', '.join(f'{a:.3f}' for a in res.fold_auroc)};"
          f" {res.n_classifier_rows:,} records)")
    t = res.table
    print("\n| rank | feature | kind | PSI | test | statistic | p | W / SD | domain AUROC | missing src / tgt |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in t.head(12).to_dict("records"):
        w = "" if not np.isfinite(r["wasserstein_sd"]) else f"{r['wasserstein_sd']:.3f}"
        print(f"| {r['rank']} | {r['feature']} | {r['kind']} | {r['psi']:.4f} | {r['test']} | {r['statistic']:.4g} | "
              f"{r['p_value']:.2g} | {w} | {r['domain_auroc']:.3f} | {r['missing_source']:.3f} / {r['missing_target']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
