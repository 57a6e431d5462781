"""Size the feature-shift stage by what it needs: domain-classifier folds and trees, statistics' row cap.

Run from the project root::

    python benchmarks/feature_shift_sizing.py [--repeats 1]

On real domain shifts from ``../shared/datasets`` (OULAD 2013 → 2014, pooled
small ACS states → PA and → GA, Cleveland → the other heart sites) and the
synthetic benchmark shift (``bench_transport.py``), prints for each
``(folds, trees)`` of the joint domain classifier its pooled AUROC and the
largest per-feature AUROC change against the previous default (5 folds, 50
trees), with the CPU of :func:`~audit_core.transport.shift_link.feature_shift`
(``time.process_time``, one thread); then, for the statistics' row cap per
domain, the largest PSI change and whether the PSI ranking's top 5 moves.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_transport as bt  # noqa: E402
import transport_real_data as trd  # noqa: E402

from audit_core.transport.shift_link import feature_shift  # noqa: E402

SIZES = ((5, 50), (3, 50), (5, 30), (3, 30), (3, 20))
CAPS = (None, 50_000, 20_000)


def shifts():
    df, _ = trd.load_oulad(60)
    yield ("OULAD 2013 → 2014", df[df["year"] == 2013].reset_index(drop=True),
           df[df["year"] == 2014].reset_index(drop=True), trd.OULAD_NUMERIC, trd.OULAD_CATEGORICAL)
    files = [trd.DATA / "acs_income_2018_folktables" / f"{st}_data.csv" for st in trd.ACS_SMALL]
    src = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    for st in ("pa", "ga"):
        tgt = pd.read_csv(trd.DATA / "acs_income_2018_folktables" / f"{st}_data.csv")
        for d in (src, tgt):
            for c in trd.ACS_CATEGORICAL:
                d[c] = d[c].astype(int).astype(str)
        yield f"ACS small states → {st.upper()}", src, tgt, trd.ACS_NUMERIC, trd.ACS_CATEGORICAL
    h, _ = trd.load_heart()
    yield ("heart Cleveland → other sites", h[h["site"] == "cleveland"].reset_index(drop=True),
           h[h["site"] != "cleveland"].reset_index(drop=True), trd.HEART_NUMERIC, trd.HEART_CATEGORICAL)
    yield ("synthetic benchmark (100k → 75k)", bt.synthetic(100_000, shift=0.0, seed=1),
           bt.synthetic(75_000, shift=1.0, seed=2), bt.NUMERIC, bt.CATEGORICAL)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--caps-only", action="store_true", help="only the statistics' row cap")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    print("| shift | rows (src / tgt) | folds × trees | joint AUROC | Δ joint | max |Δ| per-feature AUROC | CPU s |")
    print("|---|---|---|---|---|---|---|")
    caps = []
    with threadpool_limits(limits=1):
        for name, src, tgt, num, cat in shifts():
            base = None
            for k, trees in () if args.caps_only else SIZES:
                ts = []
                for _ in range(args.repeats):
                    t0 = time.process_time()
                    r = feature_shift(src, tgt, numeric=num, categorical=cat, n_folds=k, n_trees=trees,
                                      stat_max_rows=20_000)
                    ts.append(time.process_time() - t0)
                per = r.table.set_index("feature")["domain_auroc"]
                base = base or (r.domain_auroc, per)
                print(f"| {name} | {len(src):,} / {len(tgt):,} | {k} × {trees} | {r.domain_auroc:.4f} | "
                      f"{r.domain_auroc - base[0]:+.4f} | {(per - base[1]).abs().max():.4f} | {np.median(ts):.2f} |",
                      flush=True)
            full = None
            for cap in CAPS:
                r = feature_shift(src, tgt, numeric=num, categorical=cat, classifier=False, stat_max_rows=cap)
                t = r.table.set_index("feature")
                full = full if full is not None else (t, r.table["feature"].head(5).tolist())
                caps.append(dict(shift=name, cap=cap or "all", rows=r.options["n_stat_rows"],
                                 max_abs_dpsi=float((t["psi"] - full[0]["psi"]).abs().max()),
                                 max_rel_dpsi=float(((t["psi"] - full[0]["psi"]).abs()
                                                     / full[0]["psi"].clip(lower=1e-3)).max()),
                                 max_dks=float((t["statistic"] - full[0]["statistic"]).where(t["test"] == "ks")
                                               .abs().max()),
                                 top5_same=r.table["feature"].head(5).tolist() == full[1]))
    print()
    print(trd.markdown(pd.DataFrame(caps)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
