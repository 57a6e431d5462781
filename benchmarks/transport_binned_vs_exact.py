"""Binned-cell against exact bootstrap on the documented real-data runs (docs/transport.md).

Run from the project root::

    python benchmarks/transport_binned_vs_exact.py [heart acs oulad]

Each run of ``benchmarks/transport_real_data.py`` (same configs, same seeds) is
done twice, with the default binned-cell bootstrap and with
``exact_bootstrap=True``. The two use the same replicates; the script prints,
per run, the number of verdict rows, the largest difference of an interval
endpoint (absolute and as a share of the exact interval's width), the largest
for the step statistics (rates, risks, HCEP, coverage, set size, prevalence)
and the number of verdicts that differ. The saved outputs under
``benchmarks/out/`` are the binned runs, as before.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import transport_real_data as trd  # noqa: E402

from audit_core.transport import run_transport  # noqa: E402

STEP = {"prevalence", "rate", "risk", "hcep_at_0.80", "hcep_at_0.90", "hcep_at_0.95", "coverage", "mean_set_size"}
ROWS: list[dict] = []


def compare(binned, exact, name: str) -> dict:
    """Interval and verdict agreement of two results of the same config."""
    vb, ve = binned.verdicts, exact.verdicts
    gap = np.maximum((vb["ci_low"] - ve["ci_low"]).abs(), (vb["ci_high"] - ve["ci_high"]).abs())
    width = (ve["ci_high"] - ve["ci_low"]).where(lambda w: w > 0)
    step = vb["metric"].isin(STEP)
    return {"run": name, "verdict rows": len(vb), "max |Δ endpoint|": float(gap.max()),
            "max |Δ endpoint| / width": float((gap / width).max()),
            "max |Δ endpoint|, step statistics": float(gap[step].max()),
            "verdicts changed": int((vb["verdict"] != ve["verdict"]).sum())}


def both(source, target=None, *, config, **kw):
    binned = run_transport(source, target, config=config, **kw)
    exact = run_transport(source, target, config=replace(config, exact_bootstrap=True), **kw)
    n_target = len(target) if target is not None else int(binned.manifest["n_target"])
    name = f"{config.primary_target}, {n_target} target rows ({config.n_refits} refits, " \
           f"{config.n_bootstrap} bootstraps, {'+'.join(config.models)})"
    ROWS.append(compare(binned, exact, name))
    print(ROWS[-1], flush=True)
    return binned


def main() -> int:
    which = sys.argv[1:] or ["heart", "acs", "oulad"]
    trd.run_transport = both  # every run of the real-data script goes through both bootstraps
    if "heart" in which:
        trd.heart(10, 500)
    if "acs" in which:
        for state in ("pa", "ga"):
            trd.acs(state, 5, 200)
    if "oulad" in which:
        trd.oulad(60, 10, 500)
        trd.oulad(60, 10, 500, active_only=True)
    table = pd.DataFrame(ROWS)
    print(trd.markdown(table.assign(**{c: table[c].map(lambda v: f"{v:.1e}") for c in table.columns
                                       if c.startswith("max")})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
