"""Brittle-case evaluation of the Fragility certificate on real data.

Run from the project root:

    python benchmarks/fragility_real_data.py [--cases 150] [--seeds 0 1 2] [--out docs/fragility_real_data.csv]

Datasets (read in place from ``../shared/datasets/``, never copied):
UCI heart disease (four sites pooled, target ``num > 0``), South German credit
(target ``kredit == 0``, bad risk), UCI adult (``adult.data`` sampled to
10,000 rows with seed 0, target ``income == >50K``). Models: logistic
regression, LightGBM, random forest, MLP (the zoo). Seeds 0, 1, 2 change the
train/test split and the model seed. Units are dataset × model × seed; each
unit certifies a seeded sample of at most ``--cases`` held-out cases.
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

from audit_core.data.dataset import DatasetConfig, build_dataset  # noqa: E402
from audit_core.fragility.audit import AuditOptions, run_fragility_audit  # noqa: E402
from audit_core.fragility.engine import FragilityConfig  # noqa: E402
from audit_core.fragility.evaluation import unit_summary  # noqa: E402
from audit_core.models.training import train_workspace  # noqa: E402
from audit_core.models.zoo import ModelSpec  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets"
MODELS = ("logistic_regression", "lightgbm", "random_forest", "mlp")
HEART_COLS = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope", "ca", "thal", "num"]
ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation", "relationship",
              "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country", "income"]


def heart():
    parts = []
    for site in ("cleveland", "hungarian", "switzerland", "va"):
        f = pd.read_csv(DATA / "uci_heart_disease" / f"processed.{site}.data", header=None, names=HEART_COLS, na_values="?")
        parts.append(f)
    frame = pd.concat(parts, ignore_index=True)
    frame.insert(0, "row_id", np.arange(len(frame)))
    numeric = ["age", "trestbps", "chol", "thalach", "oldpeak", "ca"]
    categorical = ["sex", "cp", "fbs", "restecg", "exang", "slope", "thal"]
    target = {"kind": "threshold", "name": "disease", "column": "num", "threshold": 1.0, "op": ">="}
    # chol == 0 and trestbps == 0 are hidden missing codes (PROVENANCE.md)
    return "heart_disease_pooled", frame, numeric, categorical, target, {"chol": [0], "trestbps": [0]}, ["num"]


def german():
    frame = pd.read_csv(DATA / "south_german_credit" / "SouthGermanCredit.asc", sep=r"\s+")
    frame["risk"] = np.where(frame["kredit"] == 0, "bad", "good")
    frame.insert(0, "row_id", np.arange(len(frame)))
    numeric = ["laufzeit", "hoehe", "alter"]
    categorical = [c for c in frame.columns if c not in numeric + ["kredit", "risk", "row_id"]]
    target = {"kind": "class", "name": "bad_risk", "column": "risk", "positive": "bad"}
    return "south_german_credit", frame, numeric, categorical, target, {}, ["kredit", "risk"]


def adult():
    frame = pd.read_csv(DATA / "uci_adult" / "adult.data", header=None, names=ADULT_COLS, sep=r",\s*", engine="python",
                        na_values="?", skip_blank_lines=True)
    frame = frame.dropna(subset=["income"]).sample(n=10_000, random_state=0).reset_index(drop=True)
    frame.insert(0, "row_id", np.arange(len(frame)))
    numeric = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    categorical = ["workclass", "education", "marital_status", "occupation", "relationship", "race", "sex", "native_country"]
    target = {"kind": "class", "name": "income_gt_50k", "column": "income", "positive": ">50K"}
    return "uci_adult_10k", frame, numeric, categorical, target, {}, ["income"]


def dataset(loader):
    name, frame, numeric, categorical, target, codes, outcome = loader()
    roles = {c: "numeric" for c in numeric} | {c: "categorical" for c in categorical}
    roles.update({c: "ignore" for c in outcome})
    roles["row_id"] = "identifier"
    cfg = DatasetConfig(name=name, targets=(target,), roles=roles, key_column="row_id")
    return name, build_dataset(frame, cfg), codes


def markdown(frame: pd.DataFrame) -> str:
    """A GitHub markdown table (no extra dependency)."""
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=150)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--models", nargs="+", default=list(MODELS))
    ap.add_argument("--out", default=str(ROOT / "docs" / "fragility_real_data.csv"))
    args = ap.parse_args(argv)
    rows, inc_rows = [], []
    for loader in (heart, german, adult):
        name, ds, codes = dataset(loader)
        for kind in args.models:
            for seed in args.seeds:
                t = time.perf_counter()
                ws = train_workspace(ds, spec=ModelSpec(kind=kind, seed=seed))
                audit = run_fragility_audit(ws, options=AuditOptions(
                    config=FragilityConfig(seed=seed), max_cases=args.cases, case_seed=seed, stress_seed=seed,
                    missing_codes=codes, n_boot=0, temperature=False, search_max_cases=0))
                unit = f"{name}|{kind}|{seed}"
                a = audit.auroc.assign(unit=unit, dataset=name, model=kind, seed=seed)
                rows.append(a)
                inc_rows.append(audit.incremental.assign(unit=unit, dataset=name, model=kind, seed=seed))
                print(f"{unit}: {len(audit.certificates)} cases, G={ws.grouping.n_groups}, "
                      f"{time.perf_counter() - t:.1f}s", flush=True)
    allr = pd.concat(rows, ignore_index=True)
    inc = pd.concat(inc_rows, ignore_index=True)
    allr.to_csv(args.out, index=False)
    inc.to_csv(str(args.out).replace(".csv", "_incremental.csv"), index=False)
    pd.set_option("display.width", 200)
    for label in ("donor_any", "donor_0.5", "unavailable_any"):
        for stratum in ("all", "p_hat>=0.8"):
            part = allr[(allr["label"] == label) & (allr["stratum"] == stratum)]
            if part.empty:
                continue
            table, share = unit_summary(part[["unit", "score", "auroc"]], seed=0)
            n_units = part["unit"].nunique()
            if table.empty:
                print(f"\n### label={label}, stratum={stratum}: no unit has both brittle and non-brittle cases")
                continue
            print(f"\n### label={label}, stratum={stratum}, units={n_units}; "
                  f"share of units where FDS does not beat neg_energy: {share:.2f}")
            print(markdown(table.sort_values("mean_auroc", ascending=False)))
    print("\n### Incremental value over confidence (label donor_any): mean over units")
    part = inc[inc["label"] == "donor_any"]
    print(markdown(part.groupby("dataset")[["auroc_confidence", "auroc_with_certificate", "difference"]].mean().reset_index()))
    print(f"share of units with difference interval above 0: {(part['lo'] > 0).mean():.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
