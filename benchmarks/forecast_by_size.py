"""The forecast goals split by source size, read from the rows ``bench_forecast.py`` saved (a post-hoc reading).

Run after ``python benchmarks/bench_forecast.py`` and ``--set confirm``::

    python benchmarks/forecast_by_size.py

Prints the goals table of :func:`bench_forecast.goals` for the shifts whose source has at least ``--min-source``
records (default 1,000: all but the heart sites and statlog), for each set, and for all shifts of both sets pooled.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_forecast import OUT, goals, markdown, summarise  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-source", type=int, default=1000)
    args = ap.parse_args()
    rows, small = {}, set()
    for name in ("declared", "confirm"):
        rows[name] = pd.read_csv(OUT / name / "rows.csv")
        infos = pd.read_csv(OUT / name / "shifts.csv")
        small |= set(infos.loc[infos["n_source"] < args.min_source, "shift"])
    print(f"Shifts with fewer than {args.min_source:,} source records: {', '.join(sorted(small))}\n")
    for name, r in rows.items():
        print(f"## {name}, sources of at least {args.min_source:,} records\n")
        print(markdown(goals(summarise(r[~r["shift"].isin(small)]), None)) + "\n")
    print("## all shifts of both sets\n")
    print(markdown(goals(summarise(pd.concat(rows.values(), ignore_index=True)), None)))


if __name__ == "__main__":
    main()
