"""Forecast a target's reliability before its labels arrive, under two named assumptions.

* **covariate shift** (``P(y | x)`` unchanged): importance weights from a
  cross-fitted domain classifier (:mod:`~audit_core.forecast.weights`),
  weighted split conformal (:mod:`~audit_core.forecast.conformal`) and
  confidence-based expectations;
* **label shift** (``P(x | y)`` unchanged): the target prevalence by EM or
  BBSE and class weights (:mod:`~audit_core.forecast.labelshift`).

What needs no labels (selection rates, set sizes, singleton rates) is
computed exactly on the target; the rest is forecast with an interval and
marked ``unknown`` with a reason when its assumption's check fails
(:mod:`~audit_core.forecast.estimates`). See ``docs/forecast.md``.

Public surface::

    from audit_core.forecast import forecast_from_features, forecast_target, importance_weights
    from audit_core.forecast import run_transport_with_forecast, check_forecast, check_forecast_runs

In a Transport run (:mod:`~audit_core.forecast.transport_stage`): a config with
``target_labels`` absent or hidden ends with the forecast step; a labelled run
stores the ``realised`` values that :mod:`~audit_core.forecast.check` compares.
"""
from .check import ForecastCheck, check_forecast, check_forecast_runs
from .conformal import label_scores, membership, set_quantiles, weighted_coverage, weighted_quantile
from .estimates import (DEFAULT_METHODS, METHODS, TOLERANCES, Forecast, ForecastResult, WeightCheck, forecast_from_features,
                        forecast_target, refit_probabilities)
from .labelshift import adjust_probabilities, bbse_prevalence, class_weights, em_prevalence
from .quantities import Rules, fit_rules, label_free_quantities, labelled_quantities
from .transport_stage import FORECAST_TABLES, forecast, realised_table, run_transport_with_forecast
from .weights import (AUROC_MAX, ImportanceWeights, OverlapVerdict, clip_weights, density_ratio, domain_probabilities,
                      ess_floor, importance_weights, kish_ess, overlap_check)

__all__ = [
    "forecast_target", "forecast_from_features", "ForecastResult", "Forecast", "WeightCheck", "METHODS", "DEFAULT_METHODS", "TOLERANCES",
    "importance_weights", "ImportanceWeights", "OverlapVerdict", "domain_probabilities", "density_ratio",
    "clip_weights", "kish_ess", "ess_floor", "overlap_check", "AUROC_MAX",
    "weighted_quantile", "set_quantiles", "membership", "weighted_coverage", "label_scores",
    "em_prevalence", "bbse_prevalence", "class_weights", "adjust_probabilities",
    "Rules", "fit_rules", "labelled_quantities", "label_free_quantities", "refit_probabilities",
    "run_transport_with_forecast", "forecast", "realised_table", "FORECAST_TABLES",
    "check_forecast", "check_forecast_runs", "ForecastCheck",
]
