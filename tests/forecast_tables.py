"""Hand-built forecast tables of a saved run (the schema of the Transport ``forecast`` stage), with known values.

Slice ``logistic_regression`` / ``platt``, two refits. The means over the two refits are worked by hand in the
comments; the tests state them as literals.
"""
from __future__ import annotations

import pandas as pd

M, MAP = "logistic_regression", "platt"


def _f(refit, method, value, low, high, naive, status="forecast", reason="", quantity="risk@s=0.8", model=M,
       mapping=MAP):
    assumption = method.split(":")[0]
    return {"refit": refit, "model": model, "mapping": mapping, "quantity": quantity, "method": method,
            "assumption": assumption, "value": value, "low": low, "high": high, "level": 0.9, "status": status,
            "reason": reason, "naive": naive, "change": value - naive, "tolerance": 0.05,
            "verdict": "indeterminate", "direction": "undetermined", "source": "forecast"}


DISAGREE = "the two assumptions disagree by 0.08 > 0.05"


def forecast_tables(model: str = M, mapping: str = MAP) -> dict[str, pd.DataFrame]:
    """risk@s=0.8: covariate:cbpe (the default) 19% [16%, 23%] (means of .18/.20, .15/.17, .21/.25), naive 12%;
    label:em unknown in refit 1 (DISAGREE); both:span [15%, 29%]; covariate:weighted 17% (all-methods only).
    ece: covariate:cbpe 0.040 [0.030, 0.050], naive 0.020; label:em 0.060; both:span [0.030, 0.070]."""
    kw = dict(model=model, mapping=mapping)
    rows = []
    for refit, (v, lo, hi) in enumerate([(0.18, 0.15, 0.21), (0.20, 0.17, 0.25)]):
        rows.append(_f(refit, "covariate:cbpe", v, lo, hi, 0.12, **kw))
    rows.append(_f(0, "label:em", 0.25, 0.20, 0.30, 0.12, **kw))
    rows.append(_f(1, "label:em", 0.27, 0.22, 0.32, 0.12, status="unknown", reason=DISAGREE, **kw))
    rows.append(_f(0, "both:span", 0.215, 0.14, 0.30, 0.12, **kw))
    rows.append(_f(1, "both:span", 0.235, 0.16, 0.28, 0.12, **kw))
    rows.append(_f(0, "covariate:weighted", 0.16, 0.13, 0.19, 0.12, **kw))
    rows.append(_f(1, "covariate:weighted", 0.18, 0.15, 0.21, 0.12, **kw))
    for refit in (0, 1):
        rows.append(_f(refit, "covariate:cbpe", 0.04, 0.03, 0.05, 0.02, quantity="ece", **kw))
        rows.append(_f(refit, "label:em", 0.06, 0.05, 0.07, 0.02, quantity="ece", **kw))
        rows.append(_f(refit, "both:span", 0.05, 0.03, 0.07, 0.02, quantity="ece", **kw))
    forecast = pd.DataFrame(rows)
    exact = pd.DataFrame([
        {"refit": r, "model": model, "mapping": mapping, "quantity": q, "value": v}
        for r, vals in enumerate([(0.62, 1.30, 0.70), (0.66, 1.20, 0.80)])
        for q, v in zip(("rate@s=0.8", "marginal:set_size@a=0.1", "marginal:singleton@a=0.1"), vals, strict=True)])
    checks = pd.DataFrame([
        {"refit": r, "model": model, "mapping": mapping, "method": "covariate:weighted", "quantity": "rate@s=0.8",
         "source_weighted": sw, "target_exact": te, "tolerance": 0.05, "ok": True}
        for r, sw, te in ((0, 0.60, 0.62), (1, 0.64, 0.66))])
    weights = pd.DataFrame([
        {"refit": r, "domain_auroc": a, "ess": e, "n_source": 1000, "n_target": 2000, "cap": 8.0, "n_clipped": 10,
         "overlap_ok": True, "reason": ""} for r, a, e in ((0, 0.70, 400.0), (1, 0.80, 420.0))])
    prevalence = pd.DataFrame([
        {"refit": r, "model": model, "mapping": mapping, "class": c, "source": s, "em": em, "bbse": em}
        for r in (0, 1) for c, s, em in (("0", 0.78, 0.69), ("1", 0.22, 0.31))])
    return {"forecast": forecast, "forecast_exact": exact, "forecast_checks": checks, "forecast_weights": weights,
            "forecast_prevalence": prevalence}


def check_table(model: str = M, mapping: str = MAP) -> pd.DataFrame:
    """Four checked forecasts: 3 inside their interval, 2 closer than naive, plus one unknown (not counted)."""
    rows = [("risk@s=0.8", "covariate:cbpe", 0.19, 0.16, 0.23, "forecast", 0.21, True, 0.12, True),
            ("ece", "covariate:cbpe", 0.04, 0.03, 0.05, "forecast", 0.045, True, 0.02, True),
            ("risk@s=0.8", "both:span", 0.225, 0.15, 0.29, "forecast", 0.20, True, 0.12, False),
            ("ece", "both:span", 0.05, 0.03, 0.07, "forecast", 0.09, False, 0.02, False),
            ("risk@s=0.8", "label:em", 0.26, 0.21, 0.31, "unknown", 0.21, True, 0.12, False)]
    out = []
    for q, meth, v, lo, hi, st, real, inside, naive, beats in rows:
        out.append({"model": model, "mapping": mapping, "quantity": q, "method": meth,
                    "assumption": meth.split(":")[0], "value": v, "low": lo, "high": hi, "level": 0.9,
                    "status": st, "realised": real, "inside": inside, "error": v - real, "naive": naive,
                    "naive_error": naive - real, "beats_naive": beats})
    return pd.DataFrame(out)
