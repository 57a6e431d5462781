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
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from audit_core.data.baseline import BaselineKind, compute_baseline
from audit_core.data.dataset import AuditDataset
from audit_core.data.groups import Grouping, grouping_from_raw_map
from audit_core.errors import MESSAGES, fail, register_messages
from audit_core.metrics import auroc, auroc_one_vs_rest

from .zoo import FittedModel, ModelSpec, train_model

__all__ = [
    "MIN_CLASS_ROWS",
    "MIN_HELDOUT_CLASS_ROWS",
    "Workspace",
    "attach_model",
    "heldout_warnings",
    "holdout_metrics",
    "constant_prediction_warnings",
    "MIN_PREDICTION_SPREAD",
    "split_holdout",
    "train_workspace",
]

register_messages(
    {
        "TRAIN_TOO_FEW_ROWS": (
            "Only {n} eligible training rows{where}; at least {minimum} are needed (rows per class: {counts})."
        ),
        "TRAIN_CLASS_TOO_SMALL": (
            "Target `{name}`: class {cls} has only {count} of the {n} eligible training rows{where} "
            "(rows per class: {counts}); each class needs at least {minimum} so that both the training and "
            "the held-out split see it. Change the target definition, the eligibility filter or the source domain."
        ),
        "TRAIN_CLASS_ABSENT": (
            "Target `{name}`: class {cls} has no row among the {n} eligible training rows{where} "
            "(rows per class: {counts}). The classes are the declared ones, and a class the model never "
            "sees cannot be predicted. Change the source domain, the eligibility filter or the target definition."
        ),
        "TRAIN_FEW_HELDOUT": (
            "The held-out split has only {count} row(s) of class {cls} (fewer than {minimum}): its AUROC, "
            "accuracy and log loss rest on so few rows that they can swing widely. Read them as rough, or "
            "use more data or a larger held-out share."
        ),
        "TRAIN_CONSTANT_PREDICTIONS": (
            "The model's predictions are (nearly) constant: over the {n} held-out rows no class probability "
            "moves by more than {spread:.4f} (every row gets about {probs}), and the held-out AUROC is {auc}. "
            "It has learned (almost) nothing from the features, so the audits would describe a constant. "
            "With {n_train} training rows, try another model (a {kind} may need more rows to split), or use "
            "more data."
        ),
    }
)

_MIN_ROWS = 20
#: Fewest rows of one class in each split (stratified, so both splits see every class).
MIN_CLASS_ROWS = 4
#: Fewest held-out rows of one class before the held-out metrics carry a warning.
MIN_HELDOUT_CLASS_ROWS = 20
#: Held-out predictions whose every class probability spans less than this (max - min over the rows) are
#: (nearly) constant: the model carries a ``TRAIN_CONSTANT_PREDICTIONS`` warning, not a plain "ready".
MIN_PREDICTION_SPREAD = 0.01


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
    warnings : tuple of (code, message)
        Declared warnings about the check (``TRAIN_FEW_HELDOUT``, ``TRAIN_CONSTANT_PREDICTIONS``).
    """

    dataset: AuditDataset
    model: FittedModel
    grouping: Grouping
    baseline_kind: BaselineKind
    baseline: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray
    metrics: pd.DataFrame
    warnings: tuple[tuple[str, str], ...] = ()

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
            warnings=self.warnings,
        )


def _counts_text(target, counts: np.ndarray) -> str:
    return ", ".join(f"{name!r} {int(c):,}" for name, c in zip(target.class_names, counts, strict=True))


def _where(dataset: AuditDataset) -> str:
    cfg = dataset.config
    if cfg.domain_column is not None and cfg.source_domain is not None:
        return f" (source domain {cfg.domain_column} = {cfg.source_domain!r})"
    return ""


def split_holdout(dataset: AuditDataset, *, test_size: float = 0.25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Stratified, seeded train/test split of the source rows.

    Returns
    -------
    train_index, test_index : ndarray of int
        Row positions in ``dataset.frame``.

    Raises
    ------
    AuditInputError
        ``TRAIN_TOO_FEW_ROWS`` (fewer than 20 source rows), ``TRAIN_CLASS_ABSENT``
        (a declared class has no source row) or ``TRAIN_CLASS_TOO_SMALL`` (fewer
        than :data:`MIN_CLASS_ROWS`), each with the rows per class.
    """
    cfg = dataset.config
    if cfg.domain_column is not None and cfg.source_domain is not None:
        rows = np.flatnonzero(dataset.domain_mask(cfg.source_domain))
    else:
        rows = np.arange(len(dataset.frame))
    target = dataset.primary
    y = target.y[rows]
    counts = np.bincount(y, minlength=len(target.classes))
    info = dict(n=len(rows), where=_where(dataset), counts=_counts_text(target, counts))
    if len(rows) < _MIN_ROWS:
        raise fail("TRAIN_TOO_FEW_ROWS", minimum=_MIN_ROWS, **info)
    for code in np.argsort(counts, kind="stable"):
        cls = repr(target.class_names[code])
        if counts[code] == 0:
            raise fail("TRAIN_CLASS_ABSENT", name=target.name, cls=cls, **info)
        if counts[code] < MIN_CLASS_ROWS:
            raise fail("TRAIN_CLASS_TOO_SMALL", name=target.name, cls=cls, count=int(counts[code]),
                       minimum=MIN_CLASS_ROWS, **info)
    train, test = train_test_split(rows, test_size=test_size, random_state=seed, stratify=y)
    return np.sort(train), np.sort(test)


def heldout_warnings(dataset: AuditDataset, test: np.ndarray) -> tuple[tuple[str, str], ...]:
    """``TRAIN_FEW_HELDOUT`` for each class with fewer than :data:`MIN_HELDOUT_CLASS_ROWS` held-out rows."""
    target = dataset.primary
    counts = np.bincount(target.y[test], minlength=len(target.classes))
    out = []
    for name, c in zip(target.class_names, counts, strict=True):
        if c < MIN_HELDOUT_CLASS_ROWS:
            out.append(("TRAIN_FEW_HELDOUT", MESSAGES["TRAIN_FEW_HELDOUT"].format(
                count=int(c), cls=repr(name), minimum=MIN_HELDOUT_CLASS_ROWS)))
    return tuple(out)


def constant_prediction_warnings(model: FittedModel, X: pd.DataFrame, *, auroc: float,
                                 n_train: int) -> tuple[tuple[str, str], ...]:
    """``TRAIN_CONSTANT_PREDICTIONS`` when no class probability spans :data:`MIN_PREDICTION_SPREAD` on ``X``.

    Parameters
    ----------
    model : FittedModel
    X : pandas.DataFrame of shape (n_heldout, n_columns)
        The held-out rows.
    auroc : float
        The held-out AUROC (NaN when a class is absent), quoted in the message.
    n_train : int
        Training rows, quoted in the message.
    """
    p = model.predict_proba(X)
    if len(p) == 0:
        return ()
    spread = float((p.max(axis=0) - p.min(axis=0)).max())
    if spread >= MIN_PREDICTION_SPREAD:
        return ()
    probs = "(" + ", ".join(f"{v:.3f}" for v in p.mean(axis=0)) + ")"
    return (("TRAIN_CONSTANT_PREDICTIONS", MESSAGES["TRAIN_CONSTANT_PREDICTIONS"].format(
        n=len(p), spread=spread, probs=probs, auc="undefined" if not np.isfinite(auroc) else f"{auroc:.3f}",
        n_train=n_train, kind=str(model.spec.get("kind", "model")))),)


def holdout_metrics(model: FittedModel, X: pd.DataFrame, y: np.ndarray, *, split: str) -> pd.DataFrame:
    """AUROC (one-vs-rest for multi-class), accuracy and log loss of ``model`` on ``X``."""
    p = model.predict_proba(X)
    labels = list(range(p.shape[1]))
    if p.shape[1] == 2:
        auc = auroc(y, p[:, 1]) if len(np.unique(y)) == 2 else np.nan
    else:
        auc = auroc_one_vs_rest(y, p) if len(np.unique(y)) == p.shape[1] else np.nan
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
        warnings=heldout_warnings(dataset, test) + constant_prediction_warnings(
            model, dataset.frame.iloc[test], auroc=float(metrics.query("split == 'test' and metric == 'auroc'")
                                                          ["value"].iloc[0]), n_train=len(train)),
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
        classes=dataset.primary.class_names,
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
