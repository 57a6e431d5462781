"""The catalogue of samples: what each one is, its columns, targets, domains and evidence groups.

:data:`SAMPLES` maps a name to its :class:`SampleInfo`; the constants describe
the shipped loan file (seed, sizes, years, CPI) and the breast cancer groups.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "SampleInfo",
    "SAMPLES",
    "SAMPLE_DIR",
    "LOAN_FILE_NAME",
    "LOAN_SEED",
    "LOAN_CPI_INDEX",
    "LOAN_COLUMNS",
    "LOAN_N_SOURCE",
    "LOAN_N_TARGET",
    "SOURCE_YEAR",
    "TARGET_YEAR",
    "LOAN_EVIDENCE_BLOCKS",
    "BREAST_CANCER_MEASUREMENTS",
    "available_samples",
]

#: Directory of the shipped sample files (``<repo>/sample_data``).
SAMPLE_DIR: Path = Path(__file__).resolve().parents[3] / "sample_data"
#: File name of the shipped loan sample.
LOAN_FILE_NAME = "loan_synthetic.csv"
#: Seed and sizes of the shipped loan sample.
LOAN_SEED = 20261129
LOAN_N_SOURCE = 4000
LOAN_N_TARGET = 4000

SOURCE_YEAR = 2019
TARGET_YEAR = 2023
#: Consumer price index per year, 2019 = 1.0 (roughly the US CPI-U ratio
#: 2023/2019). Used for ``income_real = income_next_year / cpi_index``.
LOAN_CPI_INDEX: dict[int, float] = {SOURCE_YEAR: 1.0, TARGET_YEAR: 1.192}


@dataclass(frozen=True, kw_only=True)
class SampleInfo:
    """Description of a sample data set: roles of its columns and targets.

    Attributes
    ----------
    name : str
        Catalogue key, e.g. ``"loan_synthetic"``.
    title : str
        Short human-readable title.
    description : str
        One paragraph describing the data and how it was made.
    key_column : str
        Unique record key.
    domain_column : str or None
        Column whose values separate the source and the target domain.
    source_domain, target_domain : value or None
        Values of ``domain_column`` for the source / target domain.
    group_column : str or None
        Column of record groups (e.g. for grouped cross-validation).
    strata_columns : tuple of str
        Columns to report sub-group results on.
    target_definitions : tuple of dict
        Candidate targets, each one of
        ``{"kind": "class", "name", "column", "positive"}``,
        ``{"kind": "threshold", "name", "column", "threshold", "op"}``,
        ``{"kind": "expression", "name", "expression"}``.
        The first one is the main target.
    evidence_groups : dict
        Raw column -> evidence group (block) name.
    exclude_columns : tuple of str
        Columns that must not be used as features (key, domain, group,
        outcome columns).
    missing_codes : dict
        Column -> list of special values that mean "unavailable".
    path : pathlib.Path or None
        File backing the sample, if any.
    """

    name: str
    title: str
    description: str
    key_column: str
    domain_column: str | None = None
    source_domain: Any = None
    target_domain: Any = None
    group_column: str | None = None
    strata_columns: tuple = ()
    target_definitions: tuple = ()
    evidence_groups: dict = field(default_factory=dict)
    exclude_columns: tuple = ()
    missing_codes: dict = field(default_factory=dict)
    path: Path | None = None


#: Evidence blocks of the loan sample: block -> columns. Some blocks are
#: redundant with each other on purpose (income vs banking balances, bureau
#: credit score vs loan interest rate, monthly vs annual income).
LOAN_EVIDENCE_BLOCKS: dict[str, tuple[str, ...]] = {
    "applicant": (
        "region",
        "age",
        "employment_type",
        "employment_years",
        "home_ownership",
        "dependents",
    ),
    "income": ("annual_income", "monthly_income", "income_verified"),
    "bureau": (
        "credit_score",
        "n_open_accounts",
        "n_delinquencies_2y",
        "utilisation",
    ),
    "loan": ("loan_amount", "term_months", "purpose", "interest_rate"),
    "banking": ("account_age_months", "avg_balance", "overdrafts_12m"),
}

_LOAN_ID_COLUMNS = ("application_id", "year", "branch_id")
_LOAN_OUTCOME_COLUMNS = ("income_next_year", "cpi_index", "income_real", "defaulted")

#: Column order of the loan sample.
LOAN_COLUMNS: tuple[str, ...] = (
    _LOAN_ID_COLUMNS
    + tuple(c for cols in LOAN_EVIDENCE_BLOCKS.values() for c in cols)
    + _LOAN_OUTCOME_COLUMNS
)

#: The ten measurements of the breast cancer data (one evidence group each).
BREAST_CANCER_MEASUREMENTS: tuple[str, ...] = (
    "radius",
    "texture",
    "perimeter",
    "area",
    "smoothness",
    "compactness",
    "concavity",
    "concave points",
    "symmetry",
    "fractal dimension",
)


def _breast_cancer_groups() -> dict[str, str]:
    groups: dict[str, str] = {}
    for m in BREAST_CANCER_MEASUREMENTS:
        groups[f"mean {m}"] = m
        groups[f"{m} error"] = m
        groups[f"worst {m}"] = m
    return groups


_LOAN_DESCRIPTION = (
    "Synthetic consumer-loan applications (seeded generator, no real people). "
    "Source year 2019, target year 2023. Between the years the applicant mix "
    "changes (covariate shift: higher nominal incomes, lower credit scores, "
    "more thin-file and self-employed applicants, higher interest rates), the "
    "default rate rises (prevalence shift) and some risk factors change "
    "weight (concept shift: utilisation, overdrafts and debt-to-income matter "
    "more, the credit score less). Main target: defaulted == 'yes'. "
    "Alternative targets: next-year income >= 50,000 in nominal terms or in "
    "2019 dollars (income_real = income_next_year / cpi_index); they disagree "
    "in 2023. Special codes: credit_score 999 = no credit file (then the "
    "other bureau fields are empty), employment_type / income_verified "
    "'unknown'. avg_balance, employment_years and monthly_income have "
    "missing values."
)

_BREAST_CANCER_DESCRIPTION = (
    "Wisconsin diagnostic breast cancer data as shipped with scikit-learn: "
    "569 fine-needle aspirates, 30 measurements of the cell nuclei. Each of "
    "the 10 measurements (radius, texture, ...) appears as the mean, the "
    "standard error and the worst (largest) value, giving 10 evidence groups "
    "of 3 strongly correlated columns. Target: diagnosis == 'malignant'. "
    "No domains, no missing values."
)

SAMPLES: dict[str, SampleInfo] = {
    "loan_synthetic": SampleInfo(
        name="loan_synthetic",
        title="Loan approvals 2019 vs 2023 (synthetic)",
        description=_LOAN_DESCRIPTION,
        key_column="application_id",
        domain_column="year",
        source_domain=SOURCE_YEAR,
        target_domain=TARGET_YEAR,
        group_column="branch_id",
        strata_columns=("region", "employment_type"),
        target_definitions=(
            {"kind": "class", "name": "default", "column": "defaulted", "positive": "yes"},
            {
                "kind": "threshold",
                "name": "income_50k_nominal",
                "column": "income_next_year",
                "threshold": 50000.0,
                "op": ">=",
            },
            {
                "kind": "threshold",
                "name": "income_50k_real",
                "column": "income_real",
                "threshold": 50000.0,
                "op": ">=",
            },
            {
                "kind": "expression",
                "name": "income_50k_cpi_adjusted",
                "expression": "`income_next_year` >= 50000 * `cpi_index`",
            },
        ),
        evidence_groups={
            col: block for block, cols in LOAN_EVIDENCE_BLOCKS.items() for col in cols
        },
        exclude_columns=_LOAN_ID_COLUMNS + _LOAN_OUTCOME_COLUMNS,
        missing_codes={
            "credit_score": [999],
            "employment_type": ["unknown"],
            "income_verified": ["unknown"],
        },
        path=SAMPLE_DIR / LOAN_FILE_NAME,
    ),
    "breast_cancer": SampleInfo(
        name="breast_cancer",
        title="Breast cancer diagnosis (Wisconsin, scikit-learn)",
        description=_BREAST_CANCER_DESCRIPTION,
        key_column="record_id",
        domain_column=None,
        source_domain=None,
        target_domain=None,
        group_column=None,
        strata_columns=(),
        target_definitions=(
            {
                "kind": "class",
                "name": "malignant",
                "column": "diagnosis",
                "positive": "malignant",
            },
        ),
        evidence_groups=_breast_cancer_groups(),
        exclude_columns=("record_id", "diagnosis"),
        missing_codes={},
        path=None,
    ),
}


def available_samples() -> list[str]:
    """Names of the samples in :data:`SAMPLES`."""
    return list(SAMPLES)
