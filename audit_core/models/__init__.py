"""The model layer: train or import a classifier on an audit dataset.

* :mod:`~audit_core.models.zoo` — the model zoo (:data:`ZOO`), :class:`ModelSpec`, :class:`FittedModel`;
* :mod:`~audit_core.models.training` — the :class:`Workspace` (dataset, split, model, grouping, baseline);
* :mod:`~audit_core.models.importing` — import a skops file (trusted types only) or a LightGBM text model;
* :mod:`~audit_core.models.refusals` — recognise pickle, joblib, MLflow, ONNX, XGBoost and CatBoost files unopened
  and refuse each with a way forward;
* :mod:`~audit_core.models.audit` — the ``model`` audit's seeded work items (AUROC bootstrap, refits by seed);
* :mod:`~audit_core.models.probs` — probability conventions (clipping, pseudo-logits, margins, confidence);
* :mod:`~audit_core.models.manifest` — what every run manifest records about the workspace and libraries.

Stands on :mod:`audit_core.data` and the foundation. Pure library code:
never imports streamlit or plotly.
"""
import importlib

#: Each public name and the submodule that defines it. The names are imported on first use (PEP 562
#: ``__getattr__``), so importing one submodule (the app's first run imports a few) does not import every other
#: one and what they need (scikit-learn, SciPy): see ``components/shell.py`` and docs/reliability.md "First paint".
_EXPORTS = {
    "import_model": ".importing",
    "library_versions": ".manifest",
    "workspace_manifest": ".manifest",
    "Workspace": ".training",
    "attach_model": ".training",
    "holdout_metrics": ".training",
    "train_workspace": ".training",
    "ZOO": ".zoo",
    "FittedModel": ".zoo",
    "ModelSpec": ".zoo",
    "make_estimator": ".zoo",
    "train_model": ".zoo",
}
__all__ = [
    "FittedModel",
    "ModelSpec",
    "Workspace",
    "ZOO",
    "attach_model",
    "holdout_metrics",
    "import_model",
    "library_versions",
    "make_estimator",
    "train_model",
    "train_workspace",
    "workspace_manifest",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    globals()[name] = value  # once: later reads do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
