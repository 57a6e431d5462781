"""Shared probability conventions (SPEC §0).

* Probabilities are clipped to ``[1e-8, 1]`` and renormalised.
* Pseudo-logits are centred log-probabilities, ``z_c = log p_c - mean_c log p_c``,
  so trees and linear models are scored on one scale.
* Confidence scores: max-softmax, negative entropy, margin and negative energy,
  all from the same clipped vector.
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "EPS_PROB",
    "clip_probs",
    "pseudo_logits",
    "margin_of",
    "top_margin",
    "confidence_scores",
    "CONFIDENCE_SCORES",
]

EPS_PROB = 1e-8
CONFIDENCE_SCORES = ("max_softmax", "neg_entropy", "margin", "neg_energy")


def clip_probs(p: np.ndarray) -> np.ndarray:
    """Clip to ``[1e-8, 1]`` and renormalise rows.

    Parameters
    ----------
    p : ndarray of shape (..., n_classes)

    Returns
    -------
    ndarray of the same shape; each row sums to 1.

    Examples
    --------
    >>> clip_probs(np.array([[1.0, 0.0]])).round(8).tolist()
    [[0.99999999, 1e-08]]
    """
    q = np.clip(np.asarray(p, dtype=float), EPS_PROB, 1.0)
    return q / q.sum(axis=-1, keepdims=True)


def pseudo_logits(p: np.ndarray) -> np.ndarray:
    """Centred log-probabilities ``z_c = log p_c - mean_c log p_c`` of clipped ``p``.

    Parameters
    ----------
    p : ndarray of shape (..., n_classes)

    Returns
    -------
    ndarray of shape (..., n_classes)
    """
    logp = np.log(clip_probs(p))
    return logp - logp.mean(axis=-1, keepdims=True)


def margin_of(z: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """Margin of class ``cls``: ``z_cls - max_{c != cls} z_c``.

    Parameters
    ----------
    z : ndarray of shape (..., n_classes)
        Pseudo-logits.
    cls : ndarray of int, broadcastable to ``z.shape[:-1]``

    Returns
    -------
    ndarray of shape ``z.shape[:-1]``; negative when another class wins.
    """
    z = np.asarray(z, dtype=float)
    cls = np.broadcast_to(np.asarray(cls), z.shape[:-1])
    own = np.take_along_axis(z, cls[..., None], axis=-1)[..., 0]
    others = z.copy()
    np.put_along_axis(others, cls[..., None], -np.inf, axis=-1)
    return own - others.max(axis=-1)


def top_margin(p: np.ndarray) -> np.ndarray:
    """Margin of the predicted class, ``m(x) = z_ŷ - max_{c≠ŷ} z_c`` (≥ 0)."""
    z = pseudo_logits(p)
    return margin_of(z, z.argmax(axis=-1))


def confidence_scores(p: np.ndarray) -> dict[str, np.ndarray]:
    """The four confidence scores of SPEC §0 for each row.

    Parameters
    ----------
    p : ndarray of shape (n_samples, n_classes)

    Returns
    -------
    dict of str to ndarray of shape (n_samples,)
        ``max_softmax``, ``neg_entropy`` (``sum p log p``), ``margin`` and
        ``neg_energy`` (``logsumexp(z)``). Higher means more confident.
    """
    q = clip_probs(p)
    z = pseudo_logits(q)
    return {
        "max_softmax": q.max(axis=-1),
        "neg_entropy": (q * np.log(q)).sum(axis=-1),
        "margin": margin_of(z, z.argmax(axis=-1)),
        "neg_energy": logsumexp(z, axis=-1),
    }
