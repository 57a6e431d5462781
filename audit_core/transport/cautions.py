"""Where a Transport run is weak: warnings kept in its manifest.

Two cases the run itself does not refuse, yet a reader must know about:

* ``TRANSPORT_FEW_IN_PARTITION``: a source partition holds fewer than
  :data:`audit_core.limits.MIN_PARTITION_CLASS_ROWS` records of a class in
  some refit. The selection partition (10 % by default) is the first to be
  short: its thresholds and conformal quantiles then rest on a handful of
  records. One warning per partition and class, with the fewest records
  over the refits.
* ``TRANSPORT_STRESS_ONE_TARGET``: the target-definition stress is declared
  but needs a second target definition to compare with; it did not run.
* ``TRANSPORT_STRESS_NO_IMPUTER``: the evidence-degradation stress is declared
  on a model used as given (imported) that cannot score records with missing
  values; the stress sets values missing, so it did not run, and the rest of
  the run stands.

Each warning is a ``{"code", "message"}`` dict in the manifest's
``warnings`` list, saved with the run. This module is pure.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import MESSAGES, register_messages
from ..limits import MIN_PARTITION_CLASS_ROWS

__all__ = ["PARTITION_USE", "no_imputer_warning", "partition_warnings", "stress_warnings"]

#: What each source partition is used for, as the warnings say it.
PARTITION_USE = {
    "train": "the refitted model and the stresses' quantities",
    "calibration": "the probability mappings",
    "selection": "the selective thresholds and conformal quantiles",
    "id_test": "the ID-test metrics every change is measured from",
}

register_messages(
    {
        "TRANSPORT_FEW_IN_PARTITION": (
            "The {partition} partition holds only {count} record(s) of class {cls} (fewest over {n_refits} "
            "refit(s); the declared minimum is {minimum} per class): {use} rest on so few records that they can "
            "swing widely. Use more source records, or fewer classes."
        ),
        "TRANSPORT_STRESS_ONE_TARGET": (
            "The target-definition stress did not run: it compares the primary target {primary!r} with another "
            "definition of the target, and only one is declared. Declare a second target to run it."
        ),
        "TRANSPORT_STRESS_NO_IMPUTER": (
            "The evidence-degradation stress did not run: it sets feature values missing, and the model {label!r} "
            "cannot score records with missing values ({detail}). The rest of the run does not depend on it. To "
            "run the stress, import a pipeline whose preprocessing imputes missing values."
        ),
    }
)


def partition_warnings(parts: np.ndarray, y: np.ndarray, *, partitions: Sequence[str], codes: Sequence[int],
                       names: Sequence[str], minimum: int = MIN_PARTITION_CLASS_ROWS) -> list[dict]:
    """``TRANSPORT_FEW_IN_PARTITION`` for each (partition, class) below ``minimum`` in some refit.

    Parameters
    ----------
    parts : ndarray of int, shape (n_refits, n_records)
        Partition code of each source record per refit (indexing ``partitions``).
    y : ndarray of int, shape (n_records,)
        Class code of each source record.
    partitions : sequence of str
        Partition names in code order.
    codes, names : sequences of the same length
        The class codes to check and the names the warnings use for them.
    minimum : int

    Returns
    -------
    list of dict
        ``{"code", "message", "partition", "class", "count"}``, in partition then class order.
    """
    parts = np.atleast_2d(parts)
    out = []
    for k, partition in enumerate(partitions):
        for code, name in zip(codes, names, strict=True):
            count = int(min(((p == k) & (y == code)).sum() for p in parts))
            if count < minimum:
                message = MESSAGES["TRANSPORT_FEW_IN_PARTITION"].format(
                    partition=partition, count=count, cls=repr(str(name)), n_refits=len(parts), minimum=minimum,
                    use=PARTITION_USE.get(partition, "what is fitted on it"))
                out.append({"code": "TRANSPORT_FEW_IN_PARTITION", "message": message, "partition": partition,
                            "class": str(name), "count": count})
    return out


def stress_warnings(*, stresses: Sequence[str], targets: Sequence[dict], primary: str) -> list[dict]:
    """``TRANSPORT_STRESS_ONE_TARGET`` when the target-definition stress is declared with one target."""
    if "target_definition" in stresses and len(targets) < 2:
        return [{"code": "TRANSPORT_STRESS_ONE_TARGET",
                 "message": MESSAGES["TRANSPORT_STRESS_ONE_TARGET"].format(primary=primary)}]
    return []


def no_imputer_warning(*, label: str, detail: str) -> dict:
    """``TRANSPORT_STRESS_NO_IMPUTER``: the degradation stress skipped for a model that cannot score missing values."""
    return {"code": "TRANSPORT_STRESS_NO_IMPUTER",
            "message": MESSAGES["TRANSPORT_STRESS_NO_IMPUTER"].format(label=label, detail=detail)}
