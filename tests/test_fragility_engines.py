"""The certificate engines agree.

* ``distinct`` (each distinct perturbed row predicted once, case-major) equals
  the reference ``generic`` engine bit for bit, for every zoo model family,
  both path modes (and the random ablation), every operator family, any K,
  with ties and duplicate rows, for the exact (≤ 52 columns) and the hashed
  (wider) keys, and even when every key collides.
* ``linear`` (analytic logits) gives the generic engine's orders, k*, j* and
  flip rates exactly and its continuous outputs within 1e-9, for logistic
  regression (binary and multinomial) and other linear models, on synthetic
  data and on the loan workspace's real preprocessing.
* The binary fast path of the probability conventions is bit-identical to the
  general functions, and padded predict calls make BLAS models independent of
  chunking.

Run against the old engine (no padded predict calls), the chunking test fails
for the MLP: ``delta`` and the noise curves change with ``chunk_cases`` (an
ulp in the last ``n mod 8`` rows of a BLAS call).
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_core.data.groups import Grouping
from audit_core.errors import AuditInputError
from audit_core.fragility import FAMILIES, FragilityConfig, certify
from audit_core.fragility.generic import margins_labels
from audit_core.fragility.linear import linear_form
from audit_core.fragility.work import padded
from audit_core.models.probs import clip_probs, margin_of, pseudo_logits
from audit_core.models.zoo import ModelSpec, make_estimator

from fragility_data import loan_workspace
from test_fragility_certificates import Linear

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("p0", "y_hat", "p_hat", "m0", "delta", "order", "path_groups", "path_margins", "path_labels", "k_star",
          "rcma", "d", "fds")
MAPS = ("curves", "flip_rates", "j_star", "d_family")
DISCRETE = ("y_hat", "order", "path_groups", "path_labels", "k_star")
SMALL = {"lightgbm": {"n_estimators": 25, "min_child_samples": 5}, "random_forest": {"n_estimators": 15},
         "hist_gradient_boosting": {"max_iter": 20}, "mlp": {"hidden_layer_sizes": (16,), "max_iter": 200},
         "logistic_regression": {}}
#: (model kind, classes): every zoo family binary, three of them three-class
MODELS = [(k, 2) for k in SMALL] + [("lightgbm", 3), ("mlp", 3), ("logistic_regression", 3), ("toy", 2)]
#: name -> group sizes; "wide" has more than 52 columns, so keys are hashed and checked
LAYOUTS = {"narrow": (1, 3, 2, 4, 2), "wide": (20, 1, 15, 12, 9, 7)}


def _grouping(sizes) -> Grouping:
    group_of = tuple(f"g{g}" for g, s in enumerate(sizes) for _ in range(s))
    feats = tuple(f"f{i}" for i in range(len(group_of)))
    return Grouping(feats, feats, group_of, tuple(dict.fromkeys(group_of)))


@lru_cache(maxsize=None)
def trained(kind: str, n_classes: int, layout: str):
    """A small model on 400 training rows of the layout (integer-valued columns make ties common)."""
    sizes = LAYOUTS[layout]
    F = sum(sizes)
    rng = np.random.default_rng(F * 10 + n_classes)
    Xtr = rng.normal(size=(400, F))
    Xtr[:, ::3] = np.round(Xtr[:, ::3])
    score = Xtr[:, 0] + Xtr[:, 1] * Xtr[:, -1] - 0.5 * Xtr[:, 2]
    y = np.digitize(score + 0.3 * rng.normal(size=400), np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    if kind == "toy":
        model = Linear(rng.normal(size=F), 0.1)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make_estimator(ModelSpec(kind=kind, seed=0, params=SMALL[kind])).fit(Xtr, y)
    return model, Xtr, _grouping(sizes)


def cases(seed: int, Xtr: np.ndarray, grouping: Grouping, n: int, *, neg_zero: bool):
    """Cases with ties: whole groups at the baseline, duplicated cases, integer columns, optional -0.0."""
    rng = np.random.default_rng(seed)
    F = Xtr.shape[1]
    base = Xtr.mean(axis=0)
    base[::4] = 0.0
    X = Xtr[rng.integers(0, len(Xtr), size=n)] + 0.5 * rng.normal(size=(n, F))
    X[:, ::3] = np.round(X[:, ::3])
    for i in range(n):
        for g in rng.choice(grouping.n_groups, size=rng.integers(0, grouping.n_groups), replace=False):
            X[i, grouping.index[g]] = base[grouping.index[g]]
    if n > 1:
        X[-1] = X[0]  # a duplicate case
    if neg_zero:
        X[:, 0] = np.where(X[:, 0] == 0, -0.0, X[:, 0])
        base[1] = -0.0
    return X, base, Xtr.std(axis=0)


def same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a.view(np.uint8), b.view(np.uint8))) if a.dtype.kind == "f" else bool(np.array_equal(a, b))


def mismatches(ref, new) -> list[str]:
    bad = [f for f in FIELDS if not same_bits(getattr(ref, f), getattr(new, f))]
    for f in MAPS:
        bad += [f"{f}.{k}" for k in getattr(ref, f) if not same_bits(getattr(ref, f)[k], getattr(new, f)[k])]
    return bad


configs = st.fixed_dictionaries({
    "families": st.sampled_from([FAMILIES, ("dropout",), ("interpolate", "noise"), ("noise", "dropout")]),
    "path": st.sampled_from(["static", "adaptive", "random"]),
    "k": st.integers(1, 6),
    "grid": st.sampled_from([(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), (0.25, 0.5, 1.0), (0.3, 0.6, 0.9)]),
    "n_draws": st.integers(1, 4),
    "seed": st.integers(0, 1000),
})


@SETTINGS
@given(model=st.sampled_from(MODELS), layout=st.sampled_from(sorted(LAYOUTS)), cfg=configs,
       data_seed=st.integers(0, 10_000), n=st.integers(1, 7), neg_zero=st.booleans())
def test_distinct_rows_equal_the_generic_engine_bit_for_bit(model, layout, cfg, data_seed, n, neg_zero):
    est, Xtr, grouping = trained(*model, layout)
    X, base, scale = cases(data_seed, Xtr, grouping, n, neg_zero=neg_zero)
    cfg = dict(cfg, k=min(cfg["k"], grouping.n_groups))
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    ref = certify(est, X, config=FragilityConfig(engine="generic", **cfg), **kw)
    new = certify(est, X, config=FragilityConfig(engine="distinct", **cfg), **kw)
    assert new.engine == "distinct" and ref.engine == "generic"
    assert mismatches(ref, new) == []
    G, K = grouping.n_groups, cfg["k"]
    rows_generic = n * (G + 1 + K + sum(len(cfg["grid"]) * (cfg["n_draws"] if f != "interpolate" else 1)
                                       for f in cfg["families"]) + (K - 1) * G * (cfg["path"] == "adaptive"))
    assert new.n_predicted < rows_generic  # duplicates (at least path step 1) were not predicted


def test_every_key_colliding_still_gives_the_generic_certificates(monkeypatch):
    """With all key weights equal, keys only count columns: every merge must be checked column by column."""
    import audit_core.fragility.distinct as distinct

    est, Xtr, grouping = trained("lightgbm", 2, "wide")
    X, base, scale = cases(3, Xtr, grouping, 6, neg_zero=False)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    for path in ("static", "adaptive"):
        cfg = dict(path=path, k=4, n_draws=3)
        ref = certify(est, X, config=FragilityConfig(engine="generic", **cfg), **kw)
        honest = certify(est, X, config=FragilityConfig(engine="distinct", **cfg), **kw)
        monkeypatch.setattr(distinct, "key_weights", lambda F: np.ones(F))
        colliding = certify(est, X, config=FragilityConfig(engine="distinct", **cfg), **kw)
        monkeypatch.undo()
        assert mismatches(ref, colliding) == [] and mismatches(ref, honest) == []
        assert colliding.n_predicted >= honest.n_predicted


@pytest.mark.parametrize("model", [("mlp", 2), ("logistic_regression", 3), ("lightgbm", 2)])
def test_certificates_do_not_depend_on_chunking(model):
    est, Xtr, grouping = trained(*model, "narrow")
    X, base, scale = cases(11, Xtr, grouping, 29, neg_zero=False)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    for engine in ("generic", "distinct"):
        whole = certify(est, X, config=FragilityConfig(engine=engine, n_draws=3), **kw)
        for step in (1, 5, 13):
            part = certify(est, X, config=FragilityConfig(engine=engine, n_draws=3), chunk_cases=step, **kw)
            assert mismatches(whole, part) == [], (engine, step)


def test_padded_predict_gives_each_row_the_same_bits_in_any_call():
    est, Xtr, _ = trained("mlp", 2, "wide")
    rows = np.random.default_rng(0).normal(size=(203, Xtr.shape[1]))
    full = padded(est.predict_proba)(rows)
    for lo, hi in ((0, 1), (5, 8), (100, 203), (17, 50)):
        assert same_bits(padded(est.predict_proba)(rows[lo:hi]), full[lo:hi])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), C=st.integers(2, 4), n=st.integers(1, 300))
def test_binary_fast_conventions_equal_the_general_functions(seed, C, n):
    rng = np.random.default_rng(seed)
    p = rng.random((n, C)) ** rng.uniform(0.1, 12, size=(n, 1))
    p /= p.sum(axis=1, keepdims=True)
    p[rng.random(n) < 0.2] *= 1e-9  # below the clip
    p[rng.random(n) < 0.1] = 1.0 / C  # exact ties
    p[rng.random(n) < 0.1, 0] = 1.0
    p[rng.random(n) < 0.2] *= 1.0 + 1e-7  # not normalised
    y = rng.integers(0, C, size=n)
    q = clip_probs(p)
    got_q, got_m, got_lab = margins_labels(p, y)
    assert same_bits(got_q, q)
    assert same_bits(got_m, margin_of(pseudo_logits(q), y))
    assert np.array_equal(got_lab, q.argmax(axis=-1))


# ---------------------------------------------------------------------------- the linear path

def _linear_models():
    from sklearn.linear_model import LogisticRegression, SGDClassifier

    return {"lr2": (LogisticRegression, 2, {}), "lr3": (LogisticRegression, 3, {}),
            "lr2_l1": (LogisticRegression, 2, {"penalty": "l1", "solver": "liblinear", "C": 0.5}),
            "sgd2": (SGDClassifier, 2, {"loss": "log_loss", "random_state": 0}),
            "sgd3": (SGDClassifier, 3, {"loss": "log_loss", "random_state": 0})}


@lru_cache(maxsize=None)
def linear_model(name: str, layout: str):
    cls, C, params = _linear_models()[name]
    _, Xtr, grouping = trained("logistic_regression", C, layout)
    rng = np.random.default_rng(len(name))
    score = Xtr[:, 0] + Xtr[:, 1] - 0.5 * Xtr[:, 2] + 0.5 * rng.normal(size=len(Xtr))
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, C + 1)[1:-1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**params).fit(Xtr, y), Xtr, grouping


def assert_linear_matches(ref, lin) -> None:
    for f in DISCRETE:
        assert np.array_equal(getattr(ref, f), getattr(lin, f)), f
    for f in ("flip_rates", "j_star"):
        for k in getattr(ref, f):
            assert np.array_equal(getattr(ref, f)[k], getattr(lin, f)[k]), f"{f}.{k}"
    for f in ("p0", "p_hat", "m0", "delta", "path_margins", "rcma", "d", "fds"):
        np.testing.assert_allclose(getattr(lin, f), getattr(ref, f), rtol=1e-9, atol=1e-9, err_msg=f)
    for f in ("curves", "d_family"):
        for k in getattr(ref, f):
            np.testing.assert_allclose(getattr(lin, f)[k], getattr(ref, f)[k], rtol=1e-9, atol=1e-9, err_msg=f)


@SETTINGS
@given(name=st.sampled_from(sorted(_linear_models())), layout=st.sampled_from(sorted(LAYOUTS)), cfg=configs,
       data_seed=st.integers(0, 10_000), n=st.integers(1, 12))
def test_linear_path_matches_the_generic_engine(name, layout, cfg, data_seed, n):
    est, Xtr, grouping = linear_model(name, layout)
    X, base, scale = cases(data_seed, Xtr, grouping, n, neg_zero=False)
    X = X + 0.01 * np.random.default_rng(data_seed).normal(size=X.shape) * (X != base)  # no coincident drops
    cfg = dict(cfg, k=min(cfg["k"], grouping.n_groups))
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    ref = certify(est, X, config=FragilityConfig(engine="generic", **cfg), **kw)
    lin = certify(est, X, config=FragilityConfig(**cfg), **kw)
    assert lin.engine == "linear"
    assert_linear_matches(ref, lin)


@pytest.mark.parametrize("path", ["static", "adaptive"])
def test_linear_path_on_the_loan_workspace(path):
    ws, _ = loan_workspace()
    X = ws.model.transform(ws.dataset.frame.iloc[ws.test_index[:120]])
    Xtr = ws.model.transform(ws.dataset.frame.iloc[ws.train_index])
    kw = dict(grouping=ws.grouping, baseline=ws.baseline, scale=Xtr.std(axis=0))
    ref = certify(ws.model, X, config=FragilityConfig(engine="generic", path=path), **kw)
    lin = certify(ws.model, X, config=FragilityConfig(path=path), **kw)
    assert lin.engine == "linear"
    assert_linear_matches(ref, lin)


def test_linear_engine_is_refused_for_a_non_linear_model_and_auto_falls_back():
    est, Xtr, grouping = trained("lightgbm", 2, "narrow")
    X, base, scale = cases(1, Xtr, grouping, 3, neg_zero=False)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    with pytest.raises(AuditInputError) as err:
        certify(est, X, config=FragilityConfig(engine="linear"), **kw)
    assert err.value.code == "FR_NOT_LINEAR" and "LGBMClassifier" in err.value.message
    assert certify(est, X, **kw).engine == "distinct"
    with pytest.raises(AuditInputError) as err:
        certify(est, X, config=FragilityConfig(engine="fast"), **kw)
    assert err.value.code == "FR_BAD_ENGINE"


def test_a_linear_model_whose_probabilities_are_not_its_link_uses_the_row_engine():
    from sklearn.linear_model import LogisticRegression

    class Tempered(LogisticRegression):
        def predict_proba(self, X):  # a temperature on top of the logits: not the plain link
            p = super().predict_proba(X) ** 0.5
            return p / p.sum(axis=1, keepdims=True)

    _, Xtr, grouping = trained("logistic_regression", 2, "narrow")
    y = (Xtr[:, 0] > 0).astype(int)
    est = Tempered().fit(Xtr, y)
    assert linear_form(est, Xtr[:20], padded(est.predict_proba)) is None
    X, base, scale = cases(2, Xtr, grouping, 4, neg_zero=False)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    got = certify(est, X, **kw)
    assert got.engine == "distinct"
    assert mismatches(certify(est, X, config=FragilityConfig(engine="generic"), **kw), got) == []


def test_float32_curves_keep_every_discrete_output():
    est, Xtr, grouping = trained("lightgbm", 2, "narrow")
    X, base, scale = cases(4, Xtr, grouping, 20, neg_zero=False)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    a = certify(est, X, **kw)
    b = certify(est, X, config=FragilityConfig(curve_dtype="float32"), **kw)
    for f in FAMILIES:
        assert b.curves[f].dtype == np.float32 and b.flip_rates[f].dtype == np.float32
        assert np.array_equal(a.j_star[f], b.j_star[f])
        np.testing.assert_allclose(b.curves[f], a.curves[f], rtol=1e-6)
    assert np.array_equal(a.k_star, b.k_star) and same_bits(a.fds, b.fds)
    with pytest.raises(AuditInputError) as err:
        certify(est, X, config=FragilityConfig(curve_dtype="float16"), **kw)
    assert err.value.code == "FR_BAD_CURVE_DTYPE"


def _threads_seen(model):
    """Wrap ``model.predict_proba`` to record the OpenMP threads scikit-learn would use in each call."""
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

    seen, inner = [], model.predict_proba

    def recording(X):
        seen.append(_openmp_effective_n_threads())
        return inner(X)

    model.predict_proba = recording
    return seen


@pytest.mark.parametrize("kind", ["hist_gradient_boosting", "lightgbm"])
def test_histogram_boosting_predicts_on_one_openmp_thread_with_the_same_certificates(kind):
    # HGB's per-tree parallel loops made certification 1.8-2.6x its limit in CPU time; on one OpenMP
    # thread it costs about the limit. Before the fix the recorded thread count was the outer limit (2) here.
    from threadpoolctl import threadpool_limits

    fitted, Xtr, grouping = trained(kind, 2, "narrow")
    X, base, scale = cases(3, Xtr, grouping, 6, neg_zero=False)
    cfg = FragilityConfig(k=3, n_draws=2)
    model = make_estimator(ModelSpec(kind=kind, seed=0, params=SMALL[kind]))
    model.__dict__.update(fitted.__dict__)  # the same fitted model, its own predict_proba to wrap
    seen = _threads_seen(model)
    with threadpool_limits(limits=2, user_api="openmp"):
        got = certify(model, X, grouping=grouping, baseline=base, scale=scale, config=cfg)
        # the same model as a bare callable is not wrapped: it predicts on the outer 2 threads
        ref = certify(lambda A: fitted.predict_proba(A), X, grouping=grouping, baseline=base, scale=scale, config=cfg)
    assert seen and set(seen) == ({1} if kind == "hist_gradient_boosting" else {2})
    assert mismatches(ref, got) == []  # bit-identical whatever the thread count


def _recording_forest(model):
    """Count calls of ``model.predict_proba`` (the forest's own, with joblib and per-tree checks)."""
    calls, inner = [], model.predict_proba

    def recording(X):
        calls.append(len(X))
        return inner(X)

    model.predict_proba = recording
    return calls


@pytest.mark.parametrize("kind, n_classes, layout", [("random_forest", 2, "narrow"), ("random_forest", 2, "wide"),
                                                     ("extra_trees", 3, "narrow")])
def test_a_forest_is_predicted_tree_by_tree_with_the_bits_of_predict_proba(kind, n_classes, layout):
    # Each ForestClassifier.predict_proba call pays ~27 ms of fixed per-tree cost (200 trees), so the
    # engine's 6 calls cost more than the limit's one. The engine now loops over the trees itself. Before the change
    # the forest's predict_proba was called (calls != []); the certificates must keep its bits in both engines.
    from sklearn.ensemble import ExtraTreesClassifier

    fitted, Xtr, grouping = trained("random_forest", n_classes, layout)
    if kind == "extra_trees":
        y = fitted.predict(Xtr)  # three classes
        fitted = ExtraTreesClassifier(n_estimators=12, min_samples_leaf=3, random_state=0).fit(Xtr, y)
    X, base, scale = cases(5, Xtr, grouping, 7, neg_zero=False)
    kw = dict(grouping=grouping, baseline=base, scale=scale)
    cfg = dict(k=3, n_draws=3, path="adaptive")
    ref = certify(lambda A: fitted.predict_proba(A), X, config=FragilityConfig(engine="generic", **cfg), **kw)
    calls = _recording_forest(fitted)
    try:
        for engine in ("distinct", "generic"):
            got = certify(fitted, X, config=FragilityConfig(engine=engine, **cfg), **kw)
            assert mismatches(ref, got) == [], engine
    finally:
        del fitted.predict_proba
    assert calls == []
    assert ref.p0.shape == (7, n_classes) and not np.allclose(ref.p0, ref.p0[0])  # the cases differ: a real mapping


def test_a_forest_on_several_jobs_in_a_pipeline_or_with_its_own_predict_proba_keeps_it():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from audit_core.fragility.generic import as_predict

    class Sharpened(RandomForestClassifier):
        def predict_proba(self, X):
            p = super().predict_proba(X) ** 2
            return p / p.sum(axis=1, keepdims=True)

    _, Xtr, _ = trained("random_forest", 2, "narrow")
    y = (Xtr[:, 0] > 0).astype(int)
    for model in (RandomForestClassifier(n_estimators=5, n_jobs=2, random_state=0).fit(Xtr, y),
                  make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=5, random_state=0)).fit(Xtr, y),
                  Sharpened(n_estimators=5, random_state=0).fit(Xtr, y)):
        want = model.predict_proba(Xtr[:40])
        calls = _recording_forest(model)
        p = as_predict(model)(Xtr[:40])
        assert calls == [40] and np.array_equal(p, want)
