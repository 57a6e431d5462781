"""Intake benchmark: ``read_table`` against ``pandas.read_csv`` on the same bytes (issue 25, goal 1).

Three generated tables (seeded, so every run reads the same bytes) resemble
the project's mixed tables: an identifier, a key with leading zeros, whole
and decimal numbers, numbers with the missing code ``?``, categorical text
with padding spaces (as UCI Adult ships it), blank cells and booleans.

* ``100k`` and ``500k`` rows (about 200 bytes a row);
* ``10000x2``: 10,000 columns, a header and two data rows.

CPU time (``time.process_time``): for each table, ``read_table`` (A) and
``pandas.read_csv`` (B) run alternately in this process, ``--repeats`` times;
the table gives each side's median and the ratio A/B of each pair, median and
min-max. Peak memory: each reader runs once more in a fresh interpreter that
loads the bytes from a file, reads them and reports its peak resident set
(``VmHWM``, Linux) beside its resident set before reading (the interpreter with
pandas and ``audit_core`` imported and a 2-row table read once, so that lazy
imports count as the interpreter); the peak includes the file's bytes. The goal is peak <= 3 x file size +
interpreter. ``--root`` measures another checkout's ``read_table`` (e.g. the
code before a change, extracted with ``git worktree add``)::

    python benchmarks/bench_intake.py                 # 100k, 500k, 10000x2
    python benchmarks/bench_intake.py --tables 100k --repeats 5
    python benchmarks/bench_intake.py --root /tmp/old
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
TABLES = ("100k", "500k", "10000x2")


def mixed_bytes(n_rows: int, seed: int = 0) -> bytes:
    """A mixed CSV of ``n_rows`` rows, about 200 bytes each (26 columns), the same bytes for the same seed."""
    import pandas as pd

    rng = np.random.default_rng(seed)

    def pick(options: list[str], p: list[float] | None = None) -> np.ndarray:
        return np.asarray(options, dtype=object)[rng.choice(len(options), size=n_rows, p=p)]

    def with_code(values: np.ndarray, code: str, share: float) -> np.ndarray:
        out = values.astype(object)
        out[rng.random(n_rows) < share] = code
        return out

    cols = {
        "id": np.arange(1, n_rows + 1).astype(str),
        "zip": np.char.zfill(rng.integers(0, 99_999, n_rows).astype(str), 5),
        "age": rng.integers(17, 91, n_rows).astype(str),
        "workclass": pick([" Private", " Self-emp-not-inc", " Local-gov", " State-gov", " ?"]),
        "fnlwgt": rng.integers(10_000, 1_500_000, n_rows).astype(str),
        "education": pick([" Bachelors", " HS-grad", " 11th", " Masters", " Some-college", " Doctorate"]),
        "income": with_code(np.round(rng.lognormal(10, 1, n_rows), 2).astype(str), "?", 0.02),
        "hours": with_code(rng.integers(1, 99, n_rows).astype(str), "NA", 0.01),
        "score": np.round(rng.normal(0, 1, n_rows), 6).astype(str),
        "rate": np.round(rng.random(n_rows), 4).astype(str),
        "region": pick(["north", "south", "east", "west", "NA"], [0.3, 0.3, 0.2, 0.19, 0.01]),
        "segment": pick(["retail", "corporate", "public", "", "-"], [0.4, 0.3, 0.2, 0.08, 0.02]),
        "flag": pick(["True", "False"]),
        "count": rng.poisson(3, n_rows).astype(str),
        "blank_some": with_code(rng.integers(0, 1000, n_rows).astype(str), "", 0.1),
        "city": pick([f"City {i:03d}" for i in range(300)]),
        "note": pick(["ok", "late payment", "n/a", "review", "closed account"]),
        "balance": np.round(rng.normal(1000, 500, n_rows), 2).astype(str),
        "ratio": np.round(rng.random(n_rows) * 100, 3).astype(str),
        "label": pick(["<=50K", ">50K"]),
        "occupation": pick([" Tech-support", " Craft-repair", " Other-service", " Sales", " Exec-managerial"]),
        "lat": np.round(rng.uniform(-90, 90, n_rows), 6).astype(str),
        "lon": np.round(rng.uniform(-180, 180, n_rows), 6).astype(str),
        "ref": np.char.add("C-", rng.integers(0, 10**8, n_rows).astype(str)),
        "day": np.char.add("2021-03-", np.char.zfill(rng.integers(1, 29, n_rows).astype(str), 2)),
        "comment": pick([f"customer comment number {i}" for i in range(2000)]),
    }
    buf = io.StringIO()
    pd.DataFrame(cols).to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode()


def wide_bytes(n_columns: int = 10_000, seed: int = 0) -> bytes:
    """A header and two data rows of ``n_columns`` columns, mixed like :func:`mixed_bytes`."""
    rng = np.random.default_rng(seed)
    kinds = ["num", "text", "code", "zero", "dec"]
    head, rows = [], [[], []]
    for j in range(n_columns):
        kind = kinds[j % len(kinds)]
        head.append(f"c{j}_{kind}")
        for row in rows:
            v = int(rng.integers(0, 1000))
            row.append({"num": str(v), "text": f" t{v % 7}", "code": "?" if v % 2 else str(v),
                        "zero": f"{v:05d}", "dec": f"{v / 7:.3f}"}[kind])
    return ("\n".join(",".join(r) for r in [head, *rows]) + "\n").encode()


def table_bytes(which: str, seed: int = 0) -> bytes:
    if which == "10000x2":
        return wide_bytes(seed=seed)
    return mixed_bytes({"100k": 100_000, "500k": 500_000}[which], seed=seed)


CHILD = textwrap.dedent("""
    import io, json, sys
    from pathlib import Path
    root, reader, path = sys.argv[1:4]
    sys.path.insert(0, root)
    import pandas as pd
    from audit_core.data.intake import read_table
    def status_mib(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    warm = b"id,zip,x,t\\n1,00012,1.5, a\\n2,00034,?,b\\n"  # the reader's lazy imports belong to the interpreter
    read_table(warm, name="warm.csv") if reader == "read_table" else pd.read_csv(io.BytesIO(warm))
    base = status_mib("VmRSS")
    data = Path(path).read_bytes()
    if reader == "read_table":
        shape = read_table(data, name=Path(path).name).frame.shape
    else:
        shape = pd.read_csv(io.BytesIO(data)).shape
    peak = status_mib("VmHWM")  # this process's own peak (ru_maxrss would count the parent's pages at fork)
    print(json.dumps({"base_mib": base, "peak_mib": peak, "shape": list(shape)}))
""")


def child_peak(root: Path, reader: str, path: Path) -> dict:
    """Peak and base resident MiB of one read in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), reader, str(path)], capture_output=True,
                          text=True, cwd=root, check=False, env={**os.environ, "PYTHONPATH": str(root)})
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{reader} child failed: {done.stderr.strip()[-500:]}")
    return json.loads(lines[-1])


def _spread(xs: list[float], fmt: str = "{:.2f}") -> str:
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}-{fmt.format(max(xs))}]"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", nargs="*", default=list(TABLES), choices=TABLES)
    ap.add_argument("--repeats", type=int, default=3, help="alternated runs of each reader per table")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout whose read_table is measured")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory children")
    ap.add_argument("--no-cpu", action="store_true", help="only the peak-memory children")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    import pandas as pd

    import audit_core
    from audit_core.data.intake import read_table

    print(f"code: {Path(audit_core.__file__).parents[1]} · pandas {pd.__version__} · repeats {args.repeats}")
    print("| table | MiB | read_table CPU s | read_csv CPU s | ratio median [min-max] "
          "| read_table peak - base MiB (× file) | read_csv peak - base MiB (× file) | base MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for which in args.tables:
            data = table_bytes(which, args.seed)
            size = len(data) / MIB
            ours, theirs, ratios = [], [], []
            for _ in range(0 if args.no_cpu else args.repeats):  # A and B alternated
                t0 = time.process_time()
                read_table(data, name=f"{which}.csv")
                a = time.process_time() - t0
                t0 = time.process_time()
                pd.read_csv(io.BytesIO(data))
                b = time.process_time() - t0
                ours.append(a)
                theirs.append(b)
                ratios.append(a / b)
            mem = "| – | – | – |"
            if not args.no_memory:
                path = Path(tmp) / f"{which}.csv"
                path.write_bytes(data)
                m = {r: child_peak(root, r, path) for r in ("read_table", "read_csv")}
                extra = {r: m[r]["peak_mib"] - m[r]["base_mib"] for r in m}
                mem = (f"| {extra['read_table']:.0f} ({extra['read_table'] / size:.1f}×) "
                       f"| {extra['read_csv']:.0f} ({extra['read_csv'] / size:.1f}×) | {m['read_table']['base_mib']:.0f} |")
            cpu = (f"{_spread(ours, '{:.3f}')} | {_spread(theirs, '{:.3f}')} | {_spread(ratios, '{:.1f}')}"
                   if ratios else "– | – | –")
            print(f"| {which} | {size:.1f} | {cpu} {mem}", flush=True)
            del data


if __name__ == "__main__":
    main()
