"""The synthetic loan-approval generator: source year 2019, target year 2023, with controllable shifts.

The two years differ by covariate shift, prevalence shift and concept shift,
each of controllable size (:func:`make_loan_sample`). The table has natural
missing values, "unknown" / special codes, redundant evidence blocks and a
continuous outcome from which a nominal and an inflation-adjusted income
target can be derived.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .catalogue import LOAN_COLUMNS, LOAN_CPI_INDEX, SOURCE_YEAR, TARGET_YEAR

__all__ = ["make_loan_sample"]

#: Nominal wage growth 2019 -> 2023 at ``covariate_shift=1`` (below the CPI,
#: so real incomes fall in the target year).
_NOMINAL_WAGE_GROWTH = 1.16


_REGIONS = ("Capital", "North", "South", "East", "West")
_REGION_P = np.array([0.30, 0.22, 0.18, 0.17, 0.13])
_REGION_P_SHIFT = np.array([-0.08, 0.02, 0.04, 0.0, 0.02])
_REGION_INCOME = np.array([0.15, -0.02, -0.08, 0.0, -0.05])

_EMPLOYMENT = ("salaried", "public_sector", "self_employed", "contract", "unknown")
_EMPLOYMENT_P = np.array([0.58, 0.14, 0.12, 0.10, 0.06])
_EMPLOYMENT_P_SHIFT = np.array([-0.12, -0.01, 0.05, 0.06, 0.02])
_EMPLOYMENT_INCOME = np.array([0.0, 0.03, 0.08, -0.10, -0.05])

_HOME = ("rent", "mortgage", "own", "other")
_VERIFIED = ("yes", "no", "unknown")
_PURPOSE = (
    "debt_consolidation",
    "home_improvement",
    "car",
    "education",
    "medical",
    "small_business",
    "other",
)
_PURPOSE_P = np.array([0.38, 0.16, 0.15, 0.07, 0.06, 0.08, 0.10])
_PURPOSE_RISK = np.array([0.10, -0.15, -0.20, 0.05, 0.25, 0.40, 0.0])
#: Purpose effects in the target year at ``concept_shift=1``.
_PURPOSE_RISK_SHIFTED = np.array([0.35, -0.20, 0.30, -0.30, 0.80, -0.30, 0.0])

#: Intercept of the default model (source rate ~20%).
_DEFAULT_INTERCEPT = -2.25


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _choice(rng: np.random.Generator, labels: tuple, p: np.ndarray, n: int) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, None)
    p = p / p.sum()
    idx = rng.choice(len(labels), size=n, p=p)
    return np.asarray(labels, dtype=object)[idx]


def _generate_domain(
    rng: np.random.Generator,
    n: int,
    *,
    cov: float,
    prev: float,
    concept: float,
) -> dict[str, np.ndarray]:
    """One domain; ``cov``, ``prev``, ``concept`` are 0 for the source."""
    out: dict[str, np.ndarray] = {}

    # --- applicant -------------------------------------------------------
    region_idx = rng.choice(
        len(_REGIONS), size=n, p=_normalise(_REGION_P + cov * _REGION_P_SHIFT)
    )
    out["region"] = np.asarray(_REGIONS, dtype=object)[region_idx]
    # four branches per region, uneven sizes
    branch_in_region = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    branch_no = region_idx * 4 + branch_in_region + 1
    out["branch_id"] = np.array([f"B{b:02d}" for b in branch_no], dtype=object)

    age = np.clip(np.round(rng.normal(41.0 - 3.0 * cov, 11.0, n)), 21, 75)
    out["age"] = age.astype(np.int64)

    emp_idx = rng.choice(
        len(_EMPLOYMENT), size=n, p=_normalise(_EMPLOYMENT_P + cov * _EMPLOYMENT_P_SHIFT)
    )
    emp = np.asarray(_EMPLOYMENT, dtype=object)[emp_idx]
    out["employment_type"] = emp
    emp_years = np.minimum(rng.gamma(2.0, 3.5, n), age - 18.0)
    emp_years = np.round(emp_years, 1)
    emp_missing = (emp == "unknown") | (rng.random(n) < 0.03)
    out["employment_years"] = np.where(emp_missing, np.nan, emp_years)

    # home ownership: owning more likely with age
    a = (age - 40.0) / 12.0
    home_logits = np.stack(
        [0.6 - 0.8 * a, 0.4 + 0.3 * a, -0.8 + 0.9 * a, np.full(n, -2.2)], axis=1
    )
    home_p = np.exp(home_logits)
    home_p /= home_p.sum(axis=1, keepdims=True)
    u_home = rng.random(n)
    home_idx = (u_home[:, None] > np.cumsum(home_p, axis=1)).sum(axis=1)
    home_idx = np.minimum(home_idx, len(_HOME) - 1)
    out["home_ownership"] = np.asarray(_HOME, dtype=object)[home_idx]
    out["dependents"] = np.minimum(rng.poisson(0.9, n), 6).astype(np.int64)

    # latent financial distress (unobserved), drives several outcomes
    distress = rng.normal(0.0, 1.0, n)

    # --- income ----------------------------------------------------------
    log_inc = (
        np.log(52000.0)
        + 0.012 * (np.minimum(age, 55) - 40)
        + 0.015 * np.minimum(np.nan_to_num(emp_years, nan=3.0), 20)
        + _REGION_INCOME[region_idx]
        + _EMPLOYMENT_INCOME[emp_idx]
        - 0.08 * distress
        + cov * np.log(_NOMINAL_WAGE_GROWTH)
        + rng.normal(0.0, 0.42 + 0.06 * cov, n)
    )
    annual_income = np.clip(np.round(np.exp(log_inc)), 9000, 600000)
    out["annual_income"] = annual_income.astype(np.int64)
    monthly = np.round(annual_income / 12.0 * np.exp(rng.normal(0.0, 0.06, n)), 2)
    out["monthly_income"] = np.where(rng.random(n) < 0.04, np.nan, monthly)
    out["income_verified"] = _choice(
        rng, _VERIFIED, np.array([0.70, 0.22, 0.08]) + cov * np.array([-0.06, 0.02, 0.04]), n
    )

    # --- bureau ----------------------------------------------------------
    score = (
        690.0
        + 0.8 * (age - 40.0)
        - 25.0 * distress
        - 15.0 * cov
        + rng.normal(0.0, 58.0, n)
    )
    score = np.clip(np.round(score), 300, 850)
    z_score = (score - 690.0) / 70.0
    p_nofile = 0.03 + 0.07 * (age < 26) + 0.03 * cov
    no_file = rng.random(n) < p_nofile
    out["credit_score"] = np.where(no_file, 999, score).astype(np.int64)
    n_open = rng.poisson(np.clip(3.0 + 1.2 * z_score, 0.5, None))
    delinq = rng.poisson(np.exp(-1.4 - 0.9 * z_score + 0.25 * distress))
    util_mean = _sigmoid(-0.6 - 0.6 * z_score + 0.3 * distress + 0.25 * cov)
    conc = 6.0
    util = np.round(rng.beta(util_mean * conc, (1 - util_mean) * conc), 3)
    out["n_open_accounts"] = np.where(no_file, np.nan, n_open.astype(float))
    out["n_delinquencies_2y"] = np.where(no_file, np.nan, delinq.astype(float))
    out["utilisation"] = np.where(no_file, np.nan, util)

    # --- loan ------------------------------------------------------------
    log_loan = (
        np.log(14000.0)
        + 0.35 * (np.log(annual_income) - np.log(52000.0))
        + 0.15 * cov
        + rng.normal(0.0, 0.55, n)
    )
    loan_amount = np.clip(np.round(np.exp(log_loan) / 250.0) * 250.0, 1000, 60000)
    out["loan_amount"] = loan_amount.astype(np.int64)
    term60 = rng.random(n) < _sigmoid(1.5 * (np.log(loan_amount) - np.log(15000.0)) - 0.3)
    out["term_months"] = np.where(term60, 60, 36).astype(np.int64)
    purpose_idx = rng.choice(len(_PURPOSE), size=n, p=_normalise(_PURPOSE_P))
    out["purpose"] = np.asarray(_PURPOSE, dtype=object)[purpose_idx]
    rate = (
        6.5
        + 2.0 * cov
        + (720.0 - score) / 25.0
        + 1.2 * term60
        + 3.0 * no_file
        + rng.normal(0.0, 1.2, n)
    )
    rate = np.round(np.clip(rate, 3.5, 29.9), 2)
    out["interest_rate"] = rate

    # --- banking ---------------------------------------------------------
    acc_age = np.minimum(np.round(rng.gamma(2.0, 30.0, n)), (age - 18) * 12)
    out["account_age_months"] = acc_age.astype(np.int64)
    log_bal = (
        np.log(2500.0)
        + 0.8 * (np.log(annual_income) - np.log(52000.0))
        + 0.25 * np.log1p(acc_age / 12.0)
        - 0.35 * distress
        - 0.2 * cov
        + rng.normal(0.0, 0.9, n)
    )
    bal = np.round(np.exp(log_bal), 2)
    bal_missing = (acc_age < 6) | (rng.random(n) < 0.05)
    out["avg_balance"] = np.where(bal_missing, np.nan, bal)
    overdrafts = rng.poisson(np.exp(-0.5 - 0.5 * z_score + 0.5 * distress + 0.2 * cov))
    out["overdrafts_12m"] = np.minimum(overdrafts, 24).astype(np.int64)

    # --- outcomes --------------------------------------------------------
    income_growth = rng.normal(0.025 + 0.01 * cov, 0.10, n) - 0.05 * distress
    income_next = np.round(annual_income * np.exp(income_growth))
    out["income_next_year"] = income_next.astype(np.int64)

    z_util = (util - 0.35) / 0.25
    dti = np.log(loan_amount / annual_income)
    z_dti = (dti - np.log(0.27)) / 0.6
    z_rate = (rate - 12.0) / 4.0
    region_south = region_idx == _REGIONS.index("South")
    renter = out["home_ownership"] == "rent"
    eta = (
        _DEFAULT_INTERCEPT
        + 0.60 * prev
        + (-0.80 + 0.55 * concept) * z_score
        + (0.30 + 0.30 * concept) * z_util
        + (0.30 + 0.30 * concept) * z_dti
        + (0.30 - 0.15 * concept) * delinq
        + (0.08 + 0.10 * concept) * (out["overdrafts_12m"] - 1.0)
        + 0.30 * term60
        + (0.15 + 0.25 * concept) * z_rate
        + 0.45 * no_file
        + (0.35 - 0.80 * concept) * (emp == "self_employed")
        + 0.40 * (emp == "contract")
        + 0.25 * (emp == "unknown")
        - 0.02 * np.nan_to_num(emp_years, nan=3.0)
        + 0.25 * (out["income_verified"] == "no")
        + 0.15 * (out["income_verified"] == "unknown")
        + (1.0 - concept) * _PURPOSE_RISK[purpose_idx]
        + concept * _PURPOSE_RISK_SHIFTED[purpose_idx]
        + 0.70 * concept * (renter - 0.4)
        + 0.80 * concept * (region_south - 0.18)
        - 0.012 * (age - 40.0)
        + 0.06 * out["dependents"] + 0.15 * concept * (out["dependents"] - 0.9)
        - 1.5 * np.minimum(income_growth, 0.0)
        + 0.50 * distress
        + rng.normal(0.0, 0.7, n)  # life events nobody observes
    )
    out["defaulted"] = np.where(rng.random(n) < _sigmoid(eta), "yes", "no").astype(object)
    return out


def _normalise(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-6, None)
    return p / p.sum()


def make_loan_sample(
    *,
    n_source: int = 4000,
    n_target: int = 4000,
    seed: int = 0,
    covariate_shift: float = 1.0,
    prevalence_shift: float = 1.0,
    concept_shift: float = 1.0,
) -> pd.DataFrame:
    """Generate the synthetic loan-approval sample.

    Parameters
    ----------
    n_source, n_target : int
        Number of applications in the source year (2019) and the target
        year (2023).
    seed : int
        Seed of :func:`numpy.random.default_rng`; the frame is a
        deterministic function of all arguments.
    covariate_shift : float
        Size of the change of the applicant mix in the target year
        (0 = same feature distribution as the source, 1 = default).
    prevalence_shift : float
        Size of the shift of the default-model intercept (+0.75 log-odds at 1).
    concept_shift : float
        Size of the change of default-model coefficients (0 = same model).

    Returns
    -------
    pandas.DataFrame
        One row per application, columns :data:`LOAN_COLUMNS`, source rows
        first. Floats are rounded so the CSV is compact and reproducible.
    """
    if n_source < 0 or n_target < 0:
        raise ValueError("n_source and n_target must be non-negative")
    for name, value in (
        ("covariate_shift", covariate_shift),
        ("prevalence_shift", prevalence_shift),
        ("concept_shift", concept_shift),
    ):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")

    rng = np.random.default_rng(seed)
    src = _generate_domain(rng, n_source, cov=0.0, prev=0.0, concept=0.0)
    tgt = _generate_domain(
        rng,
        n_target,
        cov=float(covariate_shift),
        prev=float(prevalence_shift),
        concept=float(concept_shift),
    )
    n = n_source + n_target
    cols: dict[str, Any] = {}
    cols["application_id"] = [f"A{i:06d}" for i in range(1, n + 1)]
    cols["year"] = np.concatenate(
        [np.full(n_source, SOURCE_YEAR), np.full(n_target, TARGET_YEAR)]
    ).astype(np.int64)
    for col in LOAN_COLUMNS:
        if col in cols or col in ("cpi_index", "income_real"):
            continue
        cols[col] = np.concatenate([src[col], tgt[col]])
    cpi = np.where(cols["year"] == SOURCE_YEAR, LOAN_CPI_INDEX[SOURCE_YEAR], LOAN_CPI_INDEX[TARGET_YEAR])
    cols["cpi_index"] = cpi
    cols["income_real"] = np.round(cols["income_next_year"] / cpi, 2)

    frame = pd.DataFrame({c: cols[c] for c in LOAN_COLUMNS})
    # plain dtypes: what pandas.read_csv gives back for the written file
    for c in LOAN_COLUMNS:
        if frame[c].dtype == object:
            frame[c] = frame[c].astype("str")
    return frame
