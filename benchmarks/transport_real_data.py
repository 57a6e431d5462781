"""Transport audits on real data (docs/transport.md).

Run from the project root::

    python benchmarks/transport_real_data.py heart   # UCI heart disease, leave-one-site-out
    python benchmarks/transport_real_data.py credit  # South German credit, equal-budget degradation
    python benchmarks/transport_real_data.py acs --state pa --refits 5 --bootstrap 200  # ACS income, small states → PA
    python benchmarks/transport_real_data.py oulad --landmark 60 --refits 10 --bootstrap 500  # OULAD 2013 → 2014
    python benchmarks/transport_real_data.py oulad-mc --refits 5 --bootstrap 200  # OULAD final_result, 4 classes

Each command prints a Markdown table and writes the long-form results under
``benchmarks/out/<name>/`` (Parquet + JSON + manifest). Data are read in place
from ``../shared/datasets/`` (relative to the project root), never copied.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audit_core.transport import TransportConfig, run_transport  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets"
OUT = ROOT / "benchmarks" / "out"

HEART_COLUMNS = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope",
                 "ca", "thal", "num"]
HEART_SITES = {"cleveland": "processed.cleveland.data", "hungarian": "processed.hungarian.data",
               "switzerland": "processed.switzerland.data", "va": "processed.va.data"}
HEART_NUMERIC = ("age", "trestbps", "chol", "thalach", "oldpeak", "ca")
HEART_CATEGORICAL = ("sex", "cp", "fbs", "restecg", "exang", "slope", "thal")


def load_heart() -> tuple[pd.DataFrame, list[str]]:
    """The four sites stacked, with a ``site`` column.

    ``?`` is missing. ``chol == 0`` (all Switzerland rows, 49 VA rows) and the
    one ``trestbps == 0`` are physiologically impossible codes for "not
    measured", so they are set missing too (then median-imputed from the
    source train partition like any other missing value). Cleveland's floats
    (``63.0``) are read as numbers, so categorical codes agree across sites
    (``1.0`` and ``1`` both read ``"1"`` in the preprocessor).
    """
    frames, files = [], []
    for site, name in HEART_SITES.items():
        path = DATA / "uci_heart_disease" / name
        f = pd.read_csv(path, header=None, names=HEART_COLUMNS, na_values="?")
        f["site"] = site
        frames.append(f)
        files.append(str(path))
    df = pd.concat(frames, ignore_index=True)
    df.loc[df["chol"] == 0, "chol"] = np.nan
    df.loc[df["trestbps"] == 0, "trestbps"] = np.nan
    for c in HEART_CATEGORICAL:
        df[c] = df[c].map(lambda v: np.nan if pd.isna(v) else str(int(v)))
    df["disease"] = (df["num"] > 0).astype(int)
    return df, files


def heart(n_refits: int, n_bootstrap: int) -> pd.DataFrame:
    df, files = load_heart()
    rows = []
    for target_site in HEART_SITES:
        src = df[df["site"] != target_site].reset_index(drop=True)
        tgt = df[df["site"] == target_site].reset_index(drop=True)
        cfg = TransportConfig(
            targets=({"kind": "class", "name": "disease", "column": "disease", "positive": 1},),
            numeric=HEART_NUMERIC, categorical=HEART_CATEGORICAL, strata_columns=("site",), subgroup_columns=("sex",),
            models=("logistic_regression",), mappings=("platt",), n_refits=n_refits, n_bootstrap=n_bootstrap,
            missing_indicators=False, stresses=(), seed=0, input_files=tuple(files),
        )
        res = run_transport(src, tgt, config=cfg)
        res.save(OUT / "heart" / target_site)
        t = res.table
        t = t[(t["condition"] == "clean") & (t["weighting"] == "unweighted")]

        def mean(analysis, metric, domain, alpha=None, s=None):
            q = t[(t["analysis"] == analysis) & (t["metric"] == metric) & (t["domain"] == domain)]
            if alpha is not None:
                q = q[np.isclose(q["alpha"], alpha)]
            if s is not None:
                q = q[np.isclose(q["selection_rate"], s)]
            return q["value"].mean(), q["value"].std()

        def fmt(v):
            return f"{v[0]:.3f} ± {v[1]:.3f}"

        v = res.verdicts
        verdict = lambda a, m, **kw: v[(v.analysis == a) & (v.metric == m) & (v.weighting == "unweighted") & np.logical_and.reduce(  # noqa: E731
            [np.isclose(v[k], x) for k, x in kw.items()] or [np.ones(len(v), bool)])]["verdict"].iloc[0]
        rows.append({
            "target site": f"{target_site} (n={len(tgt)}, prev {tgt['disease'].mean():.2f})",
            "ID AUROC": fmt(mean("metrics", "auroc", "id")),
            "OOD AUROC": fmt(mean("metrics", "auroc", "ood")),
            "AUROC verdict": verdict("metrics", "auroc"),
            "OOD ECE": fmt(mean("metrics", "ece", "ood")),
            "ECE verdict": verdict("metrics", "ece"),
            "OOD rate @ s=0.80": fmt(mean("selective", "rate", "ood", s=0.8)),
            "OOD risk @ s=0.80": fmt(mean("selective", "risk", "ood", s=0.8)),
            "ID risk @ s=0.80": fmt(mean("selective", "risk", "id", s=0.8)),
            "OOD marginal cov. class 0/1 (α=0.1)": "{:.3f} / {:.3f}".format(
                mean("conformal_marginal", "coverage_class0", "ood", alpha=0.1)[0],
                mean("conformal_marginal", "coverage_class1", "ood", alpha=0.1)[0]),
            "OOD label-cond. cov. class 0/1 (α=0.1)": "{:.3f} / {:.3f}".format(
                mean("conformal_label_conditional", "coverage_class0", "ood", alpha=0.1)[0],
                mean("conformal_label_conditional", "coverage_class1", "ood", alpha=0.1)[0]),
        })
    return pd.DataFrame(rows)


SGC_NUMERIC = ("laufzeit", "hoehe", "alter")


def credit(n_refits: int, n_random_sets: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    path = DATA / "south_german_credit" / "SouthGermanCredit.asc"
    df = pd.read_csv(path, sep=r"\s+")
    df["adverse"] = (df["kredit"] == 0).astype(int)
    categorical = tuple(c for c in df.columns if c not in SGC_NUMERIC + ("kredit", "adverse"))
    for c in categorical:
        df[c] = df[c].astype(str)
    cfg = TransportConfig(
        targets=({"kind": "class", "name": "adverse", "column": "adverse", "positive": 1},),
        numeric=SGC_NUMERIC, categorical=categorical, single_domain=True,
        fractions=(0.6, 0.15, 0.10, 0.15), models=("logistic_regression",), mappings=("platt",),
        n_refits=n_refits, n_bootstrap=10, stresses=("degradation",), degradation_m=3,
        n_random_sets=n_random_sets, seed=0, input_files=(str(path),),
    )
    res = run_transport(df, config=cfg)
    res.save(OUT / "credit")
    t = res.table
    t = t[(t["domain"] == "id") & (t["weighting"] == "unweighted") & (t["mapping"] == "platt")]
    t = t.assign(cond=t["condition"].str.replace(r"random_set:\d+", "random_set", regex=True))
    picks = [("metrics", "auroc", None, None), ("metrics", "brier_score", None, None), ("metrics", "ece", None, None),
             ("selective", "risk", None, 0.8), ("conformal_marginal", "coverage", 0.1, None),
             ("conformal_label_conditional", "worst_class_coverage", 0.1, None)]
    order = ["clean", "mcar", "random_set", "targeted", "corruption", "oracle"]
    rows = []
    for cond in order:
        row = {"condition": cond + (" (bound)" if cond == "oracle" else "")}
        for a, m, al, s in picks:
            q = t[(t["cond"] == cond) & (t["analysis"] == a) & (t["metric"] == m)]
            if al is not None:
                q = q[np.isclose(q["alpha"], al)]
            if s is not None:
                q = q[np.isclose(q["selection_rate"], s)]
            name = {"metrics": m, "selective": "risk@s=0.8", "conformal_marginal": "marg. cov (α=.1)",
                    "conformal_label_conditional": "LC worst-class cov (α=.1)"}[a]
            row[name] = f"{q['value'].mean():.3f} [{q['value'].min():.3f}, {q['value'].max():.3f}]"
        rows.append(row)
    pct = res.extras["degradation_percentiles"]
    pct = pct[(pct["domain"] == "id") & (pct["weighting"] == "unweighted")]
    keep = [("degradation_percentile:metrics", "auroc"), ("degradation_percentile:metrics", "brier_score"),
            ("degradation_percentile:metrics", "ece"), ("degradation_percentile:selective", "risk")]
    p = pd.concat([pct[(pct["analysis"] == a) & (pct["metric"] == m)] for a, m in keep])
    p = p[p["selection_rate"].isna() | np.isclose(p["selection_rate"].fillna(0), 0.8)]
    targeted = t[t["condition"].str.startswith("targeted")]
    fitted = res.table[(res.table["analysis"] == "fitted") & (res.table["metric"] == "targeted_features")]
    feats = fitted["condition"].str.replace("targeted:", "").value_counts()
    p = p[["analysis", "metric", "selection_rate", "value"]].rename(columns={"value": "mean percentile of targeted"})
    print("targeted feature sets (count over refits):", feats.to_dict())
    return pd.DataFrame(rows), p


ACS_SMALL = ("ak", "de", "hi", "me", "mt", "nd", "nh", "ri", "sd", "vt", "wy")
ACS_NUMERIC = ("AGEP", "WKHP", "SCHL")
ACS_CATEGORICAL = ("COW", "MAR", "OCCP", "POBP", "RELP", "SEX", "RAC1P")


def _transfer_rows(res, models) -> pd.DataFrame:
    """One row per model: ID/OOD AUROC and ECE, verdicts of the paired changes, the transported rules (Platt)."""
    t = res.table
    t = t[(t["condition"] == "clean") & (t["weighting"] == "unweighted") & (t["mapping"] == "platt")]
    v = res.verdicts
    v = v[(v["mapping"] == "platt") & (v["weighting"] == "unweighted")]
    rows = []
    for model in models:
        def m(a, metric, dom, **kw):
            q = t[(t.model == model) & (t.analysis == a) & (t.metric == metric) & (t.domain == dom)]
            for k, x in kw.items():
                q = q[np.isclose(q[k], x)]
            return q["value"].mean()

        def verdict(a, metric, **kw):
            q = v[(v.model == model) & (v.analysis == a) & (v.metric == metric)]
            for k, x in kw.items():
                q = q[np.isclose(q[k], x)]
            r = q.iloc[0]
            return f"{r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] {r['verdict']}"

        rows.append({"model": model, "ID AUROC": m("metrics", "auroc", "id"), "OOD AUROC": m("metrics", "auroc", "ood"),
                     "Δ AUROC": verdict("metrics", "auroc"), "ID ECE": m("metrics", "ece", "id"),
                     "OOD ECE": m("metrics", "ece", "ood"), "Δ ECE": verdict("metrics", "ece"),
                     "Δ calib. intercept": verdict("metrics", "calibration_intercept"),
                     "OOD rate / risk @ s=0.8": f"{m('selective', 'rate', 'ood', selection_rate=0.8):.3f} / "
                                                f"{m('selective', 'risk', 'ood', selection_rate=0.8):.3f}",
                     "Δ marginal coverage (α=0.1)": verdict("conformal_marginal", "coverage", alpha=0.1)})
    return pd.DataFrame(rows)


def acs(target_state: str, n_refits: int, n_bootstrap: int) -> pd.DataFrame:
    """Pooled small states (source) → PA or GA (target), LR and LightGBM, Platt and raw."""
    files = [DATA / "acs_income_2018_folktables" / f"{st}_data.csv" for st in ACS_SMALL]
    src = pd.concat([pd.read_csv(f).assign(state=f.name[:2]) for f in files], ignore_index=True)
    tpath = DATA / "acs_income_2018_folktables" / f"{target_state}_data.csv"
    tgt = pd.read_csv(tpath).assign(state=target_state)
    for df in (src, tgt):
        df["high_income"] = df["PINCP"].astype(str).eq("True").astype(int)
        for c in ACS_CATEGORICAL:
            df[c] = df[c].astype(int).astype(str)
    cfg = TransportConfig(
        targets=({"kind": "class", "name": "high_income", "column": "high_income", "positive": 1},),
        numeric=ACS_NUMERIC, categorical=ACS_CATEGORICAL, strata_columns=("state",), subgroup_columns=("SEX", "RAC1P"),
        models=("logistic_regression", "lightgbm"), mappings=("raw", "platt"), n_refits=n_refits,
        n_bootstrap=n_bootstrap, stresses=(), seed=0, input_files=tuple(map(str, files + [tpath])),
    )
    res = run_transport(src, tgt, config=cfg)
    res.save(OUT / "acs" / target_state)
    return _transfer_rows(res, cfg.models)


OULAD_CATEGORICAL = ("code_module", "semester", "gender", "region", "highest_education", "imd_band", "age_band",
                     "disability")
OULAD_NUMERIC = ("num_of_prev_attempts", "studied_credits", "date_registration", "unregistered_by_t", "n_due",
                 "n_submitted", "n_missed_due", "n_late", "n_banked", "mean_score", "weighted_score")
OULAD_AT_RISK = ("Withdrawn", "Fail")


def load_oulad(landmark: int = 60, *, active_only: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """One row per registration (code_module, code_presentation, id_student) with
    features available by day ``landmark`` (days from the module start).

    * target ``at_risk`` = 1 if ``final_result`` is Withdrawn or Fail, 0 if
      Pass or Distinction;
    * studentInfo demographics and study load (known at registration);
    * registration day, and whether the student unregistered before the
      landmark (``date_unregistration < t``); a later unregistration is not
      visible and is not used;
    * assessments: only results *submitted before day t* (``date_submitted
      < t``; banked results from an earlier presentation carry day -1), so no
      score after the landmark is visible: count, mean score, weight-averaged
      score, late submissions (submitted after the assessment's own deadline),
      banked count, and the number of assessments due before t
      (``assessments.date < t``, course structure) of which none was
      submitted before t.
    ``active_only`` keeps only registrations not unregistered before t.
    """
    d = DATA / "oulad"
    files = [d / f for f in ("studentInfo.csv", "studentRegistration.csv", "studentAssessment.csv", "assessments.csv")]
    key = ["code_module", "code_presentation", "id_student"]
    info = pd.read_csv(files[0])
    reg = pd.read_csv(files[1])
    sa = pd.read_csv(files[2])
    ass = pd.read_csv(files[3])
    df = info.merge(reg, on=key, how="left", validate="one_to_one")
    t = landmark
    df["unregistered_by_t"] = (df["date_unregistration"] < t).astype(int)
    df = df.drop(columns=["date_unregistration"])
    sa = sa.merge(ass, on="id_assessment", how="left", validate="many_to_one")
    sa = sa[sa["date_submitted"] < t]
    sa = sa.assign(late=(sa["date_submitted"] > sa["date"]).astype(int),
                   wscore=sa["score"] * sa["weight"], wt=sa["weight"].where(sa["score"].notna()))
    agg = sa.groupby(key).agg(n_submitted=("id_assessment", "size"), mean_score=("score", "mean"),
                              wsum=("wscore", "sum"), wt=("wt", "sum"), n_late=("late", "sum"),
                              n_banked=("is_banked", "sum")).reset_index()
    agg["weighted_score"] = np.where(agg["wt"] > 0, agg["wsum"] / agg["wt"].where(agg["wt"] > 0), np.nan)
    df = df.merge(agg.drop(columns=["wsum", "wt"]), on=key, how="left")
    for col in ("n_submitted", "n_late", "n_banked"):
        df[col] = df[col].fillna(0).astype(int)
    due = ass[ass["date"] < t]
    n_due = due.groupby(["code_module", "code_presentation"]).size().rename("n_due").reset_index()
    df = df.merge(n_due, on=["code_module", "code_presentation"], how="left")
    df["n_due"] = df["n_due"].fillna(0).astype(int)
    subm = sa[sa["id_assessment"].isin(due["id_assessment"])].groupby(key).size().rename("n_due_submitted").reset_index()
    df = df.merge(subm, on=key, how="left")
    df["n_missed_due"] = df["n_due"] - df["n_due_submitted"].fillna(0).astype(int)
    df = df.drop(columns=["n_due_submitted"])
    df["semester"] = df["code_presentation"].str[-1]
    df["year"] = df["code_presentation"].str[:4].astype(int)
    df["at_risk"] = df["final_result"].isin(OULAD_AT_RISK).astype(int)
    df["id_student"] = df["id_student"].astype(str)
    if active_only:
        df = df[df["unregistered_by_t"] == 0].reset_index(drop=True)
    # matched module presentations: (module, semester) offered in both 2013 and 2014
    pairs = df.groupby(["code_module", "semester"])["year"].agg(lambda v: {2013, 2014} <= set(v))
    matched = pairs[pairs].index
    df = df.set_index(["code_module", "semester"]).loc[matched].reset_index()
    return df, [str(f) for f in files]


def oulad(landmark: int, n_refits: int, n_bootstrap: int, *, active_only: bool = False,
          models=("logistic_regression", "lightgbm")) -> tuple[pd.DataFrame, dict]:
    """2013 presentations (source) → the same modules' 2014 presentations (target)."""
    df, files = load_oulad(landmark, active_only=active_only)
    src = df[df["year"] == 2013].reset_index(drop=True)
    tgt = df[df["year"] == 2014].reset_index(drop=True)
    cfg = TransportConfig(
        targets=({"kind": "class", "name": "at_risk", "column": "at_risk", "positive": 1},),
        numeric=OULAD_NUMERIC, categorical=OULAD_CATEGORICAL, strata_columns=("code_module",),
        subgroup_columns=("gender", "disability"), group_column="id_student", models=tuple(models),
        mappings=("platt",), n_refits=n_refits, n_bootstrap=n_bootstrap, missing_indicators=True, stresses=(),
        seed=0, input_files=tuple(files),
    )
    res = run_transport(src, tgt, config=cfg)
    res.save(OUT / "oulad" / f"t{landmark}{'_active' if active_only else ''}")
    rows = _transfer_rows(res, cfg.models).to_dict("records")
    info = {"n_source": len(src), "n_target": len(tgt), "prev_source": float(src["at_risk"].mean()),
            "prev_target": float(tgt["at_risk"].mean()),
            "presentations": sorted(set(zip(df["code_module"], df["code_presentation"])))}
    return pd.DataFrame(rows), info


MC_TABLE_METRICS = (("metrics", "accuracy", None, None), ("metrics", "auroc_macro", None, None),
                    ("metrics", "brier_multiclass", None, None), ("metrics", "log_loss_multiclass", None, None),
                    ("metrics", "ece_top", None, None), ("metrics", "ece_classwise", None, None),
                    ("selective", "rate", None, 0.8), ("selective", "risk", None, 0.8),
                    ("conformal_marginal", "lac:coverage", 0.1, None), ("conformal_marginal", "aps:coverage", 0.1, None),
                    ("conformal_marginal", "raps:coverage", 0.1, None),
                    ("conformal_marginal", "aps:mean_set_size", 0.1, None),
                    ("conformal_label_conditional", "aps:coverage", 0.1, None))


def oulad_multiclass(landmark: int, n_refits: int, n_bootstrap: int, *, models=("logistic_regression",),
                     max_rows: int | None = None):
    """Four-class ``final_result`` (Distinction / Fail / Pass / Withdrawn), 2013 → 2014 presentations.

    ``max_rows`` keeps that many registrations of each year (seeded sample of whole rows) for quick runs.
    """
    from audit_core.transport.multiclass.run import run_multiclass_transport

    df, files = load_oulad(landmark)
    src = df[df["year"] == 2013].reset_index(drop=True)
    tgt = df[df["year"] == 2014].reset_index(drop=True)
    if max_rows is not None:
        src = src.sample(n=min(max_rows, len(src)), random_state=0).reset_index(drop=True)
        tgt = tgt.sample(n=min(max_rows, len(tgt)), random_state=1).reset_index(drop=True)
    cfg = TransportConfig(
        targets=({"kind": "class", "name": "final_result", "column": "final_result"},),
        numeric=OULAD_NUMERIC, categorical=OULAD_CATEGORICAL, strata_columns=("code_module",),
        group_column="id_student", models=tuple(models), mappings=("raw", "platt", "isotonic"), n_refits=n_refits,
        n_bootstrap=n_bootstrap, missing_indicators=True, stresses=(), seed=0, input_files=tuple(files),
    )
    res = run_multiclass_transport(src, tgt, config=cfg)
    res.save(OUT / "oulad_multiclass" / f"t{landmark}")
    v = res.verdicts.copy()
    key = lambda r: (r.analysis, r.metric, None if pd.isna(r.alpha) else r.alpha,  # noqa: E731
                     None if pd.isna(r.selection_rate) else r.selection_rate)
    v = v[(v["weighting"] == "unweighted").to_numpy() & np.array([key(r) in MC_TABLE_METRICS for r in v.itertuples()])]
    order = {k: i for i, k in enumerate(MC_TABLE_METRICS)}
    v = v.assign(_o=[order[key(r)] for r in v.itertuples()]).sort_values(["model", "mapping", "_o"])
    rows = [{"model": r.model, "mapping": r.mapping,
             "quantity": r.metric + (f" (s={r.selection_rate:g})" if not pd.isna(r.selection_rate) else "")
             + (f" (α={r.alpha:g}, {'by class' if 'conditional' in r.analysis else 'marginal'})"
                if not pd.isna(r.alpha) else ""),
             "ID": r.id_value, "OOD": r.ood_value, "Δ": r.delta, "CI": f"[{r.ci_low:.3f}, {r.ci_high:.3f}]",
             "δ": r.tolerance, "verdict": r.verdict} for r in v.itertuples()]
    counts = {str(k): int(x) for k, x in src["final_result"].value_counts().items()}
    info = {"n_source": len(src), "n_target": len(tgt), "classes": list(res.classes), "source_counts": counts,
            "target_counts": {str(k): int(x) for k, x in tgt["final_result"].value_counts().items()}}
    return pd.DataFrame(rows), info, res


def markdown(df: pd.DataFrame) -> str:
    """A Markdown table without optional dependencies."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join("" if (isinstance(v, float) and np.isnan(v)) else (f"{v:.3f}" if isinstance(v, float) else str(v)) for v in row) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", choices=["heart", "credit", "acs", "oulad", "oulad-mc"])
    ap.add_argument("--state", default="pa", choices=["pa", "ga"])
    ap.add_argument("--refits", type=int, default=None)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--sets", type=int, default=20)
    ap.add_argument("--landmark", type=int, default=60, help="OULAD: day t of the landmark (days from module start)")
    ap.add_argument("--active-only", action="store_true", help="OULAD: drop registrations unregistered before t")
    ap.add_argument("--models", default="logistic_regression", help="oulad-mc: comma-separated zoo kinds")
    ap.add_argument("--max-rows", type=int, default=None, help="oulad-mc: registrations kept per year")
    args = ap.parse_args()
    if args.dataset == "oulad-mc":
        table, info, _ = oulad_multiclass(args.landmark, args.refits or 5, args.bootstrap,
                                          models=tuple(args.models.split(",")), max_rows=args.max_rows)
        print(info)
        print(markdown(table))
        return 0
    if args.dataset == "acs":
        print(markdown(acs(args.state, args.refits or 5, args.bootstrap)))
    elif args.dataset == "oulad":
        table, info = oulad(args.landmark, args.refits or 10, args.bootstrap, active_only=args.active_only)
        print(info)
        print(markdown(table))
    elif args.dataset == "heart":
        print(markdown(heart(args.refits or 10, args.bootstrap)))
    else:
        table, pct = credit(args.refits or 20, args.sets)
        print(markdown(table))
        print()
        print(markdown(pct))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
