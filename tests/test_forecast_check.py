"""check_forecast on hand-built tables whose answer is known."""
from __future__ import annotations

import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.forecast import check_forecast

F_MANIFEST = {"kind": "transport", "target_labels": "hidden", "declaration_key": "k1", "target_fingerprint": "fp1"}
L_MANIFEST = {"kind": "transport", "target_labels": "available", "declaration_key": "k1", "target_fingerprint": "fp1"}


def _forecast() -> pd.DataFrame:
    """Two refits of two quantities by one method, and one quantity the labelled run does not realise."""
    rows = []
    for r in (0, 1):
        rows.append(dict(refit=r, model="lr", mapping="platt", quantity="risk@s=0.8", method="covariate:weighted",
                         assumption="covariate", value=0.22, low=0.15, high=0.25, level=0.9, status="forecast",
                         reason="", naive=0.10))
        rows.append(dict(refit=r, model="lr", mapping="platt", quantity="ece", method="covariate:weighted",
                         assumption="covariate", value=0.05 + 0.02 * r, low=0.02, high=0.08, level=0.9,
                         status="forecast", reason="", naive=0.29 + 0.02 * r))
        rows.append(dict(refit=r, model="lr", mapping="platt", quantity="weighted_marginal:coverage@a=0.1",
                         method="covariate:weighted", assumption="covariate", value=0.9, low=0.85, high=0.95,
                         level=0.9, status="forecast", reason="", naive=0.9))
        rows.append(dict(refit=r, model="lr", mapping="platt", quantity="auroc", method="label:em", assumption="label",
                         value=0.7, low=0.6, high=0.8, level=0.9, status="unknown" if r else "forecast",
                         reason="x" if r else "", naive=0.75))
    return pd.DataFrame(rows)


def _realised() -> pd.DataFrame:
    rows = [dict(refit=0, model="lr", mapping="platt", quantity="risk@s=0.8", value=0.18),
            dict(refit=1, model="lr", mapping="platt", quantity="risk@s=0.8", value=0.22),
            dict(refit=0, model="lr", mapping="platt", quantity="ece", value=0.30),
            dict(refit=1, model="lr", mapping="platt", quantity="ece", value=0.30),
            dict(refit=0, model="lr", mapping="platt", quantity="auroc", value=0.72),
            dict(refit=1, model="lr", mapping="platt", quantity="auroc", value=0.72)]
    return pd.DataFrame(rows)


def test_inside_and_beats_naive_known_answers():
    chk = check_forecast({"forecast": _forecast()}, F_MANIFEST, {"realised": _realised()}, L_MANIFEST)
    t = chk.table.set_index("quantity")
    # risk: realised mean (0.18 + 0.22) / 2 = 0.20 inside [0.15, 0.25]; |0.22 − 0.20| = 0.02 < |0.10 − 0.20| = 0.10
    risk = t.loc["risk@s=0.8"]
    assert risk["realised"] == pytest.approx(0.20)
    assert bool(risk["inside"]) and bool(risk["beats_naive"])
    assert risk["error"] == pytest.approx(0.02) and risk["naive_error"] == pytest.approx(-0.10)
    assert risk["n_refits"] == 2
    # ece: value mean 0.06, naive mean 0.30, realised 0.30: outside [0.02, 0.08], naive exact, so not beaten
    ece = t.loc["ece"]
    assert ece["value"] == pytest.approx(0.06) and ece["naive"] == pytest.approx(0.30)
    assert not bool(ece["inside"]) and not bool(ece["beats_naive"])
    # auroc: one refit unknown -> the averaged row is unknown and not counted
    assert t.loc["auroc", "status"] == "unknown"
    assert (chk.n, chk.n_inside, chk.n_beats_naive, chk.n_unknown, chk.n_unmatched) == (2, 1, 1, 1, 1)
    assert chk.summary() == ("1 of 2 realised values fell inside their 90% interval; the forecast beat "
                             "'unchanged from source' on 1 of 2 (1 unknown forecasts not counted)")


@pytest.mark.parametrize("what", ["declaration_key", "target_fingerprint"])
def test_refuses_runs_that_do_not_match(what):
    other = {**L_MANIFEST, what: "zzz"}
    with pytest.raises(AuditInputError) as e:
        check_forecast({"forecast": _forecast()}, F_MANIFEST, {"realised": _realised()}, other)
    assert e.value.code == "FORECAST_CHECK_MISMATCH"
    assert "zzz" in str(e.value) and F_MANIFEST[what] in str(e.value)


def test_refuses_runs_of_the_wrong_kind():
    with pytest.raises(AuditInputError) as e:  # both labelled
        check_forecast({"forecast": _forecast()}, L_MANIFEST, {"realised": _realised()}, L_MANIFEST)
    assert e.value.code == "FORECAST_CHECK_KIND"
    with pytest.raises(AuditInputError) as e:  # both label-free
        check_forecast({"forecast": _forecast()}, F_MANIFEST, {"realised": _realised()}, F_MANIFEST)
    assert e.value.code == "FORECAST_CHECK_KIND"
    with pytest.raises(AuditInputError) as e:  # a labelled run saved without realised values
        check_forecast({"forecast": _forecast()}, F_MANIFEST, {}, L_MANIFEST)
    assert e.value.code == "FORECAST_CHECK_KIND" and "realised" in str(e.value)
    old = {k: v for k, v in L_MANIFEST.items() if k != "declaration_key"}
    with pytest.raises(AuditInputError) as e:
        check_forecast({"forecast": _forecast()}, F_MANIFEST, {"realised": _realised()}, old)
    assert e.value.code == "FORECAST_CHECK_KIND"
