"""FR-ResMLP: a fragility-regularised residual MLP (SPEC §1, "Using the certificate"; optional extra).

PyTorch is an optional dependency (``pip install -r requirements-neural.txt``,
CPU build). This module imports without it; torch is imported inside the
functions that need it, and a missing torch raises the declared
:class:`~audit_core.errors.AuditInputError` ``NEURAL_UNAVAILABLE`` naming the
install command. :func:`torch_available` checks without importing.

Model
-----
On the *transformed* matrix (the fitted preprocessing of the workspace is
reused, so evidence groups and the baseline ``x̄`` apply unchanged):

* a fixed standardisation (training mean and standard deviation per column,
  part of the estimator; the audit still perturbs the transformed matrix);
* ``Linear(F, w)`` to width ``w``;
* ``n_blocks`` residual blocks ``h ← h + Linear(Dropout(GELU(Linear(LayerNorm(h)))))``
  (LayerNorm → Linear → GELU → Dropout → Linear, with a skip connection);
* a head ``LayerNorm → Linear(w, C)`` giving the logits.

All arithmetic is in float64 so that a batch of rows gives exactly the
per-row probabilities (the certificate engine and ``verify`` rely on this).

Loss
----
``CE(x, y) + α · SymKL(p(x) ‖ p(x̃)) + γ · mean(max(0, m_y(x) − m_y(x̃)))`` where

* ``SymKL(p ‖ q) = KL(p ‖ q) + KL(q ‖ p)`` per row (the Jeffreys divergence;
  no factor ½), averaged over the batch; gradients flow through both sides;
* ``m_y`` is the margin of the *true* class on pseudo-logits. The network's
  logits are centred, ``z = ℓ − mean_c ℓ_c``, which equals the SPEC §0
  pseudo-logits ``log p − mean log p`` of its own softmax (before the 1e-8
  clipping), so the hinge is on the same scale the certificate uses;
* ``x̃`` attenuates a random subset of evidence groups toward the baseline:
  each group of each row is chosen independently with probability ``q`` and,
  when chosen, gets its own severity ``λ ~ U(0, 0.3)``:
  ``x̃_g = (1 − λ) x_g + λ x̄_g`` (the ``interpolate`` operator of SPEC §1).

The cross-entropy is the plain (unweighted) mean; sample weights are ignored.

Determinism
-----------
Training runs inside ``torch.random.fork_rng`` with ``torch.manual_seed(seed)``
(initialisation and dropout), a dedicated ``torch.Generator`` seeded with
``seed + 1`` for the augmentation and one seeded with ``seed + 2`` for the
mini-batch order, ``torch.use_deterministic_algorithms(True)`` and
``torch.set_num_threads(1)``; the global torch settings are restored
afterwards. Two fits with the same data and seed give identical probabilities.
"""
from __future__ import annotations

import contextlib
import importlib.util
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = [
    "INSTALL_COMMAND",
    "DEFAULTS",
    "torch_available",
    "FRResMLPClassifier",
    "fr_resmlp_loss",
    "attenuate_groups",
    "fitted_fr_resmlp",
    "NeuralComparison",
    "compare_fr_resmlp",
]

INSTALL_COMMAND = "pip install -r requirements-neural.txt"

register_messages(
    {
        "NEURAL_UNAVAILABLE": (
            "FR-ResMLP needs PyTorch, which is not installed. Install the optional extra with "
            "`" + INSTALL_COMMAND + "` (CPU build, torch==2.13.0); `make test` installs it too."
        ),
        "NEURAL_BAD_PARAM": "FR-ResMLP parameter {param} = {value!r} is invalid: {detail}",
        "NEURAL_NOT_FITTED": "This FR-ResMLP classifier is not fitted yet; call fit first.",
        "NEURAL_NO_GROUPS": "FR-ResMLP needs the evidence grouping and the baseline vector to build x̃ (got {detail}).",
    }
)

#: Default hyper-parameters (kept small: 2 shared CPU cores).
DEFAULTS: dict[str, Any] = dict(
    width=64, n_blocks=2, dropout=0.1, alpha=1.0, gamma=0.5, q=0.3, epochs=30, batch_size=128,
    lr=2e-3, weight_decay=1e-4, seed=0,
)
MAX_SEVERITY = 0.3


def torch_available() -> bool:
    """Whether ``import torch`` can succeed (checked without importing it)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _torch():
    try:
        import torch
    except (ImportError, OSError):
        raise fail("NEURAL_UNAVAILABLE") from None
    return torch


@contextlib.contextmanager
def _torch_env(seed: int | None) -> Iterator[Any]:
    """Single thread, deterministic algorithms, forked global RNG seeded with ``seed``; restored on exit."""
    torch = _torch()
    threads = torch.get_num_threads()
    det = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        with torch.random.fork_rng(devices=[]):
            if seed is not None:
                torch.manual_seed(int(seed))
            yield torch
    finally:
        torch.use_deterministic_algorithms(det)
        torch.set_num_threads(threads)


def _build_network(n_features: int, n_classes: int, *, width: int, n_blocks: int, dropout: float):
    """The residual MLP as a ``torch.nn.Module`` (float64)."""
    torch = _torch()
    nn = torch.nn

    class ResidualBlock(nn.Module):
        """``h + body(h)`` with body = LayerNorm → Linear → GELU → Dropout → Linear."""

        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.LayerNorm(width), nn.Linear(width, width), nn.GELU(), nn.Dropout(dropout), nn.Linear(width, width)
            )

        def forward(self, h):
            return h + self.body(h)

    class ResMLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("shift", torch.zeros(n_features, dtype=torch.float64))
            self.register_buffer("inv_scale", torch.ones(n_features, dtype=torch.float64))
            self.input = nn.Linear(n_features, width)
            self.blocks = nn.ModuleList([ResidualBlock() for _ in range(n_blocks)])
            self.head = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, n_classes))

        def forward(self, x):
            h = self.input((x - self.shift) * self.inv_scale)
            for block in self.blocks:
                h = block(h)
            return self.head(h)

    return ResMLP().double()


def attenuate_groups(x, *, membership, baseline, q: float, generator, max_severity: float = MAX_SEVERITY):
    """The training perturbation ``x̃`` (torch tensors).

    Each (row, group) is chosen with probability ``q``; a chosen group gets
    ``λ ~ U(0, max_severity)`` and ``x̃_g = (1 − λ) x_g + λ x̄_g``.

    Parameters
    ----------
    x : tensor of shape (n, F)
    membership : tensor of shape (G, F), 0/1 (groups are disjoint)
    baseline : tensor of shape (F,)
    q : float
    generator : torch.Generator

    Returns
    -------
    tensor of shape (n, F)
    """
    torch = _torch()
    n, G = x.shape[0], membership.shape[0]
    chosen = torch.rand((n, G), generator=generator, dtype=x.dtype) < q
    lam = torch.rand((n, G), generator=generator, dtype=x.dtype) * max_severity
    lam_f = (chosen.to(x.dtype) * lam) @ membership  # (n, F): each column's group severity or 0
    return x + lam_f * (baseline - x)


def _centred(logits):
    return logits - logits.mean(dim=-1, keepdim=True)


def _true_margin(z, y):
    """``z_y − max_{c≠y} z_c`` for tensors z (n, C), y (n,)."""
    torch = _torch()
    own = z.gather(1, y[:, None])[:, 0]
    others = z.masked_fill(torch.nn.functional.one_hot(y, z.shape[1]).bool(), float("-inf"))
    return own - others.max(dim=1).values


def fr_resmlp_loss(logits, logits_tilde, y, *, alpha: float, gamma: float) -> tuple[Any, dict[str, float]]:
    """``CE + α·SymKL(p(x) ‖ p(x̃)) + γ·mean(max(0, m_y(x) − m_y(x̃)))``.

    Parameters
    ----------
    logits, logits_tilde : tensors of shape (n, C)
        Network outputs on ``x`` and ``x̃``.
    y : int64 tensor of shape (n,)
    alpha, gamma : float

    Returns
    -------
    loss : scalar tensor
    parts : dict with float ``ce``, ``symkl``, ``hinge``
    """
    torch = _torch()
    F = torch.nn.functional
    ce = F.cross_entropy(logits, y)
    logp = F.log_softmax(logits, dim=1)
    logq = F.log_softmax(logits_tilde, dim=1)
    symkl = ((logp.exp() - logq.exp()) * (logp - logq)).sum(dim=1).mean()  # KL(p‖q) + KL(q‖p)
    hinge = torch.clamp(_true_margin(_centred(logits), y) - _true_margin(_centred(logits_tilde), y), min=0).mean()
    loss = ce
    if alpha:
        loss = loss + alpha * symkl
    if gamma:
        loss = loss + gamma * hinge
    return loss, {"ce": float(ce.detach()), "symkl": float(symkl.detach()), "hinge": float(hinge.detach())}


def _check_params(est: "FRResMLPClassifier") -> None:
    checks = [
        ("width", est.width, isinstance(est.width, (int, np.integer)) and est.width >= 1, "a positive integer"),
        ("n_blocks", est.n_blocks, isinstance(est.n_blocks, (int, np.integer)) and est.n_blocks >= 0, "an integer ≥ 0"),
        ("dropout", est.dropout, 0 <= float(est.dropout) < 1, "in [0, 1)"),
        ("alpha", est.alpha, float(est.alpha) >= 0, "≥ 0"),
        ("gamma", est.gamma, float(est.gamma) >= 0, "≥ 0"),
        ("q", est.q, 0 <= float(est.q) <= 1, "in [0, 1]"),
        ("epochs", est.epochs, isinstance(est.epochs, (int, np.integer)) and est.epochs >= 1, "a positive integer"),
        ("batch_size", est.batch_size, isinstance(est.batch_size, (int, np.integer)) and est.batch_size >= 1,
         "a positive integer"),
        ("lr", est.lr, float(est.lr) > 0, "> 0"),
        ("weight_decay", est.weight_decay, float(est.weight_decay) >= 0, "≥ 0"),
    ]
    for name, value, ok, detail in checks:
        if not ok:
            raise fail("NEURAL_BAD_PARAM", param=name, value=value, detail=f"must be {detail}")


try:  # sklearn conventions (get_params / set_params / score) without requiring them
    from sklearn.base import BaseEstimator, ClassifierMixin
except ImportError:  # pragma: no cover - sklearn is a core requirement
    BaseEstimator, ClassifierMixin = object, object  # type: ignore[assignment,misc]


class FRResMLPClassifier(ClassifierMixin, BaseEstimator):
    """Fragility-regularised residual MLP with a scikit-learn-like API.

    Parameters
    ----------
    width : int
        Hidden width ``w``.
    n_blocks : int
        Number of residual blocks.
    dropout : float
        Dropout probability inside each block.
    alpha : float
        Weight of ``SymKL(p(x) ‖ p(x̃))``.
    gamma : float
        Weight of the true-class margin hinge ``max(0, m_y(x) − m_y(x̃))``.
    q : float
        Probability that a group is attenuated in ``x̃``.
    epochs, batch_size, lr, weight_decay : training (AdamW).
    seed : int
    grouping_index : sequence of int arrays
        Column indices of each evidence group (``Grouping.index``). Needed
        when ``alpha`` or ``gamma`` is positive.
    baseline : ndarray of shape (n_features,)
        The baseline ``x̄`` in the transformed space (training partition).

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    network_ : torch.nn.Module
    history_ : list of dict
        Per epoch: mean ``loss``, ``ce``, ``symkl``, ``hinge``.
    """

    def __init__(
        self, *, width: int = 64, n_blocks: int = 2, dropout: float = 0.1, alpha: float = 1.0, gamma: float = 0.5,
        q: float = 0.3, epochs: int = 30, batch_size: int = 128, lr: float = 2e-3, weight_decay: float = 1e-4,
        seed: int = 0, grouping_index: Sequence[np.ndarray] | None = None, baseline: np.ndarray | None = None,
    ) -> None:
        self.width = width
        self.n_blocks = n_blocks
        self.dropout = dropout
        self.alpha = alpha
        self.gamma = gamma
        self.q = q
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.seed = seed
        self.grouping_index = grouping_index
        self.baseline = baseline

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, *, progress: Callable[[float, str], None] | None = None):
        """Train on the transformed matrix ``X`` (n, F) and labels ``y`` (n,).

        ``sample_weight`` is accepted for API compatibility and ignored.
        ``progress(fraction, message)`` is called after each epoch.
        """
        _check_params(self)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        self.classes_, y_code = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise fail("NEURAL_BAD_PARAM", param="y", value=list(self.classes_), detail="needs at least two classes")
        n, F = X.shape
        self.n_features_in_ = F
        regularised = float(self.alpha) > 0 or float(self.gamma) > 0
        if regularised and (self.grouping_index is None or self.baseline is None):
            raise fail("NEURAL_NO_GROUPS", detail="grouping_index=None" if self.grouping_index is None else "baseline=None")
        member = np.zeros((len(self.grouping_index or ()), F))
        for g, cols in enumerate(self.grouping_index or ()):
            member[g, np.asarray(cols, dtype=int)] = 1.0
        if regularised and ((member.sum(axis=0) > 1).any() or len(np.asarray(self.baseline)) != F):
            raise fail("NEURAL_NO_GROUPS", detail="groups must be disjoint column sets and the baseline must have one value per column")
        report = progress or (lambda f, m: None)
        seed = int(self.seed)
        with _torch_env(seed) as torch:
            net = _build_network(F, len(self.classes_), width=int(self.width), n_blocks=int(self.n_blocks),
                                 dropout=float(self.dropout))
            mu, sd = X.mean(axis=0), X.std(axis=0)
            net.shift.copy_(torch.from_numpy(mu))
            net.inv_scale.copy_(torch.from_numpy(np.where(sd > 1e-12, 1.0 / np.where(sd > 1e-12, sd, 1.0), 1.0)))
            Xt = torch.from_numpy(X)
            yt = torch.from_numpy(y_code.astype(np.int64))
            mt = torch.from_numpy(member)
            bt = torch.from_numpy(np.asarray(self.baseline if self.baseline is not None else np.zeros(F), dtype=np.float64))
            g_aug = torch.Generator().manual_seed(seed + 1)
            g_order = torch.Generator().manual_seed(seed + 2)
            opt = torch.optim.AdamW(net.parameters(), lr=float(self.lr), weight_decay=float(self.weight_decay))
            bs = int(self.batch_size)
            history = []
            net.train()
            for epoch in range(int(self.epochs)):
                perm = torch.randperm(n, generator=g_order)
                sums = dict(loss=0.0, ce=0.0, symkl=0.0, hinge=0.0)
                for lo in range(0, n, bs):
                    idx = perm[lo: lo + bs]
                    xb, yb = Xt[idx], yt[idx]
                    if regularised:
                        xt = attenuate_groups(xb, membership=mt, baseline=bt, q=float(self.q), generator=g_aug)
                        both = net(torch.cat([xb, xt], dim=0))
                        logits, logits_t = both[: len(idx)], both[len(idx):]
                    else:
                        logits = net(xb)
                        logits_t = logits.detach()
                    loss, parts = fr_resmlp_loss(logits, logits_t, yb, alpha=float(self.alpha), gamma=float(self.gamma))
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    w = len(idx) / n
                    sums["loss"] += float(loss.detach()) * w
                    for k, v in parts.items():
                        sums[k] += v * w
                history.append(dict(epoch=epoch + 1, **sums))
                report((epoch + 1) / int(self.epochs), f"Epoch {epoch + 1}/{self.epochs}: loss {sums['loss']:.4f}")
            net.eval()
        self.network_ = net
        self.history_ = history
        return self

    # -------------------------------------------------------------- predict
    def _logits(self, X) -> np.ndarray:
        if not hasattr(self, "network_"):
            raise fail("NEURAL_NOT_FITTED")
        X = np.asarray(X, dtype=np.float64)
        with _torch_env(None) as torch, torch.no_grad():
            out = [self.network_(torch.from_numpy(np.ascontiguousarray(X[lo: lo + 65536]))).numpy()
                   for lo in range(0, len(X), 65536)]
        return np.concatenate(out) if out else np.zeros((0, len(self.classes_)))

    def predict_proba(self, X) -> np.ndarray:
        """Softmax probabilities of shape (n, n_classes), float64, rows summing to 1."""
        z = self._logits(X)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def decision_function(self, X) -> np.ndarray:
        """Native logits (n, n_classes), centred (``ℓ − mean_c ℓ_c``)."""
        z = self._logits(X)
        return z - z.mean(axis=1, keepdims=True)

    def predict(self, X) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def __getstate__(self):  # pickle the weights, not the locally defined module classes
        state = dict(self.__dict__)
        net = state.pop("network_", None)
        if net is not None:
            state["_network_state"] = {k: v.detach().clone() for k, v in net.state_dict().items()}
        return state

    def __setstate__(self, state):
        weights = state.pop("_network_state", None)
        self.__dict__.update(state)
        if weights is not None:
            net = _build_network(self.n_features_in_, len(self.classes_), width=int(self.width),
                                 n_blocks=int(self.n_blocks), dropout=float(self.dropout))
            net.load_state_dict(weights)
            net.eval()
            self.network_ = net


# ---------------------------------------------------------------- workspace
def fitted_fr_resmlp(
    ws: Any, *, params: Mapping[str, Any] | None = None, progress: Callable[[float, str], None] | None = None,
):
    """Train FR-ResMLP on the workspace's training partition, reusing its fitted preprocessing.

    Returns a :class:`~audit_core.models.zoo.FittedModel` with the workspace model's
    preprocessor, input columns and origins, so ``ws.grouping`` and
    ``ws.baseline`` apply unchanged and the result can be certified.
    """
    from audit_core.models.zoo import FittedModel

    p = dict(DEFAULTS)
    p.update(params or {})
    unknown = set(p) - set(DEFAULTS)
    if unknown:
        raise fail("NEURAL_BAD_PARAM", param=", ".join(sorted(unknown)), value=None, detail="not an FR-ResMLP parameter")
    base = ws.model
    Xtr = base.transform(ws.dataset.frame.iloc[ws.train_index])
    y = np.asarray(ws.dataset.primary.y)[ws.train_index]
    est = FRResMLPClassifier(**p, grouping_index=ws.grouping.index, baseline=np.asarray(ws.baseline, dtype=float))
    est.fit(Xtr, y, progress=progress)
    spec = {"kind": "fr_resmlp", "seed": int(p["seed"]), "params": {k: v for k, v in p.items() if k != "seed"}}
    return FittedModel(spec=spec, input_columns=base.input_columns, preprocessor=base.preprocessor, estimator=est,
                       classes=tuple(est.classes_.tolist()), origins=base.origins)


@dataclass(frozen=True, kw_only=True, eq=False)
class NeuralComparison:
    """Result of :func:`compare_fr_resmlp`.

    Attributes
    ----------
    rows : tuple of dict
        One per network (``FR-ResMLP`` with the chosen α, γ, then ``plain ResMLP``
        with α = γ = 0): ``model, alpha, gamma, heldout_auroc, heldout_accuracy,
        heldout_log_loss, mean_rcma, mean_fds, mean_k_star, share_flip_within_K,
        donor_any_share, auroc_fds_donor_any, auroc_confidence_donor_any, train_seconds``.
    params : dict
        Shared hyper-parameters (``alpha``/``gamma`` differ per row).
    n_train, n_heldout, n_cases : int
    config : dict
        The certificate configuration (``FragilityConfig.to_dict()``).
    grouping_hash, baseline_kind : str
    """

    rows: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    n_train: int
    n_heldout: int
    n_cases: int
    config: Mapping[str, Any]
    grouping_hash: str
    baseline_kind: str
    models: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(r) for r in self.rows])


def compare_fr_resmlp(
    ws: Any,
    *,
    alpha: float = DEFAULTS["alpha"],
    gamma: float = DEFAULTS["gamma"],
    seed: int = 0,
    max_cases: int = 200,
    case_seed: int = 0,
    params: Mapping[str, Any] | None = None,
    config: Any = None,
    brittle: bool = True,
    stress_draws: int = 20,
    progress: Callable[[float, str], None] | None = None,
) -> NeuralComparison:
    """Train FR-ResMLP with ``(α, γ)`` and the same network with ``α = γ = 0``; compare on held-out cases.

    Both networks share every other hyper-parameter and the seed, are trained
    on ``ws.train_index`` through the workspace's fitted preprocessing, and are
    evaluated on ``ws.test_index``:

    * ``heldout_auroc`` (one-vs-rest for multi-class), accuracy, log loss on all held-out rows;
    * certificates (:func:`~audit_core.fragility.engine.certify`, the same
      protocol for both: ``ws.grouping``, ``ws.baseline``, training column
      scales, ``config``) on a seeded sample of at most ``max_cases``
      held-out rows (the same sample rule as ``run_fragility_audit``):
      ``mean_rcma``, ``mean_fds``, ``mean_k_star``, ``share_flip_within_K``;
    * when ``brittle``: donor replacement (3 groups max, ``stress_draws``
      draws, seed ``case_seed``) on the same cases, the share flipped at
      least once, and the AUROC of FDS and of negative energy for that label
      (NaN when only one class occurs).

    Returns
    -------
    NeuralComparison
    """
    from audit_core.models.probs import confidence_scores
    from audit_core.models.training import holdout_metrics
    from ..engine import FragilityConfig, certify, column_scale
    from ..evaluation import auroc
    from ..stressors import donor_replacement

    _torch()
    cfg = config if config is not None else FragilityConfig(seed=seed)
    report = progress or (lambda f, m: None)
    shared = dict(DEFAULTS)
    shared.update(params or {})
    shared["seed"] = int(seed)
    ds = ws.dataset
    y_all = np.asarray(ds.primary.y)
    rng = np.random.default_rng(np.random.SeedSequence([int(case_seed), 2]))
    rows_idx = np.asarray(ws.test_index)
    if len(rows_idx) > max_cases:
        rows_idx = np.sort(rng.choice(rows_idx, size=int(max_cases), replace=False))
    X = ws.model.transform(ds.frame.iloc[rows_idx])
    Xtr = ws.model.transform(ds.frame.iloc[ws.train_index])
    scale = column_scale(Xtr)
    keys = np.asarray(ds.keys)[rows_idx]
    variants = [("FR-ResMLP", float(alpha), float(gamma)), ("plain ResMLP", 0.0, 0.0)]
    out, models = [], {}
    for i, (name, a, g) in enumerate(variants):
        lo, hi = i / len(variants), (i + 1) / len(variants)
        t0 = time.perf_counter()
        m = fitted_fr_resmlp(ws, params={**shared, "alpha": a, "gamma": g},
                             progress=lambda f, msg, lo=lo, hi=hi, name=name: report(lo + 0.7 * (hi - lo) * f, f"{name}: {msg}"))
        secs = time.perf_counter() - t0
        report(lo + 0.7 * (hi - lo), f"{name}: certifying {len(X)} held-out cases")
        held = holdout_metrics(m, ds.frame.iloc[ws.test_index], y_all[ws.test_index], split="test").set_index("metric")["value"]
        b = certify(m, X, grouping=ws.grouping, baseline=ws.baseline, scale=scale, baseline_kind=ws.baseline_kind,
                    config=cfg, keys=keys)
        row = dict(model=name, alpha=a, gamma=g, heldout_auroc=float(held["auroc"]),
                   heldout_accuracy=float(held["accuracy"]), heldout_log_loss=float(held["log_loss"]),
                   mean_rcma=float(b.rcma.mean()), mean_fds=float(b.fds.mean()), mean_k_star=float(b.k_star.mean()),
                   share_flip_within_K=float((b.k_star <= b.protocol.k).mean()))
        if brittle:
            report(lo + 0.9 * (hi - lo), f"{name}: donor-replacement stressor")
            donor = donor_replacement(m, X, Xtr, group_columns=ws.grouping.index, max_groups=3,
                                      n_draws=int(stress_draws), seed=int(case_seed))
            lab = donor.flip_rate > 0
            row.update(donor_any_share=float(lab.mean()),
                       auroc_fds_donor_any=float(auroc(lab[None], b.fds[None])[0]),
                       auroc_confidence_donor_any=float(auroc(lab[None], -confidence_scores(b.p0)["neg_energy"][None])[0]))
        row["train_seconds"] = round(secs, 2)
        out.append(row)
        models[name] = (m, b)
        report(hi, f"{name}: done")
    return NeuralComparison(
        rows=tuple(out), params={k: v for k, v in shared.items() if k not in ("alpha", "gamma")},
        n_train=len(ws.train_index), n_heldout=len(ws.test_index), n_cases=len(X), config=cfg.to_dict(),
        grouping_hash=ws.grouping.hash, baseline_kind=str(ws.baseline_kind), models=models,
    )
