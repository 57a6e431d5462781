"""The notebook API before the target's labels arrive: ``transport_audit(..., options={"target_labels": ...})``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core import TableSpec, load_sample, transport_audit
from audit_core.api.display import FORECAST_VERDICT_COLUMNS


@pytest.fixture(scope="module")
def cancer():
    frame, info = load_sample("breast_cancer")
    frame["site"] = frame["mean texture"].gt(frame["mean texture"].median()).map({False: "A", True: "B"})
    spec = TableSpec(target="diagnosis", positive="malignant", groups=info.evidence_groups, key="record_id",
                     domain="site", source_domain="A", target_domain="B")
    return frame, spec


def _forecast(frame, spec, labels):
    return transport_audit(frame, spec, n_refits=1, n_bootstrap=20, options={"target_labels": labels})


def test_a_notebook_forecast_with_the_target_labels_missing_equals_the_hidden_one(cancer):
    frame, spec = cancer
    blank = frame.copy()
    blank.loc[blank["site"] == "B", "diagnosis"] = np.nan  # the outcomes have not arrived yet
    absent = _forecast(blank, spec, "absent")
    hidden = _forecast(frame, spec, "hidden")
    for name in ("forecast", "forecast_exact", "forecast_checks", "forecast_weights", "forecast_prevalence"):
        pd.testing.assert_frame_equal(absent.result.extras[name], hidden.result.extras[name], check_exact=True)
    assert absent.result.manifest["target_fingerprint"] == hidden.result.manifest["target_fingerprint"]
    assert "realised" not in absent.result.extras  # nothing on the target was labelled
    said = " ".join(f.text for f in absent.findings)
    assert "covariate shift" in said and "concept shift" in said
    assert "verdict" not in said.lower() or "transport-stable" not in said  # no labelled verdict is claimed
    table = absent.verdict_table()
    assert tuple(table.columns) == FORECAST_VERDICT_COLUMNS and len(table)
    assert set(table["source"]) == {"forecast"}
    assert set(table["method"]) <= {"covariate:cbpe", "label:em", "both:span"}
    html = absent._repr_html_()
    assert "Transport forecast (target labels not available yet)" in html and "Forecasts on the headline slice" in html
    assert "forecast_figure" in absent.figures


def test_a_labelled_notebook_run_keeps_its_verdicts_and_stores_the_realised_values(cancer):
    frame, spec = cancer
    report = transport_audit(frame, spec, n_refits=1, n_bootstrap=20)
    assert "realised" in report.result.extras and len(report.result.extras["realised"])
    assert "forecast" not in report.result.extras
    assert "Verdicts on the headline slice" in report._repr_html_()
    assert "transport_audit" not in report.verdict_table().columns and "ood_value" in report.verdict_table().columns
