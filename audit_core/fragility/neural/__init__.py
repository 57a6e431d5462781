"""FR-ResMLP: a fragility-regularised residual MLP (optional extra, needs torch)."""
from .estimator import (
    DEFAULTS, INSTALL_COMMAND, FRResMLPClassifier, NeuralComparison, attenuate_groups, compare_fr_resmlp,
    fitted_fr_resmlp, fr_resmlp_loss, torch_available,
)

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
