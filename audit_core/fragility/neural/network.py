"""The FR-ResMLP network in torch: the optional import, the residual MLP, the perturbation x̃ and the loss.

torch is imported inside the functions (:func:`import_torch`), so this module
imports without it; a missing torch raises ``NEURAL_UNAVAILABLE`` naming
:data:`INSTALL_COMMAND`.
"""
from __future__ import annotations

import contextlib
import importlib.util
from typing import Any, Iterator

from audit_core.errors import fail, register_messages

__all__ = [
    "INSTALL_COMMAND",
    "DEFAULTS",
    "MAX_SEVERITY",
    "torch_available",
    "import_torch",
    "torch_env",
    "build_network",
    "attenuate_groups",
    "fr_resmlp_loss",
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


def import_torch():
    try:
        import torch
    except (ImportError, OSError):
        raise fail("NEURAL_UNAVAILABLE") from None
    return torch


@contextlib.contextmanager
def torch_env(seed: int | None) -> Iterator[Any]:
    """Single thread, deterministic algorithms, forked global RNG seeded with ``seed``; restored on exit."""
    torch = import_torch()
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


def build_network(n_features: int, n_classes: int, *, width: int, n_blocks: int, dropout: float):
    """The residual MLP as a ``torch.nn.Module`` (float64)."""
    torch = import_torch()
    nn: Any = torch.nn  # torch is imported lazily (an optional extra)

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
    torch = import_torch()
    n, G = x.shape[0], membership.shape[0]
    chosen = torch.rand((n, G), generator=generator, dtype=x.dtype) < q
    lam = torch.rand((n, G), generator=generator, dtype=x.dtype) * max_severity
    lam_f = (chosen.to(x.dtype) * lam) @ membership  # (n, F): each column's group severity or 0
    return x + lam_f * (baseline - x)


def _centred(logits):
    return logits - logits.mean(dim=-1, keepdim=True)


def _true_margin(z, y):
    """``z_y − max_{c≠y} z_c`` for tensors z (n, C), y (n,)."""
    torch = import_torch()
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
    torch = import_torch()
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
