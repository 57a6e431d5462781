"""The model layer: train or import a classifier on an audit dataset.

* :mod:`~audit_core.models.zoo` — the model zoo (:data:`ZOO`), :class:`ModelSpec`, :class:`FittedModel`;
* :mod:`~audit_core.models.training` — the :class:`Workspace` (dataset, split, model, grouping, baseline);
* :mod:`~audit_core.models.importing` — import a skops file (trusted types only), a LightGBM text model, an ONNX
  classifier (:mod:`~audit_core.models.onnx_import`) or an XGBoost JSON/UBJ model
  (:mod:`~audit_core.models.xgboost_import`, optional extra);
* :mod:`~audit_core.models.inputs` — the named table columns an imported model reads: present, numeric where it reads numbers;
* :mod:`~audit_core.models.refusals` — recognise pickle, joblib, MLflow and CatBoost files unopened and refuse each
  with a way forward;
* :mod:`~audit_core.models.batch_jobs` — the ``model`` audit's seeded batch jobs (AUROC bootstrap, refits by seed);
* :mod:`~audit_core.models.scores` — a table's probability columns as a model (bring your own scores);
* :mod:`~audit_core.models.probs` — probability conventions (clipping, pseudo-logits, margins, confidence);
* :mod:`~audit_core.models.manifest` — what every run manifest records about the workspace and libraries.

Stands on :mod:`audit_core.data` and the foundation. Pure library code:
never imports streamlit or plotly.
"""
from .importing import import_model
from .manifest import library_versions, workspace_manifest
from .scores import check_scores, is_scored, scored_model
from .training import Workspace, attach_model, holdout_metrics, train_workspace
from .zoo import ZOO, FittedModel, ModelSpec, make_estimator, train_model

__all__ = [
    "FittedModel",
    "ModelSpec",
    "Workspace",
    "ZOO",
    "attach_model",
    "check_scores",
    "is_scored",
    "scored_model",
    "holdout_metrics",
    "import_model",
    "library_versions",
    "make_estimator",
    "train_model",
    "train_workspace",
    "workspace_manifest",
]
