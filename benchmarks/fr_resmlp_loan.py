"""FR-ResMLP vs the same network at α = γ = 0 on the bundled loan sample.

Run: python benchmarks/fr_resmlp_loan.py [--seeds 0 1 2] [--cases 300]

Workspace: all source-domain rows of ``loan_synthetic`` (the Data & groups
defaults of the sample: its first target definition, its evidence groups, mean
baseline), logistic regression as the workspace model (only its fitted
preprocessing is reused), stratified 75/25 split with the seed. For each seed
both networks are trained with DEFAULTS (``audit_core.fragility.neural``)
and certified with the default FragilityConfig (K = min(5, G), static path,
three families, R = 10) on at most ``--cases`` held-out cases.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.data.dataset import DatasetConfig, build_dataset  # noqa: E402
from audit_core.data.roles import infer_roles  # noqa: E402
from audit_core.data.samples import load_sample  # noqa: E402
from audit_core.fragility.engine import FragilityConfig  # noqa: E402
from audit_core.fragility.neural import DEFAULTS, compare_fr_resmlp  # noqa: E402
from audit_core.models.training import train_workspace  # noqa: E402
from audit_core.models.zoo import ModelSpec  # noqa: E402


def loan_workspace(seed: int):
    frame, info = load_sample("loan_synthetic")
    frame = frame[frame[info.domain_column] == info.source_domain].reset_index(drop=True)
    roles = infer_roles(frame)
    roles.update({c: "ignore" for c in info.exclude_columns})
    cfg = DatasetConfig(name="loan_synthetic", targets=(info.target_definitions[0],), roles=roles,
                        key_column=info.key_column)
    return train_workspace(build_dataset(frame, cfg), spec=ModelSpec(kind="logistic_regression", seed=seed),
                           raw_groups=info.evidence_groups)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--alpha", type=float, default=DEFAULTS["alpha"])
    ap.add_argument("--gamma", type=float, default=DEFAULTS["gamma"])
    args = ap.parse_args()
    rows = []
    t0 = time.perf_counter()
    for seed in args.seeds:
        ws = loan_workspace(seed)
        res = compare_fr_resmlp(ws, alpha=args.alpha, gamma=args.gamma, seed=seed, max_cases=args.cases,
                                case_seed=seed, config=FragilityConfig(seed=seed))
        t = res.to_frame()
        t.insert(0, "seed", seed)
        rows.append(t)
        lr_auc = float(ws.metrics.query("split == 'test' and metric == 'auroc'")["value"].iloc[0])
        print(f"seed {seed}: {res.n_train} training rows, {res.n_heldout} held-out rows, {res.n_cases} certified cases, "
              f"{ws.grouping.n_groups} groups; reference: logistic regression held-out AUROC {lr_auc:.4f}")
    table = pd.concat(rows, ignore_index=True)
    cols = ["seed", "model", "heldout_auroc", "heldout_log_loss", "mean_rcma", "mean_fds", "mean_k_star",
            "donor_any_share", "auroc_fds_donor_any", "auroc_confidence_donor_any", "train_seconds"]
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    print(f"params: {DEFAULTS} (alpha={args.alpha}, gamma={args.gamma} for FR-ResMLP; 0, 0 for plain)")
    print(table[cols].round(4).to_string(index=False))
    mean = table.groupby("model", sort=False)[cols[2:]].mean().round(4)
    print("\nmean over seeds:")
    print(mean.to_string())
    print(f"\ntotal {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
