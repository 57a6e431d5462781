"""The release gate's grounds: each one read from one exact slice of one saved run's table.

Every ground has a definition that names the table, every key column it
filters on, how refits are pooled and its valid range (the table of
``docs/receipts.md``, section *Release gate*). A ground is read from one
run (the newest run of the preferred kind that provides it) and is never
averaged across analyses, conditions, mappings, models or weightings.

A ground is UNKNOWN (``None``), with the reason in the extraction report,
when no selected run provides it, when the run's table lacks the slice, when
the slice is ambiguous (more than one row where the definition allows one,
e.g. two rows for one refit) or when the value is outside the ground's valid
range (a coverage or an ECE outside [0, 1] is a bug in the table, not a
finding).

Transport runs hold several models, mappings and weightings; the gate reads
the run's *headline slice* (:mod:`audit_core.transport.headline`), the one
the findings, the model card and the report read too: declared before any
result is seen, or by the rule: the first declared model, Platt scaling
where fitted (else the first mapping), the primary target definition,
``weighted`` when a weight column is declared, the mean over refits. The
manifest records the slice; a run saved without it gets the rule on its
config (``manifest["config"]``, else the run's ``config``).

Every ground is read through a :class:`~audit_core.runs.keys.TableKey`
(:meth:`GroundSpec.key`), so a finding that quotes a ground records the same
key and the findings checker re-reads it the same way.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from audit_core.transport.headline import HeadlineSlice, recorded_headline

from .forecast_grounds import ForecastRequest, read_forecast_grounds
from .keys import TableKey, headline_key, read_key
from .registry import RunRecord

__all__ = ["GroundSpec", "GROUND_SPECS", "GateGrounds", "extract_gate_grounds", "transport_headline",
           "BRITTLE_FLAG", "CONFIDENT"]

#: ``run -> key or reason``: where the ground lives in the run's tables, or why the run cannot provide it.
Locator = Callable[[RunRecord], "TableKey | str"]


@dataclass(frozen=True)
class GroundSpec:
    """One gate ground: its name, the audit kind(s) it comes from, its definition and where it is read.

    ``audit_kind`` is one kind or a tuple of kinds, in order of preference;
    ``locate`` gives the ground's :class:`TableKey` in a run (or why there is
    none); ``valid`` is the closed range a correct value lies in (``None`` for
    an open end).
    """

    name: str
    audit_kind: str | tuple[str, ...]
    description: str
    locate: Locator = field(repr=False)
    valid: tuple[float | None, float | None] = (None, None)

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.audit_kind,) if isinstance(self.audit_kind, str) else tuple(self.audit_kind)

    def key(self, run: RunRecord) -> TableKey | str:
        """Where the ground lives in ``run``'s tables, or why the run cannot provide it."""
        return self.locate(run)

    def read(self, run: RunRecord) -> tuple[float | None, str, bool]:
        """``(value, detail, invalid)``: the value at :meth:`key`, range-checked."""
        key = self.key(run)
        if isinstance(key, str):
            return None, key, False
        v, detail = read_key(run.tables, key)
        if v is None or isinstance(v, str):
            return None, detail, detail.startswith("ambiguous")
        lo, hi = self.valid
        if not np.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"[{'-inf' if lo is None else lo:g}, {'inf' if hi is None else hi:g}]"
            return None, f"value {v:.6g} is outside the valid range {rng} (a bug in the stored table); {detail}", True
        return v, detail, False


def transport_headline(run: RunRecord) -> HeadlineSlice | str:
    """The headline slice of a transport run (recorded, else the rule on its config), or why it has none."""
    return recorded_headline(run.manifest, run.config)


# ----------------------------------------------------------------- locators
def _metric(metric: str) -> Locator:
    """Model/fragility table ``metrics``: the one row with ``split == "test"`` and ``metric == metric``."""
    return lambda run: TableKey.of("metrics", "value", split="test", metric=metric)


#: The Fragility audit's default brittle label: the case flips under some donor replacement.
BRITTLE_FLAG = "donor_any"
#: Confidence from which a case counts as confident (p̂ ≥ 0.8).
CONFIDENT = 0.8


def _brittle_share(run: RunRecord) -> TableKey:
    """Share of ``donor_any`` among the cases with ``p_hat >= 0.8``."""
    return TableKey("certificates", BRITTLE_FLAG, (("p_hat", ">=", CONFIDENT),), "share")


def _mean_fds(run: RunRecord) -> TableKey:
    return TableKey("certificates", "fds", (), "mean")


def _multiclass(run: RunRecord) -> bool:
    """A multi-class transport run (manifest ``multiclass``): its rows have other names and analyses."""
    return isinstance(run.manifest, Mapping) and bool(run.manifest.get("multiclass"))


def _headline_key(run: RunRecord, analysis: str, metric: str, alpha: float | None) -> TableKey | str:
    """Mean over refits of the headline slice's clean OOD value of ``analysis``/``metric``."""
    h = transport_headline(run)
    if isinstance(h, str):
        return h
    if alpha is not None:
        df = run.tables.get("results")
        if isinstance(df, pd.DataFrame) and "alpha" in df:
            alphas = sorted({round(a, 6) for a in pd.to_numeric(df["alpha"], errors="coerce").dropna()})
            if alphas and not any(abs(a - alpha) <= 1e-9 for a in alphas):
                return f"the run did not evaluate alpha = {alpha:g} (its alphas: {alphas})"
    return headline_key(h, analysis=analysis, metric=metric, domain="ood", alpha=alpha)


#: Why a binary ground has no reading in a multi-class transport run (the ground is UNKNOWN with this reason).
MULTICLASS_UNREAD = {
    "ood_ece": ("not defined for a multi-class transport run: ECE-15 is the binary positive-class calibration "
                "error; the run's top-label (ece_top) and class-wise (ece_classwise) ECE are other quantities"),
    "worst_subgroup_coverage_90": ("not run for a multi-class transport run: it has no subgroup heterogeneity "
                                   "(Mondrian by subgroup); per-class coverage is its class heterogeneity"),
}


def _ood_ece(run: RunRecord):
    if _multiclass(run):
        return MULTICLASS_UNREAD["ood_ece"]
    return _headline_key(run, "metrics", "ece", None)


def _worst_cov(run: RunRecord):
    # multi-class: the LAC score 1 − P_y is the binary run's score, the same definition over C classes
    metric = "lac:worst_class_coverage" if _multiclass(run) else "worst_class_coverage"
    return _headline_key(run, "conformal_marginal", metric, 0.10)


def _worst_subgroup_cov(run: RunRecord):
    """Per refit, the lowest Mondrian-by-subgroup coverage over every declared subgroup column; mean over refits."""
    if _multiclass(run):
        return MULTICLASS_UNREAD["worst_subgroup_coverage_90"]
    h = transport_headline(run)
    if isinstance(h, str):
        return h
    f = h.filters()
    key = TableKey.of("results", "value", how="refit_min_mean", analysis="heterogeneity",
                      target_definition=f["target_definition"], domain="ood", model=f["model"], mapping=f["mapping"],
                      metric="mondrian_worst_coverage@alpha=0.1")
    v, why = read_key(run.tables, key)
    if v is None and why.startswith("no row"):
        return f"{why} (the minimum over subgroup columns per refit): the run declared no subgroup column, or its " \
               f"middle alpha is not 0.1"
    return key


def _verdict_count(worse_only: bool) -> Locator:
    def locate(run: RunRecord):
        h = transport_headline(run)
        if isinstance(h, str):
            return h
        f = h.filters()
        rows = TableKey.of("verdicts", "verdict", how="count", model=f["model"], mapping=f["mapping"],
                           weighting=f["weighting"])
        n, why = read_key(run.tables, rows)
        if not n:  # no verdict of the slice at all: the count would be a silent 0
            return why if n is None else f"no verdict row for {rows.rows()}"
        key = rows.and_("verdict", "=", "transport-sensitive")
        return key.and_("direction", "=", "worse") if worse_only else key
    return locate


#: Gate grounds, their definitions and extractors (extend here when audits gain outputs).
GROUND_SPECS: tuple[GroundSpec, ...] = (
    GroundSpec("test_auroc", ("model", "fragility"), "held-out AUROC of the model", _metric("auroc"), (0.0, 1.0)),
    GroundSpec("test_log_loss", ("model", "fragility"), "held-out log loss", _metric("log_loss"), (0.0, None)),
    GroundSpec("brittle_share_confident", "fragility", "share of brittle cases among confident ones (p̂ ≥ 0.8)",
               _brittle_share, (0.0, 1.0)),
    GroundSpec("mean_fds", "fragility", "mean fragility score (FDS)", _mean_fds, (0.0, 1.0)),
    GroundSpec("ood_ece", "transport", "ECE (15 equal-width bins) on the target (OOD) test, headline slice, mean over refits",
               _ood_ece, (0.0, 1.0)),
    GroundSpec("worst_class_coverage_90", "transport",
               "worst-class marginal conformal coverage at 90% (α = 0.10), OOD, headline slice", _worst_cov,
               (0.0, 1.0)),
    GroundSpec("worst_subgroup_coverage_90", "transport",
               "worst-subgroup Mondrian conformal coverage at 90% (α = 0.10) over the declared subgroup columns, "
               "OOD, headline slice", _worst_subgroup_cov, (0.0, 1.0)),
    GroundSpec("n_transport_sensitive", "transport", "headline slice's metrics classified transport-sensitive",
               _verdict_count(False), (0.0, None)),
    GroundSpec("n_transport_worse", "transport", "headline slice's metrics transport-sensitive in the harmful "
               "direction", _verdict_count(True), (0.0, None)),
)


@dataclass(frozen=True)
class GateGrounds:
    """Extracted grounds and the report of where each came from (or why it is UNKNOWN)."""

    values: dict[str, float | None]
    report: pd.DataFrame = field(repr=False)
    #: ground -> (run id, key) of each present ground: where its value was read.
    keys: dict[str, tuple[str, TableKey]] = field(default_factory=dict, repr=False)
    #: ground -> words for the slice it reads (a transport ground: ``{"slice": …, "where": "2023"}``).
    context: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    @property
    def absent(self) -> list[str]:
        return [k for k, v in self.values.items() if v is None]

    def to_frame(self) -> pd.DataFrame:
        return self.report.copy()


def _context(run: RunRecord) -> dict[str, str]:
    """Words for what a transport run's grounds read: its headline slice and its target domain."""
    h = transport_headline(run) if run.audit_kind == "transport" else None
    if h is None or isinstance(h, str):
        return {}
    cfg = (run.manifest or {}).get("config") or {}
    where = cfg.get("target_value")
    return {"slice": h.describe(), "where": str(where) if where is not None else "the target domain"}


def extract_gate_grounds(runs: Sequence[RunRecord], *, forecast: Sequence[ForecastRequest] = ()) -> GateGrounds:
    """Read every ground from ``runs``: per ground, the newest run of its most preferred kind that provides it.

    Parameters
    ----------
    runs : sequence of RunRecord
        Any mix of audit kinds; missing tables or columns are tolerated
        (the ground is UNKNOWN and the report says why).
    forecast : sequence of ForecastRequest, optional
        Forecast grounds the rules declare (:mod:`.forecast_grounds`), read from the ``forecast`` table only, after
        the measured grounds and under their own names (``forecast_…``; status ``present (forecast)`` or
        ``unknown (forecast)`` with ``unknown: <reason>``).

    Returns
    -------
    GateGrounds
        ``values`` (``None`` for UNKNOWN) and ``report`` with columns
        ``ground, value, status, source, detail, description``; ``status`` is
        ``present``, ``absent → UNKNOWN`` or ``invalid → UNKNOWN`` (out of
        range or ambiguous).
    """
    ordered = sorted(runs, key=lambda r: r.created_at, reverse=True)
    values: dict[str, float | None] = {}
    keys: dict[str, tuple[str, TableKey]] = {}
    context: dict[str, dict[str, str]] = {}
    rows: list[dict[str, Any]] = []
    for spec in GROUND_SPECS:
        found, reasons, invalid = None, [], False
        candidates = sorted((r for r in ordered if r.audit_kind in spec.kinds), key=lambda r: spec.kinds.index(r.audit_kind))
        for run in candidates:
            v, why, bad = spec.read(run)
            if v is not None:
                found = (v, run.run_id, why)
                key = spec.key(run)
                assert not isinstance(key, str)  # read() found a value, so the key located it
                keys[spec.name] = (run.run_id, key)
                context[spec.name] = _context(run)
                break
            reasons.append(f"{run.run_id}: {why}")
            if bad:  # the newest run's value is wrong: never fall back to an older run
                invalid = True
                break
        if found is None:
            values[spec.name] = None
            why = "; ".join(reasons) if reasons else "no selected run of kind " + " or ".join(map(repr, spec.kinds))
            rows.append({"ground": spec.name, "value": None,
                         "status": "invalid → UNKNOWN" if invalid else "absent → UNKNOWN", "source": "",
                         "detail": why, "description": spec.description})
        else:
            values[spec.name] = found[0]
            rows.append({"ground": spec.name, "value": found[0], "status": "present", "source": found[1],
                         "detail": found[2], "description": spec.description})
    if forecast:
        f_values, f_rows, f_keys = read_forecast_grounds(runs, forecast)
        values.update(f_values)
        rows.extend(f_rows)
        keys.update(f_keys)
    return GateGrounds(values, pd.DataFrame(rows, columns=["ground", "value", "status", "source", "detail",
                                                           "description"]), keys, context)
