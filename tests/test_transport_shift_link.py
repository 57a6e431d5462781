"""The feature-shift ranking linked to a Transport run's degradation and heterogeneity results.

``link_shift`` on a hand-built long-form table (every expected number
written out), then a whole run on the loan sample: the tables are in the
result, the registry run and the CLI runner's output.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.samples import load_sample
from audit_core.runs.registry import RunRegistry
from audit_core.transport import TransportConfig, run_transport
from audit_core.transport.shift_link import LINK_COLUMNS, SHIFT_COLUMNS, link_shift


def _row(**kw):
    base = dict(analysis="metrics", condition="clean", domain="id", model="lr", mapping="platt", refit=-1,
                metric="auroc", value=np.nan, weighting="unweighted")
    base.update(kw)
    return base


def _results():
    rows = [_row(analysis="fitted", metric="targeted_features", condition="targeted:a,b", domain="source", refit=0),
            _row(analysis="fitted", metric="targeted_features", condition="targeted:a,c", domain="source", refit=1),
            _row(analysis="degradation_percentile:metrics", condition="targeted_vs_random", domain="ood", value=95.0),
            _row(analysis="degradation_percentile:metrics", condition="targeted_vs_random", domain="id", value=10.0),
            _row(analysis="degradation_percentile:metrics", condition="targeted_vs_random", domain="ood", value=5.0,
                 model="other")]
    # subgroup g: level x changes by 0.80 - 0.90 = -0.10 (refit 0) and 0.84 - 0.90 = -0.06 (refit 1): mean -0.08;
    # level y changes by 0.91 - 0.90 = +0.01 in both refits -> spread 0.01 - (-0.08) = 0.09 > 0.02
    for refit, ood_x in ((0, 0.80), (1, 0.84)):
        rows += [_row(analysis="heterogeneity", condition="g=x", domain="id", refit=refit, value=0.90),
                 _row(analysis="heterogeneity", condition="g=x", domain="ood", refit=refit, value=ood_x),
                 _row(analysis="heterogeneity", condition="g=y", domain="id", refit=refit, value=0.90),
                 _row(analysis="heterogeneity", condition="g=y", domain="ood", refit=refit, value=0.91)]
    return pd.DataFrame(rows)


def _shift(features):
    t = pd.DataFrame({c: np.nan for c in SHIFT_COLUMNS}, index=range(len(features)))
    t["feature"], t["rank"] = features, np.arange(1, len(features) + 1)
    return t


def test_link_by_hand():
    out = link_shift(_shift(["a", "b", "g", "d"]), _results(), model="lr", mapping="platt", subgroup_columns=["g"],
                     auroc_tolerance=0.02).set_index("feature")
    assert tuple(out.columns[-len(LINK_COLUMNS):]) == LINK_COLUMNS
    # a is targeted in both refits, b in one of two; the OOD harm of model lr is 95 % (not model other's 5 %)
    assert out["targeted_share"].tolist() == [1.0, 0.5, 0.0, 0.0]
    assert out.loc["a", "targeted_harm_ood"] == 95.0 and out.loc["b", "targeted_harm_ood"] == 95.0
    assert np.isnan(out.loc["g", "targeted_harm_ood"])
    assert out["targeted_flagged"].tolist() == [True, True, False, False]
    assert out.loc["g", "subgroup_auroc_spread"] == pytest.approx(0.09)
    assert out["heterogeneity_flagged"].tolist() == [False, False, True, False]
    assert "more harmful than 95% of random deletions" in out.loc["a", "link"]
    assert "differ by 0.090 (tolerance 0.02)" in out.loc["g", "link"]
    assert out.loc["d", "link"] == "not among the targeted features nor a subgroup column"


def test_harm_below_the_flag_is_not_flagged():
    res = _results()
    res.loc[(res["domain"] == "ood") & (res["model"] == "lr") & res["analysis"].str.startswith("degradation"),
            "value"] = 89.9
    out = link_shift(_shift(["a"]), res, model="lr", mapping="platt")
    assert out["targeted_flagged"].tolist() == [False]


@pytest.fixture(scope="module")
def loan():
    frame, info = load_sample("loan_synthetic")
    cfg = DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year", source_domain=2019,
                        target_domain=2023, group_column="branch_id", key_column="application_id",
                        strata_columns=("region",), roles={c: "ignore" for c in info.exclude_columns})
    return build_dataset(frame, cfg)


def test_run_holds_the_linked_shift_tables(loan, tmp_path):
    cfg = TransportConfig.from_dataset(loan, n_refits=2, n_bootstrap=20, n_random_sets=3, stress_max_rows=1000,
                                       models=("logistic_regression",), subgroup_columns=("region",))
    res = run_transport(loan.frame, config=cfg)
    shift = res.extras["feature_shift"]
    assert len(shift) == len(cfg.numeric) + len(cfg.categorical)
    assert shift["rank"].tolist() == list(range(1, len(shift) + 1))
    assert shift["psi"].is_monotonic_decreasing
    # the loan sample's 2023 applications carry a higher interest rate: the largest shift
    assert shift["feature"].iloc[0] == "interest_rate"
    targeted = {f for c in res.table.loc[res.table["metric"] == "targeted_features", "condition"]
                for f in c.split(":", 1)[1].split(",")}
    assert set(shift.loc[shift["targeted_share"] > 0, "feature"]) == targeted
    assert np.isfinite(shift.set_index("feature").loc["region", "subgroup_auroc_spread"])
    dc = res.extras["domain_classifier"]
    # 3 folds: the run's domain classifier is sized by benchmarks/feature_shift_sizing.py (was 5 folds)
    assert dc["part"].tolist() == ["pooled"] + [f"fold {k}" for k in range(3)] and 0.5 < dc["auroc"].iloc[0] <= 1
    assert res.manifest["feature_shift"]["n_folds"] == 3 and res.manifest["feature_shift"]["n_trees"] == 30
    assert res.manifest["feature_shift"]["stat_max_rows"] == cfg.shift_max_rows
    run_id = res.save_to_registry(RunRegistry(tmp_path / "reg.sqlite"), dataset_name="loan")
    stored = RunRegistry(tmp_path / "reg.sqlite").load(run_id)
    assert {"feature_shift", "domain_classifier"} <= set(stored.tables)
    pd.testing.assert_frame_equal(stored.tables["feature_shift"].reset_index(drop=True), shift, check_dtype=False)
