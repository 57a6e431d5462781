"""The width of work: wide tables through the whole Fragility audit, at the default caps.

Run: ``python benchmarks/bench_fragility_width.py`` (every shape, LightGBM and logistic regression).
Options: ``--shapes 5000x100,1000x400,1000x2000``, ``--models lightgbm,logistic_regression``,
``--stop`` (also measure how long Stop takes inside each long stage), ``--raise-quadratic-cap N``.

Each audit runs in a fresh subprocess (``OMP_NUM_THREADS=1``) on a generated frame
(``tests/fragility_data.py::wide_workspace``): ``cols`` columns
(one in ten categorical with 3 levels, the rest normal numbers) and ``rows`` rows, seeded; every column
is its own evidence group, so ``G = cols``. The audit uses the default :class:`AuditOptions` (300 cases,
``AUDIT_MAX_QUADRATIC_GROUPS`` = 200, ``AUDIT_MAX_FRAGILITY_CELLS`` = 4e9). Printed per audit: the
outcome (complete, or the declared refusal), CPU and wall seconds of the audit alone (training excluded),
the peak RSS above the trained workspace, and the notes that name a cap.

With ``--stop``, the audit is run again once per long stage with a ``should_stop`` that turns true at
the stage's first progress report; the time from that report to the audit's return is printed (the
Stop latency inside that stage).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, "tests")
from audit_core.errors import AuditInputError
from audit_core.fragility.audit import AuditOptions, run_fragility_audit
from fragility_data import wide_workspace

n_cols, n_rows, kind, stop_at = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
opts = json.loads(sys.argv[5])
ws = wide_workspace(n_cols, n_rows, kind, n_cols + n_rows)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
seen = {"at": None}

def progress(f, m):
    if stop_at != "-" and seen["at"] is None and m.startswith(stop_at):
        seen["at"] = time.perf_counter()

out = {"groups": ws.grouping.n_groups, "features": len(ws.grouping.features)}
c0, w0 = time.process_time(), time.perf_counter()
try:
    audit = run_fragility_audit(ws, options=AuditOptions(**opts), progress=progress,
                                should_stop=lambda: seen["at"] is not None)
    out.update(complete=audit.complete, cases=len(audit.batch), engine=audit.batch.engine,
               notes=[n for n in audit.notes if "AUDIT_" in n or "Stopped" in n])
except AuditInputError as exc:
    out.update(code=exc.code, message=exc.message)
end = time.perf_counter()
out.update(cpu=time.process_time() - c0, wall=end - w0,
           stop_latency=None if seen["at"] is None else end - seen["at"],
           peak_above_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0)
print(json.dumps(out))
"""

STAGES = ("Certificates", "Random-order ablation", "Held-out stressors", "Permutation importance", "Group-SHAP",
          "Exact search", "Beam search")


def run(cols: int, rows: int, kind: str, stop_at: str = "-", **opts) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(cols), str(rows), kind, stop_at, json.dumps(opts)],
                          capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"))
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def describe(out: dict) -> str:
    if "error" in out:
        return f"UNDECLARED ERROR {out['error']}"
    head = f"G={out['groups']:,} F={out['features']:,}: "
    if "code" in out:
        body = f"refused up front ({out['code']}): {out['message']}"
    else:
        body = f"{'complete' if out['complete'] else 'stopped'}, {out['cases']} cases, {out['engine']} engine"
        if out["notes"]:
            body += "; notes: " + " | ".join(out["notes"])
    return (head + body + f"; audit {out['cpu']:.1f} s CPU, {out['wall']:.1f} s wall; peak RSS +{out['peak_above_mb']:.0f} MiB"
            + (f"; Stop returned {out['stop_latency']:.2f} s after it was pressed" if out.get("stop_latency") else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="5000x100,1000x400,1000x2000")
    ap.add_argument("--models", default="lightgbm,logistic_regression")
    ap.add_argument("--stop", action="store_true")
    ap.add_argument("--raise-quadratic-cap", type=int, default=0,
                    help="also run each shape with max_quadratic_groups set to this (what the cap avoids)")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; default AuditOptions; OMP_NUM_THREADS=1")
    for shape in args.shapes.split(","):
        cols, rows = (int(v) for v in shape.split("x"))
        for kind in args.models.split(","):
            print(f"[{cols:,} columns x {rows:,} rows, {kind}] " + describe(run(cols, rows, kind)), flush=True)
            if args.raise_quadratic_cap:
                out = run(cols, rows, kind, max_quadratic_groups=args.raise_quadratic_cap)
                print(f"[{cols:,} x {rows:,}, {kind}, max_quadratic_groups={args.raise_quadratic_cap:,}] "
                      + describe(out), flush=True)
            if args.stop:
                for stage in STAGES:
                    out = run(cols, rows, kind, stage)
                    if out.get("stop_latency") is not None:
                        print(f"[{cols:,} x {rows:,}, {kind}] Stop in {stage}: " + describe(out), flush=True)


if __name__ == "__main__":
    main()
