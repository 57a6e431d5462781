"""Transport protocol cost against honest baselines, measured side by side (SPEC §2 speed check).

Run from the project root::

    python benchmarks/bench_transport.py [--repeats 3] [--blas-threads 1]

Every figure is CPU time (``time.process_time``: all threads of this process)
on the benchmark size (LR, Platt, 10 refits, 500 bootstraps, 100,000 source
and 75,000 target synthetic rows). BLAS is limited to ``--blas-threads``
threads for *both* sides with threadpoolctl (the protocol's own numerics always
run on one thread; see ``audit_core/transport/blas.py``). A and B alternate
within one process (ABAB…, the order flipping each repeat) and each ratio is
printed as the median with the min–max over the repeats.

1. **Protocol vs bare fits.** The whole protocol (binned-cell bootstrap, the
   default) against the same 10 bare fit + ``predict_proba`` calls (same
   preprocessing, same train partitions, predictions on the held-out source
   rows and the target rows). Overhead = protocol − bare, in % of bare.
2. **Binned vs exact bootstrap.** The classify-stage bootstrap alone on the
   same fitted pipelines, ``exact_bootstrap=False`` against ``True``, with the
   largest difference of the interval endpoints they give.
3. **Point evaluation vs MAPIE + scikit-learn.** One evaluation of the same
   quantities on the same predictions (refit 0, target rows): metric registry,
   selective rules, marginal and label-conditional conformal sets fitted on
   the selection partition. The peer uses scikit-learn's metrics, MAPIE's
   ``SplitConformalClassifier`` (prefit, LAC score) for the marginal sets and
   NumPy for what neither library has (selective rates and risks, AURC,
   per-class quantiles). When MAPIE is not installed
   (``pip install -r requirements-bench.txt``), the peer is scikit-learn +
   NumPy and the line says so.

   Then binned against exact is judged against reseeding: the largest endpoint
   gap and the verdict flips of binned vs exact are printed next to those of
   the exact bootstrap against itself with another seed (the first must not
   exceed the second).

Part 1 also prints the overhead by stage (each stage's CPU in % of the same
repeat's bare fits; the feature shift, inside the heterogeneity stage, on its
own line) against the goals of issue 25.

``--stresses`` also times stage 6 (degradation, capped at 20,000 rows per test
set) once. ``--skip-exact`` skips part 2 (each exact bootstrap takes about 20 s).
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.models.zoo import ModelSpec, train_model  # noqa: E402
from audit_core.transport import TransportAudit, TransportConfig  # noqa: E402
from audit_core.transport.changes import replicates  # noqa: E402
from audit_core.transport.splits import PARTITIONS  # noqa: E402

STAGES = ("split", "fit", "evaluate", "transport", "classify", "stress", "heterogeneity")  # heterogeneity: without the feature shift


def synthetic(n: int, *, shift: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(shift * 0.3, 1.0, size=(n, 10))
    cat_a = rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1] if shift == 0 else [0.25, 0.25, 0.25, 0.25])
    cat_b = rng.choice(["u", "v", "w"], n)
    logit = X[:, :5] @ np.array([1.0, -0.8, 0.6, 0.4, -0.3]) + (cat_a == "a") * 0.5 - 1.0 + shift * 0.4
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    df["cat_a"], df["cat_b"], df["y"] = cat_a, cat_b, y
    return df


NUMERIC = tuple(f"x{i}" for i in range(10))
CATEGORICAL = ("cat_a", "cat_b")


def cpu(f, *a, **k):
    """(CPU seconds, result) of ``f(*a, **k)``."""
    t = time.process_time()
    out = f(*a, **k)
    return time.process_time() - t, out


def summary(values) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}–{max(values):.2f}]"


def ratio_line(name: str, a: list[float], b: list[float], *, percent_over: bool = False) -> str:
    r = [x / y for x, y in zip(a, b)]
    if percent_over:
        r = [100 * (x - 1) for x in r]
        return f"{name}: {statistics.median(r):.0f}% [{min(r):.0f}–{max(r):.0f}%]"
    return f"{name}: {statistics.median(r):.2f}x [{min(r):.2f}–{max(r):.2f}]"


# ------------------------------------------------------------ 1. protocol vs bare fits
#: the issue 25 shares of the bare fits' CPU: whole overhead, bootstrap (classify) and feature shift
GOALS = {"total": 150.0, "classify": 50.0, "feature shift": 30.0}


def stage_overhead(stages: dict, t_prot: list[float], t_bare: list[float]) -> list[str]:
    """One line per stage: its CPU in % of the same repeat's bare fits, median [min–max].

    ``fit`` is reported beyond the bare fits (the fit stage's CPU minus the bare fits'), so the
    lines add up to the total overhead; the goal of a stage, when it has one, is printed beside it.
    """
    out = []
    n = len(t_bare)
    rows = {k: v[-n:] for k, v in stages.items()}
    rows["fit"] = [f - b for f, b in zip(rows["fit"], t_bare, strict=True)]
    rows["total"] = [p - b for p, b in zip(t_prot, t_bare, strict=True)]
    for k, v in rows.items():
        r = [100 * x / b for x, b in zip(v, t_bare, strict=True)]
        goal = f"  (goal <= {GOALS[k]:.0f}%)" if k in GOALS else ""
        label = "fit beyond the bare fits" if k == "fit" else k
        out.append(f"{label:<26} {statistics.median(r):6.1f}% [{min(r):.1f}–{max(r):.1f}%]{goal}")
    return out


def protocol(cfg, src, tgt, stage_times: dict) -> TransportAudit:
    """Run the protocol stage by stage, adding each stage's CPU to ``stage_times``.

    The feature shift (inside the heterogeneity stage) is timed on its own as ``feature shift``
    (its time stays in ``heterogeneity`` too; the by-stage table subtracts it).
    """
    import audit_core.transport.heterogeneity as het

    inner = het.shift_tables
    spent = []

    def timed(state):
        t, out = cpu(inner, state)
        spent.append(t)
        return out

    het.shift_tables = timed
    try:
        return _protocol(cfg, src, tgt, stage_times, spent)
    finally:
        het.shift_tables = inner


def _protocol(cfg, src, tgt, stage_times: dict, spent: list) -> TransportAudit:
    audit = TransportAudit(cfg)
    t, _ = cpu(audit.declare, src, tgt)
    stage_times.setdefault("declare", []).append(t)
    for stage in STAGES:
        t, _ = cpu(getattr(audit, stage))
        stage_times.setdefault(stage, []).append(t)
    stage_times.setdefault("feature shift", []).append(sum(spent))
    stage_times["heterogeneity"][-1] -= sum(spent)
    t, res = cpu(audit.result)
    stage_times.setdefault("result", []).append(t)
    audit.res = res
    return audit


def bare_fits(audit, src, tgt) -> None:
    for r in range(audit.config.n_refits):
        tr = np.flatnonzero(audit.state.split.codes[r] == PARTITIONS.index("train"))
        fm = train_model(src.iloc[tr], src["y"].to_numpy()[tr], spec=ModelSpec(kind="logistic_regression", seed=r),
                         numeric=NUMERIC, categorical=CATEGORICAL)
        rest = np.flatnonzero(audit.state.split.codes[r] != PARTITIONS.index("train"))
        fm.predict_proba(src.iloc[rest])
        fm.predict_proba(tgt)


# ------------------------------------------------------------ 2. binned vs exact bootstrap
def bootstrap_only(audit, cfg, exact: bool) -> dict:
    state = replace(audit.state, config=replace(cfg, exact_bootstrap=exact))
    with audit_serial():
        return replicates(state)


def reseeding_check(audit, cfg) -> tuple[dict, dict]:
    """Verdict agreement of binned vs exact, and of exact vs exact with another bootstrap seed."""
    from audit_core.transport.changes import classify_changes
    from audit_core.transport.verdicts import verdict_agreement

    def verdicts(**kw):
        with audit_serial():
            return classify_changes(replace(audit.state, config=replace(cfg, **kw)))[1]

    exact = verdicts(exact_bootstrap=True)
    return (verdict_agreement(verdicts(exact_bootstrap=False), exact),
            verdict_agreement(verdicts(exact_bootstrap=True, seed=cfg.seed + 1), exact))


def audit_serial():
    from audit_core.transport.blas import serial_blas as _serial_blas

    return _serial_blas()


def endpoint_gap(a: dict, b: dict, level: float) -> tuple[float, float]:
    """Largest |Δ endpoint| of the refit-averaged intervals: over all statistics, and over step statistics."""
    from audit_core.transport.bootstrap import percentile_interval

    worst = worst_step = 0.0
    for k in a:
        la, ha = percentile_interval(np.nanmean(a[k], axis=0), level)
        lb, hb = percentile_interval(np.nanmean(b[k], axis=0), level)
        g = max(abs(la - lb), abs(ha - hb))
        if np.isfinite(g):
            worst = max(worst, g)
            if k[4] not in ("auroc", "average_precision", "pr_skill", "brier_score", "log_loss", "ece",
                            "calibration_intercept", "calibration_slope"):
                worst_step = max(worst_step, g)
    return worst, worst_step


# ------------------------------------------------------------ 3. point evaluation vs MAPIE + scikit-learn
def ours(y_sel, p_sel, y, p, cfg):
    from audit_core.transport.evaluation import evaluate_pipeline, fit_rules

    rules = fit_rules(y_sel, p_sel, selection_rates=cfg.selection_rates, alphas=cfg.alphas,
                      hcep_thresholds=cfg.hcep_thresholds)
    return {(r["analysis"], r["metric"], r.get("alpha"), r.get("selection_rate")): r["value"]
            for r in evaluate_pipeline(y, p, rules, n_bins=cfg.n_bins)}


def _peer_estimator():
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Probabilities(ClassifierMixin, BaseEstimator):
        """A prefit classifier whose single input column is the mapped probability."""

        def fit(self, X, y):
            self.classes_ = np.array([0, 1])
            return self

        def predict_proba(self, X):
            q = np.asarray(X, dtype=float)[:, 0]
            return np.stack([1 - q, q], axis=1)

        def predict(self, X):
            return (np.asarray(X, dtype=float)[:, 0] >= 0.5).astype(int)

    return Probabilities()


def peer(y_sel, p_sel, y, p, cfg, use_mapie: bool):
    """The same quantities with scikit-learn (+ MAPIE), as a user of those libraries would write them."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score, brier_score_loss, log_loss, roc_auc_score

    out = {}
    q = np.clip(p, 1e-8, 1 - 1e-8)
    out["prevalence"] = y.mean()
    out["auroc"] = roc_auc_score(y, p)
    ap = average_precision_score(y, p)
    out["average_precision"], out["pr_skill"] = ap, (ap - y.mean()) / (1 - y.mean())
    out["brier_score"], out["log_loss"] = brier_score_loss(y, p), log_loss(y, q)
    edges = np.linspace(0, 1, cfg.n_bins + 1)
    ids = np.searchsorted(edges[1:-1], p)  # the binning of sklearn's calibration_curve(strategy="uniform")
    cnt = np.bincount(ids, minlength=cfg.n_bins)
    gap = np.bincount(ids, weights=y - p, minlength=cfg.n_bins)
    out["ece"] = np.abs(gap).sum() / cnt.sum()
    lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(np.log(q / (1 - q))[:, None], y)
    out["calibration_intercept"], out["calibration_slope"] = lr.intercept_[0], lr.coef_[0, 0]
    c_sel, c = np.maximum(p_sel, 1 - p_sel), np.maximum(p, 1 - p)
    err = (p >= 0.5).astype(int) != y
    srt = np.sort(c_sel)[::-1]
    for s in cfg.selection_rates:
        tau = srt[int(np.ceil(s * len(srt))) - 1]  # ties enter together through c >= tau
        sel = c >= tau
        out[("rate", s)], out[("risk", s)] = sel.mean(), err[sel].mean()
    for t in cfg.hcep_thresholds:
        out[("hcep", t)] = (err & (c >= t)).mean()
    order = np.argsort(-c, kind="stable")
    out["aurc"] = np.mean(np.cumsum(err[order]) / np.arange(1, len(y) + 1))
    conf = [1 - a for a in cfg.alphas]
    if use_mapie:
        from mapie.classification import SplitConformalClassifier

        mapie = SplitConformalClassifier(_peer_estimator().fit(p_sel[:, None], y_sel), confidence_level=conf,
                                         conformity_score="lac", prefit=True)
        mapie.conformalize(p_sel[:, None], y_sel)
        _, sets = mapie.predict_set(p[:, None])  # (n, 2, n_alpha)
    else:
        s_cal = np.where(y_sel == 1, 1 - p_sel, p_sel)
        sets = np.stack([np.stack([p <= qh, 1 - p <= qh], axis=1) for qh in
                         (np.quantile(s_cal, min(1, np.ceil((len(s_cal) + 1) * cl) / len(s_cal)), method="higher")
                          for cl in conf)], axis=2)
    for j, a in enumerate(cfg.alphas):
        out[("coverage", a)] = sets[np.arange(len(y)), y, j].mean()
        out[("size", a)] = sets[:, :, j].sum(axis=1).mean()
        qc = [np.quantile(np.where(y_sel == k, 1 - p_sel, p_sel)[y_sel == k],
                          min(1, np.ceil(((y_sel == k).sum() + 1) * (1 - a)) / (y_sel == k).sum()), method="higher")
              for k in (0, 1)]
        lc = np.stack([p <= qc[0], 1 - p <= qc[1]], axis=1)
        out[("lc_coverage", a)] = lc[np.arange(len(y)), y].mean()
        out[("lc_size", a)] = lc.sum(axis=1).mean()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--eval-repeats", type=int, default=9)
    ap.add_argument("--blas-threads", type=int, default=1)
    ap.add_argument("--refits", type=int, default=10)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--skip-exact", action="store_true")
    ap.add_argument("--stresses", action="store_true")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    src, tgt = synthetic(100_000, shift=0.0, seed=1), synthetic(75_000, shift=1.0, seed=2)
    cfg = TransportConfig(targets=({"kind": "class", "name": "y", "column": "y", "positive": 1},), numeric=NUMERIC,
                          categorical=CATEGORICAL, models=("logistic_regression",), mappings=("platt",),
                          n_refits=args.refits, n_bootstrap=args.bootstrap, stresses=())
    print(f"benchmark: LR, Platt, {cfg.n_refits} refits, {cfg.n_bootstrap} bootstraps, {len(src)} source / "
          f"{len(tgt)} target rows; BLAS threads {args.blas_threads} on both sides; CPU seconds, "
          f"median [min–max] of {args.repeats} alternated repeats")
    with threadpool_limits(limits=args.blas_threads, user_api="blas"):
        audit = protocol(cfg, src, tgt, {})  # warm-up (imports, caches); not counted
        bare_fits(audit, src, tgt)
        t_prot, t_bare, stages = [], [], {}
        for rep in range(args.repeats):
            order = ("protocol", "bare") if rep % 2 == 0 else ("bare", "protocol")
            for what in order:
                if what == "protocol":
                    t, audit = cpu(protocol, cfg, src, tgt, stages)
                    t_prot.append(t)
                else:
                    t, _ = cpu(bare_fits, audit, src, tgt)
                    t_bare.append(t)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"1. protocol (binned bootstrap): {summary(t_prot)} s; bare {cfg.n_refits} x (fit + predict_proba): "
              f"{summary(t_bare)} s")
        print("   " + ratio_line("overhead beyond the bare fits (goal <= 150%)", t_prot, t_bare, percent_over=True))
        print("   stage CPU seconds (median): " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in stages.items()))
        print("   overhead by stage, % of the bare fits (median [min–max] over the repeats):")
        for line in stage_overhead(stages, t_prot, t_bare):
            print("     " + line)
        print(f"   result rows {len(audit.res.table)}; peak RSS {rss:.0f} MiB")

        if not args.skip_exact:
            tb, te, gaps = [], [], None
            for rep in range(args.repeats):
                for exact in ((False, True) if rep % 2 == 0 else (True, False)):
                    t, out = cpu(bootstrap_only, audit, cfg, exact)
                    (te if exact else tb).append(t)
                    if exact:
                        ex = out
                    else:
                        bi = out
                gaps = endpoint_gap(bi, ex, cfg.level)
            print(f"2. bootstrap alone: binned {summary(tb)} s, exact {summary(te)} s; "
                  + ratio_line("exact / binned", te, tb))
            print(f"   largest |endpoint difference| of the verdict intervals: {gaps[0]:.1e} "
                  f"(step statistics: {gaps[1]:.1e})")
            be, ee = reseeding_check(audit, cfg)
            print(f"   judged against reseeding ({be['rows']} verdicts): binned vs exact: largest |Δ endpoint| "
                  f"{be['max_gap']:.2e} ({be['max_gap_width']:.1%} of the width), {be['flips']} verdict flips; "
                  f"exact vs exact reseeded: {ee['max_gap']:.2e} ({ee['max_gap_width']:.1%}), {ee['flips']} flips "
                  f"-> {'OK' if be['max_gap'] <= ee['max_gap'] and be['flips'] <= ee['flips'] else 'NOT MET'}")

        try:
            import mapie  # noqa: F401

            use_mapie, label = True, f"MAPIE {mapie.__version__} + scikit-learn"
        except ImportError:
            use_mapie, label = False, "scikit-learn + NumPy (MAPIE not installed)"
        pipe = audit.state.pipes[(0, "logistic_regression")]
        sel = audit.state.source_rows(0, "selection")
        y_sel = audit.state.y_source["y"][sel]
        p_sel = pipe["maps"]["platt"](pipe["raw"]["selection"])
        y, p = audit.state.y_target["y"], audit.state.mapped(0, "logistic_regression", "platt", "ood")
        a, b = ours(y_sel, p_sel, y, p, cfg), peer(y_sel, p_sel, y, p, cfg, use_mapie)
        checks = [(a[("metrics", "auroc", None, None)], b["auroc"]),
                  (a[("metrics", "average_precision", None, None)], b["average_precision"]),
                  (a[("metrics", "calibration_slope", None, None)], b["calibration_slope"]),
                  (a[("conformal_marginal", "coverage", 0.1, None)], b[("coverage", 0.1)])]
        agree = max(abs(u - v) for u, v in checks)
        t_ours, t_peer = [], []
        with audit_serial():
            for rep in range(args.eval_repeats):
                for who in (("ours", "peer") if rep % 2 == 0 else ("peer", "ours")):
                    if who == "ours":
                        t_ours.append(cpu(ours, y_sel, p_sel, y, p, cfg)[0])
                    else:
                        t_peer.append(cpu(peer, y_sel, p_sel, y, p, cfg, use_mapie)[0])
        print(f"3. point evaluation on {len(y)} records (+ rules from {len(y_sel)} selection records): ours "
              f"{summary(t_ours)} s, {label} {summary(t_peer)} s; " + ratio_line("ours / peer", t_ours, t_peer)
              + f"; largest difference on AUROC, AP, slope, coverage {agree:.1e}")

        if args.stresses:
            cfg2 = replace(cfg, stresses=("degradation",))
            t, _ = cpu(TransportAudit(cfg2).run, src, tgt)
            print(f"protocol with degradation stress (J={cfg2.n_random_sets}, cap {cfg2.stress_max_rows} rows): "
                  f"{t:.2f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
