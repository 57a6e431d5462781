"""The state of a Transport run: one frozen object that every stage receives and returns (SPEC §2).

A stage is a function ``stage(state, ..., *, tick) -> TransportState``; it
never changes the state it is given, it returns a new one
(:func:`dataclasses.replace`) with its own part filled in:

* :class:`RunKind` — binary or multi-class, the mappings, conformal scores
  and tolerances of the run (set before :func:`~.declaration.declare`);
* :class:`Declaration` — the domains as declared: source and target
  frames, labels of every target definition, weights, keys, input hashes
  and class names (:mod:`.declaration`);
* :class:`Partitions` — the split seeds and the four source partitions
  per refit (:mod:`.partitions`);
* :class:`Fitted` — the pipelines (model, raw scores, mappings) per
  ``(refit, model)`` and the rules per ``(refit, model, mapping)``
  (:mod:`.fitting`);
* the score order of every test set (``orders``: ``(refit, model, mapping,
  domain)`` → stable ascending order of ``p̂``), sorted once by
  :func:`~.evaluation.evaluate` and read by the bootstrap (:mod:`.replicates`);
* the result rows, the tables and the manifest the later stages add to
  (:mod:`.evaluation`, :mod:`.transfer`, :mod:`.changes`, :mod:`.stress`,
  :mod:`.heterogeneity`), and the stages done.

:func:`require_next` refuses a stage asked for out of order or twice; the
runner (:mod:`.runner`) calls it before every stage.

Examples
--------
>>> from audit_core.transport.config import TransportConfig
>>> config = TransportConfig(targets=({"kind": "threshold", "name": "t", "column": "y", "threshold": 0.5},),
...                          numeric=("x",))
>>> state = TransportState.start(config)
>>> state.kind.name, state.done, state.domains()
('binary', (), ('id',))
>>> require_next(state, "fit")
Traceback (most recent call last):
...
audit_core.errors.AuditInputError: Step 'fit' cannot run yet: run 'declare' first. ...
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.models.zoo import FittedModel

from .config import TransportConfig
from .splits import PARTITIONS

__all__ = ["FORECAST_STAGES", "STAGES", "Declaration", "Fitted", "Partitions", "RunKind", "Tick", "TransportState", "no_tick",
           "require_next", "result_rows"]

STAGES = ("declare", "split", "fit", "evaluate", "transport", "classify", "stress", "heterogeneity")
#: The steps of a label-free run (``target_labels`` absent or hidden): evaluation on the source only, then the forecast
FORECAST_STAGES = ("declare", "split", "fit", "evaluate", "forecast")

#: ``(domain, labels (n,), weights (n,) or None, source row positions or None for the target)``
TestSet = tuple[str, np.ndarray, "np.ndarray | None", "np.ndarray | None"]

#: ``tick(fraction of the stage done, message)``: progress, and the point where a run may be cancelled
Tick = Callable[[float, str], None]


def no_tick(fraction: float, message: str) -> None:
    """A :data:`Tick` that reports nothing."""


@dataclass(frozen=True)
class RunKind:
    """Binary or multi-class, and what the run applies.

    Attributes
    ----------
    name : {"binary", "multiclass"}
    mappings : tuple of str
        The mappings fitted (the multi-class counterparts for a multi-class run).
    scores : tuple
        The multi-class conformal scores (:class:`~.multiclass.conformal.ScoreSpec`); empty for binary.
    tolerances : mapping or None
        δ per metric for the verdicts; None: the config's.
    """

    name: str
    mappings: tuple[str, ...]
    scores: tuple = ()
    tolerances: Mapping[str, float] | None = None

    @property
    def multiclass(self) -> bool:
        return self.name == "multiclass"


@dataclass(frozen=True, eq=False)
class Declaration:
    """The domains as declared (stage 1): frames, labels per target definition, weights, keys.

    Attributes
    ----------
    source : DataFrame
        Source records (eligible only), index reset.
    y_source : dict of str to ndarray (n_source,)
        Label codes per target definition.
    w_source : ndarray (n_source,) or None
        Weights normalised to mean 1.
    target, y_target, w_target : as for the source, or None without a target domain
    keys : ndarray (n_source,)
        The key column's values, or positions.
    hashes : dict
        Fingerprints of the inputs.
    label_classes : dict
        ``"source"`` / ``"target"`` → target definition → class names.
    classes : tuple
        The multi-class class names in code order; empty for binary.
    target_fingerprint : str or None
        SHA-256 of the target's feature columns only (no label column), the
        same whether its labels are available, absent or hidden
        (:func:`~.forecasting.target_fingerprint`); None without a target.
    """

    source: pd.DataFrame
    y_source: Mapping[str, np.ndarray]
    w_source: np.ndarray | None
    target: pd.DataFrame | None
    y_target: Mapping[str, np.ndarray] | None
    w_target: np.ndarray | None
    keys: np.ndarray
    hashes: Mapping[str, str]
    label_classes: Mapping[str, Mapping[str, Any]]
    classes: tuple = ()
    target_fingerprint: str | None = None


@dataclass(frozen=True, eq=False)
class Partitions:
    """The source partitions (stage 2): ``codes[r, i]`` is the index in :data:`~.splits.PARTITIONS` of record ``i`` in refit ``r``."""

    seeds: tuple[int, ...]
    codes: np.ndarray


@dataclass(frozen=True, eq=False)
class Fitted:
    """What stage 3 fitted on the source partitions.

    Attributes
    ----------
    pipes : dict
        ``(refit, model)`` → ``{"model": FittedModel, "raw": {partition or "ood": scores}, "maps": {mapping: fitted}}``.
    rules : dict
        ``(refit, model, mapping)`` → :class:`~.evaluation.Rules` (:class:`~.multiclass.fitting.MulticlassRules`).
    """

    pipes: Mapping[tuple[int, str], dict]
    rules: Mapping[tuple[int, str, str], Any]


@dataclass(frozen=True, eq=False)
class TransportState:
    """Everything a Transport run knows after the stages in ``done`` (module docstring)."""

    config: TransportConfig
    kind: RunKind
    model: FittedModel | None = None
    declaration: Declaration | None = None
    partitions: Partitions | None = None
    fitted: Fitted | None = None
    rows: tuple[dict, ...] = ()
    orders: Mapping[tuple[int, str, str, str], np.ndarray] = field(default_factory=dict)
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    manifest: Mapping[str, Any] = field(default_factory=dict)
    done: tuple[str, ...] = ()

    @classmethod
    def start(cls, config: TransportConfig, *, model: FittedModel | None = None,
              kind: RunKind | None = None) -> "TransportState":
        """The state before :func:`~.declaration.declare` (binary unless ``kind`` says otherwise)."""
        return cls(config=config, kind=kind or RunKind("binary", tuple(config.mappings)), model=model)

    # ------------------------------------------------------------ parts, checked
    @property
    def declared(self) -> Declaration:
        if self.declaration is None:  # pragma: no cover - require_next refuses earlier
            raise fail("TRANSPORT_STAGE_ORDER", stage="?", needed="declare", order=" → ".join(STAGES))
        return self.declaration

    @property
    def split(self) -> Partitions:
        if self.partitions is None:  # pragma: no cover - require_next refuses earlier
            raise fail("TRANSPORT_STAGE_ORDER", stage="?", needed="split", order=" → ".join(STAGES))
        return self.partitions

    @property
    def fits(self) -> Fitted:
        if self.fitted is None:  # pragma: no cover - require_next refuses earlier
            raise fail("TRANSPORT_STAGE_ORDER", stage="?", needed="fit", order=" → ".join(STAGES))
        return self.fitted

    # ------------------------------------------------------------ shorthands
    @property
    def source(self) -> pd.DataFrame:
        return self.declared.source

    @property
    def y_source(self) -> Mapping[str, np.ndarray]:
        return self.declared.y_source

    @property
    def w_source(self) -> np.ndarray | None:
        return self.declared.w_source

    @property
    def target(self) -> pd.DataFrame | None:
        return None if self.declaration is None else self.declaration.target

    @property
    def y_target(self) -> Mapping[str, np.ndarray]:
        y = self.declared.y_target
        assert y is not None, "no target domain"  # callers check ``target`` first
        return y

    @property
    def w_target(self) -> np.ndarray | None:
        return self.declared.w_target

    @property
    def classes(self) -> tuple:
        return () if self.declaration is None else self.declaration.classes

    @property
    def pipes(self) -> Mapping[tuple[int, str], dict]:
        return self.fits.pipes

    @property
    def rules(self) -> Mapping[tuple[int, str, str], Any]:
        return self.fits.rules

    # ------------------------------------------------------------ reading the parts
    def class_codes(self) -> tuple[int, ...]:
        """Class codes every partition must hold (at least 2 records each)."""
        return tuple(range(len(self.classes))) if self.kind.multiclass else (0, 1)

    def source_rows(self, refit: int, partition: str) -> np.ndarray:
        """Source row positions of one partition (never target rows)."""
        idx = np.flatnonzero(self.split.codes[refit] == PARTITIONS.index(partition))
        if idx.size and idx.max() >= len(self.source):  # pragma: no cover - invariant
            raise fail("TRANSPORT_TARGET_TUNING", what=partition)
        return idx

    def test_sets(self, refit: int, target: str | None = None) -> Iterator[TestSet]:
        """``(domain, y, weights, row positions)`` for the ID test and the OOD test."""
        t = target or self.config.primary_target
        idt = self.source_rows(refit, "id_test")
        w = self.w_source
        yield "id", self.y_source[t][idt], (w[idt] if w is not None else None), idt
        if self.labelled_target:  # labels are set with the frame by declare()
            yield "ood", self.y_target[t], self.w_target, None

    @property
    def labelled_target(self) -> bool:
        """Whether the run has a target domain with its labels (not a label-free run)."""
        return self.declaration is not None and self.declaration.target is not None and \
            self.declaration.y_target is not None

    def domains(self) -> tuple[str, ...]:
        """The labelled test sets: ``("id", "ood")``, or ``("id",)`` without a target or its labels."""
        return ("id", "ood") if self.labelled_target else ("id",)

    @property
    def stages(self) -> tuple[str, ...]:
        """This run's steps: :data:`STAGES`, or :data:`FORECAST_STAGES` for a label-free run."""
        return FORECAST_STAGES if self.config.label_free else STAGES

    def each_test_set(self, tick: Tick, message: str) -> Iterator[tuple[int, str, str, str, np.ndarray,
                                                                         np.ndarray | None, np.ndarray]]:
        """Every pipeline's test sets: ``(refit, model, mapping, domain, y, weights, mapped probabilities)``.

        Pipelines in fit order, mappings in run order, the ID test before the OOD test;
        ``tick`` is called once per ``(refit, model)`` with ``message.format(refit=refit + 1)``.
        """
        for i, (r, m) in enumerate(self.pipes):
            tick(i / len(self.pipes), message.format(refit=r + 1))
            for mp in self.kind.mappings:
                for dom, y, w, _ in self.test_sets(r):
                    yield r, m, mp, dom, y, w, self.mapped(r, m, mp, dom)

    def mapped(self, refit: int, model: str, mapping: str, domain: str) -> np.ndarray:
        """Mapped probabilities of one test set, record order."""
        pipe = self.pipes[(refit, model)]
        return pipe["maps"][mapping](pipe["raw"]["id_test" if domain == "id" else "ood"])

    def extra(self, refit: int, model: str, mapping: str, domain: str) -> dict:
        """Mapping-specific metric columns (the Venn-Abers width) on one test set, record order."""
        pipe = self.pipes[(refit, model)]
        return pipe["maps"][mapping].extra_metrics(pipe["raw"]["id_test" if domain == "id" else "ood"])

    def with_rows(self, rows: list[dict]) -> "TransportState":
        """This state with ``rows`` (:func:`result_rows`) appended to the result rows."""
        return replace(self, rows=self.rows + tuple(rows))


def result_rows(config: TransportConfig, rows, **ids) -> list[dict]:
    """Result rows: each of ``rows`` over the defaults and ``ids`` (a ``None`` in a row keeps the default)."""
    out = []
    for r in rows:
        row = {
            "analysis": "metrics", "condition": "clean", "target_definition": config.primary_target,
            "domain": "id", "model": "", "mapping": "", "refit": -1, "metric": "", "value": np.nan,
            "weighting": "unweighted", "alpha": np.nan, "selection_rate": np.nan,
        }
        row.update(ids)
        row.update({k: v for k, v in r.items() if v is not None})
        out.append(row)
    return out


def require_next(state: TransportState, stage: str) -> None:
    """Refuse ``stage`` unless it is the next one of the run's steps (:attr:`TransportState.stages`).

    ``TRANSPORT_STAGE_DONE``, ``TRANSPORT_STAGE_ORDER``; a step of the labelled
    run in a label-free run ``TRANSPORT_LABEL_FREE_STAGE``, and ``forecast`` in
    a labelled run ``TRANSPORT_FORECAST_LABELLED``.
    """
    done, order = state.done, state.stages
    if stage in done:
        raise fail("TRANSPORT_STAGE_DONE", stage=stage)
    if stage != "result" and stage not in order:
        if state.config.label_free:
            raise fail("TRANSPORT_LABEL_FREE_STAGE", stage=stage, mode=state.config.target_labels,
                       order=" → ".join(order))
        raise fail("TRANSPORT_FORECAST_LABELLED", order=" → ".join(order))
    if stage == "result" and len(done) != len(order) or stage != "result" and len(done) != order.index(stage):
        raise fail("TRANSPORT_STAGE_ORDER", stage=stage, needed=order[len(done)], order=" → ".join(order))
