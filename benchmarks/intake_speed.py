"""CPU time of ``read_table`` on a 100,000-row CSV beside ``pandas.read_csv`` on the same bytes, in one run.

The rows are UCI Adult's (``../shared/datasets/uci_adult/adult.data``, repeated
to 100,000 rows, a header added): 15 columns of numbers and labels, 11.6 MB.
Each reader runs five times in this process; the best CPU time counts.
``--root`` measures another checkout's ``read_table`` (e.g. the code before a
change, extracted with ``git archive``) in a fresh interpreter::

    python benchmarks/intake_speed.py
    python benchmarks/intake_speed.py --root /tmp/old
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "datasets" / "uci_adult" / "adult.data"
HEADER = (b"age,workclass,fnlwgt,education,education_num,marital,occupation,relationship,race,sex,gain,loss,"
          b"hours,country,income")
ROWS = 100_000


def table_bytes() -> bytes:
    """UCI Adult's rows repeated to :data:`ROWS` rows, under a header."""
    lines = [line for line in ADULT.read_bytes().splitlines() if line.strip()]
    return b"\n".join([HEADER] + (lines * (ROWS // len(lines) + 1))[:ROWS]) + b"\n"


def best_cpu(call, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        call()
        times.append(time.process_time() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=None, help="checkout whose read_table is measured")
    args = ap.parse_args(argv)
    if args.root is not None:
        # This script again, with the other checkout first on the path (PYTHONPATH precedes site-packages).
        subprocess.run([sys.executable, __file__], cwd=args.root, check=True,
                       env={**os.environ, "PYTHONPATH": str(args.root.resolve())})
        return
    import pandas as pd

    from audit_core.data.intake import read_table

    data = table_bytes()
    ours = best_cpu(lambda: read_table(data, name="adult_100k.csv"))
    theirs = best_cpu(lambda: pd.read_csv(io.BytesIO(data)))
    import audit_core

    print(f"code: {Path(audit_core.__file__).parents[1]} · {len(data) / 2**20:.1f} MB, {ROWS:,} rows")
    print(f"read_table {ours:.3f} s CPU · pandas.read_csv {theirs:.3f} s CPU · ratio {ours / theirs:.1f}")


if __name__ == "__main__":
    main()
