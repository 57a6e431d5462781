"""Bring your own scores: Transport on a table of predictions (issue 24 item 4).

The acceptance test runs the project's own Transport with LightGBM on adult, exports the per-record
probabilities the project computed, and runs the scores mode on a table holding them: every stage that needs
no model must give the same tables, row for row. The other tests check known answers on synthetic scores and
the refusals of bad score columns, each naming the column and the row.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.findings.transport import transport_findings
from audit_core.models.scores import scored_model
from audit_core.transport import NEEDS_A_MODEL, TransportAudit, TransportConfig, run_transport_on_scores
from audit_core.transport.splits import PARTITIONS

from real_data import adult_dataset

BINARY = ({"kind": "class", "name": "y", "column": "y", "positive": 1},)


def _synthetic(n: int = 1200, seed: int = 3) -> pd.DataFrame:
    """Calibrated scores ``p`` (labels drawn from them), a domain and one feature that shifts with it."""
    rng = np.random.default_rng(seed)
    site = np.where(np.arange(n) < n // 2, "a", "b")
    p = rng.beta(2, 2, n) * np.where(site == "b", 0.8, 1.0)
    return pd.DataFrame({"p": p, "y": (rng.uniform(size=n) < p).astype(int), "site": site,
                         "x": rng.normal(size=n) + (site == "b"), "key": [f"r{i}" for i in range(n)]})


def _config(**kw) -> TransportConfig:
    base = dict(targets=BINARY, score_columns=("p",), numeric=("x",), domain_column="site", source_value="a", target_value="b",
                n_refits=2, n_bootstrap=30, mappings=("raw", "platt"), key_column="key")
    base.update(kw)
    return TransportConfig(**base)


def _strip_model(t: pd.DataFrame) -> pd.DataFrame:
    return t.drop(columns=[c for c in ("model",) if c in t.columns]).reset_index(drop=True)


def test_adult_lightgbm_scores_equal_the_project_run_row_for_row():
    """The scores mode reproduces, exactly, every no-refit stage of the project's own LightGBM run on adult.

    Why the comparison is exact: the project's run has **one refit** (``n_refits=1``), so each record has one
    probability: the refit's LightGBM, trained on the train partition, scores every record. With several refits
    a record would get a different probability from each refit's model, which no single score column can hold.
    The scores run declares the same targets, domains, seed and fractions, so its split (a function of the labels,
    strata and seed only) puts every record in the same partition; its model returns the exported probability
    of each record, bit for bit the one the project computed (checked below on the held-out partitions); so the
    mappings, thresholds, conformal quantiles, metrics, bootstrap replicates (same seed, same ``p̂`` and labels)
    and verdicts are computed from identical inputs. The train partition's scores are in-sample and fit nothing.
    Stresses are off in both runs (the scores run cannot run them).
    """
    ds = adult_dataset()
    frame = ds.frame.sample(n=4000, random_state=11).reset_index(drop=True)
    common = dict(n_refits=1, n_bootstrap=60, stresses=(), seed=5)
    project = TransportAudit(TransportConfig.from_dataset(ds, models=("lightgbm",), **common))
    res_model = project.run(frame)

    fm = project.state.pipes[(0, "lightgbm")]["model"]
    scores = frame.assign(p_high=fm.predict_proba(frame)[:, 1])  # the per-record probabilities, exported
    src = scores[scores["sex"] == "Male"].reset_index(drop=True)
    raw = project.state.pipes[(0, "lightgbm")]["raw"]
    codes = np.asarray(res_model.manifest["partitions"]["codes"][0])
    for part in ("calibration", "selection", "id_test"):  # the premise: the export is what the run used
        np.testing.assert_array_equal(src["p_high"].to_numpy()[codes == PARTITIONS.index(part)], raw[part])
    np.testing.assert_array_equal(scores.loc[scores["sex"] == "Female", "p_high"].to_numpy(), raw["ood"])

    res_scores = run_transport_on_scores(scores, config=TransportConfig.from_dataset(
        ds, score_columns=("p_high",), **common))

    assert res_scores.manifest["partitions"] == res_model.manifest["partitions"]
    table_m, table_s = _strip_model(res_model.table), _strip_model(res_scores.table)
    assert set(table_m["analysis"]) >= {"fitted", "metrics", "selective", "conformal_marginal",
                                        "conformal_label_conditional", "heterogeneity"}
    assert table_m["analysis"].str.startswith("change:").any()
    pd.testing.assert_frame_equal(table_s, table_m, check_exact=True)
    pd.testing.assert_frame_equal(_strip_model(res_scores.verdicts), _strip_model(res_model.verdicts),
                                  check_exact=True)
    assert len(res_model.verdicts) > 0
    for name in ("reliability", "curves", "feature_shift"):
        pd.testing.assert_frame_equal(_strip_model(res_scores.extras[name]), _strip_model(res_model.extras[name]),
                                      check_exact=True)
    assert set(res_scores.table["model"]) == {"scores from column 'p_high'"}
    assert res_scores.manifest["model"]["score_columns"] == ["p_high"]


def test_raw_mapping_metrics_are_the_scores_own_on_each_partition():
    """Known answer: with the raw mapping, the ID-test Brier score of each refit is mean((p − y)²) over that refit's
    ID-test records (read from the manifest's partitions), and the OOD one over the target records; the refits
    re-partition the records, so their calibration-fitted Platt slopes differ while the scores stay the same."""
    t = _synthetic()
    res = run_transport_on_scores(t, config=_config(n_refits=3))
    src, tgt = t[t.site == "a"].reset_index(drop=True), t[t.site == "b"]
    rows = res.table[(res.table.analysis == "metrics") & (res.table.metric == "brier_score")
                     & (res.table.mapping == "raw") & (res.table.condition == "clean")]
    for r in range(3):
        ids = np.asarray(res.manifest["partitions"]["codes"][r]) == PARTITIONS.index("id_test")
        want = float(np.mean((src.p[ids] - src.y[ids]) ** 2))
        got = rows[(rows.refit == r) & (rows.domain == "id")].value.to_numpy()
        assert got == pytest.approx([want], rel=1e-12)
        ood = rows[(rows.refit == r) & (rows.domain == "ood")].value.to_numpy()
        assert ood == pytest.approx([float(np.mean((tgt.p - tgt.y) ** 2))], rel=1e-12)
    slopes = res.table[(res.table.analysis == "fitted") & (res.table.mapping == "platt")
                       & (res.table.metric == "mapping_b")]
    assert len(slopes) == 3 and slopes.value.nunique() == 3
    codes = np.asarray(res.manifest["partitions"]["codes"])
    assert not (codes[0] == codes[1]).all()


def test_not_run_stages_are_listed_in_words_and_findings_say_the_scores_were_used():
    res = run_transport_on_scores(_synthetic(), config=_config())
    m = res.manifest
    assert m["model"]["kind"] == "scores" and m["model"]["refit"] is False
    assert m["not_run"] == [f"{s}: not run: needs a model" for s in NEEDS_A_MODEL]
    assert not res.table["analysis"].str.startswith(("degradation", "target_")).any()
    assert "feature_shift" in res.extras  # the declared raw feature column x is present
    texts = [f.text for f in transport_findings(res)]
    used = [t for t in texts if t.startswith("This run used your scores from column 'p', not a model.")]
    assert len(used) == 1
    assert "'p'" in used[0] and "target-definition stress" in used[0].lower() and "not run: needs a model" in used[0]


def test_two_binary_columns_give_the_same_run_as_the_positive_column():
    t = _synthetic().assign(q=lambda d: 1 - d.p)
    one = run_transport_on_scores(t, config=_config())
    two = run_transport_on_scores(t, config=_config(score_columns=("q", "p")))
    pd.testing.assert_frame_equal(_strip_model(one.table), _strip_model(two.table), check_exact=False, rtol=1e-12)


def test_multiclass_scores_run_with_one_column_per_class():
    """Known answer: the raw mapping's ID-test accuracy is the share of ID-test records whose largest score is
    their class (classes in sorted order: the columns are given in that order)."""
    rng = np.random.default_rng(7)
    n = 1500
    P = rng.dirichlet([2, 2, 2], n)
    y = np.array([rng.choice(3, p=row) for row in P])
    names = np.array(["lo", "mid", "up"])  # sorted
    t = pd.DataFrame({"p_lo": P[:, 0], "p_mid": P[:, 1], "p_up": P[:, 2], "grade": names[y],
                      "site": np.where(np.arange(n) % 3 == 0, "b", "a")})
    cfg = TransportConfig(targets=({"kind": "class", "name": "grade", "column": "grade"},),
                          score_columns=("p_lo", "p_mid", "p_up"), domain_column="site", source_value="a",
                          target_value="b", n_refits=1, n_bootstrap=20, mappings=("raw",), stresses=())
    res = run_transport_on_scores(t, config=cfg)
    src = t[t.site == "a"].reset_index(drop=True)
    ids = np.asarray(res.manifest["partitions"]["codes"][0]) == PARTITIONS.index("id_test")
    want = float(np.mean(np.argmax(src[["p_lo", "p_mid", "p_up"]].to_numpy()[ids], axis=1)
                         == np.searchsorted(names, src.grade.to_numpy()[ids])))
    got = res.table[(res.table.metric == "accuracy") & (res.table.domain == "id")
                    & (res.table.weighting == "unweighted")].value
    assert got.tolist() == pytest.approx([want])
    assert any("not run: needs a model" in s for s in res.manifest["not_run"])
    bad = TransportConfig(targets=cfg.targets, score_columns=("p_lo", "p_up"), domain_column="site",
                          source_value="a", target_value="b", n_refits=1, n_bootstrap=20, mappings=("raw",))
    with pytest.raises(AuditInputError) as e:
        run_transport_on_scores(t, config=bad)
    assert e.value.code == "SCORES_COUNT" and "3 classes" in e.value.message and "'mid'" in e.value.message


@pytest.mark.parametrize("change, code, words", [
    (lambda t: t.assign(p=t.p.where(t.index != 5, 1.2)), "SCORES_OUT_OF_RANGE", ["'p'", "1.2", "row 5"]),
    (lambda t: t.assign(p=t.p.astype(object).where(t.index != 7, "high")), "SCORES_NOT_A_NUMBER",
     ["'p'", "'high'", "row 7"]),
    (lambda t: t.assign(p=t.p.where(t.index != 9)), "SCORES_MISSING_VALUE", ["'p'", "row 9"]),
    (lambda t: t.drop(columns="p"), "TRANSPORT_UNKNOWN_COLUMN", ["score column 'p'", "source"]),
])
def test_bad_score_columns_are_refused_naming_the_column_and_row(change, code, words):
    with pytest.raises(AuditInputError) as e:
        run_transport_on_scores(change(_synthetic()), config=_config())
    assert e.value.code == code
    for w in words:
        assert w in e.value.message


def test_rows_not_summing_to_one_and_a_given_model_are_refused():
    t = _synthetic().assign(q=lambda d: 1 - d.p)
    t.loc[t.index[-1], "q"] = 0.5  # a target record
    with pytest.raises(AuditInputError) as e:
        run_transport_on_scores(t, config=_config(score_columns=("q", "p")))
    assert e.value.code == "SCORES_NOT_SUMMING"
    assert "'q', 'p'" in e.value.message and f"row {t.index[-1]}" in e.value.message and "target" in e.value.message
    with pytest.raises(AuditInputError) as e:
        TransportAudit(_config(), model=scored_model(["p"]))
    assert "pass no model" in e.value.message
    with pytest.raises(AuditInputError) as e:
        _config(score_columns=("p", "p"))
    assert e.value.code == "SCORES_BAD_COLUMNS"


def test_fragility_refuses_a_scored_model_in_words():
    from types import SimpleNamespace

    from audit_core.fragility.audit import run_fragility_audit

    with pytest.raises(AuditInputError) as e:
        run_fragility_audit(SimpleNamespace(model=scored_model(["p"])))
    assert e.value.code == "SCORES_NEED_A_MODEL"
    assert e.value.message.startswith("Fragility needs a model") and "'p'" in e.value.message


def test_a_hostile_score_column_name_is_kept_as_text():
    name = "p <b>*yes*</b> [x](javascript:1)\n"
    t = _synthetic().rename(columns={"p": name})
    res = run_transport_on_scores(t, config=_config(score_columns=(name,)))
    assert set(res.table["model"]) == {f"scores from column {name!r}"}
    assert res.manifest["model"]["score_columns"] == [name]
    bad = t.assign(**{name: t[name].where(t.index != 2, -0.5)})
    with pytest.raises(AuditInputError) as e:
        run_transport_on_scores(bad, config=_config(score_columns=(name,)))
    assert "\n" not in e.value.message and "holds -0.5 in row 2" in e.value.message


def test_multiclass_scores_with_a_class_absent_from_the_target_keep_the_source_classes():
    rng = np.random.default_rng(8)
    n = 1200
    P = rng.dirichlet([2, 2, 2], n)
    y = np.array([rng.choice(3, p=row) for row in P])
    site = np.where(np.arange(n) % 3 == 0, "b", "a")
    keep = ~((site == "b") & (y == 2))  # the target holds classes 0 and 1 only
    t = pd.DataFrame({"p0": P[:, 0], "p1": P[:, 1], "p2": P[:, 2], "grade": np.array(["a", "b", "c"])[y],
                      "site": site})[keep].reset_index(drop=True)
    cfg = TransportConfig(targets=({"kind": "class", "name": "grade", "column": "grade"},),
                          score_columns=("p0", "p1", "p2"), domain_column="site", source_value="a",
                          target_value="b", n_refits=1, n_bootstrap=10, mappings=("raw",), stresses=())
    res = run_transport_on_scores(t, config=cfg)
    assert res.classes == ("a", "b", "c")
    assert set(res.table.loc[res.table.domain == "ood", "metric"]) >= {"accuracy"}
