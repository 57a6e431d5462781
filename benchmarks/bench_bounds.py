"""Memory and CPU at the count bounds, and the cost of refusing what lies past them (docs/reliability.md).

Each case runs ``reliability-audit run`` (``audit_cli.main``) in a fresh
interpreter and reports that process's peak resident memory (``VmHWM`` of
``/proc/self/status``; ``ru_maxrss`` would carry the parent's size over
``fork``/``exec``) and CPU time (``ru_utime + ru_stime``): a config at the default value next to the
same config at the bound, so the ratio is measured side by side in one run.
The refusals (the issue's values past the bounds, a 1 KB YAML alias bomb,
YAML nested 5,000 deep, a Parquet bundle that expands 1,000-fold) report the
CPU time and peak memory of the refusal itself.

    python benchmarks/bench_bounds.py            # all cases, ~5 min on a quiet 2-core machine
    python benchmarks/bench_bounds.py --quick    # the refusals only
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAD = "data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression, seed: 0}\n"
FRAG = "{kind: fragility, max_cases: 50, chunk_size: 25, shap_max_cases: 0, search_max_cases: 5, perm_repeats: 1, %s}"

#: name -> (config at the default, config at the bound)
PAIRS = {
    "model bootstrap 200 -> 10,000": ("{kind: model, bootstrap: 200}", "{kind: model, bootstrap: 10000}"),
    "fragility n_draws 10 -> 200": (FRAG % "n_draws: 10, n_boot: 20", FRAG % "n_draws: 200, n_boot: 20"),
    "fragility n_boot 200 -> 10,000": (FRAG % "n_boot: 200", FRAG % "n_boot: 10000"),
    "receipts n_cases 2,000 -> 20,000": ("{kind: receipts, mode: benchmark, n_cases: 2000}",
                                         "{kind: receipts, mode: benchmark, n_cases: 20000}"),
}
#: the issue's values, refused by the bounds
REFUSED = {
    "bootstrap: 2000000000": "{kind: model, bootstrap: 2000000000}",
    "n_draws: 1000000000": "{kind: fragility, n_draws: 1000000000}",
    "n_boot: 1000000000": "{kind: fragility, n_boot: 1000000000}",
    "receipts n_cases: 1000000000": "{kind: receipts, mode: benchmark, n_cases: 1000000000}",
}

CHILD = textwrap.dedent("""
    import contextlib, io, json, resource, sys
    from audit_cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(sys.argv[1:])
    r = resource.getrusage(resource.RUSAGE_SELF)
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    print(json.dumps({"code": code, "peak_mib": hwm / 1024, "cpu_s": r.ru_utime + r.ru_stime,
                      "stderr": err.getvalue().strip()[:160]}))
""")

LOADER_CHILD = textwrap.dedent("""
    import json, sys, time
    from audit_core.errors import AuditInputError
    kind, path = sys.argv[1], sys.argv[2]
    c0 = time.process_time()
    try:
        if kind == "bundle":
            from audit_core.runs.bundle import read_bundle
            read_bundle(open(path, "rb").read(), name="bomb.json")
        else:
            from audit_core.runs.config import load_config
            load_config(path)
        outcome = "loaded"
    except AuditInputError as e:
        outcome = e.code
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    print(json.dumps({"outcome": outcome, "cpu_s": time.process_time() - c0, "peak_mib": hwm / 1024}))
""")


def _run(audit: str, tmp: Path) -> dict:
    cfg = tmp / "cfg.yaml"
    cfg.write_text(HEAD + f"audits: [{audit}]\n")
    done = subprocess.run([sys.executable, "-c", CHILD, "run", str(cfg), "--registry", str(tmp / "reg.sqlite3"),
                           "--out", str(tmp / "out")], capture_output=True, text=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _load(kind: str, path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", LOADER_CHILD, kind, str(path)], capture_output=True, text=True,
                          cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _bomb_files(tmp: Path) -> dict[str, tuple[str, Path]]:
    import base64
    import hashlib
    import io

    import numpy as np
    import pandas as pd

    bomb = HEAD + "audits: [{kind: model}]\n" + "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    (tmp / "bomb.yaml").write_text(bomb)
    (tmp / "deep.yaml").write_text(HEAD + "audits: " + "[" * 5000 + "]" * 5000 + "\n")
    buf = io.BytesIO()
    pd.DataFrame({"z": np.zeros(40_000_000, dtype="int64")}).to_parquet(buf, compression="zstd")
    data = buf.getvalue()
    run = {"run_id": "r", "created_at": "2024-01-01T00:00:00+00:00", "updated_at": "2024-01-01T00:00:00+00:00",
           "audit_kind": "custom", "status": "done", "dataset_name": "d", "dataset_fingerprint": "f",
           "grouping_hash": None, "model_spec": {}, "config": {}, "manifest": {}, "error": None}
    tables = [{"name": f"t{i}", "encoding": "parquet+base64", "sha256": hashlib.sha256(data).hexdigest(),
               "data": base64.b64encode(data).decode()} for i in range(10)]
    (tmp / "bomb.json").write_text(json.dumps({"format": "reliability-audit-run", "format_version": 1, "run": run,
                                               "tables": tables, "artifacts": []}))
    return {
        f"YAML alias bomb ({len(bomb.encode()):,} bytes, 387,420,489 values)": ("config", tmp / "bomb.yaml"),
        "YAML nested 5,000 deep": ("config", tmp / "deep.yaml"),
        f"bundle of {(tmp / 'bomb.json').stat().st_size / 2**20:.1f} MB declaring 3,052 MB of tables": (
            "bundle", tmp / "bomb.json"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="refusals only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_bounds_") as t:
        tmp = Path(t)
        print("| refused input | outcome | CPU s | peak MiB |\n|---|---|---:|---:|")
        for name, audit in REFUSED.items():
            r = _run(audit, tmp)
            print(f"| `{name}` | exit {r['code']}: {r['stderr'].split(';')[0].removeprefix('error: ')} | "
                  f"{r['cpu_s']:.2f} | {r['peak_mib']:.0f} |")
        for name, (kind, path) in _bomb_files(tmp).items():
            r = _load(kind, path)
            print(f"| {name} | {r['outcome']} | {r['cpu_s']:.3f} | {r['peak_mib']:.0f} |")
        if args.quick:
            return
        print("\n| case | default: CPU s / peak MiB | bound: CPU s / peak MiB | peak ratio |\n|---|---|---|---:|")
        for name, (default, bound) in PAIRS.items():
            a, b = _run(default, tmp), _run(bound, tmp)
            assert a["code"] == 0 and b["code"] == 0, (a, b)
            print(f"| {name} | {a['cpu_s']:.1f} / {a['peak_mib']:.0f} | {b['cpu_s']:.1f} / {b['peak_mib']:.0f} | "
                  f"{b['peak_mib'] / a['peak_mib']:.2f} |")


if __name__ == "__main__":
    main()
