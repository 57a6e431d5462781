"""FR-ResMLP (optional extra, audit_core/fragility/neural.py).

These tests RUN when torch is installed (``make test`` installs it through
requirements-test.txt → requirements-neural.txt). When torch is missing they
are skipped locally, but under ``CI=true`` a missing torch is a failure.
Tests that are about the *absence* of torch simulate it and always run.
"""
from __future__ import annotations

import importlib.abc
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from audit_core.errors import AuditInputError
from audit_core.fragility import neural
from audit_core.fragility.engine import FragilityConfig, certify, column_scale
from audit_core.fragility.verify import verify

from fragility_data import loan_workspace

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def torch():
    try:
        import torch as t
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("torch is not installed but CI=true: install it with `pip install -r requirements-neural.txt`")
        pytest.skip("torch not installed (pip install -r requirements-neural.txt)")
    return t


def _toy(n: int = 160, seed: int = 0):
    """Two-class data: 3 groups over 5 columns, label depends on groups 0 and 1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + 0.3 * rng.normal(size=n) > 0).astype(int)
    groups = (np.array([0, 1]), np.array([2, 3]), np.array([4]))
    return X, y, groups, X.mean(axis=0)


def _small(**kw) -> neural.FRResMLPClassifier:
    X, y, groups, base = _toy()
    p = dict(width=8, n_blocks=2, dropout=0.1, alpha=1.0, gamma=0.5, q=0.5, epochs=4, batch_size=32, lr=5e-3,
             weight_decay=1e-4, seed=3, grouping_index=groups, baseline=base)
    p.update(kw)
    return neural.FRResMLPClassifier(**p)


# ---------------------------------------------------------------- without torch
class _TorchBlocker(importlib.abc.MetaPathFinder):
    """Makes ``import torch`` fail as if torch were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (simulated)", name=name)
        return None


def block_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulate a missing torch: drop the cached module and block its import (undone by monkeypatch).

    (Setting ``sys.modules['torch'] = None`` is not a faithful simulation:
    scipy's array-API helpers then see a ``torch`` entry and crash.)
    """
    monkeypatch.setattr(sys, "meta_path", [_TorchBlocker(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "torch", raising=False)


_BLOCKER_SRC = (
    "import importlib.abc, sys\n"
    "class B(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'torch' or name.startswith('torch.'):\n"
    "            raise ModuleNotFoundError(name)\n"
    "sys.meta_path.insert(0, B())\n"
)


def test_module_imports_without_torch_and_names_the_install_command() -> None:
    code = (
        _BLOCKER_SRC +
        "from audit_core.fragility import neural\n"
        "from audit_core.errors import AuditInputError\n"
        "assert not neural.torch_available()\n"
        "try:\n"
        "    neural.FRResMLPClassifier(alpha=0, gamma=0).fit([[0.0], [1.0]], [0, 1])\n"
        "except AuditInputError as e:\n"
        "    print(e.code); print(e.message)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("NEURAL_UNAVAILABLE")
    assert "pip install -r requirements-neural.txt" in out.stdout


def test_torch_available_follows_import(monkeypatch: pytest.MonkeyPatch) -> None:
    block_torch(monkeypatch)
    assert neural.torch_available() is False
    with pytest.raises(AuditInputError) as err:
        neural.compare_fr_resmlp(None)
    assert err.value.code == "NEURAL_UNAVAILABLE"


# ---------------------------------------------------------------- architecture
def test_residual_block_structure(torch) -> None:
    X, y, _, _ = _toy()
    est = _small(n_blocks=3, width=8).fit(X, y)
    net = est.network_
    nn = torch.nn
    assert isinstance(net.input, nn.Linear) and (net.input.in_features, net.input.out_features) == (5, 8)
    assert len(net.blocks) == 3
    for block in net.blocks:
        kinds = [type(m) for m in block.body]
        assert kinds == [nn.LayerNorm, nn.Linear, nn.GELU, nn.Dropout, nn.Linear]
        assert block.body[3].p == pytest.approx(0.1)
        # skip connection: forward(h) == h + body(h)
        h = torch.randn(4, 8, dtype=torch.float64)
        with torch.no_grad():
            assert torch.equal(block(h), h + block.body(h))
    assert isinstance(net.head[-1], nn.Linear) and net.head[-1].out_features == 2
    assert all(p.dtype == torch.float64 for p in net.parameters())


# ---------------------------------------------------------------- loss
def test_loss_terms_by_hand_on_a_two_class_toy(torch) -> None:
    # Row logits ℓ(x) = (0, 0)      -> p = (1/2, 1/2), centred z = (0, 0): m_0 = m_1 = 0.
    # Row logits ℓ(x̃) = (ln 3, 0)  -> q = (3/4, 1/4), centred z = (ln3/2, -ln3/2): m_0 = ln 3, m_1 = -ln 3.
    # CE (either label) = ln 2.
    # SymKL = Σ (p-q)(log p - log q) = (-1/4)·ln(2/3) + (1/4)·ln 2 = (1/4)·ln 3.
    # Hinge: y=0 -> max(0, 0 - ln3) = 0; y=1 -> max(0, 0 + ln3) = ln 3; batch y=(0, 1) -> mean = ln3 / 2.
    logits = torch.zeros(2, 2, dtype=torch.float64)
    tilde = torch.tensor([[math.log(3), 0.0], [math.log(3), 0.0]], dtype=torch.float64)
    y = torch.tensor([0, 1])
    loss, parts = neural.fr_resmlp_loss(logits, tilde, y, alpha=2.0, gamma=4.0)
    assert parts["ce"] == pytest.approx(math.log(2), abs=1e-12)
    assert parts["symkl"] == pytest.approx(0.25 * math.log(3), abs=1e-12)
    assert parts["hinge"] == pytest.approx(0.5 * math.log(3), abs=1e-12)
    assert float(loss) == pytest.approx(math.log(2) + 2.0 * 0.25 * math.log(3) + 4.0 * 0.5 * math.log(3), abs=1e-12)
    # only y = 0: the margin of the true class rises under x̃, so the hinge is 0
    _, p0 = neural.fr_resmlp_loss(logits[:1], tilde[:1], y[:1], alpha=1.0, gamma=1.0)
    assert p0["hinge"] == 0.0


def test_identical_distributions_and_unperturbed_inputs_add_nothing(torch) -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 3, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (16,), generator=g)
    loss, parts = neural.fr_resmlp_loss(logits, logits.clone(), y, alpha=3.0, gamma=5.0)
    assert parts["symkl"] == 0.0 and parts["hinge"] == 0.0
    assert float(loss) == pytest.approx(float(torch.nn.functional.cross_entropy(logits, y)), abs=1e-14)
    # q = 0 leaves x unchanged (x̃ = x), so the hinge on a network's outputs is exactly 0
    x = torch.randn(16, 5, generator=g, dtype=torch.float64)
    member = torch.tensor([[1, 1, 0, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 1]], dtype=torch.float64)
    xt = neural.attenuate_groups(x, membership=member, baseline=torch.zeros(5, dtype=torch.float64), q=0.0, generator=g)
    assert torch.equal(xt, x)


def test_alpha_gamma_zero_is_plain_cross_entropy(torch) -> None:
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(8, 2, generator=g, dtype=torch.float64), torch.randn(8, 2, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (8,), generator=g)
    loss, _ = neural.fr_resmlp_loss(a, b, y, alpha=0.0, gamma=0.0)
    assert float(loss) == float(torch.nn.functional.cross_entropy(a, y))
    # training: α=γ=0 draws no x̃, so the grouping/baseline are irrelevant and the history is plain CE
    X, y_np, _, _ = _toy()
    with_groups = _small(alpha=0.0, gamma=0.0).fit(X, y_np)
    without = _small(alpha=0.0, gamma=0.0, grouping_index=None, baseline=None).fit(X, y_np)
    assert np.array_equal(with_groups.predict_proba(X), without.predict_proba(X))
    for h in without.history_:
        assert h["symkl"] == 0.0 and h["hinge"] == 0.0 and h["loss"] == pytest.approx(h["ce"], abs=1e-12)


def test_attenuation_is_per_group_interpolation_toward_the_baseline(torch) -> None:
    g = torch.Generator().manual_seed(2)
    x = torch.randn(400, 5, generator=g, dtype=torch.float64)
    base = torch.tensor([1.0, -1.0, 2.0, 0.5, 3.0], dtype=torch.float64)
    member = torch.tensor([[1, 1, 0, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 1]], dtype=torch.float64)
    xt = neural.attenuate_groups(x, membership=member, baseline=base, q=0.5, generator=g)
    lam = ((xt - x) / (base - x)).numpy()  # the severity of each column
    assert np.allclose(lam[:, 0], lam[:, 1]) and np.allclose(lam[:, 2], lam[:, 3])  # one λ per group
    assert lam.min() >= -1e-12 and lam.max() <= 0.3 + 1e-12
    chosen = lam[:, [0, 2, 4]] > 0
    assert 0.4 < chosen.mean() < 0.6  # each group with probability q


def test_regularised_fit_needs_grouping_and_baseline(torch) -> None:
    X, y, _, _ = _toy()
    with pytest.raises(AuditInputError) as err:
        _small(grouping_index=None).fit(X, y)
    assert err.value.code == "NEURAL_NO_GROUPS"
    with pytest.raises(AuditInputError) as err:
        _small(dropout=1.5).fit(X, y)
    assert err.value.code == "NEURAL_BAD_PARAM"


# ---------------------------------------------------------------- estimator
def test_seeded_determinism_probabilities_and_restored_torch_state(torch) -> None:
    X, y, _, _ = _toy()
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    rng_state = torch.get_rng_state()
    a = _small().fit(X, y)
    b = _small().fit(X, y)
    pa, pb = a.predict_proba(X), b.predict_proba(X)
    assert np.array_equal(pa, pb)
    assert not np.array_equal(pa, _small(seed=4).fit(X, y).predict_proba(X))
    assert torch.get_num_threads() == threads and torch.are_deterministic_algorithms_enabled() == det
    assert torch.equal(torch.get_rng_state(), rng_state)  # global RNG untouched
    assert pa.shape == (len(X), 2) and pa.dtype == np.float64
    assert np.allclose(pa.sum(axis=1), 1.0, atol=1e-12) and (pa >= 0).all()
    # a batch gives the per-row probabilities
    single = np.vstack([a.predict_proba(X[i: i + 1]) for i in range(10)])
    assert np.allclose(single, pa[:10], rtol=0, atol=1e-13)
    assert list(a.classes_) == [0, 1] and set(a.predict(X)) <= {0, 1}
    assert a.get_params()["alpha"] == 1.0  # scikit-learn conventions
    clone = pickle.loads(pickle.dumps(a))
    assert np.array_equal(clone.predict_proba(X), pa)


def test_multiclass_rows_sum_to_one(torch) -> None:
    X, _, groups, base = _toy()
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    p = _small(epochs=2).fit(X, y).predict_proba(X)
    assert p.shape == (len(X), 3) and np.allclose(p.sum(axis=1), 1.0, atol=1e-12)


# ---------------------------------------------------------------- workspace, certify, comparison
def test_workspace_model_certifies_and_verifies(torch) -> None:
    ws, _ = loan_workspace()
    m = neural.fitted_fr_resmlp(ws, params=dict(epochs=2, width=16, n_blocks=1))
    assert m.preprocessor is ws.model.preprocessor and m.feature_names == ws.model.feature_names
    frame = ws.dataset.frame.iloc[ws.test_index[:25]]
    assert np.array_equal(m.predict_proba(frame), m.predict_proba_transformed(ws.model.transform(frame)))
    X = m.transform(frame)
    Xtr = m.transform(ws.dataset.frame.iloc[ws.train_index])
    cfg = FragilityConfig(n_draws=4, seed=0)
    b = certify(m, X, grouping=ws.grouping, baseline=ws.baseline, scale=column_scale(Xtr),
                baseline_kind=ws.baseline_kind, config=cfg)
    assert len(b) == 25 and np.isfinite(b.fds).all() and np.isfinite(b.rcma).all()
    assert ((b.k_star >= 1) & (b.k_star <= b.protocol.k + 1)).all()
    rep = verify(b.certificate(0), m, X[0], grouping=ws.grouping)
    assert rep.ok, rep.mismatches


def test_comparison_returns_both_rows_with_finite_numbers(torch) -> None:
    ws, _ = loan_workspace()
    res = neural.compare_fr_resmlp(ws, alpha=1.0, gamma=0.5, seed=0, max_cases=30, stress_draws=5,
                                   params=dict(epochs=2, width=16, n_blocks=1),
                                   config=FragilityConfig(n_draws=4, seed=0))
    t = res.to_frame()
    assert list(t["model"]) == ["FR-ResMLP", "plain ResMLP"]
    assert list(t["alpha"]) == [1.0, 0.0] and list(t["gamma"]) == [0.5, 0.0]
    for col in ("heldout_auroc", "mean_rcma", "mean_fds", "mean_k_star", "donor_any_share"):
        assert np.isfinite(t[col].to_numpy(dtype=float)).all(), col
    assert res.n_cases == 30 and res.n_train == len(ws.train_index) and res.grouping_hash == ws.grouping.hash
    assert 0.5 < t["heldout_auroc"].min() <= 1.0


# ---------------------------------------------------------------- page
def _page(ws):
    from streamlit.testing.v1 import AppTest

    from audit_core.data.samples import load_sample

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, at.exception
    at.session_state["workspace"] = ws
    at.session_state["sample_info"] = load_sample("loan_synthetic")[1]
    return at.switch_page("pages/fragility.py").run()


@pytest.fixture
def registry_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return path


def test_page_explains_how_to_enable_when_torch_is_missing(registry_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block_torch(monkeypatch)
    ws, _ = loan_workspace()
    at = _page(ws)
    assert not at.exception, at.exception
    info = " ".join(el.value for el in at.info)
    assert "pip install -r requirements-neural.txt" in info and "make test" in info
    assert not [b for b in at.button if b.key == "act_fr_neural"]


def test_page_runs_the_comparison(torch, registry_path: Path) -> None:
    ws, _ = loan_workspace()
    at = _page(ws)
    assert not at.exception, at.exception
    at.number_input(key="fr_max_cases").set_value(20)
    at.number_input(key="fr_draws").set_value(2)
    at.number_input(key="fr_neural_epochs").set_value(2)
    at.number_input(key="fr_neural_width").set_value(16)
    at.button(key="act_fr_neural").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    table = next(df.value for df in at.dataframe if "mean_rcma" in df.value.columns)
    assert list(table["model"]) == ["FR-ResMLP", "plain ResMLP"]
    assert np.isfinite(table[["heldout_auroc", "mean_rcma", "mean_fds"]].to_numpy(dtype=float)).all()
    assert any("FR-ResMLP vs the same network" in m.value for m in at.markdown)
