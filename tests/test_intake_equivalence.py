"""The intake decides exactly as before its rewrite: every dataset file and every fixture, read both ways.

``tests/intake_golden.json`` holds the fingerprints (frame cells and dtypes,
delimiter, encoding, header, names, missing codes applied and proposed,
conversions, warnings, refusals) that the intake of commit 1a79cd2 computed
on every file of ``../shared/datasets`` and on the fixture corpus of
:mod:`tests.intake_golden`; here today's intake computes them again. See
:mod:`tests.intake_golden` for how to regenerate them.
"""
from __future__ import annotations

import json
import os

import pytest

from tests.intake_golden import (
    DATASET_VARIANTS,
    DATASETS,
    FIXTURES,
    GOLDEN,
    VARIANTS,
    dataset_files,
    dataset_reader,
    fingerprint,
    fixture_reader,
)

EXPECTED = json.loads(GOLDEN.read_text())


def _compare(got: dict, want: dict, where: str) -> None:
    if got == want:
        return
    for key in sorted(set(got) | set(want)):
        assert got.get(key) == want.get(key), f"{where}: {key!r} differs"
    raise AssertionError(where)  # pragma: no cover - the loop above names the difference


def test_every_dataset_file_is_in_the_golden_file():
    if not DATASETS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{DATASETS} is missing: CI must have ../shared/datasets beside the project")
        pytest.skip(f"{DATASETS} not available")
    files = [p.relative_to(DATASETS).as_posix() for p in dataset_files()]
    assert files, f"{DATASETS} holds no files"
    assert sorted(EXPECTED["datasets"]) == files, "dataset files changed: regenerate tests/intake_golden.json"


@pytest.mark.parametrize("rel", sorted(EXPECTED["datasets"]))
def test_dataset_file_reads_as_before(rel):
    path = DATASETS / rel
    if not path.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing: CI must have ../shared/datasets beside the project")
        pytest.skip(f"{path} not available")
    read = dataset_reader(path)
    for variant in DATASET_VARIANTS:
        _compare(fingerprint(read, variant), EXPECTED["datasets"][rel][variant], f"{rel} [{variant}]")


def test_the_fixture_corpus_is_the_golden_one():
    assert sorted(EXPECTED["fixtures"]) == sorted(FIXTURES)


@pytest.mark.parametrize("case", sorted(FIXTURES))
def test_fixture_reads_as_before(case):
    read = fixture_reader(case)
    for variant in VARIANTS:
        _compare(fingerprint(read, variant), EXPECTED["fixtures"][case][variant], f"{case} [{variant}]")


def test_a_changed_decision_is_caught():
    """The comparison fails on a one-cell change: the fingerprints are not vacuous."""
    from audit_core.data.intake import ReadOptions, read_table

    read = fixture_reader("leading_zeros")
    want = EXPECTED["fixtures"]["leading_zeros"]["default"]
    assert fingerprint(read, "default") == want
    changed = fingerprint(lambda o: read_table(b"zip,n\n00123,1\n04567,2\n12345,4\n", name="t.csv", options=o),
                          "default")
    assert changed["frame"]["cells"] != want["frame"]["cells"]
    typed = fingerprint(lambda o: read_table(b"zip,n\n00123,1\n04567,2\n12345,3\n", name="t.csv",
                                             options=ReadOptions(decimal=",")), "default")
    assert typed["frame"] == want["frame"] and typed["report"] != want["report"]  # a decision only the report shows
