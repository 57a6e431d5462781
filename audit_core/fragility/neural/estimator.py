"""The FR-ResMLP classifier: a scikit-learn-like estimator on the transformed matrix."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from audit_core.errors import fail

from .network import attenuate_groups, build_network, fr_resmlp_loss, torch_env

__all__ = ["FRResMLPClassifier"]


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
    BaseEstimator, ClassifierMixin = object, object


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
        with torch_env(seed) as torch:
            net = build_network(F, len(self.classes_), width=int(self.width), n_blocks=int(self.n_blocks),
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
        with torch_env(None) as torch, torch.no_grad():
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
            net = build_network(self.n_features_in_, len(self.classes_), width=int(self.width),
                                 n_blocks=int(self.n_blocks), dropout=float(self.dropout))
            net.load_state_dict(weights)
            net.eval()
            self.network_ = net
