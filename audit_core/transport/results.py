"""The long-form result table, aggregates, and saving (Parquet, JSON, registry).

Columns of the result table (:data:`~audit_core.transport.columns.RESULT_COLUMNS`):
``analysis, condition, target_definition, domain, model, mapping, refit,
metric, value, weighting, alpha, selection_rate``.

``domain`` is ``id`` or ``ood`` for evaluations, ``ood-id`` for paired
changes and ``source`` for quantities fitted on the source (thresholds,
conformal quantiles, mapping parameters). ``refit`` is ``-1`` for rows that
pool refits. ``alpha`` / ``selection_rate`` are ``NaN`` where they do not
apply.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from audit_core.calibration_error import frequency_band
from audit_core.metrics import bin_ids, calibration_bins, smooth_ece

from .columns import RESULT_COLUMNS
from .headline import headline_slice
from .selective import risk_selection_curve
from .state import TransportState

__all__ = ["TransportResult", "model_spec", "paired_changes", "refit_summary", "conformal_tally",
           "model_family_sensitivity", "mean_curve", "CURVE_GRID"]

_KEYS = ["analysis", "condition", "target_definition", "model", "mapping", "refit", "metric", "weighting", "alpha",
         "selection_rate"]


def paired_changes(table: pd.DataFrame) -> pd.DataFrame:
    """OOD − ID per refit for every evaluated quantity; ``domain="ood-id"``."""
    t = table[table["domain"].isin(["id", "ood"])]
    wide = t.pivot_table(index=_KEYS, columns="domain", values="value", dropna=False, aggfunc="first")
    wide = wide.dropna(how="all")
    if "id" not in wide or "ood" not in wide:
        return pd.DataFrame(columns=list(table.columns))
    out = (wide["ood"] - wide["id"]).rename("value").reset_index()
    out["analysis"] = out["analysis"]
    out["domain"] = "ood-id"
    out = out[out["analysis"].isin(["metrics", "selective", "conformal_marginal", "conformal_label_conditional"])]
    return out[list(table.columns)].reset_index(drop=True)


def refit_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, SD, median, min and max across refits for every quantity."""
    t = table[table["refit"] >= 0]
    keys = [k for k in _KEYS if k != "refit"] + ["domain"]
    g = t.groupby(keys, dropna=False)["value"]
    out = g.agg(["mean", "std", "median", "min", "max", "count"]).reset_index()
    return out.rename(columns={"count": "n_refits"})


def conformal_tally(table: pd.DataFrame) -> pd.DataFrame:
    """Label-conditional vs marginal across all conditions.

    A condition is one (condition, target definition, domain, model, mapping,
    refit, alpha) cell. Counts where the worst-class coverage improves,
    worsens or is unchanged (|difference| ≤ 1e-12) under label-conditional
    sets, and the share of conditions where the mean set size grows.
    """
    keys = ["condition", "target_definition", "domain", "model", "mapping", "refit", "alpha"]
    t = table[table["domain"].isin(["id", "ood"]) & (table["weighting"] == "unweighted")]

    def pick(method, metric):
        s = t[(t["analysis"] == f"conformal_{method}") & (t["metric"] == metric)]
        return s.set_index(keys)["value"]

    wc = pd.concat([pick("marginal", "worst_class_coverage"), pick("label_conditional", "worst_class_coverage")],
                   axis=1, keys=["m", "lc"]).dropna()
    sz = pd.concat([pick("marginal", "mean_set_size"), pick("label_conditional", "mean_set_size")],
                   axis=1, keys=["m", "lc"]).dropna()
    d = wc["lc"] - wc["m"]
    n = len(wc)
    return pd.DataFrame(
        [
            {"quantity": "conditions", "value": float(n)},
            {"quantity": "worst_class_coverage_improved", "value": float((d > 1e-12).sum())},
            {"quantity": "worst_class_coverage_worsened", "value": float((d < -1e-12).sum())},
            {"quantity": "worst_class_coverage_unchanged", "value": float((d.abs() <= 1e-12).sum())},
            {"quantity": "share_set_size_grew", "value": float((sz["lc"] > sz["m"] + 1e-12).mean()) if len(sz) else np.nan},
        ]
    )


def model_family_sensitivity(table: pd.DataFrame, *, reference: str) -> pd.DataFrame:
    """Mean paired change of each model minus that of the reference model, per metric and mapping."""
    ch = table[(table["domain"] == "ood-id") & (table["condition"] == "clean") & (table["analysis"].isin(
        ["metrics", "selective", "conformal_marginal", "conformal_label_conditional"]))]
    keys = ["analysis", "mapping", "metric", "weighting", "alpha", "selection_rate"]
    mean = ch.groupby(keys + ["model"], dropna=False)["value"].mean().unstack("model")
    if reference not in mean or mean.shape[1] < 2:
        return pd.DataFrame(columns=keys + ["model", "reference", "delta_change"])
    rows = []
    for m in mean.columns:
        if m == reference:
            continue
        d = (mean[m] - mean[reference]).rename("delta_change").reset_index()
        d["model"], d["reference"] = m, reference
        rows.append(d)
    return pd.concat(rows, ignore_index=True)


@dataclass(frozen=True, eq=False)
class TransportResult:
    """Everything a transport run produced (a binary run; the multi-class run's result is a subclass).

    Attributes
    ----------
    table : pandas.DataFrame
        The long-form result table.
    verdicts : pandas.DataFrame
        One row per (model, mapping, analysis, metric, weighting, alpha,
        selection rate): mean change, bootstrap interval, tolerance, verdict.
    refit_summary : pandas.DataFrame
        Across-refit aggregates (:func:`refit_summary`: mean, SD, median, min, max over the refits);
        stored as the run table ``refit_summary``.
    extras : dict of str to DataFrame
        ``reliability`` (bins), ``curves`` (risk–selection), ``conformal_tally``,
        ``model_family``, ``partitions``, ``degradation_percentiles``.
    manifest : dict
        Config, seeds, input SHA-256, versions, partitions.
    """

    table: pd.DataFrame
    verdicts: pd.DataFrame
    refit_summary: pd.DataFrame
    extras: Mapping[str, pd.DataFrame]
    manifest: dict

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        return {
            "manifest": self.manifest,
            "results": json.loads(self.table.to_json(orient="records")),
            "verdicts": json.loads(self.verdicts.to_json(orient="records")),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, default=str)

    def results_parquet(self) -> bytes:
        buf = io.BytesIO()
        self.table.to_parquet(buf, index=False)
        return buf.getvalue()

    def save(self, directory: str | Path) -> dict[str, Path]:
        """Write ``results.parquet``, ``verdicts.parquet``, ``results.json`` and ``manifest.json``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        paths = {"results": d / "results.parquet", "verdicts": d / "verdicts.parquet",
                 "json": d / "results.json", "manifest": d / "manifest.json"}
        self.table.to_parquet(paths["results"], index=False)
        self.verdicts.to_parquet(paths["verdicts"], index=False)
        paths["json"].write_text(self.to_json())
        paths["manifest"].write_text(json.dumps(self.manifest, indent=1, default=str))
        return paths

    def save_to_registry(self, registry, *, dataset_name: str, dataset_fingerprint: str | None = None) -> str:
        """Save as a registry run (``audit_kind="transport"``); returns the run id."""
        cfg = self.manifest["config"]
        fp = dataset_fingerprint or next(iter(self.manifest["inputs_sha256"].values()))
        tables = {"results": self.table, "verdicts": self.verdicts, "refit_summary": self.refit_summary}
        tables.update({k: v for k, v in self.extras.items() if k != "partitions" and len(v.columns)})
        manifest = {k: v for k, v in self.manifest.items() if k != "partitions"}
        tables["partitions"] = self.extras["partitions"].astype({c: str for c in self.extras["partitions"].columns})
        return registry.save(
            audit_kind="transport",
            dataset_name=dataset_name,
            dataset_fingerprint=fp,
            grouping_hash=None,
            model_spec=model_spec(self.manifest),
            config=json.loads(json.dumps(cfg, default=str)),
            tables=tables,
            manifest=json.loads(json.dumps(manifest, default=str)),
        )


def model_spec(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The registry's model description of a transport run: labelled by every model it holds.

    ``kind`` (the registry's model label) is ``" + "``-joined over the
    models, e.g. ``"logistic_regression + lightgbm"``; ``primary`` is the
    first; ``refit`` says whether the models were refitted (False: one given
    model audited as it is).
    """
    cfg = manifest.get("config", {})
    models = [str(m) for m in cfg.get("models", [])]
    info = manifest.get("model", {})
    out = {"kind": " + ".join(models), "models": models, "primary": models[0] if models else None,
           "mappings": list(cfg.get("mappings", [])), "refit": bool(info.get("refit", True)),
           "params": dict(cfg.get("model_params", {}))}
    if info.get("refit") is False:
        out["fixed_model_spec"] = info.get("spec", {})
    return json.loads(json.dumps(out, default=str))


def _finalise(table: pd.DataFrame) -> pd.DataFrame:
    t = table[list(RESULT_COLUMNS)].copy()
    for col in ("analysis", "condition", "target_definition", "domain", "model", "mapping", "metric", "weighting"):
        t[col] = t[col].astype(str)
    t["refit"] = t["refit"].astype("int64")
    for col in ("value", "alpha", "selection_rate"):
        t[col] = pd.to_numeric(t[col], errors="coerce").astype("float64")
    return t.reset_index(drop=True)


def build_result(state: TransportState) -> TransportResult:
    """The :class:`TransportResult` of a binary run after every stage (:class:`~.state.TransportState`)."""
    c = state.config
    table = _finalise(pd.DataFrame(list(state.rows)))
    extras = dict(state.tables)
    extras["conformal_tally"] = conformal_tally(table)
    extras["model_family"] = model_family_sensitivity(table, reference=c.models[0])
    extras.update(_figure_tables(state))
    verdicts = extras.pop("verdicts", pd.DataFrame())  # a label-free run classifies no change
    return TransportResult(table=table, verdicts=verdicts, refit_summary=refit_summary(table), extras=extras,
                           manifest=dict(state.manifest))


def _figure_weights(state: TransportState) -> bool:
    """Whether the figures weight records: the headline slice's weighting (weighted when weights are declared)."""
    h = headline_slice(state.config.to_dict())
    return not isinstance(h, str) and h.weighting == "weighted"


#: Coverages at which the risk–selection curves are stored.
CURVE_GRID = np.linspace(0.01, 1.0, 100)


def mean_curve(parts: list[tuple[np.ndarray, np.ndarray]], grid: np.ndarray = CURVE_GRID) -> pd.DataFrame:
    """Risk–selection curves of several refits read at ``grid`` coverages and averaged point by point.

    Parameters
    ----------
    parts : list of (coverage, risk) arrays, one pair per refit, each of shape (n_r,)

    Returns
    -------
    DataFrame with ``coverage`` and ``risk``, shape (len(grid), 2): the means over refits.
    """
    cov, risk = [], []
    for c, r in parts:
        idx = np.minimum(np.searchsorted(c, grid - 1e-12), len(c) - 1)
        cov.append(c[idx])
        risk.append(r[idx])
    return pd.DataFrame({"coverage": np.mean(cov, axis=0), "risk": np.mean(risk, axis=0)})


def _figure_tables(state: TransportState) -> dict[str, pd.DataFrame]:
    """The figures' tables, over **every refit** (the headline aggregation, ``refits`` = R):

    * ``reliability`` — equal-width bins of the records of all R refits pooled (with the bootstrap band of each
      bin's observed frequency, the smooth ECE of the pooled records and, for Venn-Abers, the mean ``[p0, p1]``
      per bin, ``va_p0, va_p1``);
    * ``curves`` — the risk–selection curve of each refit read at 100 coverages, averaged over refits.

    Records are weighted when the headline slice is (a declared weight column)."""
    c = state.config
    weighted = _figure_weights(state)
    rel, curves = [], []
    for m in c.models:
        for mp in c.mappings:
            for dom in state.domains():
                ys, ps, ws, vas, parts = [], [], [], [], []
                for r in range(c.n_refits):
                    (_, y, w, _), = [t for t in state.test_sets(r) if t[0] == dom]
                    w = w if weighted and w is not None else np.ones(len(y))
                    p = state.mapped(r, m, mp, dom)
                    ys.append(y)
                    ps.append(p)
                    ws.append(w)
                    pipe = state.pipes[(r, m)]
                    vas.append(pipe["maps"][mp].interval(pipe["raw"]["id_test" if dom == "id" else "ood"]))
                    parts.append(risk_selection_curve(y, p, sample_weight=w))
                y, p, w = np.concatenate(ys), np.concatenate(ps), np.concatenate(ws)
                b = calibration_bins(y, p, n_bins=c.n_bins, sample_weight=w)
                b["domain"], b["model"], b["mapping"], b["refits"] = dom, m, mp, c.n_refits
                # 95 % record-bootstrap band of each bin's observed frequency, and the smooth ECE beside ECE-15
                b["frac_pos_low"], b["frac_pos_high"] = frequency_band(bin_ids(p, c.n_bins), y, c.n_bins,
                                                                       seed=int(c.seed) + 31)
                b["smooth_ece"] = smooth_ece(y, p, sample_weight=w)
                if all(iv is not None for iv in vas):  # Venn-Abers: each bin's mean p0 and p1, the band of the diagram
                    ids = bin_ids(p, c.n_bins)
                    cnt = np.maximum(np.bincount(ids, minlength=c.n_bins), 1)
                    for k, nm in enumerate(("va_p0", "va_p1")):
                        v = np.concatenate([iv[k] for iv in vas])
                        b[nm] = np.where(b["count"] > 0, np.bincount(ids, weights=v, minlength=c.n_bins) / cnt, np.nan)
                rel.append(b)
                curves.append(mean_curve(parts).assign(domain=dom, model=m, mapping=mp, refits=c.n_refits))
    return {"reliability": pd.concat(rel, ignore_index=True), "curves": pd.concat(curves, ignore_index=True)}
