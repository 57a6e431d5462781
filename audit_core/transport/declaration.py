"""Stage 1 of Transport: the declaration checked against the data (SPEC §2).

:func:`declare` splits the input into the source and target domains, applies
the eligibility filter, builds the labels of every target definition and the
record weights (mean 1), and fingerprints the inputs; the tolerances are
locked from here on. A class target without a positive class is refused
(``TRANSPORT_NOT_BINARY``) unless the run is multi-class.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from audit_core.data.dataset import frame_fingerprint, mean_one_weights
from audit_core.data.eligibility import EligibilityFilter
from audit_core.data.frames import from_polars
from audit_core.data.targets import apply_targets, target_from_dict
from audit_core.errors import AuditInputError, fail
from audit_core.models.scores import check_scores

from .config import TransportConfig, _bad, _sha256_file
from .state import Declaration, Tick, TransportState, no_tick

__all__ = ["declare", "label_columns", "refuse_multiclass", "target_fingerprint"]


def label_columns(c: TransportConfig) -> tuple[str, ...]:
    """Columns the target definitions read that are not declared features or scores (a label-free run drops them)."""
    kept = set(c.features) | set(c.score_columns)
    out: list[str] = []
    for t in c.targets:
        for col in target_from_dict(dict(t)).columns:
            if col not in kept and col not in out:
                out.append(col)
    return tuple(out)


def target_fingerprint(c: TransportConfig, target: pd.DataFrame, model_columns=()) -> str:
    """SHA-256 of the declared target records' feature columns only (features, score and model input columns).

    No label column and nothing only a target definition reads: the same
    whether the labels are available, absent or hidden, and different when
    any feature value of any record differs.
    """
    drop = set(label_columns(c))
    cols = [col for col in dict.fromkeys([*c.features, *c.score_columns, *model_columns])
            if col not in drop and col in target.columns]
    return frame_fingerprint(target[cols].reset_index(drop=True))


def refuse_multiclass(c: TransportConfig, source: pd.DataFrame, target: pd.DataFrame | None, *,
                      source_lacking_only: bool = False) -> None:
    """``TRANSPORT_NOT_BINARY`` for a class target without a positive class, before any label is built.

    Such a target makes every value a class. Refusing it from the declaration
    (not from the classes one domain happens to hold) means a three-class
    target whose middle class is absent from the source is refused as
    multi-class, with the classes of both domains named. The multi-class run
    (``source_lacking_only``) refuses only that case: a class the source
    does not hold cannot be fitted.
    """
    for t in c.targets:
        if t.get("kind") != "class" or t.get("positive") is not None:
            continue
        col = t.get("column")
        if col not in source.columns:
            continue  # apply_targets names the unknown column
        seen = [f for f in (source, target) if f is not None and col in f.columns]
        values = pd.unique(pd.concat([f[col].dropna().astype(object) for f in seen], ignore_index=True))
        src = pd.unique(source[col].dropna().astype(object))
        text = sorted(map(str, values))
        if source_lacking_only and len(src) == len(text):
            continue
        raise fail("TRANSPORT_NOT_BINARY", name=str(t.get("name")), column=col, k=len(text),
                   classes=", ".join(repr(v) for v in text[:10]) + (" …" if len(text) > 10 else ""),
                   source=f"{len(src)} of them" if len(src) != len(text) else "all of them")


def _domains(c: TransportConfig, source: pd.DataFrame, target: pd.DataFrame | None):
    """``(source, target or None, input hashes)`` as declared (one table with a domain column, or two)."""
    if target is None and c.single_domain and c.domain_column is None:
        return source, None, {"input": frame_fingerprint(source)}
    if target is None:
        if c.domain_column is None or c.source_value is None or c.target_value is None:
            raise fail("TRANSPORT_NO_DOMAINS")
        if c.domain_column not in source.columns:
            raise fail("TRANSPORT_UNKNOWN_COLUMN", what="domain", column=c.domain_column, which="input")
        if str(c.source_value) == str(c.target_value):
            raise fail("TRANSPORT_SAME_DOMAIN", value=c.source_value)
        dom = source[c.domain_column].astype(str)
        return (source.loc[(dom == str(c.source_value)).to_numpy()], source.loc[(dom == str(c.target_value)).to_numpy()],
                {"input": frame_fingerprint(source)})
    return source, target, {"source": frame_fingerprint(source), "target": frame_fingerprint(target)}


def declare(state: TransportState, source: pd.DataFrame, target: pd.DataFrame | None = None, *,
            tick: Tick = no_tick) -> TransportState:
    """Check the declaration against the data: the state with its :class:`~.state.Declaration`.

    Parameters
    ----------
    state : TransportState
        Before any stage.
    source : pandas.DataFrame or polars.DataFrame
        The source table, or the one table holding both domains.
    target : pandas.DataFrame or polars.DataFrame, optional
        The target table when the domains come as two tables.
    tick : callable, optional
    """
    c = state.config
    multiclass = state.kind.multiclass
    source, target = from_polars(source, where="TransportAudit.declare"), from_polars(target, where="TransportAudit.declare")
    src, tgt, hashes = _domains(c, source, target)
    for f in c.input_files:
        hashes[f"file:{f}"] = _sha256_file(f)
    if c.label_free:  # the target's labels are never read: dropped before anything looks at the records
        if tgt is None:
            raise fail("TRANSPORT_LABEL_FREE_NO_TARGET", mode=c.target_labels)
        tgt = tgt.drop(columns=[col for col in label_columns(c) if col in tgt.columns])
    refuse_multiclass(c, src, None if c.label_free else tgt, source_lacking_only=multiclass)
    label_classes: dict[str, dict] = {}
    prepared: list[tuple[pd.DataFrame | None, dict[str, np.ndarray] | None, np.ndarray | None]] = []
    for which, frame, value in (("source", src, c.source_value), ("target", tgt, c.target_value)):
        if frame is None:
            prepared.append((None, None, None))
            continue
        if len(frame) == 0:
            raise fail("TRANSPORT_EMPTY_DOMAIN", which=which, column=c.domain_column, value=value)
        cols = list(c.features) + list(c.strata_columns) + list(c.subgroup_columns or ()) + [
            x for x in (c.weight_column, c.group_column, c.key_column) if x]
        for col in cols:
            if col not in frame.columns:
                raise fail("TRANSPORT_UNKNOWN_COLUMN", what="declared", column=col, which=which)
        for col in (state.model.input_columns if state.model is not None else c.score_columns):
            if col not in frame.columns:
                raise fail("TRANSPORT_UNKNOWN_COLUMN", what="score" if c.on_scores else "model input",
                           column=col, which=which)
        if c.eligibility:
            frame = frame.loc[EligibilityFilter(expression=c.eligibility).mask(frame)]
        index = frame.index
        frame = frame.reset_index(drop=True)
        if which == "target" and c.label_free:
            if c.on_scores:
                check_scores(frame.set_axis(index), c.score_columns, which=which,
                             classes=label_classes["source"][c.primary_target])
            prepared.append((frame, None, _weights(c, frame)))
            continue
        try:
            labels = apply_targets([dict(t) for t in c.targets], frame)
        except AuditInputError as err:  # e.g. the positive class does not occur in this domain
            raise fail("TRANSPORT_TARGET_IN_DOMAIN", which=which, message=err.message) from None
        label_classes[which] = {k: v.class_names for k, v in labels.items()}
        if c.on_scores:  # rows named as in the table given; one column per class of the source
            check_scores(frame.set_axis(index), c.score_columns, which=which,
                         classes=label_classes["source"][c.primary_target])
        for name, lab in labels.items():
            if multiclass:
                continue
            if not lab.binary or len(lab.classes) != 2:  # pragma: no cover - refused by refuse_multiclass
                raise fail("TRANSPORT_NOT_BINARY", name=name, column="?", k=len(lab.classes),
                           classes=", ".join(map(repr, lab.classes)), source="?")
        prepared.append((frame, {k: np.asarray(v.y) for k, v in labels.items()}, _weights(c, frame)))
    (src_frame, ysrc, wsrc), (tgt_frame, ytgt, wtgt) = prepared
    assert src_frame is not None and ysrc is not None  # the source domain is always prepared
    keys = src_frame[c.key_column].to_numpy() if c.key_column else np.arange(len(src_frame))
    model_columns = state.model.input_columns if state.model is not None else ()
    fingerprint = None if tgt_frame is None else target_fingerprint(c, tgt_frame, model_columns)
    return replace(state, declaration=Declaration(
        source=src_frame, y_source=ysrc, w_source=wsrc, target=tgt_frame, y_target=ytgt, w_target=wtgt,
        keys=keys, hashes=hashes, label_classes=label_classes, target_fingerprint=fingerprint))


def _weights(c: TransportConfig, frame: pd.DataFrame) -> np.ndarray | None:
    """The declared record weights normalised to mean 1 (None without a weight column)."""
    if not c.weight_column:
        return None
    w = pd.to_numeric(frame[c.weight_column], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(w).all() or (w < 0).any() or not (w > 0).any():
        raise _bad("weight_column", f"{c.weight_column!r} must hold finite non-negative numbers")
    return mean_one_weights(w)
