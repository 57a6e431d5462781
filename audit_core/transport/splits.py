"""Four disjoint source partitions (stage 2).

``train`` 60 %, ``calibration`` (probability mappings) 15 %, ``selection``
(selective thresholds and conformal quantiles) 10 %, ``id_test`` 15 %, by
default. Units are records, or whole groups when a group column is declared
(a person, a student, a site stays in one partition). Units are stratified
by their stratum (target plus declared strata; a group takes the stratum of
its first record). Units are shuffled with the refit's seed, ordered by
stratum (stably, so the shuffle decides the order within a stratum), and
dealt out one by one to the partition with the largest row deficit
``fraction × rows dealt so far − rows it holds``. Within a stratum this is
a proportional round-robin, so every stratum is split in the declared
proportions up to about one unit (without groups, where every unit has one
row, the same dealing is done in closed form: Sainte-Laguë slot order), and strata with a single unit (common
with groups) are spread across partitions instead of all landing in train.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import fail, register_messages

__all__ = ["PARTITIONS", "four_way_split"]

PARTITIONS = ("train", "calibration", "selection", "id_test")

register_messages(
    {
        "TRANSPORT_BAD_FRACTIONS": "Partition fractions must be four positive numbers summing to 1, got {fractions}.",
        "TRANSPORT_EMPTY_PARTITION": (
            "The {partition} partition of refit {refit} has no records of class {cls}; "
            "the source is too small for a four-way split (n = {n})."
        ),
    }
)


def four_way_split(
    strata: np.ndarray,
    *,
    fractions: tuple[float, float, float, float] = (0.6, 0.15, 0.10, 0.15),
    groups: np.ndarray | None = None,
    seed: int,
) -> np.ndarray:
    """Assign every record to one of :data:`PARTITIONS`.

    Parameters
    ----------
    strata : ndarray of shape (n,)
        Stratum label of each record (any hashable values).
    fractions : 4 floats summing to 1
    groups : ndarray of shape (n,), optional
        Records sharing a group value stay together; a record whose group
        value is missing is a group of its own.
    seed : int

    Returns
    -------
    ndarray of int8, shape (n,)
        Partition codes indexing :data:`PARTITIONS`.
    """
    f = np.asarray(fractions, dtype=float)
    if f.shape != (4,) or (f <= 0).any() or abs(f.sum() - 1) > 1e-9:
        raise fail("TRANSPORT_BAD_FRACTIONS", fractions=tuple(fractions))
    n = len(strata)
    unit = pd.factorize(pd.Series(groups if groups is not None else np.arange(n)), sort=False)[0]
    alone = np.flatnonzero(unit < 0)  # a record without a group value is a group of its own
    unit[alone] = unit.max() + 1 + np.arange(len(alone))
    n_units = unit.max() + 1
    sizes = np.bincount(unit, minlength=n_units)
    first = np.full(n_units, -1)
    first[unit[::-1]] = np.arange(n)[::-1]
    ustrat = pd.factorize(pd.Series(np.asarray(strata, dtype=object)[first]).astype(str), sort=True)[0]
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n_units)
    # stable order by stratum, shuffled within stratum
    order = perm[np.argsort(ustrat[perm], kind="stable")]
    part_of_unit = np.empty(n_units, dtype=np.int8)
    fr = [float(x) for x in f]
    if groups is None:
        # Equal unit sizes: the k-th slot of partition j sits at (k + ½)/f_j on
        # the unit scale (Sainte-Laguë order); merging the slots gives every
        # prefix of the dealt sequence the declared proportions within one unit.
        slots = np.concatenate([(np.arange(int(np.ceil(fj * n_units)) + 2) + 0.5) / fj for fj in fr])
        owner = np.concatenate([np.full(int(np.ceil(fj * n_units)) + 2, j, dtype=np.int8) for j, fj in enumerate(fr)])
        seq = owner[np.argsort(slots, kind="stable")][:n_units]
        part_of_unit[order] = seq
        return part_of_unit[unit]
    rows = [0.0, 0.0, 0.0, 0.0]
    total = 0.0
    for u, size in zip(order.tolist(), sizes[order].tolist(), strict=True):
        total += size
        deficits = [fr[k] * total - rows[k] for k in range(4)]
        k = max(range(4), key=deficits.__getitem__)
        rows[k] += size
        part_of_unit[u] = k
    return part_of_unit[unit]
