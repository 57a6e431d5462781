"""``docs/notebook_example.py`` runs as a notebook would, and its objects hold what the notebook shows.

The example is executed in-process with :func:`runpy.run_path` (its cells in
order, as ``python docs/notebook_example.py`` runs them); its settings are small
(60 cases, 3 refits, no stresses) so this takes a few seconds.
"""
from __future__ import annotations

import html
import runpy
from pathlib import Path

import plotly.graph_objects as go
import pytest

from audit_core.api import FragilityReport, TransportReport
from audit_core.transport.verdicts import VERDICTS

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "notebook_example.py"


@pytest.fixture(scope="module")
def example() -> dict:
    return runpy.run_path(str(EXAMPLE), run_name="__main__")


def test_the_example_is_a_percent_notebook_with_little_user_code():
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text.count("# %%") >= 5
    code = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(code) <= 30, len(code)


def test_both_audits_have_findings_and_tables(example):
    fragility, transport = example["fragility"], example["transport"]
    assert isinstance(fragility, FragilityReport) and isinstance(transport, TransportReport)
    assert len(fragility.audit.batch) == 60  # max_cases=60 of the 143 held-out source records
    assert fragility.findings and transport.findings
    assert not transport.multiclass and transport.config.n_refits == 3 and transport.headline.n_refits == 3
    verdicts = transport.verdict_table()
    assert len(verdicts) and set(verdicts["verdict"]) <= set(VERDICTS)
    # the sample's domains: 'A' (mean texture at or below the median, 285 records) and 'B' (284)
    assert (transport.result.manifest["n_source"], transport.result.manifest["n_target"]) == (285, 284)


def test_repr_html_shows_findings_verdicts_and_the_figure_builder(example):
    transport, fragility = example["transport"], example["fragility"]
    page = transport._repr_html_()
    assert "Verdicts on the headline slice" in page and "<table>" in page
    assert any(f"<td>{v}</td>" in page for v in VERDICTS)
    assert "components.figures.transport import reliability_figure" in page
    assert all(html.escape(f.text) in page for f in transport.findings)  # each sentence, escaped as text
    frag = fragility._repr_html_()
    assert "Certificates (first rows)" in frag and "BC0" in frag and "distributions_figure" in frag


def test_the_figure_is_built_from_the_result(example):
    assert isinstance(example["figure"], go.Figure) and len(example["figure"].data) > 0
