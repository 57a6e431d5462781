"""Batch jobs for :func:`audit_core.runs.parallel.map_batches`: self-contained, seeded items.

Each job is a module-level function of one frozen item that carries its data
and its seeds, so it runs identically in this process, in a loky worker or on
a Dask worker. Two jobs serve the ``model`` audit:

* :func:`bootstrap_auroc_job` — bootstrap replicates of the held-out AUROC,
  one chunk of seeds per item (cheap, NumPy only);
* :func:`refit_job` — refit a zoo model on the training rows with another
  seed and score it on the held-out rows ("refits by seed").

The audits add their own jobs the same way (e.g. certificates in chunks).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..metrics import auroc

__all__ = [
    "BootstrapChunk",
    "RefitItem",
    "bootstrap_auroc_job",
    "chunk_seeds",
    "refit_job",
]


def chunk_seeds(n: int, *, seed: int, chunk_size: int) -> list[tuple[int, ...]]:
    """Derive ``n`` independent replicate seeds from one seed, in chunks.

    Parameters
    ----------
    n : int
        Number of replicates.
    seed : int
        Master seed; the replicate seeds are drawn once from
        ``numpy.random.SeedSequence(seed)``, so they do not depend on the
        chunk size or the backend.
    chunk_size : int
        Replicates per work item.

    Returns
    -------
    list of tuple of int

    Examples
    --------
    >>> [len(c) for c in chunk_seeds(5, seed=0, chunk_size=2)]
    [2, 2, 1]
    """
    seeds = np.random.SeedSequence(seed).generate_state(max(n, 1), dtype=np.uint32)[:n]
    flat = tuple(int(s) for s in seeds)
    return [flat[i : i + chunk_size] for i in range(0, n, chunk_size)]


@dataclass(frozen=True, eq=False)
class BootstrapChunk:
    """One work item of :func:`bootstrap_auroc_job`.

    Attributes
    ----------
    y : ndarray of shape (n_samples,)
        Held-out labels (0/1).
    score : ndarray of shape (n_samples,)
        Held-out scores for class 1.
    seeds : tuple of int
        One seed per bootstrap replicate in this chunk.
    """

    y: np.ndarray
    score: np.ndarray
    seeds: tuple[int, ...]


def bootstrap_auroc_job(item: BootstrapChunk) -> np.ndarray:
    """AUROC on one bootstrap resample per seed of the chunk.

    Returns
    -------
    ndarray of shape (len(item.seeds),)
    """
    n = len(item.y)
    out = np.empty(len(item.seeds))
    for j, s in enumerate(item.seeds):
        idx = np.random.default_rng(s).integers(0, n, size=n)
        out[j] = auroc(item.y[idx], item.score[idx])
    return out


@dataclass(frozen=True, eq=False)
class RefitItem:
    """One work item of :func:`refit_job`: train on one seed, score held out.

    Attributes
    ----------
    X_train, X_test : pandas.DataFrame
        Raw feature frames (the model pipeline preprocesses them).
    y_train, y_test : ndarray of int
    numeric, categorical : tuple of str
    missing_indicators : bool
    kind : str
        Zoo kind.
    seed : int
    params : mapping
    """

    X_train: pd.DataFrame
    y_train: np.ndarray
    X_test: pd.DataFrame
    y_test: np.ndarray
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    missing_indicators: bool
    kind: str
    seed: int
    params: Mapping[str, Any] = field(default_factory=dict)


def refit_job(item: RefitItem) -> dict[str, float]:
    """Train ``item.kind`` with ``item.seed`` and report held-out metrics.

    Returns
    -------
    dict
        ``{"seed", "auroc", "accuracy", "log_loss"}`` (floats).
    """
    from .zoo import ModelSpec, train_model  # heavy imports only in workers

    model = train_model(
        item.X_train,
        item.y_train,
        spec=ModelSpec(kind=item.kind, seed=item.seed, params=dict(item.params)),
        numeric=item.numeric,
        categorical=item.categorical,
        missing_indicators=item.missing_indicators,
    )
    p = np.clip(model.predict_proba(item.X_test), 1e-8, 1.0)
    p = p / p.sum(axis=1, keepdims=True)
    y = np.asarray(item.y_test)
    score = p[:, 1] if p.shape[1] == 2 else p.max(axis=1)
    return {
        "seed": float(item.seed),
        "auroc": auroc(y, score) if p.shape[1] == 2 else float("nan"),
        "accuracy": float((p.argmax(axis=1) == y).mean()),
        "log_loss": float(-np.mean(np.log(p[np.arange(len(y)), y]))),
    }
