"""Missing categorical values under every stress.

UCI adult has ``?`` (read as missing) in workclass, occupation and
native-country. The degradation stress crashed on it with ``TypeError: '<'
not supported between instances of 'str' and 'float'`` from ``np.unique`` over
a categorical column holding NaN (pandas keeps NaN through ``astype(str)``).
Each test below names the old failure it guards against.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit_core.transport.splits import four_way_split
from audit_core.transport.stress import corrupt, mutual_information_ranking, oracle_replace

from real_data import adult_dataset


def _toy(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    k = rng.choice(["x", "y", "z"], n).astype(object)
    k[rng.random(n) < 0.15] = np.nan
    return pd.DataFrame({
        "num": rng.normal(size=n),
        "obj": pd.Series(k, dtype=object),  # object column with float NaN
        "txt": pd.Series(k, dtype="string"),  # pandas string dtype with missing values
        "cat": pd.Categorical(k),  # categorical dtype
        "code": pd.Series(np.where(rng.random(n) < 0.1, np.nan, rng.integers(1, 5, n))),  # integer codes read as float
    })


CATS = ["obj", "txt", "cat", "code"]


def _values(s: pd.Series) -> np.ndarray:
    """Values as objects, every missing marker (NaN, pd.NA) as None."""
    return s.astype(object).where(s.notna(), None).to_numpy()


def test_corruption_keeps_missing_missing_and_draws_other_train_categories():
    # before the fix: TypeError from np.unique over text mixed with NaN (obj, txt)
    X = _toy()
    out = corrupt(X, X, ["num"], CATS, rate=0.2, sd=0.2, rng=np.random.default_rng(1))
    for f in CATS:
        missing = X[f].isna().to_numpy()
        assert (out[f].isna().to_numpy() == missing).all(), f  # missing stays missing, nothing new goes missing
        changed = ~missing & (_values(out[f]) != _values(X[f]))
        assert 0.15 < changed[~missing].mean() < 0.25, f  # 20 % of the observed values change ...
        assert set(_values(out[f])[changed]) <= set(_values(X[f].dropna())), f  # ... to train categories


def test_corruption_keeps_the_column_type():
    # before the fix: integer codes came back as the strings "1".."4", which an imported model's
    # own pipeline (fitted on numbers) would not recognise
    X = _toy().dropna(subset=["code"]).astype({"code": "int64"}).reset_index(drop=True)
    out = corrupt(X, X, [], ["code", "txt", "cat"], rate=0.3, sd=0.2, rng=np.random.default_rng(2))
    assert out["code"].dtype == np.int64 and (out["code"] != X["code"]).any()
    assert out["txt"].dtype == X["txt"].dtype and out["cat"].dtype == X["cat"].dtype


def test_mutual_information_counts_missing_as_a_level():
    rng = np.random.default_rng(3)
    n = 2000
    y = rng.integers(0, 2, n)
    informative = pd.Series(np.where(y == 1, None, "seen"), dtype="string")  # only missingness carries y
    X = pd.DataFrame({"noise": rng.normal(size=n), "level": pd.Series(rng.choice(["a", "b"], n), dtype="string"),
                      "miss": informative})
    ranking = mutual_information_ranking(X, y, ["noise"], ["level", "miss"], max_rows=5000, seed=0)
    assert ranking[0] == "miss"


def test_oracle_copies_donor_values_with_their_type_and_missingness():
    X = _toy(400, seed=4)
    y = np.random.default_rng(5).integers(0, 2, 400)
    train = _toy(400, seed=6)
    ytr = np.r_[np.zeros(200, int), np.ones(200, int)]
    out = oracle_replace(X, y, train, ytr, ["txt", "code"], rate=1.0, rng=np.random.default_rng(7))
    assert out["txt"].dtype == X["txt"].dtype
    donors_txt = set(train["txt"].dropna())
    assert set(out["txt"].dropna()) <= donors_txt
    assert out["txt"].isna().any() and out["code"].isna().any()  # donors' missing values arrive missing


def test_split_puts_records_without_a_group_in_groups_of_their_own():
    # before the fix: a missing group value factorized to -1 and np.bincount refused it (ValueError)
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 1000)
    g = rng.integers(0, 100, 1000).astype(object)
    g[:200] = np.nan
    p = four_way_split(y, groups=g, seed=1)
    grouped = pd.Series(p[200:]).groupby(g[200:].astype(int)).nunique()
    assert grouped.max() == 1
    assert len(set(p[:200])) == 4  # the 200 ungrouped records are dealt like single-record groups


@pytest.fixture(scope="module")
def adult():
    return adult_dataset()


def test_adult_sex_male_to_female_with_default_stresses_completes(adult):
    """adult.data read as shipped; the default stresses ran into the TypeError after the fit."""
    from audit_core.transport import TransportConfig, run_transport

    assert adult.frame[["workclass", "occupation", "native-country"]].isna().any().all()
    cfg = TransportConfig.from_dataset(adult, n_refits=1, n_bootstrap=20, n_random_sets=3, stress_max_rows=3000)
    assert cfg.stresses == TransportConfig.__dataclass_fields__["stresses"].default
    res = run_transport(adult.frame, config=cfg)
    t = res.table
    conds = set(t.loc[t["domain"] == "ood", "condition"])
    assert {"mcar", "targeted", "corruption", "oracle", "random_set:0"} <= conds
    auc = t[(t["analysis"] == "metrics") & (t["metric"] == "auroc") & (t["mapping"] == "raw")]
    clean = auc[auc["condition"] == "clean"].set_index("domain")["value"]
    assert 0.8 < clean["id"] < 1 and 0.8 < clean["ood"] < 1
    assert (auc[auc["condition"] == "corruption"]["value"] < clean.reindex(["id", "ood"]).max()).all()
    # Brier improves from men to women (fewer high incomes); that is "better", not an alarm
    v = res.verdicts
    brier = v[(v["metric"] == "brier_score") & (v["mapping"] == "raw") & (v["weighting"] == "unweighted")].iloc[0]
    assert brier["delta"] < -0.03 and brier["verdict"] == "transport-sensitive" and brier["direction"] == "better"
    from components.widgets.transport import _DIRECTION_COLOURS, verdict_table

    styler = verdict_table(v, model="logistic_regression", mapping="raw")
    styler._compute()
    shown = styler.data.reset_index(drop=True)
    row = int(shown.index[shown["metric"] == "brier_score"][0])
    col = list(shown.columns).index("verdict")
    assert styler.ctx[(row, col)] == [("background-color", _DIRECTION_COLOURS["better"])]
    assert _DIRECTION_COLOURS["better"] != _DIRECTION_COLOURS["worse"]
