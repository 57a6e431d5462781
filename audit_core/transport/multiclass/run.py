"""The multi-class Transport run: the binary protocol's stages for a class target with C > 2 classes.

:class:`MulticlassTransportAudit` is :class:`~audit_core.transport.runner.TransportAudit`
with the multi-class stage functions (:data:`MULTICLASS_STAGES`); what it keeps unchanged:

* **declare** (:func:`.classes.declare`) — domains, eligibility, weights (normalised to mean 1) and
  locked tolerances; the primary target must be a class target without a
  positive class, and a class the source domain does not hold is refused
  (``TRANSPORT_NOT_BINARY``: it could not be fitted);
* **split** (:func:`.classes.split`) — the same four source partitions per refit (stratified by the
  class, grouped, seeded ``seed · 1000 + refit``), every class at least
  twice in every partition, and the manifest;
* **fit** (:func:`.fitting.fit`) — preprocessing and model on train; the mappings
  (:mod:`.mappings`: raw, temperature, vector) on calibration; the
  max-probability thresholds (:mod:`.selective`) and the conformal quantiles
  (:mod:`.conformal`: LAC, APS, RAPS; marginal and by class) on selection;
* **evaluate / transport** (:mod:`.evaluation`) — :mod:`.metrics` and the rules, unchanged, on
  the ID test and the target, unweighted and weighted;
* **classify** (:func:`~audit_core.transport.changes.classify`) — paired OOD − ID changes per refit, a stratified record
  bootstrap (:mod:`.bootstrap`) and the binary verdict rule against locked
  tolerances (:data:`MC_TOLERANCES` for the multi-class metric names, the
  config's for the rule names shared with the binary run).

Not run for multi-class (recorded in the manifest): the target-definition
and evidence-degradation stresses, subgroup heterogeneity and the feature
shift. Per-class coverage and set size are the class heterogeneity.

Result rows use the binary table's columns. Conformal metric names carry the
score, ``"<score>:<metric>"`` (``aps:coverage``); the RAPS ``k_reg`` and
``λ`` are in the manifest.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import fail

from ..results import TransportResult, _finalise, refit_summary
from ..runner import BINARY_STAGES, TransportAudit
from ..state import RunKind, Tick, TransportState, no_tick, require_next
from . import classes, evaluation, fitting
from .conformal import ScoreSpec
from .figure_tables import multiclass_figure_tables
from .mappings import MC_MAPPINGS

__all__ = ["MC_TOLERANCES", "MULTICLASS_STAGES", "MulticlassTransportAudit", "MulticlassTransportResult",
           "multiclass_mappings", "multiclass_result", "run_multiclass_transport"]

#: δ per multi-class metric (absolute units). Brier sums over classes, so its δ is twice the binary one.
MC_TOLERANCES: dict[str, float] = {"accuracy": 0.02, "auroc_macro": 0.02, "brier_multiclass": 0.02,
                                   "log_loss_multiclass": 0.03, "ece_top": 0.02, "ece_classwise": 0.02}

#: the multi-class counterpart of each binary mapping a config may name (Platt's one slope becomes a temperature;
#: the flexible maps become vector scaling).
_COUNTERPART = {"raw": "raw", "platt": "temperature", "temperature": "temperature", "isotonic": "vector",
                "beta": "vector", "vector": "vector"}

DEFAULT_SCORES = (ScoreSpec("lac"), ScoreSpec("aps"), ScoreSpec("raps", k_reg=1, lam=0.01))


def multiclass_mappings(names) -> tuple[str, ...]:
    """The multi-class mappings for a list of mapping names (binary names map to their counterparts), in order."""
    out = []
    for n in names:
        if n not in _COUNTERPART:
            raise fail("MULTICLASS_MAPPING", name=n, names=", ".join(MC_MAPPINGS))
        if _COUNTERPART[n] not in out:
            out.append(_COUNTERPART[n])
    return tuple(out)


@dataclass(frozen=True, eq=False)
class MulticlassTransportResult(TransportResult):
    """A multi-class transport run: the binary result's tables, plus the class names in code order.

    ``extras`` holds ``partitions`` and, for the figures, ``reliability`` (top-label bins) and ``curves``
    (max-probability risk–selection) of refit 0 (:mod:`.figure_tables`).
    """

    classes: tuple = field(default=())


def _not_run(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Stress and subgroup heterogeneity are not run for multi-class targets (the manifest's ``not_run``)."""
    return state


#: The multi-class run's stage functions, in :data:`~audit_core.transport.state.STAGES` order.
MULTICLASS_STAGES: Mapping[str, Callable[..., TransportState]] = {
    **BINARY_STAGES, "declare": classes.declare, "split": classes.split, "fit": fitting.fit,
    "evaluate": evaluation.evaluate, "transport": evaluation.transport, "stress": _not_run, "heterogeneity": _not_run}


def multiclass_result(state: TransportState) -> MulticlassTransportResult:
    """The :class:`MulticlassTransportResult` of a multi-class run after every stage."""
    table = _finalise(pd.DataFrame(list(state.rows)))
    extras = {**{k: v for k, v in state.tables.items() if k != "verdicts"}, **multiclass_figure_tables(state)}
    return MulticlassTransportResult(table=table, verdicts=state.tables.get("verdicts", pd.DataFrame()),
                                     refit_summary=refit_summary(table), extras=extras, manifest=dict(state.manifest),
                                     classes=tuple(str(x) for x in state.classes))


class MulticlassTransportAudit(TransportAudit):
    """The staged transport runner for a class target with C > 2 classes (module docstring).

    Parameters
    ----------
    config : TransportConfig
        Its ``mappings`` are read as their multi-class counterparts
        (:func:`multiclass_mappings`); its rule tolerances apply.
    scores : tuple of ScoreSpec, optional
        Conformal scores (names unique); default LAC, APS and RAPS
        (``k_reg = 1``, ``λ = 0.01``).
    tolerances : mapping, optional
        δ for the multi-class metrics, replacing :data:`MC_TOLERANCES` entries.
    progress, should_stop : as for :class:`TransportAudit`
    """

    stage_functions: ClassVar[Mapping[str, Callable[..., TransportState]]] = MULTICLASS_STAGES
    multiclass: ClassVar[bool] = True

    def __init__(self, config, *, scores=None, tolerances=None, progress=None, should_stop=None) -> None:
        if getattr(config, "fixed_model", None) is not None and not config.on_scores:
            raise fail("TRANSPORT_BAD_OPTION", name="fixed_model", problem=(
                f"the multi-class run refits zoo models; it cannot audit the model {config.fixed_model!r} as it is"))
        super().__init__(config, progress=progress, should_stop=should_stop)
        mappings = multiclass_mappings(config.mappings)
        chosen = tuple(DEFAULT_SCORES if scores is None else scores)
        names = [s.name for s in chosen]
        if not chosen or len(set(names)) != len(names) or not all(isinstance(s, ScoreSpec) for s in chosen):
            raise fail("TRANSPORT_BAD_OPTION", name="scores", problem=f"give distinct ScoreSpec scores, got {names}")
        kind = RunKind("multiclass", mappings, chosen, self._tolerances(tolerances, chosen))
        self._state = replace(self._state, kind=kind)

    def _tolerances(self, extra, scores) -> dict[str, float]:
        tol = {k: v for k, v in self.config.tolerances.items()}
        for k, v in {**MC_TOLERANCES, **dict(extra or {})}.items():
            if k not in MC_TOLERANCES or not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise fail("TRANSPORT_BAD_OPTION", name=f"tolerances[{k!r}]",
                           problem=f"a multi-class metric ({', '.join(MC_TOLERANCES)}) with a finite δ ≥ 0, got {v!r}")
            tol[k] = float(v)
        for spec in scores:  # conformal metric names carry their score
            for m in ("coverage", "mean_set_size"):
                if m in tol:
                    tol[f"{spec.name}:{m}"] = tol[m]
        return tol

    @property
    def classes(self) -> tuple:
        """The class names in code order (from :meth:`declare` on)."""
        return self._state.classes

    @property
    def mc_mappings(self) -> tuple[str, ...]:
        """The multi-class mappings fitted (:func:`multiclass_mappings` of the config's)."""
        return self._state.kind.mappings

    @property
    def scores(self) -> tuple:
        """The conformal scores (:class:`~.conformal.ScoreSpec`)."""
        return self._state.kind.scores

    @property
    def mc_tolerances(self) -> dict[str, float]:
        """δ per metric for the verdicts: the config's, and the multi-class metrics'."""
        return dict(self._state.kind.tolerances or {})

    def stress(self):
        """Not run for multi-class targets (recorded in the manifest's ``not_run``)."""
        return super().stress()

    def heterogeneity(self):
        """Not run for multi-class targets beyond the per-class coverage rows."""
        return super().heterogeneity()

    def run(self, source: pd.DataFrame, target: pd.DataFrame | None = None) -> MulticlassTransportResult:
        result = super().run(source, target)  # ends with self.result()
        assert isinstance(result, MulticlassTransportResult)
        return result

    def result(self) -> MulticlassTransportResult:
        require_next(self._state, "result")
        return multiclass_result(self._state)


def run_multiclass_transport(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config, scores=None,
                             tolerances=None, progress=None, should_stop=None) -> MulticlassTransportResult:
    """Run the multi-class protocol; see :class:`MulticlassTransportAudit`.

    Parameters
    ----------
    source : pandas.DataFrame
        The source table, or one table with both domains (``config.domain_column``).
    target : pandas.DataFrame, optional
    config : TransportConfig
        Primary target: a class target without a positive class, C > 2.
    scores : tuple of ScoreSpec, optional
    tolerances : mapping, optional
        δ for the multi-class metric names (:data:`MC_TOLERANCES`).

    Returns
    -------
    MulticlassTransportResult
    """
    return MulticlassTransportAudit(config, scores=scores, tolerances=tolerances, progress=progress,
                                    should_stop=should_stop).run(source, target)
