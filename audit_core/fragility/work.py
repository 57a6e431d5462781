"""Bounded work for the Fragility engines: chunks sized by bytes, padded predict calls, Stop.

* **Chunks by bytes.** A chunk of certificates holds ``rows_per_case`` perturbed
  rows per case, each ``n_features`` values wide, so a chunk is sized from
  the bytes one case needs (:func:`cases_per_chunk`), not from a row count; a
  case that alone exceeds the budget is still one chunk, and the engines then
  build and predict its rows in blocks of at most the budget
  (:func:`row_blocks`).
* **Padded predict calls.** OpenBLAS computes the last ``n mod 8`` rows of a
  matrix product with a different kernel from the others, so a BLAS-based
  model (logistic regression, MLP) gives a row bits that depend on how many
  rows share its call (an ulp in the probabilities). :func:`padded` pads every
  call to a multiple of :data:`PAD_ROWS` rows by repeating its first row, so
  every real row is computed by the same kernel whatever else is in the call:
  certificates then do not depend on chunking, layout or deduplication.
* **Stop.** Long stages poll ``should_stop`` between blocks through
  :func:`check_stop`, which raises :class:`FragilityStopped`; the audit catches
  it and returns what was finished.
"""
from __future__ import annotations

from typing import Callable, Iterator

import numpy as np

__all__ = [
    "DEFAULT_CHUNK_MB", "PAD_ROWS", "FragilityStopped", "check_stop", "cases_per_chunk", "row_blocks", "rows_in_budget",
    "item_blocks", "padded", "padded_buffer", "predict_buffer", "key_weights", "Progress", "StopCheck",
]

#: Default byte budget of one chunk's perturbed rows (MiB).
DEFAULT_CHUNK_MB = 64.0
#: Predict calls are padded to a multiple of this many rows (see the module docstring).
PAD_ROWS = 32
_MB = 1024 * 1024

Progress = Callable[[float, str], None]
StopCheck = Callable[[], bool]


class FragilityStopped(Exception):
    """Raised inside a stage when ``should_stop()`` returned True (caught by the audit)."""


def check_stop(should_stop: StopCheck | None) -> None:
    """Raise :class:`FragilityStopped` when ``should_stop`` says so."""
    if should_stop is not None and should_stop():
        raise FragilityStopped


def budget_bytes(chunk_mb: float | None) -> int:
    """The byte budget of ``chunk_mb`` MiB (default :data:`DEFAULT_CHUNK_MB`)."""
    return max(1, int(float(DEFAULT_CHUNK_MB if chunk_mb is None else chunk_mb) * _MB))


def cases_per_chunk(
    bytes_per_case: int, *, chunk_mb: float | None = None, rows_per_case: int = 1,
    chunk_rows: int | None = None, chunk_cases: int | None = None,
) -> int:
    """Cases per chunk: the byte budget over the bytes of one case, at least 1.

    ``chunk_rows`` (rows per predict call) and ``chunk_cases`` are further
    upper bounds when given.
    """
    step = max(1, budget_bytes(chunk_mb) // max(1, int(bytes_per_case)))
    if chunk_rows is not None:
        step = min(step, max(1, int(chunk_rows) // max(1, int(rows_per_case))))
    if chunk_cases is not None:
        step = min(step, max(1, int(chunk_cases)))
    return step


def rows_in_budget(row_bytes: int, *, chunk_mb: float | None = None) -> int:
    """Rows of ``row_bytes`` bytes that fit the byte budget (at least one)."""
    return max(1, budget_bytes(chunk_mb) // max(1, int(row_bytes)))


def row_blocks(n_rows: int, row_bytes: int, *, chunk_mb: float | None = None) -> Iterator[slice]:
    """Slices of ``range(n_rows)`` holding at most the byte budget of rows each (at least one row)."""
    step = rows_in_budget(row_bytes, chunk_mb=chunk_mb)
    for lo in range(0, int(n_rows), step):
        yield slice(lo, min(int(n_rows), lo + step))


def item_blocks(n_cases: int, n_inner: int, item_bytes: int, *, chunk_mb: float | None = None
                ) -> Iterator[tuple[slice, slice]]:
    """``(cases, inner)`` slices covering ``n_cases × n_inner`` items of ``item_bytes`` within the budget.

    Whole cases go together while they fit; a case whose ``n_inner`` items
    alone exceed the budget is split over its inner items (e.g. groups).
    """
    per = rows_in_budget(item_bytes, chunk_mb=chunk_mb)
    n_inner = max(1, int(n_inner))
    if per >= n_inner:
        step = per // n_inner
        for lo in range(0, int(n_cases), step):
            yield slice(lo, min(int(n_cases), lo + step)), slice(0, n_inner)
        return
    for i in range(int(n_cases)):
        for lo in range(0, n_inner, per):
            yield slice(i, i + 1), slice(lo, min(n_inner, lo + per))


def padded(predict: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``predict`` with every call padded to a multiple of :data:`PAD_ROWS` rows (first row repeated)."""

    def call(rows: np.ndarray) -> np.ndarray:
        n = len(rows)
        extra = (-n) % PAD_ROWS
        if n == 0 or extra == 0:
            return np.asarray(predict(rows), dtype=float)
        full = np.concatenate([rows, np.broadcast_to(rows[:1], (extra, rows.shape[1]))], axis=0)
        return np.asarray(predict(full), dtype=float)[:n]

    call.__wrapped__ = predict  # type: ignore[attr-defined]
    return call


def padded_buffer(n_rows: int, n_features: int) -> np.ndarray:
    """An uninitialised row buffer with room for the padding of :func:`predict_buffer`."""
    return np.empty((int(n_rows) + (-int(n_rows)) % PAD_ROWS, int(n_features)))


def predict_buffer(predict: Callable[[np.ndarray], np.ndarray], buf: np.ndarray, n_rows: int) -> np.ndarray:
    """Predict the first ``n_rows`` rows of a :func:`padded_buffer` (the pad repeats row 0), without a copy."""
    if n_rows == 0:
        return np.zeros((0, 0))
    buf[n_rows:] = buf[0]
    return np.asarray(predict(buf), dtype=float)[:n_rows]


def key_weights(n_features: int) -> np.ndarray:
    """Integer-valued float weights ``c_j ≥ 1`` whose sums over any column set are exact in float64.

    Each weight is below ``2**53 / n_features``, so ``mask @ c`` is an exact
    integer for every boolean mask (BLAS may add in any order). Equal masks
    give equal keys; different masks collide with probability about
    ``n_features / 2**53`` per pair, and the engines check every match.
    """
    top = max(2.0, np.floor(2.0 ** 53 / max(1, int(n_features))) - 1)
    rng = np.random.default_rng(np.random.SeedSequence([0x5EED, int(n_features)]))
    return np.floor(rng.random(int(n_features)) * (top - 1)) + 1.0
