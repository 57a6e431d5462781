"""Peak memory of reading one table: the issue's gzip bombs, and the costliest shapes of text at the cap.

Each case is written to a file, then read by ``read_table`` (``read_tables``
for a stack) in a fresh interpreter with the caps set through the
``AUDIT_MAX_*`` variables. The child reports its resident memory before the
read (the file's bytes already loaded) and its peak during the read
(``VmHWM`` after resetting it through ``/proc/self/clear_refs``; Linux only),
the CPU time and the outcome (rows × columns, or the refusal's code).
``--root`` points the child at another checkout, so the code before a
change is measured on the same files in the same run::

    python benchmarks/intake_memory.py                      # the issue's gzip cases at the default caps
    python benchmarks/intake_memory.py --root /tmp/old      # the same, with another checkout's code
    python benchmarks/intake_memory.py --shapes --upload-mb 16   # every shape at a 16 MB cap

``tests/test_intake_bounded.py`` runs the shapes at a small cap and checks the
declared bound (``audit_core.limits.INTAKE_MEMORY_PER_UPLOAD``).
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024

#: The issue's gzip uploads: expanded size in MB at the default caps (packed 0.26, 1.05, ~4.4 and ~9 MB).
ISSUE_GZIP_MB = (60, 240, 1000, 2000)


def _repeat(head: str, block: Callable[[], str], size: int) -> bytes:
    out, n = [head], len(head)
    while n < size:
        chunk = block()
        out.append(chunk)
        n += len(chunk)
    data = "".join(out).encode()[:size]
    return data[: data.rfind(b"\n") + 1]  # whole lines, at most ``size`` bytes


def _block_bomb(size: int) -> bytes:
    """The issue's body: a 50-row block of ``age,grp,y`` repeated (gzip packs it about 229:1)."""
    rnd = random.Random(0)
    body = "".join(f"{rnd.randint(18, 90)},{rnd.choice('abc')},{rnd.randint(0, 1)}\n" for _ in range(50))
    return _repeat("age,grp,y\n", lambda: body, size)


def _wide(cells: Callable[[random.Random], str], n_columns: int, rows: int = 200) -> Callable[[int], bytes]:
    def make(size: int) -> bytes:
        rnd = random.Random(1)
        head = ",".join(f"c{i}" for i in range(n_columns)) + "\n"
        body = "".join(",".join(cells(rnd) for _ in range(n_columns)) + "\n" for _ in range(rows))
        return _repeat(head, lambda: body, size)
    return make


def _unique(row: Callable[[random.Random, int], str], head: str) -> Callable[[int], bytes]:
    def make(size: int) -> bytes:
        rnd = random.Random(2)
        counter = iter(range(10**12))
        return _repeat(head, lambda: "".join(row(rnd, next(counter)) + "\n" for _ in range(1000)), size)
    return make


#: Shapes of delimited text, each made to ``size`` bytes: the costliest per byte for a parser that keeps
#: every cell (1-byte cells, many columns) next to the common ones.
SHAPES: dict[str, Callable[[int], bytes]] = {
    "issue block": _block_bomb,
    "1-char cells, 40 columns": _wide(lambda r: r.choice("01"), 40),
    "mostly empty cells, 40 columns": _wide(lambda r: r.choice(["", "", "", "1"]), 40),
    "one filled column of 40": _unique(lambda r, i: f"{i}" + "," * 39, ",".join(f"c{i}" for i in range(40)) + "\n"),
    "unique floats, 10 columns": _unique(lambda r, i: ",".join(f"{r.random():.6f}" for _ in range(10)),
                                         ",".join(f"f{i}" for i in range(10)) + "\n"),
    "unique text, 2 columns": _unique(lambda r, i: f"{i},{r.getrandbits(256):064x}", "id,note\n"),
    "quoted text with delimiters": _unique(lambda r, i: f'{i},"a, {r.randint(0, 99)}","x ""q"" {i % 7}"',
                                           "id,a,b\n"),
    "whitespace-separated": _wide(lambda r: r.choice(["1", "22", "333"]), 20, rows=200),
    "latin-1 text": _unique(lambda r, i: f"{i},{r.choice(['Zürich', 'Genève', 'Bern'])},{r.randint(0, 9)}",
                            "id,city,n\n"),
}


def shape_bytes(shape: str, size: int) -> bytes:
    """One shape made to ``size`` bytes (whitespace-separated: commas become spaces; latin-1: encoded so)."""
    data = SHAPES[shape](size)
    if shape == "whitespace-separated":
        data = data.replace(b",", b"   ")[:size]
    if shape == "latin-1 text":
        data = data.decode().encode("latin-1")[:size]
    return data[: data.rfind(b"\n") + 1]  # whole lines


def gzip_bomb(expanded_mb: float) -> bytes:
    """The issue's gzip upload expanding to ``expanded_mb`` MB, compressed in 8 MB pieces (never held whole)."""
    out = io.BytesIO()
    rnd = random.Random(0)
    body = "".join(f"{rnd.randint(18, 90)},{rnd.choice('abc')},{rnd.randint(0, 1)}\n" for _ in range(50)).encode()
    piece = body * (8 * MB // len(body))
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as g:
        g.write(b"age,grp,y\n")
        left = int(expanded_mb * MB) // len(body) * len(body)  # whole lines: a cut line would be refused as ragged
        while left > 0:
            g.write(piece[:left])
            left -= len(piece)
    return out.getvalue()


CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    root, names = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, root)
    from audit_core.data.intake import ReadOptions, read_table
    from audit_core.limits import Limits

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    files = [(Path(n).read_bytes(), Path(n).name) for n in names]
    opts = ReadOptions.from_limits(Limits.from_env())
    base = status("VmRSS")
    open("/proc/self/clear_refs", "w").write("5")  # VmHWM := VmRSS
    t0 = time.process_time()
    try:
        if len(files) == 1:
            table = read_table(files[0][0], name=files[0][1], options=opts)
        else:
            from audit_core.data.intake import read_tables
            table = read_tables(files, options=opts)
        outcome = f"read {table.frame.shape[0]:,} x {table.frame.shape[1]}"
    except MemoryError:
        outcome = "MemoryError"
    except Exception as exc:
        outcome = getattr(exc, "code", type(exc).__name__)
    print(json.dumps({"base_mib": base, "peak_mib": status("VmHWM"), "cpu_s": time.process_time() - t0,
                      "outcome": outcome}))
""")


def measure(paths: list[Path], env: dict[str, str], *, root: Path = ROOT, limit_gib: float | None = None) -> dict:
    """Read ``paths`` (one table, or a stack) in a fresh interpreter with ``env`` set; its memory and outcome.

    Returns
    -------
    dict
        ``base_mib`` (resident before the read), ``peak_mib``, ``extra_mib`` (peak - base), ``cpu_s``, ``outcome``.
    """
    pre = None
    if limit_gib is not None:  # an address-space limit, so that a runaway read ends in MemoryError
        import resource

        limit = int(limit_gib * 2**30)
        pre = lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # noqa: E731
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), *map(str, paths)], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=root, preexec_fn=pre, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"base_mib": float("nan"), "peak_mib": float("nan"), "extra_mib": float("nan"), "cpu_s": float("nan"),
                "outcome": f"crashed: {done.stderr.strip().splitlines()[-1:] or done.returncode}"}
    out = json.loads(lines[-1])
    out["extra_mib"] = out["peak_mib"] - out["base_mib"]
    return out


def _row(label: str, r: dict) -> str:
    return f"| {label} | {r['outcome']} | {r['cpu_s']:.1f} | {r['base_mib']:.0f} | {r['peak_mib']:.0f} | {r['extra_mib']:.0f} |"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout whose audit_core reads the files")
    ap.add_argument("--shapes", action="store_true", help="every text shape at the cap instead of the gzip cases")
    ap.add_argument("--upload-mb", type=float, default=200, help="AUDIT_MAX_UPLOAD_MB (default 200)")
    ap.add_argument("--limit-gib", type=float, default=8.0,
                    help="address-space limit of the reading process (a runaway read ends in MemoryError)")
    ap.add_argument("--sizes", type=float, nargs="*", default=list(ISSUE_GZIP_MB), help="gzip cases, MB expanded")
    args = ap.parse_args(argv)
    env = {"AUDIT_MAX_UPLOAD_MB": f"{args.upload_mb:g}"}
    print(f"code: {args.root} · caps: {env}")
    print("| case | outcome | CPU s | base MiB | peak MiB | peak - base MiB |\n|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        if args.shapes:
            size = int(args.upload_mb * MB) - 1024
            for shape in SHAPES:
                path = Path(tmp) / "table.csv"
                path.write_bytes(shape_bytes(shape, size))
                print(_row(shape, measure([path], env, root=args.root, limit_gib=args.limit_gib)), flush=True)
            return
        for mb in args.sizes:
            path = Path(tmp) / "upload.csv"
            path.write_bytes(gzip_bomb(mb))
            label = f"gzip {path.stat().st_size / MB:.2f} MB → {mb:,.0f} MB"
            print(_row(label, measure([path], env, root=args.root, limit_gib=args.limit_gib)), flush=True)


if __name__ == "__main__":
    main()
