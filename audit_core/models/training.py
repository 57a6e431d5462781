"""Train (or attach) a model on a declared dataset: the workspace the audits start from.

A :class:`Workspace` bundles the dataset, the fitted model, the evidence
grouping, the baseline vector (computed on the training partition only) and
a held-out check of the model. Training uses source-domain rows only when a
domain column and a source value are declared; the split is stratified and
seeded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import train_test_split

from audit_core.data.baseline import BaselineKind, compute_baseline
from audit_core.data.dataset import AuditDataset
from audit_core.data.groups import Grouping, grouping_from_raw_map
from audit_core.errors import fail, register_messages

from .zoo import FittedModel, ModelSpec, train_model

__all__ = ["Workspace", "split_holdout", "train_workspace", "attach_model", "holdout_metrics"]

register_messages(
    {
        "TRAIN_CLASS_ABSENT": (
            "Target {name!r} has {k} classes, but class {cls} has no row among the {n} training rows{where}. "
            "A model cannot learn a class it never sees: declare a positive class (a binary target), or "
            "exclude that class with the eligibility filter."
        ),
        "TRAIN_TOO_FEW_ROWS": (
            "Only {n} eligible training rows; at least {minimum} are needed, and at least 4 of each class so that both splits see every class."
        ),
    }
)

_MIN_ROWS = 20


@dataclass(frozen=True, eq=False)
class Workspace:
    """Everything an audit needs from the Data & groups step.

    Attributes
    ----------
    dataset : AuditDataset
    model : FittedModel
    grouping : Grouping
    baseline_kind : str
    baseline : ndarray of shape (n_features,)
    train_index, test_index : ndarray of int
        Row positions in ``dataset.frame``.
    metrics : pandas.DataFrame
        Held-out check: columns ``split``, ``metric``, ``value``.
    """

    dataset: AuditDataset
    model: FittedModel
    grouping: Grouping
    baseline_kind: str
    baseline: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray
    metrics: pd.DataFrame

    def with_grouping(self, raw_to_group: Mapping[str, str], *, baseline_kind: BaselineKind | None = None) -> "Workspace":
        """The same model under another grouping or baseline kind."""
        grouping = grouping_from_raw_map(self.model.origins, raw_to_group)
        kind = baseline_kind or self.baseline_kind
        Xtr = self.model.transform(self.dataset.frame.iloc[self.train_index])
        return Workspace(
            dataset=self.dataset,
            model=self.model,
            grouping=grouping,
            baseline_kind=kind,
            baseline=compute_baseline(Xtr, grouping, kind=kind),
            train_index=self.train_index,
            test_index=self.test_index,
            metrics=self.metrics,
        )


def split_holdout(dataset: AuditDataset, *, test_size: float = 0.25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Stratified, seeded train/test split of the source rows.

    Returns
    -------
    train_index, test_index : ndarray of int
        Row positions in ``dataset.frame``.
    """
    cfg = dataset.config
    if cfg.domain_column is not None and cfg.source_domain is not None:
        rows = np.flatnonzero(dataset.domain_mask(cfg.source_domain))
    else:
        rows = np.arange(len(dataset.frame))
    y = dataset.primary.y[rows]
    counts = np.bincount(y, minlength=max(2, len(dataset.primary.classes)))
    if len(rows) < _MIN_ROWS or (counts[counts > 0] < 4).any():
        raise fail("TRAIN_TOO_FEW_ROWS", n=len(rows), minimum=_MIN_ROWS)
    if not dataset.primary.binary and (counts == 0).any():  # e.g. the middle class of three absent from the source
        absent = int(np.flatnonzero(counts == 0)[0])
        where = f" (source domain {cfg.source_domain!r})" if len(rows) < len(dataset.frame) else ""
        raise fail("TRAIN_CLASS_ABSENT", name=dataset.primary.name, k=len(dataset.primary.classes),
                   cls=repr(dataset.primary.class_names[absent]), n=len(rows), where=where)
    train, test = train_test_split(rows, test_size=test_size, random_state=seed, stratify=y)
    return np.sort(train), np.sort(test)


def holdout_metrics(model: FittedModel, X: pd.DataFrame, y: np.ndarray, *, split: str) -> pd.DataFrame:
    """AUROC (one-vs-rest for multi-class), accuracy and log loss of ``model`` on ``X``."""
    p = model.predict_proba(X)
    labels = list(range(p.shape[1]))
    if p.shape[1] == 2:
        auc = roc_auc_score(y, p[:, 1]) if len(np.unique(y)) == 2 else np.nan
    else:
        auc = roc_auc_score(y, p, multi_class="ovr", labels=labels) if len(np.unique(y)) == p.shape[1] else np.nan
    rows = [
        (split, "auroc", float(auc)),
        (split, "accuracy", float(accuracy_score(y, p.argmax(axis=1)))),
        (split, "log_loss", float(log_loss(y, np.clip(p, 1e-8, 1), labels=labels))),
        (split, "n_rows", float(len(y))),
    ]
    return pd.DataFrame(rows, columns=["split", "metric", "value"])


def _finish(
    dataset: AuditDataset,
    model: FittedModel,
    train: np.ndarray,
    test: np.ndarray,
    raw_groups: Mapping[str, str],
    baseline_kind: BaselineKind,
) -> Workspace:
    y = dataset.primary.y
    metrics = pd.concat(
        [
            holdout_metrics(model, dataset.frame.iloc[train], y[train], split="train"),
            holdout_metrics(model, dataset.frame.iloc[test], y[test], split="test"),
        ],
        ignore_index=True,
    )
    grouping: Grouping = grouping_from_raw_map(model.origins, raw_groups)
    Xtr = model.transform(dataset.frame.iloc[train])
    return Workspace(
        dataset=dataset,
        model=model,
        grouping=grouping,
        baseline_kind=baseline_kind,
        baseline=compute_baseline(Xtr, grouping, kind=baseline_kind),
        train_index=train,
        test_index=test,
        metrics=metrics,
    )


def train_workspace(
    dataset: AuditDataset,
    *,
    spec: ModelSpec,
    raw_groups: Mapping[str, str] | None = None,
    baseline_kind: BaselineKind = "mean",
    test_size: float = 0.25,
    progress: Callable[[float, str], None] | None = None,
) -> Workspace:
    """Split, train a zoo model, check it on held-out rows, and group its features.

    Parameters
    ----------
    dataset : AuditDataset
    spec : ModelSpec
        The split uses ``spec.seed`` too.
    raw_groups : mapping, optional
        Raw column → evidence group; unlisted columns form their own group.
    baseline_kind : {"mean", "median", "mode", "zero"}
    test_size : float
    progress : callable(fraction, message), optional

    Returns
    -------
    Workspace
    """
    train, test = split_holdout(dataset, test_size=test_size, seed=spec.seed)
    y = dataset.primary.y
    model = train_model(
        dataset.frame.iloc[train],
        y[train],
        spec=spec,
        numeric=dataset.numeric,
        categorical=dataset.categorical,
        missing_indicators=dataset.config.missing_indicators,
        sample_weight=dataset.weights[train] if dataset.config.weight_column else None,
        progress=progress,
    )
    raw = {c: g for c, g in (raw_groups or {}).items() if c in set(model.origins["raw_column"])}
    return _finish(dataset, model, train, test, raw, baseline_kind)


def _check_class_order(model: FittedModel, target) -> None:
    """Probability column j must mean class code j of the target.

    Accepted: the model's classes are the codes ``0..C-1``, the target's own
    class labels, or ``(False, True)`` for a binary target. Anything else
    (e.g. a model trained on ``"no"``/``"yes"``) has no defined mapping onto
    the target's codes and is refused rather than guessed.
    """

    def plain(values) -> tuple:
        return tuple(v.item() if isinstance(v, np.generic) else v for v in values)

    mine = plain(model.classes)
    n = len(mine)
    if mine == tuple(range(n)) or mine == plain(target.classes):
        return
    if target.binary and mine == (False, True):
        return
    raise fail(
        "IMPORT_CLASS_MISMATCH",
        name=str(model.spec.get("source", model.spec.get("kind", "model"))),
        model_classes=", ".join(repr(c) for c in mine[:10]),
        target_classes=", ".join(repr(c) for c in plain(target.classes)[:10]),
    )


def attach_model(
    dataset: AuditDataset,
    model: FittedModel,
    *,
    raw_groups: Mapping[str, str] | None = None,
    baseline_kind: BaselineKind = "mean",
    test_size: float = 0.25,
    seed: int = 0,
) -> Workspace:
    """Build a workspace around an imported model (no training)."""
    target = dataset.primary
    n_target = len(target.classes)
    if model.n_classes != n_target:
        raise fail("MODEL_CLASS_MISMATCH", n_model=model.n_classes, n_target=n_target)
    _check_class_order(model, target)
    train, test = split_holdout(dataset, test_size=test_size, seed=seed)
    raw = {c: g for c, g in (raw_groups or {}).items() if c in set(model.origins["raw_column"])}
    return _finish(dataset, model, train, test, raw, baseline_kind)
