"""Multi-class Transport: the figure tables of the run (top-label bins, max-probability curves), the figure
builders (traces, class names, the 1 − α line, binary figures unchanged) and the release-gate grounds of a
saved multi-class run (UNKNOWN with a reason where a binary ground has no reading)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from audit_core.runs.grounds import extract_gate_grounds
from audit_core.runs.registry import RunRegistry
from audit_core.transport.multiclass.figure_tables import top_label_bins, top_label_curve
from audit_core.transport.multiclass.metrics import ece_top
from audit_core.transport.multiclass.run import run_multiclass_transport
from components.figures import transport_mc as tmf
from tests.test_multiclass_run import _config, _frame

CLASSES = ("distinction", "fail", "pass", "withdrawn")


@pytest.fixture(scope="module")
def result():
    return run_multiclass_transport(_frame(n=1600), config=_config(n_refits=2, n_bootstrap=20))


@pytest.fixture(scope="module")
def record(result, tmp_path_factory):
    reg = RunRegistry(tmp_path_factory.mktemp("mc") / "r.sqlite3")
    return reg.load(result.save_to_registry(reg, dataset_name="toy"))


# ------------------------------------------------------------ library: the figure tables
def test_top_label_bins_by_hand():
    # confidences 0.5 (right), 0.8 (wrong), 0.85 (right) with 5 bins: (0.4, 0.6] holds 0.5, (0.6, 0.8] 0.8, (0.8, 1] 0.85
    P = np.array([[0.5, 0.3, 0.2], [0.8, 0.1, 0.1], [0.05, 0.1, 0.85]])
    b = top_label_bins([0, 1, 2], P, n_bins=5)
    assert b["count"].tolist() == [0, 0, 1, 1, 1]
    assert b.loc[2:, "mean_p"].tolist() == pytest.approx([0.5, 0.8, 0.85])
    assert b.loc[2:, "frac_pos"].tolist() == [1.0, 0.0, 1.0]


def test_top_label_curve_by_hand():
    # most confident first: 0.9 right, 0.8 wrong, 0.7 right → risks 0, 1/2, 1/3 at coverages 1/3, 2/3, 1
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.9, 0.0], [0.8, 0.1, 0.1]])
    c = top_label_curve([0, 1, 1], P)
    assert len(c) == 100
    first = c.drop_duplicates("coverage")
    assert first["coverage"].tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert first["risk"].tolist() == pytest.approx([0.0, 0.5, 1 / 3])


def test_reliability_bins_pool_the_records_of_every_refit(result):
    """The bins hold the records of both refits: on the target domain (the same records each refit) 2 × n_target."""
    rel = result.extras["reliability"]
    assert set(rel["mapping"]) == {"raw", "temperature", "vector"} and set(rel["domain"]) == {"id", "ood"}
    assert set(rel["refits"]) == {2}
    for mp, b in rel[rel["domain"] == "ood"].groupby("mapping"):
        assert b["count"].sum() == 2 * result.manifest["n_target"]
    nz = rel[rel["count"] > 0]
    assert (nz["frac_pos_low"] <= nz["frac_pos"] + 1e-12).all() and (nz["frac_pos"] <= nz["frac_pos_high"] + 1e-12).all()


def test_reliability_bins_of_one_refit_reproduce_its_top_label_ece():
    """Σ count · |mean_p − frac_pos| / n of the stored bins equals the metric ece_top the run reports (one refit)."""
    one = run_multiclass_transport(_frame(n=1600), config=_config(n_refits=1, n_bootstrap=10))
    rel, t = one.extras["reliability"], one.table
    for (dom, mp), b in rel.groupby(["domain", "mapping"]):
        nz = b[b["count"] > 0]
        from_bins = float((nz["count"] * (nz["mean_p"] - nz["frac_pos"]).abs()).sum() / nz["count"].sum())
        row = t[(t.analysis == "metrics") & (t.metric == "ece_top") & (t.domain == dom) & (t.mapping == mp)
                & (t.refit == 0) & (t.weighting == "unweighted")]
        assert from_bins == pytest.approx(float(row["value"].iloc[0]), abs=1e-12)


def test_curves_end_at_the_mean_top_label_error_rate(result):
    """At full coverage the selective risk is the arg-max error rate: the mean over refits of 1 − accuracy."""
    c, t = result.extras["curves"], result.table
    for (dom, mp), g in c.groupby(["domain", "mapping"]):
        acc = t[(t.analysis == "metrics") & (t.metric == "accuracy") & (t.domain == dom) & (t.mapping == mp)
                & (t.refit >= 0) & (t.weighting == "unweighted")]["value"]
        assert len(acc) == 2
        assert g["coverage"].iloc[-1] == 1.0 and g["risk"].iloc[-1] == pytest.approx(1 - acc.mean(), abs=1e-12)


def test_figure_tables_are_deterministic(result):
    again = run_multiclass_transport(_frame(n=1600), config=_config(n_refits=2, n_bootstrap=20))
    for k in ("reliability", "curves"):
        pd.testing.assert_frame_equal(result.extras[k], again.extras[k])


def test_ece_top_toy_matches_bins():  # the identity the run test relies on, on the hand toy
    P = np.array([[0.5, 0.3, 0.2], [0.8, 0.1, 0.1], [0.05, 0.1, 0.85]])
    assert ece_top([0, 1, 2], P, n_bins=5) == pytest.approx((0.5 + 0.8 + 0.15) / 3)


# ------------------------------------------------------------ figures
def test_class_conformal_figure_names_classes_and_draws_the_target_line(result):
    fig = tmf.mc_class_conformal_figure(result.table, model="logistic_regression", mapping="temperature", alpha=0.1,
                                        class_names=result.classes)
    bars = [tr for tr in fig.data if isinstance(tr, go.Bar)]
    assert len(bars) == 3 * 2 * 2  # scores × domains × (coverage, set size)
    assert all(tuple(b.x) == CLASSES for b in bars)
    titles = {a.text for a in fig.layout.annotations}
    assert {"LAC", "APS", "RAPS"} <= titles and "1 − α = 0.9" in titles
    assert titles == {"LAC", "APS", "RAPS", "1 − α = 0.9"}  # the other panels' lines had plotly's "new text" label
    lines = [s for s in fig.layout.shapes if s.y0 == s.y1]
    assert len(lines) == 3 and all(s.y0 == pytest.approx(0.9) for s in lines)
    # the first bar (LAC, ID, coverage) is the mean over refits of the per-class rows
    t = result.table
    want = [t[(t.analysis == "conformal_marginal") & (t.metric == f"lac:coverage_class{c}") & (t.domain == "id")
              & (t.mapping == "temperature") & np.isclose(t.alpha, 0.1)]["value"].mean() for c in range(4)]
    assert list(bars[0].y) == pytest.approx(want)


def test_class_conformal_figure_label_conditional(result):
    fig = tmf.mc_class_conformal_figure(result.table, model="logistic_regression", mapping="raw", alpha=0.2,
                                        class_names=result.classes, method="label_conditional")
    assert "label-conditional" in fig.layout.title.text and "α = 0.2" in fig.layout.title.text
    assert all(np.isfinite(b.y).all() for b in fig.data if isinstance(b, go.Bar))


def test_reliability_and_risk_figures(result):
    kw = dict(model="logistic_regression", mapping="vector")
    rel = tmf.mc_reliability_figure(result.extras["reliability"], **kw)
    assert rel.layout.title.text.startswith("Top-label reliability")
    names = [tr.name for tr in rel.data]
    assert any(n and n.startswith("ID test") for n in names) and any(n and n.startswith("OOD") for n in names)
    assert any("bootstrap band" in (n or "") for n in names)
    risk = tmf.mc_risk_selection_figure(result.extras["curves"], result.table, selection_rate=0.8, **kw)
    assert risk.layout.title.text.startswith("Max-probability selective risk")
    marks = [tr for tr in risk.data if tr.mode == "markers"]
    assert len(marks) == 2  # the transported τ on ID and OOD


def test_report_figures_of_a_saved_multiclass_run(record):
    figs = tmf.transport_any_report_figures(record)
    assert [t for t, _ in figs] == ["Top-label reliability diagram", "Max-probability selective risk",
                                    "Per-class conformal sets"]
    conf = figs[-1][1]
    assert tuple(next(tr for tr in conf.data if isinstance(tr, go.Bar)).x) == CLASSES


# ------------------------------------------------------------ release gate
def test_gate_grounds_of_a_multiclass_run(record):
    g = extract_gate_grounds([record])
    rep = g.report.set_index("ground")
    for name in ("ood_ece", "worst_subgroup_coverage_90"):
        assert g.values[name] is None and rep.loc[name, "status"] == "absent → UNKNOWN"
        assert "multi-class" in rep.loc[name, "detail"]
    # worst-class coverage at α = 0.1: LAC (the binary score), on the headline slice (temperature scaling, Platt's
    # multi-class counterpart, by the rule), OOD, min over classes per refit
    assert record.manifest["headline"]["mapping"] == "temperature"
    t = record.tables["results"]
    per = t[(t.analysis == "conformal_marginal") & t.metric.str.fullmatch(r"lac:coverage_class\d") & (t.domain == "ood")
            & (t.mapping == "temperature") & np.isclose(t.alpha, 0.1) & (t.weighting == "unweighted")]
    want = per.groupby("refit")["value"].min().mean()
    assert g.values["worst_class_coverage_90"] == pytest.approx(want, abs=1e-12)
    assert "lac:worst_class_coverage" in rep.loc["worst_class_coverage_90", "detail"]
    v = record.tables["verdicts"]
    raw = v[(v.model == "logistic_regression") & (v.mapping == "temperature") & (v.weighting == "unweighted")]
    assert g.values["n_transport_sensitive"] == float((raw.verdict == "transport-sensitive").sum())
