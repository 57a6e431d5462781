"""Stage 2 of Transport: four disjoint source partitions per refit, and the run's manifest (SPEC §2).

:func:`split` stratifies by the primary label (and the declared strata),
groups by the group column, seeds refit ``r`` with ``seed · 1000 + r``
(:func:`~.splits.four_way_split`) and refuses a partition holding fewer than
two records of a class. The manifest records the seeds, the partitions, what
is fitted on which partition (:func:`model_manifest`), the input hashes and
the headline slice.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from audit_core.data.preprocess import category_text
from audit_core.errors import fail

from .cautions import partition_warnings
from .config import _plain, class_names_of, declaration_key, versions
from .headline import HeadlineSlice, headline_slice
from .scores import scores_manifest, scores_model_manifest
from .splits import PARTITIONS, four_way_split
from .state import Partitions, Tick, TransportState, no_tick

__all__ = ["headline", "model_manifest", "split"]


def split(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Four disjoint, stratified (and grouped) source partitions per refit, and the manifest.

    Returns
    -------
    TransportState
        With its :class:`~.state.Partitions`, the ``partitions`` table (key → partition per refit) and the manifest.
    """
    c = state.config
    src = state.source
    y = state.y_source[c.primary_target]
    strata = pd.Series(y.astype(str))
    for col in c.strata_columns:
        strata = strata + "|" + category_text(src[col]).fillna("<NA>").to_numpy()
    groups = category_text(src[c.group_column]).to_numpy() if c.group_column else None
    seeds = [int(c.seed) * 1000 + r for r in range(c.n_refits)]
    codes = state.class_codes()
    parts = []
    for r, s in enumerate(seeds):
        p = four_way_split(strata.to_numpy(), fractions=c.fractions, groups=groups, seed=s)
        for k, name in enumerate(PARTITIONS):
            for cls in codes:
                cnt = int(((p == k) & (y == cls)).sum())
                if cnt < 2:
                    raise fail("TRANSPORT_SMALL_PARTITION", refit=r, partition=name, count=cnt, cls=cls)
        parts.append(p)
    keys = state.declared.keys
    tables = {**state.tables, "partitions": pd.DataFrame(
        {"key": keys, **{f"refit_{r}": pd.Categorical.from_codes(p, pd.Index(PARTITIONS)) for r, p in enumerate(parts)}}
    )}
    manifest: dict[str, Any] = {
        "kind": "transport",
        "binary_only": True,
        "config": c.to_dict(),
        "seeds": {"split": seeds, "model": seeds, "bootstrap": int(c.seed) + 7919,
                  "stress": [s + 17 for s in seeds]},
        "bootstrap": "exact record bootstrap" if c.exact_bootstrap else "binned-cell record bootstrap",
        "model": model_manifest(state),
        "inputs_sha256": state.declared.hashes,
        "versions": versions(),
        "n_source": int(len(src)),
        "n_target": 0 if state.target is None else int(len(state.target)),
        "target_labels": c.target_labels,
        "target_fingerprint": state.declared.target_fingerprint,
        "declaration_key": declaration_key(c.to_dict()),
        "partitions": {"names": list(PARTITIONS), "keys": [_plain(k) for k in keys.tolist()],
                       "codes": [p.astype(int).tolist() for p in parts]},
    }
    if c.on_scores:
        manifest.update(scores_manifest(c))
    manifest["headline"] = headline(manifest["config"], multiclass=state.kind.multiclass)
    stacked = np.stack(parts)
    names = list(state.classes) or class_names_of(manifest["config"]) or [f"class {k}" for k in codes]
    manifest["warnings"] = partition_warnings(stacked, y, partitions=PARTITIONS, codes=codes, names=names)
    return replace(state, partitions=Partitions(seeds=tuple(seeds), codes=stacked), tables=tables, manifest=manifest)


def headline(config: dict, *, multiclass: bool) -> dict:
    """The manifest's ``headline``: the slice every headline number reads (:mod:`.headline`)."""
    h = headline_slice(config, multiclass=multiclass)
    assert isinstance(h, HeadlineSlice), h  # a validated config declares models, mappings, targets
    return h.to_dict()


def model_manifest(state: TransportState) -> dict:
    """What was fitted on which source partition, and whether the model was refit."""
    c = state.config
    fitted = {"calibration": "probability mappings (" + ", ".join(c.mappings) + ")",
              "selection": "selection thresholds and conformal quantiles",
              "train": "stress quantities: mutual-information ranking, corruption distribution, oracle donors"}
    if c.on_scores:
        return scores_model_manifest(c, fitted)
    if state.model is not None:
        return {"refit": False, "label": c.fixed_model, "spec": json.loads(json.dumps(dict(state.model.spec), default=str)),
                "input_columns": list(state.model.input_columns), "fitted_on_source": fitted,
                "not_fitted": "the model and its own preprocessing (used as given)",
                "note": "The model was not refit. Its training records are unknown to the audit, so the ID "
                        "test may hold records it was trained on."}
    fitted["train"] = "preprocessing and the model, then " + fitted["train"]
    return {"refit": True, "kinds": list(c.models), "params": {k: c.model_params.get(k, {}) for k in c.models},
            "seeds": "seed * 1000 + refit", "fitted_on_source": fitted}
