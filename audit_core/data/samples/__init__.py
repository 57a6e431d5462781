"""Sample data sets shipped with the audit dashboard (``python -m audit_core.data.samples`` regenerates the files)."""
from .loan import (
    BREAST_CANCER_MEASUREMENTS, LOAN_COLUMNS, LOAN_CPI_INDEX, LOAN_EVIDENCE_BLOCKS, LOAN_FILE_NAME, LOAN_N_SOURCE,
    LOAN_N_TARGET, LOAN_SEED, SAMPLE_DIR, SAMPLES, SOURCE_YEAR, TARGET_YEAR, SampleInfo, available_samples,
    load_breast_cancer_sample, load_sample, main, make_loan_sample, write_samples,
)

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
    "make_loan_sample",
    "load_breast_cancer_sample",
    "load_sample",
    "available_samples",
    "write_samples",
    "main",
]
