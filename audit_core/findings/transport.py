"""Sentences about a Transport result: the operating threshold, conformal class coverage, the verdicts."""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core.transport.config import class_names_of
from audit_core.transport.results import TransportResult

from .cases import class_label
from .finding import Finding, interval, num, pct, signed
from .shift import shift_finding

__all__ = ["transport_findings"]


def _mean(result: TransportResult, analysis: str, metric: str, domain: str, model: str, mapping: str,
          *, selection_rate: float | None = None, alpha: float | None = None) -> float:
    """Mean over refits of one clean, unweighted quantity of the first target definition."""
    s = result.summary
    target = result.table["target_definition"].iloc[0]
    m = ((s["analysis"] == analysis) & (s["metric"] == metric) & (s["domain"] == domain) & (s["model"] == model)
         & (s["mapping"] == mapping) & (s["condition"] == "clean") & (s["weighting"] == "unweighted")
         & (s["target_definition"] == target))
    if selection_rate is not None:
        m &= np.isclose(s["selection_rate"], selection_rate)
    if alpha is not None:
        m &= np.isclose(s["alpha"], alpha)
    v = s.loc[m, "mean"]
    return float(v.iloc[0]) if len(v) else float("nan")


def _verdict_row(result: TransportResult, analysis: str, metric: str, model: str, mapping: str,
                 *, selection_rate: float | None = None, alpha: float | None = None) -> pd.Series | None:
    v = result.verdicts
    m = ((v["analysis"] == analysis) & (v["metric"] == metric) & (v["model"] == model) & (v["mapping"] == mapping)
         & (v["weighting"] == "unweighted"))
    if selection_rate is not None:
        m &= np.isclose(v["selection_rate"], selection_rate)
    if alpha is not None:
        m &= np.isclose(v["alpha"], alpha)
    rows = v[m]
    return rows.iloc[0] if len(rows) else None


def _target(result: TransportResult) -> str:
    cfg = result.manifest.get("config", {})
    tv = cfg.get("target_value")
    return f"On {tv}" if tv is not None and not cfg.get("single_domain") else "On the target domain"


def _selective(result, model, mapping, rate) -> Finding | None:
    kw = dict(selection_rate=rate)
    vals = {f"{q}_{d}": _mean(result, "selective", q, d, model, mapping, **kw) for q in ("rate", "risk") for d in ("id", "ood")}
    if not all(np.isfinite(list(vals.values()))):
        return None
    row = _verdict_row(result, "selective", "risk", model, mapping, **kw)
    ci = "" if row is None else f" (risk change {signed(row['delta'])}{interval(row['ci_low'], row['ci_high'])})"
    text = (f"{_target(result)} the {rate:g} selection threshold answers {pct(vals['rate_ood'])} of cases instead of "
            f"{pct(vals['rate_id'])}, and their error rate {'rises' if vals['risk_ood'] > vals['risk_id'] else 'goes'} "
            f"from {pct(vals['risk_id'])} to {pct(vals['risk_ood'])}{ci}.")
    sensitive = row is not None and row["verdict"] == "transport-sensitive"
    numbers = dict(vals, selection_rate=rate)
    if row is not None:
        numbers.update(risk_change=float(row["delta"]), risk_lo=float(row["ci_low"]), risk_hi=float(row["ci_high"]))
    return Finding(text=text, numbers=numbers, severity="warning" if sensitive else "info", kind="selective_threshold")


def _conformal(result, model, mapping, alpha) -> Finding | None:
    kw = dict(alpha=alpha)
    cov = {(meth, c): _mean(result, f"conformal_{meth}", f"coverage_class{c}", "ood", model, mapping, **kw)
           for meth in ("marginal", "label_conditional") for c in (0, 1)}
    if not all(np.isfinite(list(cov.values()))):
        return None
    worst = min((0, 1), key=lambda c: cov[("marginal", c)])
    m, lc = cov[("marginal", worst)], cov[("label_conditional", worst)]
    two = {meth: _mean(result, f"conformal_{meth}", "two_class_rate", "ood", model, mapping, **kw)
           for meth in ("marginal", "label_conditional")}
    extra = two["label_conditional"] - two["marginal"]
    cost = (f"at the cost of {pct(extra)} more two-class sets" if extra > 0
            else f"with {pct(-extra)} fewer two-class sets")
    target = f"target {pct(1 - alpha)}"
    names = class_names_of(result.manifest.get("config") or {}, str(result.table["target_definition"].iloc[0]))
    cls = class_label(names, worst)
    if lc > m:
        text = (f"{_target(result)} label-conditional sets restore the coverage of {cls} ({num(lc)} vs {num(m)} "
                f"marginal, {target}) {cost}.")
        sev = "good" if lc >= 1 - alpha else "info"
    else:
        text = (f"{_target(result)} label-conditional sets do not raise the coverage of {cls} ({num(lc)} vs "
                f"{num(m)} marginal, {target}).")
        sev = "warning" if m < 1 - alpha else "info"
    return Finding(text=text, severity=sev, kind="conformal_class_coverage",
                   numbers={"class": worst, "coverage_marginal": m, "coverage_label_conditional": lc,
                            "two_class_marginal": two["marginal"], "two_class_label_conditional": two["label_conditional"],
                            "alpha": alpha})


def _change(result, model, mapping, metric: str, words: str) -> Finding | None:
    row = _verdict_row(result, "metrics", metric, model, mapping)
    if row is None or not np.isfinite(row["delta"]):
        return None
    text = (f"{_target(result)} {words} changes by {signed(row['delta'], 3)}{interval(row['ci_low'], row['ci_high'], 3)} "
            f"against a tolerance of ±{num(row['tolerance'], 3)}: {row['verdict']}.")
    sev = "warning" if row["verdict"] == "transport-sensitive" else "info"
    return Finding(text=text, severity=sev, kind=f"change_{metric}",
                   numbers={"change": float(row["delta"]), "lo": float(row["ci_low"]), "hi": float(row["ci_high"]),
                            "tolerance": float(row["tolerance"])})


def _tally(result, model, mapping) -> Finding | None:
    v = result.verdicts
    v = v[(v["model"] == model) & (v["mapping"] == mapping)]
    if v.empty:
        return None
    counts = v["verdict"].value_counts()
    n = {k: int(counts.get(k, 0)) for k in ("transport-sensitive", "transport-stable", "indeterminate")}
    text = (f"Of {len(v)} checked quantities, {n['transport-sensitive']} changed by more than their tolerance, "
            f"{n['transport-stable']} stayed within it and {n['indeterminate']} are undecided (the interval crosses "
            f"the tolerance).")
    return Finding(text=text, severity="warning" if n["transport-sensitive"] else "good", kind="verdict_tally",
                   numbers={"checked": float(len(v)), "sensitive": float(n["transport-sensitive"]),
                            "stable": float(n["transport-stable"]), "indeterminate": float(n["indeterminate"])})


def transport_findings(result: TransportResult, *, model: str | None = None, mapping: str | None = None,
                       selection_rate: float = 0.8, alpha: float = 0.1) -> list[Finding]:
    """Plain-language findings of a Transport result for one model and mapping.

    Parameters
    ----------
    result : TransportResult
    model, mapping : str, optional
        Default: the first model; Platt scaling when it was run, else the first mapping.
    selection_rate : float, default 0.8
        The operating selection rate (its threshold is fitted on the source).
    alpha : float, default 0.1
        Conformal miscoverage level.

    Returns
    -------
    list of Finding
        Up to 6 sentences: the operating threshold, class coverage of
        conformal sets, AUROC and ECE changes, the verdict tally and the
        feature shift (when the result holds a ``feature_shift`` table).
    """
    cfg = result.manifest["config"]
    model = model or cfg["models"][0]
    mapping = mapping or ("platt" if "platt" in cfg["mappings"] else cfg["mappings"][0])
    parts = [_selective(result, model, mapping, selection_rate), _conformal(result, model, mapping, alpha),
             _change(result, model, mapping, "auroc", "the AUROC"),
             _change(result, model, mapping, "ece", "the calibration error (ECE)"),
             _tally(result, model, mapping),
             shift_finding(result.extras.get("feature_shift"), result.extras.get("domain_classifier"))]
    return [f for f in parts if f is not None]
