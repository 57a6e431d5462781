"""Fragility engine benchmark (synthetic data), every ratio in CPU time, A and B alternated in one run.

Run: ``python benchmarks/bench_fragility.py`` (defaults: 5,000 cases × 20 groups of 2 features, K = 5,
three families, 10 severities, R = 10; 5 repeats). Options: ``--cases``, ``--groups``, ``--repeats``,
``--models`` (comma list), ``--skip-shap``, ``--skip-memory``, ``--memory-cases``.

For each model it prints, side by side:

(1) **certificates ÷ the limit**. The limit is ``predict_proba`` on the *distinct* rows the method needs
    (every row the generic engine builds, deduplicated by value within each case), in the model's
    fastest layout (the fastest of case-major and block-major, one call or 64 MiB calls, and for
    histogram gradient boosting one OpenMP thread or the default threads, for a scikit-learn forest
    the loop over its trees or its predict_proba, timed once each before the repeats). Also the generic engine ÷ the default engine, and whether the default
    engine's certificates equal the generic engine's (bit for bit for the row engines; for the linear
    path: orders, k*, j* and flip rates equal, and the largest difference of a continuous output);
(2) **the engine called one case at a time** ÷ the batched engine, per case;
(3) **SHAP warm** (imports and first call done before timing) ÷ certificates, per case, with the
    explainer SHAP picks itself (``shap.Explainer(model, 100 training rows)``: Tree for tree ensembles,
    Linear for logistic regression, Permutation for a model it does not recognise), named in the line;
and (4) peak RSS of 1,000,000 cases × 30 groups (logistic regression, the linear path) and of 200,000
cases × 30 groups on the distinct-row engine, each in a fresh subprocess (``resource.getrusage``).

Every ratio is the median over the repeats with its min–max; A and B alternate (their order swaps on
every repeat), so load from other processes on the shared cores hits both.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audit_core.data.groups import Grouping  # noqa: E402
from audit_core.fragility import FragilityConfig, certify, column_scale  # noqa: E402
from audit_core.fragility.engine import protocol_for, rows_per_case  # noqa: E402
from audit_core.fragility.generic import as_predict, certify_chunk_generic, make_context  # noqa: E402

MODELS = ("lightgbm", "random_forest", "hist_gradient_boosting", "mlp", "logistic_regression")
FIELDS = ("p0", "y_hat", "p_hat", "m0", "delta", "order", "path_groups", "path_margins", "path_labels", "k_star",
          "rcma", "d", "fds")
DISCRETE = ("y_hat", "order", "path_groups", "path_labels", "k_star")


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


def fit(kind: str, Xtr: np.ndarray, ytr: np.ndarray):
    from audit_core.models.zoo import ModelSpec, make_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_estimator(ModelSpec(kind=kind, seed=0)).fit(Xtr, ytr)


def cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def distinct_rows(model, X: np.ndarray, proto) -> tuple[np.ndarray, np.ndarray, int]:
    """Every row the generic engine predicts, deduplicated by value within each case.

    Returns the distinct rows case-major, the same rows in the generic (block-major) order, and the
    total number of rows the generic engine predicts.
    """
    ctx = make_context(model, proto, X.shape[1], None)
    real = as_predict(model)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    n = len(X)

    def record(rows: np.ndarray) -> np.ndarray:
        seen.append((rows.copy(), np.arange(len(rows)) % n))
        return real(rows)

    ctx.predict = record
    certify_chunk_generic(ctx, X, np.arange(n))
    rows = np.concatenate([r for r, _ in seen])
    case = np.concatenate([c for _, c in seen])
    total = len(rows)
    key = np.ascontiguousarray(np.column_stack([case.astype(float), rows]))
    _, first = np.unique(key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel(), return_index=True)
    first = np.sort(first)  # generic order
    case_major = first[np.lexsort((first, case[first]))]
    return rows[case_major], rows[first], total


def engine_predict_name(model) -> str:
    """How the engine predicts a model it does not call through ``predict_proba`` itself."""
    return "1 OpenMP thread" if type(model).__name__.startswith("HistGradientBoosting") else "loop over its trees"


def limit_layout(model, case_major: np.ndarray, block_major: np.ndarray) -> tuple[str, object, dict]:
    """Time predict_proba once in each layout; return the fastest one as a callable.

    The layouts include the thread setting where the engine chooses one: for histogram gradient
    boosting the engine predicts on one OpenMP thread, so the limit is timed both on one thread and
    on scikit-learn's default threads, and the faster counts; a scikit-learn forest is predicted by a
    loop over its trees (same bits), so the limit is timed with that loop and with ``predict_proba``.
    """
    predicts = {"": as_predict(model)}
    if hasattr(model, "predict_proba") and predicts[""] != model.predict_proba:  # bound methods: ==, not is
        predicts = {f", {engine_predict_name(model)}": predicts[""], ", its predict_proba": model.predict_proba}
    step = max(1, (64 << 20) // (8 * case_major.shape[1]))

    def chunked(predict, rows):
        return lambda: [predict(rows[lo:lo + step]) for lo in range(0, len(rows), step)]

    layouts = {}
    for tag, predict in predicts.items():
        layouts.update({
            f"case-major, one call{tag}": (lambda f: lambda: f(case_major))(predict),
            f"case-major, 64 MiB calls{tag}": chunked(predict, case_major),
            f"block-major, one call{tag}": (lambda f: lambda: f(block_major))(predict),
            f"block-major, 64 MiB calls{tag}": chunked(predict, block_major),
        })
    times = {name: cpu(fn) for name, fn in layouts.items()}
    best = min(times, key=times.get)
    return best, layouts[best], times


def alternate(fa, fb, repeats: int) -> tuple[list[float], list[float]]:
    """CPU times of A and B, alternated; the order swaps on every repeat."""
    ta, tb = [], []
    for r in range(repeats):
        if r % 2 == 0:
            ta.append(cpu(fa))
            tb.append(cpu(fb))
        else:
            tb.append(cpu(fb))
            ta.append(cpu(fa))
    return ta, tb


def ratio_text(a: list[float], b: list[float], scale_a: float = 1.0, scale_b: float = 1.0) -> str:
    r = np.array(a) / scale_a / (np.array(b) / scale_b)
    return f"{np.median(r):.2f}x [{r.min():.2f}-{r.max():.2f}]"


def compare(ref, new) -> tuple[bool, float, bool]:
    """(bit-identical, largest continuous difference, discrete outputs equal)."""
    same, worst, discrete = True, 0.0, True
    pairs = [(f, getattr(ref, f), getattr(new, f)) for f in FIELDS]
    for f in ("curves", "flip_rates", "j_star", "d_family"):
        pairs += [(f"{f}.{k}", getattr(ref, f)[k], getattr(new, f)[k]) for k in getattr(ref, f)]
    for name, a, b in pairs:
        if not np.array_equal(a, b):
            same = False
            if name in DISCRETE or name.startswith(("flip_rates", "j_star")):
                discrete = False
            else:
                worst = max(worst, float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float)))))
    return same, worst, discrete


def bench_model(kind: str, X, y, Xtr, grouping, cfg: FragilityConfig, args) -> None:
    base, scale = Xtr.mean(0), column_scale(Xtr)
    model = fit(kind, Xtr, y)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    n = len(X)
    run = lambda: certify(model, X, config=cfg, **kw)  # noqa: E731
    if args.shap_only:
        return bench_shap(kind, model, X, Xtr, grouping, run, args)
    proto = protocol_for(grouping, baseline=base, scale=scale, baseline_kind="mean", config=cfg)
    case_major, block_major, total = distinct_rows(model, X, proto)
    layout, limit, layout_times = limit_layout(model, case_major, block_major)
    batch = certify(model, X, config=cfg, **kw)
    ref = certify(model, X, config=FragilityConfig(**{**cfg.__dict__, "engine": "generic"}), **kw)
    same, worst, discrete = compare(ref, batch)
    print(f"[{kind}] engine {batch.engine}; rows per case: generic {total / n:.1f}, distinct {len(case_major) / n:.1f}"
          + (f", predicted {batch.n_predicted / n:.1f}" if batch.engine == "distinct" else "")
          + "; limit layout: " + ", ".join(f"{k} {v:.2f}s" for k, v in layout_times.items()) + f" -> {layout}")
    check = ("bit-identical to generic" if same else
             f"orders, k*, j*, flip rates {'equal' if discrete else 'DIFFER'}; max continuous diff {worst:.1e}")
    gen = lambda: certify(model, X, config=FragilityConfig(**{**cfg.__dict__, "engine": "generic"}), **kw)  # noqa: E731
    ta, tb = alternate(run, limit, args.repeats)
    tg, ta2 = alternate(gen, run, max(1, args.repeats // 2 + 1))
    target = 1.5 if batch.engine == "linear" else 1.2
    print(f"[{kind}] (1) certificates {np.median(ta):.2f}s vs limit {np.median(tb):.2f}s -> {ratio_text(ta, tb)} "
          f"(target <= {target}x); generic engine / this engine {ratio_text(tg, ta2)}; {check}")
    if hasattr(model, "predict_proba") and as_predict(model) != model.predict_proba:
        # the engine wraps this model's predict (one OpenMP thread, or a loop over a forest's trees); a bare
        # callable is not wrapped, so it shows what the certificates cost before, side by side with the same limit
        bare = lambda: certify(lambda A: model.predict_proba(A), X, config=cfg, **kw)  # noqa: E731
        tw, tl2 = alternate(bare, limit, args.repeats)
        print(f"[{kind}] (1b) before the {engine_predict_name(model)}: certificates through the model's "
              f"predict_proba {np.median(tw):.2f}s vs the same limit {np.median(tl2):.2f}s -> {ratio_text(tw, tl2)}")
    m = min(args.per_case, n)
    one = lambda: [certify(model, X[i:i + 1], config=cfg, **kw) for i in range(m)]  # noqa: E731
    tl, tbat = alternate(one, run, max(2, args.repeats // 2))
    print(f"[{kind}] (2) engine one case at a time ({m} cases) {np.median(tl) / m * 1e3:.2f} ms/case vs batched "
          f"{np.median(tbat) / n * 1e3:.3f} ms/case -> {ratio_text(tl, tbat, m, n)}")
    if not args.skip_shap:
        bench_shap(kind, model, X, Xtr, grouping, run, args)


def bench_shap(kind: str, model, X, Xtr, grouping, run, args) -> None:
    """(3): SHAP as a user gets it, warm, against the certificates of the same cases."""
    n = len(X)
    k = args.shap_cases
    explain, name = shap_as_picked(model, Xtr)
    explain(X[:2])  # warm: imports, tree/linear set-up, first call
    ts, tc = alternate(lambda: explain(X[:k]), run, max(2, args.repeats // 2))
    print(f"[{kind}] (3) SHAP warm as a user gets it: shap.Explainer(model, 100 background rows) picks {name}; "
          f"{np.median(ts) / k * 1e3:.2f} ms/case -> SHAP/certificate {ratio_text(ts, tc, k, n)} "
          f"(SHAP explains {X.shape[1]} columns; a certificate answers for {grouping.n_groups} groups)")


def shap_as_picked(model, Xtr: np.ndarray):
    """SHAP's own choice of explainer for ``model``, with its default masker over 100 training rows.

    ``shap.Explainer(model, background)`` picks the explainer itself: TreeExplainer for tree ensembles
    (LightGBM, random forest, HistGB), LinearExplainer for logistic regression. A model SHAP does not
    recognise (the MLP) is explained through its ``predict_proba`` callable, for which SHAP picks
    the permutation explainer at this width. Returns the call and the explainer's class name.
    """
    import shap

    background = Xtr[:100]
    try:
        explainer = shap.Explainer(model, background, seed=0)
    except (TypeError, ValueError, shap.utils._exceptions.InvalidModelError):  # a model SHAP does not recognise
        explainer = shap.Explainer(model.predict_proba, background, seed=0)
    name = type(explainer).__name__
    if name in ("TreeExplainer", "TreeEnsemble") or name.startswith("Tree"):
        return (lambda A: explainer(A, check_additivity=False)), name
    return explainer, name


def memory_child(n: int, engine: str, curve_dtype: str) -> None:
    from sklearn.linear_model import LogisticRegression

    X, y, Xtr, grouping = synthetic(n, 30, per_group=1, seed=1)
    lr = LogisticRegression(max_iter=1000).fit(Xtr[:20_000], y[:20_000])
    base, scale = Xtr.mean(0), column_scale(Xtr)
    del Xtr, y
    t = time.process_time()
    b = certify(lr, X, grouping=grouping, baseline=base, scale=scale,
                config=FragilityConfig(k=5, engine=engine, curve_dtype=curve_dtype))
    dt = time.process_time() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    print(f"{len(b)} {dt:.1f} {peak:.0f} {b.engine}")


def memory(n: int, engine: str, curve_dtype: str) -> str:
    out = subprocess.run([sys.executable, __file__, "--memory-child", str(n), engine, curve_dtype], capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    cases, secs, peak, used = out.stdout.split()[-4:]
    return (f"{int(cases):,} cases x 30 groups, logistic regression, {used} engine, curves {curve_dtype}: "
            f"peak RSS {float(peak):.0f} MiB, {float(secs):.0f} s CPU (target < 2 GB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5_000)
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--per-case", type=int, default=40, help="cases certified one at a time in (2)")
    ap.add_argument("--shap-cases", type=int, default=10)
    ap.add_argument("--skip-shap", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--shap-only", action="store_true", help="only (3): SHAP against the certificates")
    ap.add_argument("--memory-cases", type=int, default=1_000_000)
    args = ap.parse_args()
    X, y, Xtr, grouping = synthetic(args.cases, args.groups)
    cfg = FragilityConfig(k=5, n_draws=10)
    proto = protocol_for(grouping, baseline=Xtr.mean(0), scale=column_scale(Xtr), baseline_kind="mean", config=cfg)
    print(f"synthetic: {args.cases} cases, {args.groups} groups, {X.shape[1]} features; K=5, families=3, "
          f"severities=10, R=10; {rows_per_case(proto)} rows per case in the largest call; {args.repeats} repeats; "
          f"load average {os.getloadavg()[0]:.1f}")
    for kind in args.models.split(","):
        bench_model(kind.strip(), X, y, Xtr, grouping, cfg, args)
    if not args.skip_memory:
        print("(4) memory: " + memory(args.memory_cases, "auto", "float64"))
        print("(4) memory: " + memory(args.memory_cases, "auto", "float32"))
        print("(4) memory: " + memory(200_000, "distinct", "float64"))


if __name__ == "__main__":
    if "--memory-child" in sys.argv:
        i = sys.argv.index("--memory-child")
        memory_child(int(sys.argv[i + 1]), sys.argv[i + 2], sys.argv[i + 3])
    else:
        main()
