"""The check when the labels come: a label-free run's forecasts against the labelled run's realised values.

:func:`check_forecast` joins the ``forecast`` table of a label-free Transport
run with the ``realised`` table of the labelled run of the same declaration
(:func:`~.transport_stage.realised_table`) on ``(refit, model, mapping,
quantity)``. The two runs share their split and model seeds, so refit ``r``
of one is refit ``r`` of the other. It refuses runs whose
``declaration_key`` or ``target_fingerprint`` differ
(``FORECAST_CHECK_MISMATCH``).

**Averaged over refits.** Per ``(model, mapping, quantity, method)`` the
forecast's ``value``, ``low``, ``high`` and ``naive`` and the ``realised``
value are each the mean over the refits both runs hold; the status is
``forecast`` only when every refit's is. Then ``inside`` is
``low ≤ realised ≤ high``, ``error = value − realised``, ``naive_error =
naive − realised`` and ``beats_naive`` is ``|error| < |naive_error|``
(the forecast is closer than "unchanged from source"). Quantities with no
realised value (the target-adapted ``weighted_*`` sets) are left out and
counted in ``n_unmatched``; the summary counts are over rows whose status is
``forecast``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages

__all__ = ["CHECK_COLUMNS", "ForecastCheck", "check_forecast", "check_forecast_runs"]

register_messages({
    "FORECAST_CHECK_MISMATCH": (
        "The runs forecast and realise different things: their {what} differ (forecast run {forecast!r}, labelled "
        "run {labelled!r}). Check a forecast against the labelled run of the same declaration on the same target records."
    ),
    "FORECAST_CHECK_KIND": "Run {run!r} is not {needed}: {problem}.",
})

CHECK_COLUMNS = ("model", "mapping", "quantity", "method", "assumption", "value", "low", "high", "level", "status",
                 "realised", "inside", "error", "naive", "naive_error", "beats_naive", "n_refits")
_KEYS = ["model", "mapping", "quantity", "method", "assumption"]


@dataclass(frozen=True, eq=False)
class ForecastCheck:
    """Forecasts beside what was realised, and the counts.

    Attributes
    ----------
    table : DataFrame
        One row per (model, mapping, quantity, method), columns :data:`CHECK_COLUMNS`.
    n : int
        Rows with status ``forecast`` (and a realised value).
    n_inside, n_beats_naive : int
        Of those, realised inside the interval, and forecast closer than "unchanged from source".
    n_unknown : int
        Rows with status ``unknown``.
    n_unmatched : int
        Forecast quantities the labelled run did not realise (the ``weighted_*`` sets).
    level : float
    """

    table: pd.DataFrame
    n: int
    n_inside: int
    n_beats_naive: int
    n_unknown: int
    n_unmatched: int
    level: float

    def summary(self) -> str:
        """One line: ``12 of 14 realised values fell inside their 90% interval; the forecast beat …``."""
        return (f"{self.n_inside} of {self.n} realised values fell inside their {self.level:.0%} interval; the forecast "
                f"beat 'unchanged from source' on {self.n_beats_naive} of {self.n}"
                + (f" ({self.n_unknown} unknown forecasts not counted)" if self.n_unknown else ""))


def _require(manifest: Mapping[str, Any], *, run: str, label_free: bool) -> None:
    mode = manifest.get("target_labels", "available")
    if manifest.get("kind", "transport") != "transport" or "declaration_key" not in manifest:
        raise fail("FORECAST_CHECK_KIND", run=run, needed="a Transport run", problem="its manifest has no declaration key")
    if label_free and mode == "available":
        raise fail("FORECAST_CHECK_KIND", run=run, needed="a label-free (forecast) run",
                   problem="its target's labels were available")
    if not label_free and mode != "available":
        raise fail("FORECAST_CHECK_KIND", run=run, needed="a labelled run", problem=f"its target's labels were {mode}")


def check_forecast(forecast_tables: Mapping[str, pd.DataFrame], forecast_manifest: Mapping[str, Any],
                   labelled_tables: Mapping[str, pd.DataFrame], labelled_manifest: Mapping[str, Any], *,
                   forecast_run: str = "forecast", labelled_run: str = "labelled") -> ForecastCheck:
    """Forecasts of a label-free run against the realised values of the labelled run (module docstring).

    Parameters
    ----------
    forecast_tables, forecast_manifest
        The label-free run's tables (``forecast``) and manifest.
    labelled_tables, labelled_manifest
        The labelled run's tables (``realised``) and manifest.
    forecast_run, labelled_run : str
        Names of the runs in messages.

    Returns
    -------
    ForecastCheck
    """
    _require(forecast_manifest, run=forecast_run, label_free=True)
    _require(labelled_manifest, run=labelled_run, label_free=False)
    for what in ("declaration_key", "target_fingerprint"):
        a, b = forecast_manifest.get(what), labelled_manifest.get(what)
        if a is None or a != b:
            raise fail("FORECAST_CHECK_MISMATCH", what=what.replace("_", " ") + "s", forecast=str(a), labelled=str(b))
    if "forecast" not in forecast_tables:
        raise fail("FORECAST_CHECK_KIND", run=forecast_run, needed="a label-free (forecast) run",
                   problem="it has no forecast table")
    if "realised" not in labelled_tables:
        raise fail("FORECAST_CHECK_KIND", run=labelled_run, needed="a labelled run with realised values",
                   problem="it has no realised table (saved before the forecast check existed)")
    f = forecast_tables["forecast"]
    real = labelled_tables["realised"].rename(columns={"value": "realised"})
    joined = f.merge(real[["refit", "model", "mapping", "quantity", "realised"]],
                     on=["refit", "model", "mapping", "quantity"], how="left")
    matched = joined[np.isfinite(joined["realised"].astype(float))]
    unmatched = int(len(joined.drop_duplicates(_KEYS)) - len(matched.drop_duplicates(_KEYS)))
    if matched.empty:
        table = pd.DataFrame(columns=list(CHECK_COLUMNS))
    else:
        g = matched.groupby(_KEYS, sort=False, dropna=False)
        table = g[["value", "low", "high", "naive", "realised"]].mean()
        table["level"] = g["level"].first()
        table["status"] = g["status"].agg(lambda s: "forecast" if (s == "forecast").all() else "unknown")
        table["n_refits"] = g["refit"].nunique()
        table = table.reset_index()
        table["inside"] = (table["low"] <= table["realised"]) & (table["realised"] <= table["high"])
        table["error"] = table["value"] - table["realised"]
        table["naive_error"] = table["naive"] - table["realised"]
        table["beats_naive"] = table["error"].abs() < table["naive_error"].abs()
        table = table[list(CHECK_COLUMNS)]
    ok = table[table["status"] == "forecast"]
    level = float(f["level"].iloc[0]) if len(f) else float("nan")
    return ForecastCheck(table=table.reset_index(drop=True), n=int(len(ok)), n_inside=int(ok["inside"].sum()),
                         n_beats_naive=int(ok["beats_naive"].sum()), n_unknown=int((table["status"] == "unknown").sum()),
                         n_unmatched=unmatched, level=level)


def check_forecast_runs(registry, forecast_run_id: str, labelled_run_id: str) -> ForecastCheck:
    """:func:`check_forecast` on two saved Transport runs of ``registry`` (a :class:`~audit_core.runs.registry.RunRegistry`)."""
    records = []
    for run_id in (forecast_run_id, labelled_run_id):
        rec = registry.load(run_id)
        if rec.audit_kind != "transport":
            raise fail("FORECAST_CHECK_KIND", run=run_id, needed="a Transport run",
                       problem=f"it is a {rec.audit_kind} run")
        records.append(rec)
    f, lab = records
    return check_forecast(f.tables, f.manifest, lab.tables, lab.manifest, forecast_run=forecast_run_id,
                          labelled_run=labelled_run_id)
