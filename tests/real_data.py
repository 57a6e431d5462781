"""Public datasets from ``../shared/datasets/`` read as shipped, through the library's own config reader.

``AUDIT_DATASETS`` names another folder (a git worktree's ``..`` is not the
project's parent).

UCI ``adult.data`` has no header and codes missing values as ``?``; the
config's ``column_names`` and ``na_values`` say so (the file itself is read
unchanged). Under ``CI=true`` a missing dataset fails the test; elsewhere it
skips.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ``../shared/datasets`` beside the project, or ``$AUDIT_DATASETS`` (a git worktree sits elsewhere)
DATASETS = Path(os.environ.get("AUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")
ADULT = DATASETS / "uci_adult" / "adult.data"
ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                 "income"]


def require(path: Path) -> Path:
    """``path``, or a skip (a failure under CI) when the shared datasets are not beside the project."""
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing: CI must have ../shared/datasets beside the project")
        pytest.skip(f"{path} not available")
    return path


def adult_config(audits: list[dict], *, model: str = "logistic_regression") -> dict:
    """A config reading adult.data as shipped: income > 50K, domain sex Male → Female."""
    return {
        "name": "adult",
        "data": {"path": str(require(ADULT)), "column_names": ADULT_COLUMNS, "na_values": ["?"]},
        "dataset": {
            "targets": [{"kind": "class", "name": "high_income", "column": "income", "positive": ">50K"}],
            "domain_column": "sex", "source_domain": "Male", "target_domain": "Female",
            "roles": {"sex": "ignore", "income": "ignore"},
        },
        "model": {"kind": model, "seed": 0},
        "audits": audits,
    }


def adult_dataset():
    """The checked :class:`~audit_core.data.dataset.AuditDataset` of :func:`adult_config`."""
    from audit_core.runs.config import load_data, parse_config

    return load_data(parse_config(adult_config([{"kind": "transport"}])), base_dir=ROOT).dataset


def adult_table():
    """adult.data as the config reader reads it (``column_names``, ``na_values``, a ``.data`` file read as CSV)."""
    from audit_core.data.intake import ReadOptions, read_table

    header = (",".join(ADULT_COLUMNS) + "\n").encode()
    return read_table(header + require(ADULT).read_bytes(), name="adult.data.csv", options=ReadOptions(na_values=("?",)))
