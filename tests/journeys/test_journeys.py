"""Real-data journeys in Chromium: each public file uploaded as shipped, through all seven steps.

Each journey (``steps.run_journey``) uploads the file(s) through the app's
uploader, accepts the proposed missing codes and roles, declares a target and
a domain, groups by a rule and by a CSV, trains LightGBM and logistic
regression, runs Fragility and opens a confident fragile case, runs Transport
with all stresses, executes the release gate across two saved runs and parses
the downloaded HTML report. At every step the page must be free of exceptions,
tracebacks and left-over progress bars, and its numbers must equal the
library's on the same configuration, computed here in the test process; the
gate grounds must equal values computed by hand from the stored run tables.

Run: ``python -m pytest -q -p no:cacheprovider -m journey tests/journeys``.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from browser import browser_page, chromium_path, serve_app
from real_data import ADULT_COLUMNS, DATASETS, require
from steps import Journey, run_journey

pytestmark = [pytest.mark.browser, pytest.mark.journey]

HEART = DATASETS / "uci_heart_disease"
JOURNEYS = [
    Journey(
        name="adult",
        files=(DATASETS / "uci_adult" / "adult.data",),
        column_names=tuple(ADULT_COLUMNS),
        target={"kind": "class", "name": "high_income", "column": "income", "positive": ">50K"},
        domain=("sex", "Male", "Female"),
        rule="prefix: capital -> capital",
        group_csv="column,group\neducation,schooling\neducation-num,schooling\n",
    ),
    Journey(  # whitespace-delimited with a German header; integer codes proposed as categorical
        name="south_german_credit",
        files=(DATASETS / "south_german_credit" / "SouthGermanCredit.asc",),
        accept_codes=False,  # PROVENANCE: no missing values
        target={"kind": "class", "name": "good_credit", "column": "kredit", "positive": 1},
        domain=("telef", "1", "2"),
        rule="regex: ^(laufkont|sparkont)$ -> accounts",
        group_csv="column,group\nhoehe,loan\nlaufzeit,loan\n",
    ),
    Journey(  # the four site files in one upload, stacked with a source_file column
        name="uci_heart_four_sites",
        files=tuple(HEART / f"processed.{site}.data" for site in ("cleveland", "hungarian", "switzerland", "va")),
        column_names=("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak",
                      "slope", "ca", "thal", "num"),
        target={"kind": "threshold", "name": "disease", "column": "num", "op": ">", "threshold": 0.0},
        domain=("source_file", "processed.cleveland.data", "processed.va.data"),
        rule="regex: ^(ca|thal)$ -> angiography",
        group_csv="column,group\nchol,lipids\nfbs,lipids\n",
    ),
    Journey(  # one ACS state file (Wyoming, the smallest)
        name="acs_income_wy",
        files=(DATASETS / "acs_income_2018_folktables" / "wy_data.csv",),
        accept_codes=False,  # PROVENANCE: no empty cells
        target={"kind": "class", "name": "income_over_50k", "column": "PINCP", "positive": True},
        domain=("SEX", "1.0", "2.0"),
        rule="regex: ^(SCHL|OCCP|COW)$ -> work",
        group_csv="column,group\nMAR,family\nRELP,family\n",
    ),
]


@pytest.mark.parametrize("journey", JOURNEYS, ids=lambda j: j.name)
def test_journey(journey: Journey, tmp_path: Path) -> None:
    chromium_path()
    for f in journey.files:
        require(f)
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path, timeout=300) as url, browser_page(width=1600, height=1200) as page:
        try:
            start = time.perf_counter()
            measured = run_journey(page, url, journey, registry_path, tmp_path)
            print(f"journey {journey.name}: {time.perf_counter() - start:.0f} s", measured)
        except Exception:
            page.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
            print("screenshot:", tmp_path / "failure.png")
            raise
