"""Fragility engine benchmark (synthetic data). Run: python benchmarks/bench_fragility.py

Prints, for LightGBM and logistic regression on 5,000 cases × 20 groups:
(1) static certificates (K=5, three families, 10 severities, R=10) vs one
    predict_proba on the same total rows stacked into one matrix;
(2) speed-up over a straightforward per-case loop (measured on a subset and
    scaled per case);
(3) cost per case vs shap's PermutationExplainer with the groups as the
    masker's features (default max_evals=500);
and (4) peak resident memory of 200,000 cases × 30 groups in chunks,
measured with resource.getrusage in a fresh subprocess.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audit_core.data.groups import Grouping  # noqa: E402
from audit_core.fragility import FragilityConfig, certify, column_scale  # noqa: E402
from audit_core.fragility.engine import protocol_for, rows_per_case  # noqa: E402
from audit_core.fragility.evaluation import group_shap_scores  # noqa: E402
from audit_core.models.probs import clip_probs, margin_of, pseudo_logits  # noqa: E402


def synthetic(n: int, G: int, per_group: int = 2, seed: int = 0):
    """Cases X, training labels, training matrix and grouping (labels belong to the training half)."""
    rng = np.random.default_rng(seed)
    F = G * per_group
    X = rng.normal(size=(2 * n, F))
    w = rng.normal(size=F) * (rng.random(F) < 0.6)
    y = (X @ w + 0.5 * np.sin(3 * X[:, 0]) + rng.normal(size=2 * n) > 0).astype(int)
    group_of = tuple(f"g{j // per_group}" for j in range(F))
    feats = tuple(f"f{j}" for j in range(F))
    return X[:n], y[n:], X[n:], Grouping(feats, feats, group_of, tuple(dict.fromkeys(group_of)))


def models(Xtr, ytr):
    from lightgbm import LGBMClassifier
    from sklearn.linear_model import LogisticRegression

    from audit_core.models.zoo import ModelSpec, make_estimator

    lgb = make_estimator(ModelSpec(kind="lightgbm", seed=0)).fit(Xtr, ytr)
    lr = LogisticRegression(max_iter=2000).fit(Xtr, ytr)
    return {"lightgbm": lgb, "logistic_regression": lr}


def per_case_reference(model, X, grouping, base, scale, cfg: FragilityConfig):
    """Straightforward loop: one case at a time, one predict call per perturbed row set."""
    from audit_core.fragility.operators import degrade, draw_uniforms

    cols = grouping.index
    G, K, L = grouping.n_groups, cfg.k, len(cfg.grid)
    draws = {f: draw_uniforms(f, n_draws=cfg.n_draws, n_features=X.shape[1], seed=cfg.seed) for f in cfg.families}
    out = []
    for x in X:
        p = clip_probs(model.predict_proba(x[None]))[0]
        y = int(p.argmax())
        m0 = margin_of(pseudo_logits(p), y)
        deltas = []
        for g in range(G):
            xr = x.copy()
            xr[cols[g]] = base[cols[g]]
            deltas.append(m0 - margin_of(pseudo_logits(model.predict_proba(xr[None])), y)[0])
        order = np.argsort(-np.array(deltas), kind="stable")
        xr = x.copy()
        ms = []
        for k in range(K):
            xr[cols[order[k]]] = base[cols[order[k]]]
            ms.append(margin_of(pseudo_logits(model.predict_proba(xr[None])), y)[0])
        mask = np.zeros(len(x), dtype=bool)
        for g in order[:K]:
            mask[cols[g]] = True
        for fam in cfg.families:
            for lam in cfg.grid:
                us = draws[fam] if draws[fam] is not None else [None]
                for u in us:
                    xd = degrade(fam, x[None], mask=mask, lam=lam, baseline=base, scale=scale, u=u)
                    margin_of(pseudo_logits(model.predict_proba(xd)), y)
        out.append((deltas, ms))
    return out


def memory_child() -> None:
    from sklearn.linear_model import LogisticRegression

    X, y, Xtr, grouping = synthetic(200_000, 30, per_group=1, seed=1)
    lr = LogisticRegression(max_iter=1000).fit(Xtr[:20_000], y[:20_000])
    t = time.perf_counter()
    b = certify(lr, X, grouping=grouping, baseline=Xtr.mean(0), scale=column_scale(Xtr),
                config=FragilityConfig(k=5, chunk_rows=200_000))
    dt = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    print(f"{len(b)} {dt:.1f} {peak:.0f}")


def main() -> None:
    n, G = 5_000, 20
    X, y, Xtr, grouping = synthetic(n, G)
    base, scale = Xtr.mean(0), column_scale(Xtr)
    cfg = FragilityConfig(k=5, n_draws=10)
    proto = protocol_for(grouping, baseline=base, scale=scale, baseline_kind="mean", config=cfg)
    total_rows = n * (1 + G) + n * (rows_per_case(proto))
    print(f"synthetic: {n} cases, {G} groups, {X.shape[1]} features; K=5, families=3, severities=10, R=10; "
          f"{total_rows:,} perturbed rows")
    ms = models(Xtr, y)
    rng = np.random.default_rng(0)
    for name, model in ms.items():
        t = time.perf_counter()
        b = certify(model, X, grouping=grouping, baseline=base, scale=scale, config=cfg)
        t_cert = time.perf_counter() - t
        stacked = X[rng.integers(0, n, size=total_rows)]
        t = time.perf_counter()
        model.predict_proba(stacked)
        t_pred = time.perf_counter() - t
        del stacked
        n_ref = 20 if name == "lightgbm" else 50
        t = time.perf_counter()
        per_case_reference(model, X[:n_ref], grouping, base, scale, proto_cfg(cfg, proto))
        t_ref = (time.perf_counter() - t) / n_ref
        n_shap = 10
        t = time.perf_counter()
        group_shap_scores(model, X[:n_shap], Xtr, group_columns=grouping.index, n_background=20, max_evals=500)
        t_shap = (time.perf_counter() - t) / n_shap
        per_case = t_cert / n
        print(f"[{name}] (1) certificates {t_cert:.2f}s vs stacked predict_proba {t_pred:.2f}s -> ratio {t_cert / t_pred:.2f}x "
              f"(target <= 1.5x for LightGBM); mean FDS {b.fds.mean():.3f}")
        print(f"[{name}] (2) per-case loop {t_ref * 1e3:.1f} ms/case vs batched {per_case * 1e3:.2f} ms/case -> "
              f"speed-up {t_ref / per_case:.0f}x (target >= 20x)")
        print(f"[{name}] (3) shap PermutationExplainer (groups as masker features, max_evals=500, 20 background rows) "
              f"{t_shap * 1e3:.1f} ms/case vs certificate {per_case * 1e3:.2f} ms/case -> shap/certificate {t_shap / per_case:.1f}x")
    out = subprocess.run([sys.executable, __file__, "--memory-child"], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    n_cases, secs, peak = out.stdout.split()[-3:]
    print(f"(4) memory: {int(n_cases):,} cases x 30 groups (logistic regression, chunks of <= 200,000 rows): "
          f"peak RSS {float(peak):.0f} MiB in {float(secs):.0f}s (target < 2 GB)")


def proto_cfg(cfg: FragilityConfig, proto) -> FragilityConfig:
    return FragilityConfig(k=proto.k, families=proto.families, grid=proto.grid, n_draws=proto.n_draws, seed=proto.seed)


if __name__ == "__main__":
    if "--memory-child" in sys.argv:
        memory_child()
    else:
        main()
