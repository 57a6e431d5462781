"""Tests for audit_core.data.samples: the loan generator, the catalogue, the files."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from audit_core.data import samples as S
from audit_core.data.samples import (
    LOAN_COLUMNS,
    SAMPLES,
    SampleInfo,
    load_breast_cancer_sample,
    load_sample,
    make_loan_sample,
    write_samples,
)

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "sample_data" / "loan_synthetic.csv"
LOAN = SAMPLES["loan_synthetic"]
NO_SHIFT = dict(covariate_shift=0.0, prevalence_shift=0.0, concept_shift=0.0)


@pytest.fixture(scope="module")
def loan() -> pd.DataFrame:
    return make_loan_sample(seed=3)


def _split(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return df[df["year"] == LOAN.source_domain], df[df["year"] == LOAN.target_domain]


def _default_rate(df: pd.DataFrame) -> float:
    return float((df["defaulted"] == "yes").mean())


def _features(df: pd.DataFrame) -> pd.DataFrame:
    X = df.drop(columns=list(LOAN.exclude_columns))
    for col, codes in LOAN.missing_codes.items():
        X[col] = X[col].where(~X[col].isin(codes))
    return X


def _source_model_on_target(df: pd.DataFrame) -> dict[str, float]:
    """Fit a logistic regression on the source year, score the target year."""
    src, tgt = _split(df)
    Xs, Xt = _features(src), _features(tgt)
    ys = (src["defaulted"] == "yes").to_numpy()
    yt = (tgt["defaulted"] == "yes").to_numpy()
    cat = [c for c in Xs.columns if not pd.api.types.is_numeric_dtype(Xs[c])]
    num = [c for c in Xs.columns if c not in cat]
    pre = ColumnTransformer(
        [
            ("num", make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()), num),
            ("cat", OneHotEncoder(handle_unknown="ignore"), cat),
        ]
    )
    model = make_pipeline(pre, LogisticRegression(max_iter=2000))
    train = np.arange(len(Xs)) % 2 == 0
    model.fit(Xs[train], ys[train])
    p_src = model.predict_proba(Xs[~train])[:, 1]
    p_tgt = model.predict_proba(Xt)[:, 1]
    return {
        "auc_source": roc_auc_score(ys[~train], p_src),
        "auc_target": roc_auc_score(yt, p_tgt),
        "logloss_source": log_loss(ys[~train], p_src),
        "logloss_target": log_loss(yt, p_tgt),
        "calib_gap_target": abs(float(p_tgt.mean()) - float(yt.mean())),
    }


# ---------------------------------------------------------------------------
# Determinism and files
# ---------------------------------------------------------------------------


def test_same_seed_same_frame():
    a = make_loan_sample(n_source=500, n_target=400, seed=11)
    b = make_loan_sample(n_source=500, n_target=400, seed=11)
    pd.testing.assert_frame_equal(a, b)


def test_different_seed_different_frame():
    a = make_loan_sample(n_source=500, n_target=400, seed=11)
    b = make_loan_sample(n_source=500, n_target=400, seed=12)
    assert list(a.columns) == list(b.columns)
    assert not a["annual_income"].equals(b["annual_income"])
    assert not a["defaulted"].equals(b["defaulted"])


def test_regenerated_csv_is_byte_identical_to_shipped(tmp_path):
    assert SHIPPED.is_file(), "run `python -m audit_core.data.samples` to create the file"
    written = write_samples(tmp_path)
    assert written == [tmp_path / "loan_synthetic.csv"]
    assert written[0].read_bytes() == SHIPPED.read_bytes()
    # and twice in a row
    again = write_samples(tmp_path)
    assert again[0].read_bytes() == SHIPPED.read_bytes()


def test_shipped_file_is_small():
    assert SHIPPED.stat().st_size < 1_500_000


def test_load_sample_reads_file_equal_to_generator():
    frame, info = load_sample("loan_synthetic")
    assert info is LOAN
    assert info.path == SHIPPED
    expected = make_loan_sample(
        n_source=S.LOAN_N_SOURCE, n_target=S.LOAN_N_TARGET, seed=S.LOAN_SEED
    )
    pd.testing.assert_frame_equal(frame, expected)


def test_load_sample_generates_missing_file(tmp_path, monkeypatch):
    path = tmp_path / "sub" / "loan_synthetic.csv"
    monkeypatch.setitem(SAMPLES, "loan_synthetic", dataclasses.replace(LOAN, path=path))
    frame, info = load_sample("loan_synthetic")
    assert path.is_file()
    assert path.read_bytes() == SHIPPED.read_bytes()
    assert path.stat().st_mode & 0o044 == 0o044  # readable by others, not mkstemp's 0600
    assert info.path == path
    assert len(frame) == S.LOAN_N_SOURCE + S.LOAN_N_TARGET


def test_module_main_regenerates(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "audit_core.data.samples", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "loan_synthetic.csv").read_bytes() == SHIPPED.read_bytes()


def test_module_is_pure():
    code = (
        "import sys, audit_core.data.samples as s; s.make_loan_sample(n_source=5, n_target=5); "
        "s.load_breast_cancer_sample(); "
        "bad = [m for m in ('streamlit', 'plotly') if m in sys.modules]; "
        "assert not bad, bad"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------
# Structure of the loan sample
# ---------------------------------------------------------------------------


def test_columns_and_keys(loan):
    assert tuple(loan.columns) == LOAN_COLUMNS
    assert 20 <= len(LOAN_COLUMNS) <= 30
    assert len(loan) == 8000
    assert loan[LOAN.key_column].is_unique
    assert loan[LOAN.key_column].str.fullmatch(r"A\d{6}").all()
    assert set(loan[LOAN.domain_column]) == {LOAN.source_domain, LOAN.target_domain}
    src, tgt = _split(loan)
    assert len(src) == 4000 and len(tgt) == 4000
    assert loan["region"].nunique() == 5
    # branches nest in regions
    assert (loan.groupby("branch_id")["region"].nunique() == 1).all()


def test_catalogue_columns_exist(loan):
    cols = set(loan.columns)
    for c in (LOAN.key_column, LOAN.domain_column, LOAN.group_column, *LOAN.strata_columns):
        assert c in cols
    assert set(LOAN.evidence_groups) <= cols
    assert set(LOAN.exclude_columns) <= cols
    assert not set(LOAN.evidence_groups) & set(LOAN.exclude_columns)
    # every column is either evidence or excluded
    assert set(LOAN.evidence_groups) | set(LOAN.exclude_columns) == cols
    assert set(LOAN.evidence_groups.values()) == {
        "applicant",
        "income",
        "bureau",
        "loan",
        "banking",
    }
    for col, codes in LOAN.missing_codes.items():
        assert col in cols
        assert col in LOAN.evidence_groups


def test_declared_missing_values_and_codes_present(loan):
    for col in ("employment_years", "monthly_income", "avg_balance", "utilisation"):
        share = loan[col].isna().mean()
        assert 0.01 < share < 0.25, (col, share)
    for col, codes in LOAN.missing_codes.items():
        for code in codes:
            share = (loan[col] == code).mean()
            assert 0.01 < share < 0.25, (col, code, share)
    # no NaN where the generator does not put them
    for col in ("application_id", "year", "region", "defaulted", "income_next_year"):
        assert loan[col].notna().all()


def test_no_credit_file_empties_bureau_fields(loan):
    no_file = loan["credit_score"] == 999
    for col in ("n_open_accounts", "n_delinquencies_2y", "utilisation"):
        assert loan.loc[no_file, col].isna().all()
        assert loan.loc[~no_file, col].notna().all()
    assert loan.loc[~no_file, "credit_score"].between(300, 850).all()
    assert (loan.loc[loan["employment_type"] == "unknown", "employment_years"]).isna().all()


def test_value_ranges(loan):
    assert loan["age"].between(21, 75).all()
    assert set(loan["term_months"]) == {36, 60}
    assert loan["utilisation"].dropna().between(0, 1).all()
    assert loan["interest_rate"].between(3.5, 29.9).all()
    assert set(loan["defaulted"]) == {"yes", "no"}
    assert set(loan["income_verified"]) == {"yes", "no", "unknown"}
    # monthly income is redundant with annual income
    both = loan[["annual_income", "monthly_income"]].dropna()
    ratio = both["monthly_income"] * 12 / both["annual_income"]
    assert ratio.between(0.7, 1.4).all()
    assert np.corrcoef(both["annual_income"], both["monthly_income"])[0, 1] > 0.98


def test_target_definitions_format(loan):
    required = {
        "class": {"kind", "name", "column", "positive"},
        "threshold": {"kind", "name", "column", "threshold", "op"},
        "expression": {"kind", "name", "expression"},
    }
    for info in SAMPLES.values():
        names = [d["name"] for d in info.target_definitions]
        assert len(names) == len(set(names))
        for d in info.target_definitions:
            assert set(d) == required[d["kind"]]
            if d["kind"] == "threshold":
                assert isinstance(d["threshold"], float)
                assert d["op"] == ">="
            if d["kind"] in ("class", "threshold"):
                assert d["column"] in info.exclude_columns
    main = LOAN.target_definitions[0]
    assert main == {"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"}


def test_source_default_rate_realistic(loan):
    src, _ = _split(loan)
    assert 0.15 <= _default_rate(src) <= 0.30


# ---------------------------------------------------------------------------
# Two income targets
# ---------------------------------------------------------------------------


def test_nominal_and_real_income_targets_disagree_in_target_year(loan):
    src, tgt = _split(loan)
    nominal = tgt["income_next_year"] >= 50000
    real = tgt["income_real"] >= 50000
    disagree = float((nominal != real).mean())
    assert disagree > 0.03
    # nominal is the more lenient one in the inflated year
    assert (real <= nominal).all()
    # in the base year (cpi 1.0) the two agree
    assert ((src["income_next_year"] >= 50000) == (src["income_real"] >= 50000)).all()


def test_cpi_expression_matches_real_threshold(loan):
    expr = next(d for d in LOAN.target_definitions if d["kind"] == "expression")
    assert expr["expression"] == "`income_next_year` >= 50000 * `cpi_index`"
    by_expr = loan["income_next_year"] >= 50000 * loan["cpi_index"]
    by_real = loan["income_real"] >= 50000
    # income_real is rounded to cents; allow exact ties only at the boundary
    assert float((by_expr != by_real).mean()) < 0.001


# ---------------------------------------------------------------------------
# Shift knobs
# ---------------------------------------------------------------------------


def test_no_shift_means_close_default_rates():
    df = make_loan_sample(n_source=6000, n_target=6000, seed=5, **NO_SHIFT)
    src, tgt = _split(df)
    # ~4 standard errors of a difference of two rates of ~0.2 at n=6000
    assert abs(_default_rate(src) - _default_rate(tgt)) < 0.03
    # feature distributions match too
    assert abs(src["credit_score"].median() - tgt["credit_score"].median()) < 10
    assert abs(np.log(src["annual_income"]).mean() - np.log(tgt["annual_income"]).mean()) < 0.04


def test_prevalence_shift_raises_target_default_rate():
    df = make_loan_sample(
        n_source=6000, n_target=6000, seed=5, covariate_shift=0.0, prevalence_shift=1.0,
        concept_shift=0.0,
    )
    src, tgt = _split(df)
    assert _default_rate(tgt) - _default_rate(src) > 0.04
    # features are not shifted by the prevalence knob alone
    assert abs(src["credit_score"].median() - tgt["credit_score"].median()) < 10


def test_covariate_shift_moves_features():
    df = make_loan_sample(
        n_source=6000, n_target=6000, seed=5, covariate_shift=1.0, prevalence_shift=0.0,
        concept_shift=0.0,
    )
    src, tgt = _split(df)
    assert tgt["annual_income"].median() > 1.08 * src["annual_income"].median()
    assert tgt["interest_rate"].mean() > src["interest_rate"].mean() + 1.0
    assert (tgt["credit_score"] == 999).mean() > (src["credit_score"] == 999).mean()


def test_source_model_learnable():
    df = make_loan_sample(n_source=6000, n_target=6000, seed=5, **NO_SHIFT)
    m = _source_model_on_target(df)
    assert 0.75 <= m["auc_source"] <= 0.87
    # without shift the target behaves like held-out source data
    assert abs(m["auc_target"] - m["auc_source"]) < 0.04


def test_concept_shift_hurts_source_model():
    # paired: same seed, so the source data, the model and the target features are
    # identical; only the target labels follow the changed coefficients
    kw = dict(n_source=10000, n_target=10000, seed=5, covariate_shift=0.0, prevalence_shift=0.0)
    without = _source_model_on_target(make_loan_sample(concept_shift=0.0, **kw))
    with_shift = _source_model_on_target(make_loan_sample(concept_shift=2.0, **kw))
    assert with_shift["auc_target"] < without["auc_target"] - 0.015
    assert with_shift["logloss_target"] > without["logloss_target"] + 0.01


def test_all_shifts_make_target_worse_calibrated():
    kw = dict(n_source=10000, n_target=10000, seed=5)
    without = _source_model_on_target(make_loan_sample(**kw, **NO_SHIFT))
    with_shift = _source_model_on_target(make_loan_sample(**kw))
    # mean predicted risk vs observed default rate drifts apart
    assert with_shift["calib_gap_target"] > without["calib_gap_target"] + 0.02
    assert with_shift["logloss_target"] > without["logloss_target"] + 0.05


@pytest.mark.parametrize("knob", ["covariate_shift", "prevalence_shift", "concept_shift"])
def test_invalid_knobs_rejected(knob):
    with pytest.raises(ValueError, match=knob):
        make_loan_sample(n_source=10, n_target=10, **{knob: -1.0})


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    n_source=st.integers(min_value=0, max_value=60),
    n_target=st.integers(min_value=0, max_value=60),
    shift=st.floats(min_value=0.0, max_value=3.0),
)
def test_generator_invariants(seed, n_source, n_target, shift):
    df = make_loan_sample(
        n_source=n_source, n_target=n_target, seed=seed, covariate_shift=shift,
        prevalence_shift=shift, concept_shift=shift,
    )
    assert tuple(df.columns) == LOAN_COLUMNS
    assert len(df) == n_source + n_target
    assert df["application_id"].is_unique
    assert (df["year"] == 2019).sum() == n_source
    assert df["defaulted"].isin(["yes", "no"]).all()
    assert (df["income_next_year"] > 0).all()


# ---------------------------------------------------------------------------
# Breast cancer and catalogue
# ---------------------------------------------------------------------------


def test_breast_cancer_sample():
    frame, info = load_sample("breast_cancer")
    assert len(frame) == 569
    assert frame.shape[1] == 32
    assert frame[info.key_column].is_unique
    assert set(frame["diagnosis"]) == {"malignant", "benign"}
    assert (frame["diagnosis"] == "malignant").sum() == 212
    assert info.domain_column is None and info.source_domain is None
    groups: dict[str, list[str]] = {}
    for col, g in info.evidence_groups.items():
        assert col in frame.columns
        groups.setdefault(g, []).append(col)
    assert len(groups) == 10
    assert all(len(cols) == 3 for cols in groups.values())
    feature_cols = set(frame.columns) - set(info.exclude_columns)
    assert feature_cols == set(info.evidence_groups)
    assert frame[sorted(feature_cols)].notna().all().all()
    pd.testing.assert_frame_equal(frame, load_breast_cancer_sample())


def test_unknown_sample_raises_key_error_listing_names():
    with pytest.raises(KeyError) as err:
        load_sample("nope")
    msg = str(err.value)
    assert "nope" in msg
    for name in SAMPLES:
        assert name in msg


def test_sample_info_is_frozen_and_keyword_only():
    assert set(SAMPLES) == {"loan_synthetic", "breast_cancer"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        LOAN.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SampleInfo("x", "t", "d", "k")  # type: ignore[misc]
    info = SampleInfo(name="x", title="t", description="d", key_column="k")
    assert info.strata_columns == () and info.path is None
