"""Stages 1 and 2 of the multi-class Transport run: the classes, coded in the source's order.

:func:`declare` is the binary declaration (:func:`~audit_core.transport.declaration.declare`)
for a class target without a positive class: the target's labels are recoded
to the source's class codes (a target lacking a class keeps the source's
codes), fewer than three classes are refused, and a run on scores gets its
scored model (one column per class, in the sorted class order). :func:`split`
is the binary split, every class at least twice in every partition, with the
classes, mappings, conformal scores and tolerances in the manifest.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.models.scores import scored_model

from .. import declaration, partitions
from ..state import Tick, TransportState, no_tick

__all__ = ["declare", "is_multiclass_definition", "is_multiclass_target", "split"]


def is_multiclass_target(config) -> bool:
    """Whether the config's primary target is a class target without a positive class (every value a class)."""
    return is_multiclass_definition(config.targets[0])


def is_multiclass_definition(target) -> bool:
    """Whether one target definition (a mapping) is a class target without a positive class."""
    t = dict(target)
    return t.get("kind") == "class" and t.get("positive") is None


def declare(state: TransportState, source: pd.DataFrame, target: pd.DataFrame | None = None, *,
            tick: Tick = no_tick) -> TransportState:
    """The declaration of a multi-class run (module docstring)."""
    c = state.config
    if not is_multiclass_target(c):
        raise fail("TRANSPORT_BAD_OPTION", name="targets",
                   problem=f"the primary target {c.primary_target!r} must be a class target without a positive class")
    state = declaration.declare(state, source, target, tick=tick)
    d = state.declared
    src = list(d.label_classes["source"][c.primary_target])
    tgt = list(d.label_classes.get("target", {}).get(c.primary_target, src))
    y_target = d.y_target
    if tgt != src and y_target is not None:  # the target lacks a class (a class only the target holds is refused)
        code = np.array([src.index(name) for name in tgt])
        y_target = {**y_target, c.primary_target: code[y_target[c.primary_target]]}  # the source's codes
    classes = tuple(src)
    if len(classes) < 3:
        raise fail("TRANSPORT_BAD_OPTION", name="targets", problem=(
            f"target {c.primary_target!r} has {len(classes)} classes ({', '.join(map(repr, classes))}): "
            "declare a positive class to run the binary protocol"))
    model = state.model
    if c.on_scores:  # one score column per class, in the sorted class order
        model = scored_model(c.score_columns, n_classes=len(classes), classes=classes)
    return replace(state, model=model, declaration=replace(d, y_target=y_target, classes=classes))


def split(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """The binary split (every class at least twice per partition), with the multi-class manifest."""
    state = partitions.split(state, tick=tick)
    kind, m = state.kind, dict(state.manifest)
    m.update({
        "binary_only": False, "multiclass": True, "classes": [str(x) for x in state.classes],
        "multiclass_mappings": list(kind.mappings),
        "conformal_scores": [{"name": s.name, "k_reg": s.k_reg, "lambda": s.lam} for s in kind.scores],
        "tolerances": dict(kind.tolerances or {}),
        "not_run": ["stress", "heterogeneity (subgroups)", "feature shift"] + m.get("not_run", [])})
    m["config"] = {**m["config"], "mappings": list(kind.mappings)}
    m["model"] = {**m["model"], "fitted_on_source": {
        **m["model"]["fitted_on_source"], "calibration": "probability mappings (" + ", ".join(kind.mappings) + ")"}}
    m["headline"] = partitions.headline(m["config"], multiclass=True)  # on the multi-class mapping names
    return replace(state, manifest=m)
