"""Wide tables in the Fragility audit: the width of work stays bounded.

Before: 5,000 columns × 100 rows hit ``MemoryError`` (certificate chunks were
sized by rows, so one chunk of 39 cases × 5,001 rows × 5,000 columns asked for
7.8 GB, and beam search built every candidate row of every case at once), and
1,000 columns × 400 rows ran past 10 minutes (group-SHAP, permutation
importance and beam search have work quadratic in the groups).

After: chunks are sized by bytes, the quadratic parts are skipped above
``AUDIT_MAX_QUADRATIC_GROUPS`` with a note naming it, and the whole audit is
bounded up front by ``AUDIT_MAX_FRAGILITY_CELLS`` (``FR_TOO_MUCH_WORK``).

Each audit runs in a fresh subprocess on a generated wide frame (numeric and
categorical columns, seeded) and reports its peak RSS. The test asserts that
the audit either completes within a memory bound or refuses with the declared
message — never ``MemoryError`` or another exception.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys
sys.path.insert(0, "tests")
from audit_core.errors import AuditInputError
from audit_core.fragility.audit import AuditOptions, run_fragility_audit
from fragility_data import wide_workspace

n_cols, n_rows, kind, seed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
opts = json.loads(sys.argv[5])
ws = wide_workspace(n_cols, n_rows, kind, seed, {"n_estimators": 30} if kind == "lightgbm" else {})
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {"groups": ws.grouping.n_groups, "features": len(ws.grouping.features), "rss_before_mb": rss0}
try:
    audit = run_fragility_audit(ws, options=AuditOptions(**opts))
    out.update(complete=audit.complete, n=len(audit.batch), notes=list(audit.notes), engine=audit.batch.engine,
               scores=sorted(audit.scores.columns))
except AuditInputError as exc:
    out.update(code=exc.code, message=exc.message)
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run_child(n_cols: int, n_rows: int, kind: str, seed: int, **opts) -> dict:
    opts.setdefault("n_boot", 20)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(n_cols), str(n_rows), kind, str(seed), json.dumps(opts)],
                          capture_output=True, text=True, cwd=ROOT, timeout=900,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]  # a MemoryError or any other exception fails here
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("n_cols, n_rows, kind, seed", [
    (2500, 100, "logistic_regression", 1),  # the 5,000 × 100 shape at half width: G ≈ 2,500 groups per case
    (2500, 100, "lightgbm", 2),
    (600, 400, "lightgbm", 3),  # the 1,000 × 400 shape: the quadratic parts are skipped above the cap
])
def test_wide_audit_completes_within_bounded_memory(n_cols, n_rows, kind, seed):
    out = run_child(n_cols, n_rows, kind, seed, max_cases=40, max_quadratic_groups=200)
    assert out.get("complete") is True, out
    assert out["groups"] == n_cols and out["n"] > 0
    note = next(n for n in out["notes"] if "AUDIT_MAX_QUADRATIC_GROUPS" in n)
    assert f"{n_cols:,} evidence groups exceed their cap of 200" in note
    assert "perm_importance" not in out["scores"] and "group_shap" not in out["scores"]
    # the certificates' chunks hold at most 64 MiB of rows; the model, the data and the outputs are small
    assert out["peak_mb"] - out["rss_before_mb"] < 600, out


def test_too_much_work_is_refused_up_front_with_the_cap_named():
    out = run_child(2500, 100, "lightgbm", 4, max_cases=40, max_cells=50_000_000)
    assert out.get("code") == "FR_TOO_MUCH_WORK", out
    assert "AUDIT_MAX_FRAGILITY_CELLS" in out["message"] and "50,000,000" in out["message"]
    assert "2,500 evidence groups" in out["message"] and "fewer evidence groups" in out["message"]
    assert out["peak_mb"] - out["rss_before_mb"] < 100  # refused before any perturbed row was built
