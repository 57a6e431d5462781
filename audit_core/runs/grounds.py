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
the run's *primary* pipeline, declared before any result is seen:

* model: the first declared model (``config.models[0]``);
* mapping: the first declared probability mapping (``config.mappings[0]``;
  ``raw`` under the defaults);
* target definition: the primary (first) target definition;
* weighting: ``weighted`` when the run declared a weight column (the
  population estimate), else ``unweighted``.

The config is read from the run manifest (``manifest["config"]``, written by
the app and the CLI alike), else from the run's ``config``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .registry import RunRecord

__all__ = ["GroundSpec", "GROUND_SPECS", "GateGrounds", "extract_gate_grounds", "transport_primary"]

#: ``run -> (value, detail)``: the value (``None`` when it cannot be read) and the exact slice read, or why not.
Extractor = Callable[[RunRecord], "tuple[float | None, str]"]


@dataclass(frozen=True)
class GroundSpec:
    """One gate ground: its name, the audit kind(s) it comes from, its definition and its extractor.

    ``audit_kind`` is one kind or a tuple of kinds, in order of preference;
    ``valid`` is the closed range a correct value lies in (``None`` for an
    open end).
    """

    name: str
    audit_kind: str | tuple[str, ...]
    description: str
    extract: Extractor = field(repr=False)
    valid: tuple[float | None, float | None] = (None, None)

    @property
    def kinds(self) -> tuple[str, ...]:
        return (self.audit_kind,) if isinstance(self.audit_kind, str) else tuple(self.audit_kind)

    def read(self, run: RunRecord) -> tuple[float | None, str, bool]:
        """``(value, detail, invalid)``: the extractor's reading, range-checked."""
        v, detail = self.extract(run)
        if v is None:
            return None, detail, detail.startswith("ambiguous")
        lo, hi = self.valid
        if not np.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"[{'-inf' if lo is None else lo:g}, {'inf' if hi is None else hi:g}]"
            return None, f"value {v:.6g} is outside the valid range {rng} (a bug in the stored table); {detail}", True
        return v, detail, False


# ------------------------------------------------------------------ helpers
def _table(run: RunRecord, name: str) -> pd.DataFrame | None:
    t = run.tables.get(name)
    return t if isinstance(t, pd.DataFrame) and not t.empty else None


def _need(df: pd.DataFrame, name: str, cols: Sequence[str]) -> str | None:
    missing = [c for c in cols if c not in df.columns]
    return f"table {name!r} lacks column(s) {missing}" if missing else None


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def transport_primary(run: RunRecord) -> dict[str, str] | str:
    """The primary pipeline of a transport run (see the module docstring), or why it cannot be named.

    Returns
    -------
    dict with keys ``model``, ``mapping``, ``target_definition``, ``weighting``; or a reason (str).
    """
    cfg = run.manifest.get("config") if isinstance(run.manifest, Mapping) else None
    if not (isinstance(cfg, Mapping) and cfg.get("models")):
        cfg = run.config
    if not isinstance(cfg, Mapping):
        return "the run records no transport config"
    models, mappings, targets = cfg.get("models"), cfg.get("mappings"), cfg.get("targets")
    if not (isinstance(models, list) and models and isinstance(mappings, list) and mappings
            and isinstance(targets, list) and targets and isinstance(targets[0], Mapping)):
        return "the run's config does not declare its models, mappings and targets"
    return {"model": str(models[0]), "mapping": str(mappings[0]), "target_definition": str(targets[0].get("name")),
            "weighting": "weighted" if cfg.get("weight_column") else "unweighted"}


def _describe(filters: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={'n/a' if v is None else v}"
                     for k, v in filters.items())


def _slice(df: pd.DataFrame, filters: Mapping[str, Any]) -> pd.DataFrame:
    """Rows equal to every filter; a float filter matches within 1e-9, ``None`` matches missing."""
    keep = np.ones(len(df), dtype=bool)
    for col, want in filters.items():
        s = df[col]
        if want is None:
            keep &= s.isna().to_numpy()
        elif isinstance(want, float):
            keep &= np.isclose(pd.to_numeric(s, errors="coerce").to_numpy(dtype=float), want, rtol=0, atol=1e-9)
        else:
            keep &= (s.astype(str) == str(want)).to_numpy()
    return df[keep]


def _per_refit_mean(rows: pd.DataFrame, what: str) -> tuple[float | None, str]:
    """Mean over refits of one value per refit (``refit >= 0``); a repeated refit is ambiguous."""
    rows = rows[pd.to_numeric(rows["refit"], errors="coerce") >= 0]
    if rows.empty:
        return None, f"no row for {what}"
    if rows["refit"].duplicated().any():
        n = int(rows["refit"].value_counts().max())
        return None, f"ambiguous: {n} rows for one refit of {what}"
    v = _num(pd.to_numeric(rows["value"], errors="coerce").mean())
    if v is None:
        return None, f"{what} is not a finite number"
    return v, f"{what}; mean over {len(rows)} refit(s)"


# -------------------------------------------------------------- extractors
def _metric(metric: str) -> Extractor:
    """Model/fragility table ``metrics``: the one row with ``split == "test"`` and ``metric == metric``."""
    def ex(run: RunRecord):
        df = _table(run, "metrics")
        if df is None:
            return None, "no 'metrics' table"
        if (why := _need(df, "metrics", ["split", "metric", "value"])):
            return None, why
        rows = _slice(df, {"split": "test", "metric": metric})
        what = f"metrics: split=test, metric={metric}"
        if len(rows) != 1:
            return None, (f"ambiguous: {len(rows)} rows for {what}" if len(rows) else f"no row for {what}")
        v = _num(rows["value"].iloc[0])
        return (v, what) if v is not None else (None, f"{what} is not a finite number")
    return ex


#: The Fragility audit's default brittle label: the case flips under some donor replacement.
BRITTLE_FLAG = "donor_any"
#: Confidence from which a case counts as confident (p̂ ≥ 0.8).
CONFIDENT = 0.8


def _brittle_share(run: RunRecord):
    df = _table(run, "summary")
    if df is None:
        return None, "no 'summary' table"
    if (why := _need(df, "summary", ["p_hat", BRITTLE_FLAG])):
        return None, why
    conf = pd.to_numeric(df["p_hat"], errors="coerce") >= CONFIDENT
    if not conf.any():
        return None, f"no confident case (p_hat >= {CONFIDENT})"
    flags = pd.to_numeric(df.loc[conf, BRITTLE_FLAG].astype(float), errors="coerce")
    v = _num(flags.mean())
    what = f"summary: mean of {BRITTLE_FLAG!r} over the {int(conf.sum())} cases with p_hat >= {CONFIDENT}"
    return (v, what) if v is not None else (None, f"{what} is not numeric")


def _mean_fds(run: RunRecord):
    df = _table(run, "summary")
    if df is None:
        return None, "no 'summary' table"
    if (why := _need(df, "summary", ["fds"])):
        return None, why
    v = _num(pd.to_numeric(df["fds"], errors="coerce").mean())
    return (v, f"summary: mean fds over {len(df)} cases") if v is not None else (None, "fds not numeric")


_RESULT_KEYS = ("analysis", "condition", "target_definition", "domain", "model", "mapping", "refit", "metric",
                "value", "weighting", "alpha", "selection_rate")


def _results_and_primary(run: RunRecord):
    """``(results table, primary pipeline)``, or ``(None, why)`` when either cannot be read."""
    df = _table(run, "results")
    if df is None:
        return None, "no 'results' table"
    if (why := _need(df, "results", _RESULT_KEYS)):
        return None, why
    primary = transport_primary(run)
    if isinstance(primary, str):
        return None, primary
    return df, primary


def _transport_slice(run: RunRecord, analysis: str, metric: str, alpha: float | None):
    """Mean over refits of the primary pipeline's clean OOD value of ``analysis``/``metric``."""
    df, primary = _results_and_primary(run)
    if df is None:
        return None, primary
    if alpha is not None:
        alphas = sorted({round(a, 6) for a in pd.to_numeric(df["alpha"], errors="coerce").dropna()})
        if not any(abs(a - alpha) <= 1e-9 for a in alphas):
            return None, f"the run did not evaluate alpha = {alpha:g} (its alphas: {alphas})"
    filters = {"analysis": analysis, "condition": "clean", "target_definition": primary["target_definition"],
               "domain": "ood", "model": primary["model"], "mapping": primary["mapping"],
               "weighting": primary["weighting"], "metric": metric, "alpha": alpha, "selection_rate": None}
    return _per_refit_mean(_slice(df, filters), "results: " + _describe(filters))


def _multiclass(run: RunRecord) -> bool:
    """A multi-class transport run (manifest ``multiclass``): its rows have other names and analyses."""
    return isinstance(run.manifest, Mapping) and bool(run.manifest.get("multiclass"))


#: Why a binary ground has no reading in a multi-class transport run (the ground is UNKNOWN with this reason).
MULTICLASS_UNREAD = {
    "ood_ece": ("not defined for a multi-class transport run: ECE-15 is the binary positive-class calibration "
                "error; the run's top-label (ece_top) and class-wise (ece_classwise) ECE are other quantities"),
    "worst_subgroup_coverage_90": ("not run for a multi-class transport run: it has no subgroup heterogeneity "
                                   "(Mondrian by subgroup); per-class coverage is its class heterogeneity"),
}


def _ood_ece(run: RunRecord):
    if _multiclass(run):
        return None, MULTICLASS_UNREAD["ood_ece"]
    return _transport_slice(run, "metrics", "ece", None)


def _worst_cov(run: RunRecord):
    if _multiclass(run):  # the LAC score 1 − P_y is the binary run's score: the same definition over C classes
        v, detail = _transport_slice(run, "conformal_marginal", "lac:worst_class_coverage", 0.10)
        return v, detail + " (multi-class run: the LAC score 1 − P_y, the binary score, over its classes)"
    return _transport_slice(run, "conformal_marginal", "worst_class_coverage", 0.10)


def _worst_subgroup_cov(run: RunRecord):
    """Per refit, the lowest Mondrian-by-subgroup coverage over every declared subgroup column; mean over refits."""
    if _multiclass(run):
        return None, MULTICLASS_UNREAD["worst_subgroup_coverage_90"]
    df, primary = _results_and_primary(run)
    if df is None:
        return None, primary
    filters = {"analysis": "heterogeneity", "target_definition": primary["target_definition"], "domain": "ood",
               "model": primary["model"], "mapping": primary["mapping"],
               "metric": "mondrian_worst_coverage@alpha=0.1"}
    rows = _slice(df, filters)
    rows = rows[pd.to_numeric(rows["refit"], errors="coerce") >= 0]
    what = "results: " + _describe(filters) + " (the minimum over subgroup columns per refit)"
    if rows.empty:
        return None, (f"no row for {what}: the run declared no subgroup column, or its middle alpha is not 0.1")
    per = rows.assign(value=pd.to_numeric(rows["value"], errors="coerce")).groupby("refit", as_index=False)["value"].min()
    return _per_refit_mean(per, what)


def _verdict_count(worse_only: bool) -> Extractor:
    def ex(run: RunRecord):
        df = _table(run, "verdicts")
        if df is None:
            return None, "no 'verdicts' table"
        cols = ["model", "mapping", "weighting", "verdict"] + (["direction"] if worse_only else [])
        if (why := _need(df, "verdicts", cols)):
            return None, why
        primary = transport_primary(run)
        if isinstance(primary, str):
            return None, primary
        filters = {k: primary[k] for k in ("model", "mapping", "weighting")}
        rows = _slice(df, filters)
        if rows.empty:
            return None, "no verdict row for " + _describe(filters)
        hit = rows["verdict"].astype(str) == "transport-sensitive"
        if worse_only:
            hit &= rows["direction"].astype(str) == "worse"
        what = "transport-sensitive and worse" if worse_only else "transport-sensitive"
        return float(hit.sum()), f"verdicts: {_describe(filters)}; rows {what} of {len(rows)}"
    return ex


#: Gate grounds, their definitions and extractors (extend here when audits gain outputs).
GROUND_SPECS: tuple[GroundSpec, ...] = (
    GroundSpec("test_auroc", ("model", "fragility"), "held-out AUROC of the model", _metric("auroc"), (0.0, 1.0)),
    GroundSpec("test_log_loss", ("model", "fragility"), "held-out log loss", _metric("log_loss"), (0.0, None)),
    GroundSpec("brittle_share_confident", "fragility", "share of brittle cases among confident ones (p̂ ≥ 0.8)",
               _brittle_share, (0.0, 1.0)),
    GroundSpec("mean_fds", "fragility", "mean fragility score (FDS)", _mean_fds, (0.0, 1.0)),
    GroundSpec("ood_ece", "transport", "ECE on the target (OOD) test, primary pipeline", _ood_ece, (0.0, 1.0)),
    GroundSpec("worst_class_coverage_90", "transport",
               "worst-class marginal conformal coverage at 90% (α = 0.10), OOD, primary pipeline", _worst_cov,
               (0.0, 1.0)),
    GroundSpec("worst_subgroup_coverage_90", "transport",
               "worst-subgroup Mondrian conformal coverage at 90% (α = 0.10) over the declared subgroup columns, "
               "OOD, primary pipeline", _worst_subgroup_cov, (0.0, 1.0)),
    GroundSpec("n_transport_sensitive", "transport", "primary pipeline's metrics classified transport-sensitive",
               _verdict_count(False), (0.0, None)),
    GroundSpec("n_transport_worse", "transport", "primary pipeline's metrics transport-sensitive in the harmful "
               "direction", _verdict_count(True), (0.0, None)),
)


@dataclass(frozen=True)
class GateGrounds:
    """Extracted grounds and the report of where each came from (or why it is UNKNOWN)."""

    values: dict[str, float | None]
    report: pd.DataFrame = field(repr=False)

    @property
    def absent(self) -> list[str]:
        return [k for k, v in self.values.items() if v is None]

    def to_frame(self) -> pd.DataFrame:
        return self.report.copy()


def extract_gate_grounds(runs: Sequence[RunRecord]) -> GateGrounds:
    """Read every ground from ``runs``: per ground, the newest run of its most preferred kind that provides it.

    Parameters
    ----------
    runs : sequence of RunRecord
        Any mix of audit kinds; missing tables or columns are tolerated
        (the ground is UNKNOWN and the report says why).

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
    rows = []
    for spec in GROUND_SPECS:
        found, reasons, invalid = None, [], False
        candidates = sorted((r for r in ordered if r.audit_kind in spec.kinds), key=lambda r: spec.kinds.index(r.audit_kind))
        for run in candidates:
            v, why, bad = spec.read(run)
            if v is not None:
                found = (v, run.run_id, why)
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
    return GateGrounds(values, pd.DataFrame(rows, columns=["ground", "value", "status", "source", "detail",
                                                           "description"]))
