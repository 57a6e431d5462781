"""The Transport runner: a frozen declaration and stages that refuse to run out of order (SPEC §2).

:class:`TransportAudit` audits a binary target (a class target with more
than two classes runs :class:`~audit_core.transport.multiclass.run.MulticlassTransportAudit`,
whose stages are the multi-class ones). It holds one
:class:`~audit_core.transport.state.TransportState` and has explicit steps
that must run in this order; each refuses to run early or twice, and each
is a function of the state in a module named for what it computes:

1. :meth:`~TransportAudit.declare` — :func:`.declaration.declare`: check the
   declaration against the data, build labels for every target definition,
   lock the tolerances;
2. :meth:`~TransportAudit.split` — :func:`.partitions.split`: four disjoint
   source partitions per refit and the manifest;
3. :meth:`~TransportAudit.fit` — :func:`.fitting.fit`: preprocessing +
   models on train, mappings on the probability-calibration partition,
   rules on the selection partition;
4. :meth:`~TransportAudit.evaluate` — :func:`.evaluation.evaluate`: the
   metric registry on ID test and OOD;
5. :meth:`~TransportAudit.transport` — :func:`.transfer.transport`:
   selective and conformal rules applied unchanged; then
   :meth:`~TransportAudit.classify` — :func:`.changes.classify`: paired
   changes, the vectorised bootstrap and tolerance verdicts;
6. :meth:`~TransportAudit.stress` — :func:`.stress.stress`:
   target-definition sensitivity and evidence degradation;
7. :meth:`~TransportAudit.heterogeneity` — :func:`.heterogeneity.heterogeneity`:
   by class and declared subgroup, then the per-feature shift between the
   domains, linked to stages 6–7;

then :meth:`TransportAudit.result` (:func:`.results.build_result`).
Target-domain records are only ever passed to ``predict_proba`` and to
metric functions; every fitted quantity (model, mapping, threshold,
quantile, mutual-information ranking, donor pool) comes from a source
partition, which :meth:`~audit_core.transport.state.TransportState.source_rows`
checks.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.models.scores import scored_model
from audit_core.models.zoo import FittedModel

from . import changes, declaration, evaluation, fitting, heterogeneity, partitions, stress, transfer
from .config import TransportConfig, _bad
from .results import TransportResult, build_result
from .state import STAGES, TransportState, require_next
from .verdicts import check_tolerances

__all__ = ["BINARY_STAGES", "STAGES", "TransportAudit", "run_transport"]

#: The binary run's stage functions, in :data:`~.state.STAGES` order.
BINARY_STAGES: Mapping[str, Callable[..., TransportState]] = {
    "declare": declaration.declare, "split": partitions.split, "fit": fitting.fit, "evaluate": evaluation.evaluate,
    "transport": transfer.transport, "classify": changes.classify, "stress": stress.stress,
    "heterogeneity": heterogeneity.heterogeneity}


class TransportAudit:
    """Staged transport runner (MAPIE-style): each step refuses to run out of order.

    Parameters
    ----------
    config : TransportConfig
    model : FittedModel, optional
        The model to audit as it is, required exactly when
        ``config.fixed_model`` is set. Its probability column 1 must be the
        positive class of the primary target definition. A run on scores
        (``config.score_columns``) takes none: its model is
        :func:`~audit_core.models.scores.scored_model`, which reads the score
        columns record by record (:mod:`.scores`).
    progress : callable(fraction, message), optional
    should_stop : callable() -> bool, optional
        Polled between units of work; a true value stops the run with the
        declared error ``TRANSPORT_CANCELLED``.

    Examples
    --------
    The steps run in order (``declare → split → fit → evaluate → transport →
    classify → stress → heterogeneity``, then ``result()``); a step asked for
    out of order is refused:

    >>> config = TransportConfig(targets=({"kind": "threshold", "name": "t", "column": "y", "threshold": 0.5},),
    ...                          numeric=("x",))
    >>> TransportAudit(config).split()
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: Step 'split' cannot run yet: run 'declare' first. ...
    """

    #: the stage functions this runner applies to its state (the multi-class runner names its own)
    stage_functions: ClassVar[Mapping[str, Callable[..., TransportState]]] = BINARY_STAGES
    #: False: a class target without a positive class is refused (``TRANSPORT_NOT_BINARY``)
    multiclass: ClassVar[bool] = False

    def __init__(self, config: TransportConfig, *, progress: Callable[[float, str], None] | None = None,
                 should_stop: Callable[[], bool] | None = None, model: FittedModel | None = None) -> None:
        if not isinstance(config, TransportConfig):
            raise _bad("config", "expected a TransportConfig")
        if config.on_scores:  # bring your own scores: the model reads them by row (:mod:`.scores`)
            if model is not None:
                raise _bad("model", "a run on scores reads its probabilities from the score columns; pass no model")
            model = None if self.multiclass else scored_model(config.score_columns)
        if config.fixed_model is not None and model is None and not (config.on_scores and self.multiclass):
            raise fail("TRANSPORT_FIXED_MODEL_MISSING", label=config.fixed_model)
        if config.fixed_model is None and model is not None:
            raise fail("TRANSPORT_FIXED_MODEL_UNUSED")
        if model is not None and model.n_classes != 2:
            raise fail("TRANSPORT_FIXED_MODEL_NOT_BINARY", label=config.fixed_model, k=model.n_classes)
        self._state = TransportState.start(config, model=model)
        self._progress = progress or (lambda f, m: None)
        self._cancel = should_stop or (lambda: False)

    # ------------------------------------------------------------ plumbing
    @property
    def config(self) -> TransportConfig:
        return self._state.config

    @property
    def state(self) -> TransportState:
        """The run's :class:`~audit_core.transport.state.TransportState` after the stages done."""
        return self._state

    @property
    def stages_done(self) -> tuple[str, ...]:
        return self._state.done

    @property
    def manifest(self) -> dict[str, Any]:
        """The run's manifest (from :meth:`split` on)."""
        return dict(self._state.manifest)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables the stages have added (``partitions``, ``verdicts``, …)."""
        return dict(self._state.tables)

    def set_tolerances(self, tolerances: Mapping[str, float]) -> "TransportAudit":
        """Replace the tolerances; only allowed before :meth:`declare`."""
        if self._state.done:
            raise fail("TRANSPORT_TOLERANCES_LOCKED")
        self._state = replace(self._state, config=replace(self._state.config, tolerances=check_tolerances(tolerances)))
        return self

    def _run_stage(self, stage: str, *args) -> "TransportAudit":
        """Refuse ``stage`` out of order; else apply its function to the state and record it done."""
        require_next(self._state, stage)
        order = self._state.stages
        base = order.index(stage) / len(order)

        def tick(frac: float, msg: str) -> None:
            if self._cancel():
                raise fail("TRANSPORT_CANCELLED", stage=stage)
            self._progress(min(1.0, base + frac / len(order)), msg)

        new = self.stage_functions[stage](self._state, *args, tick=tick)
        self._state = replace(new, done=(*new.done, stage))
        return self

    # ------------------------------------------------------------ the stages
    def declare(self, source: pd.DataFrame, target: pd.DataFrame | None = None) -> "TransportAudit":
        """Check the declaration against the data and lock the tolerances.

        Parameters
        ----------
        source : pandas.DataFrame or polars.DataFrame
            The source table, or the one table holding both domains.
        target : pandas.DataFrame or polars.DataFrame, optional
            The target table when the domains come as two tables.
        """
        return self._run_stage("declare", source, target)

    def split(self) -> "TransportAudit":
        """Four disjoint, stratified (and grouped) source partitions per refit."""
        return self._run_stage("split")

    def fit(self) -> "TransportAudit":
        """Fit preprocessing + model on train, mappings on calibration, rules on selection."""
        return self._run_stage("fit")

    def evaluate(self) -> "TransportAudit":
        """The metric registry on the ID test and the OOD test (weighted when weights exist)."""
        return self._run_stage("evaluate")

    def transport(self) -> "TransportAudit":
        """Apply the source-fitted selective and conformal rules unchanged."""
        return self._run_stage("transport")

    def classify(self) -> "TransportAudit":
        """Paired OOD − ID changes, vectorised bootstrap intervals and verdicts (:mod:`.changes`)."""
        return self._run_stage("classify")

    def forecast(self) -> "TransportAudit":
        """Label-free runs only: forecast the target's labelled quantities.

        The step lives a layer up, in :mod:`audit_core.forecast.transport_stage`, whose runners
        (:func:`~audit_core.forecast.transport_stage.run_transport_with_forecast`) add it to their stage functions.
        """
        if "forecast" not in self.stage_functions and self.config.label_free:
            raise fail("TRANSPORT_FORECAST_RUNNER", mode=self.config.target_labels)
        return self._run_stage("forecast")

    def stress(self) -> "TransportAudit":
        """Target-definition sensitivity and evidence degradation (as declared)."""
        return self._run_stage("stress")

    def heterogeneity(self) -> "TransportAudit":
        """Metrics by class and by declared subgroup, on ID test and OOD; then the feature shift (:mod:`.shift_link`)."""
        return self._run_stage("heterogeneity")

    # ------------------------------------------------------------ reading the fitted pipelines
    def predict(self, fm: FittedModel, frame: pd.DataFrame, what: str) -> np.ndarray:
        """Positive-class probabilities of ``frame`` (n,); a fixed model that cannot score it is a declared error."""
        return fitting.predict(self._state, fm, frame, what)

    def stress_features(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(numeric, categorical)`` features the stresses degrade: the declared ones the model reads."""
        return fitting.stress_features(self._state)

    # ------------------------------------------------------------ output
    def result(self) -> TransportResult:
        """The :class:`~audit_core.transport.results.TransportResult` (after all steps)."""
        require_next(self._state, "result")
        return build_result(self._state)

    def run(self, source: pd.DataFrame, target: pd.DataFrame | None = None) -> TransportResult:
        """All steps in order (a label-free run's: ``declare → split → fit → evaluate → forecast``); returns the result."""
        self.declare(source, target).split().fit().evaluate()
        if self.config.label_free:
            self.forecast()
        else:
            self.transport().classify().stress().heterogeneity()
        self._progress(1.0, "Done")
        return self.result()


def run_transport(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config: TransportConfig,
                  progress=None, should_stop=None, model: FittedModel | None = None) -> TransportResult:
    """Run the whole protocol; see :class:`TransportAudit` (``model``: the fixed model, if any)."""
    return TransportAudit(config, progress=progress, should_stop=should_stop, model=model).run(source, target)
