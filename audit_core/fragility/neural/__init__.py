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
from .compare import NeuralComparison, compare_fr_resmlp, fitted_fr_resmlp
from .estimator import FRResMLPClassifier
from .network import DEFAULTS, INSTALL_COMMAND, attenuate_groups, fr_resmlp_loss, torch_available

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
