"""HTML report: deterministic, escaped, offline, figures from stored tables; opens in Chromium."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from audit_core.runs.registry import RunRegistry
from components.report import REPORT_FIGURES, figures_for, render_report, write_report
from tests.browser import browser_page
from tests.runs_data import save_custom_run, save_fragility_run, save_model_run

STAMP = re.compile(r"2\d{3}-\d\d-\d\dT[0-9:]+(\+00:00)?")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunRegistry, str, str]:
    reg = RunRegistry(tmp_path_factory.mktemp("rep") / "r.sqlite3")
    return reg, save_model_run(reg, bootstrap=20, refit_seeds=(1,)), save_custom_run(reg)


def test_report_is_byte_identical_apart_from_the_generation_time(runs) -> None:
    reg, model_id, custom_id = runs
    for run_id in (model_id, custom_id):
        a = render_report(reg.load(run_id), generated_at="2025-01-01T00:00:00+00:00")
        b = render_report(reg.load(run_id), generated_at="2031-12-31T23:59:59+00:00")
        assert a != b
        assert a.replace("2025-01-01T00:00:00+00:00", "T") == b.replace("2031-12-31T23:59:59+00:00", "T")
        assert a.count("2025-01-01T00:00:00+00:00") == 2  # the meta field and the line that shows it
    # default stamp: two renders differ only in that field
    x, y = render_report(reg.load(model_id)), render_report(reg.load(model_id))
    assert re.sub(r"generated(-at'? ?[^>]*>|[^<]*)", "", x) == re.sub(r"generated(-at'? ?[^>]*>|[^<]*)", "", y)


def test_plotly_js_is_embedded_once_and_figures_have_fixed_ids(runs) -> None:
    reg, model_id, _ = runs
    html = render_report(reg.load(model_id), generated_at="t")
    assert html.count("<script type='text/javascript'>") == 1  # the library, once
    assert "<script src" not in html and "<link" not in html  # nothing fetched (the browser test blocks the network)
    n = len(figures_for(reg.load(model_id)))
    assert n == 3
    for i in range(n):
        assert f'id="fig-{i}"' in html
    assert "id='key-numbers-table'" in html or 'id="key-numbers-table"' in html


def test_user_strings_are_escaped_and_unknown_kinds_fall_back_to_tables(runs) -> None:
    reg, _, custom_id = runs
    record = reg.load(custom_id)
    assert record.audit_kind not in REPORT_FIGURES
    html = render_report(record, generated_at="t")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "toy &lt;b&gt;data&lt;/b&gt;" in html
    assert "No figures are registered for this audit kind" in html
    assert 'id="verdict-table"' in html
    assert "AAFiaW5hcnk" not in html and "model.txt" not in html  # artifacts are not embedded


@pytest.mark.browser
def test_report_opens_offline_in_chromium_with_a_rendered_figure(runs, tmp_path: Path) -> None:
    reg, model_id, _ = runs
    path = write_report(reg.load(model_id), tmp_path / "report.html")
    with browser_page() as page:
        page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file://") else route.continue_())
        page.goto(path.resolve().as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        assert page.locator(".js-plotly-plot").count() == 3
        assert page.locator("#fig-0 svg").count() >= 1
        rows = page.locator("#key-numbers-table tbody tr")
        assert rows.count() >= 5
        assert "held_out_auroc" in page.locator("#key-numbers-table").inner_text()


@pytest.mark.browser
def test_fragility_report_opens_in_chromium_with_figures_and_summary(tmp_path: Path) -> None:
    reg = RunRegistry(tmp_path / "r.sqlite3")
    record = reg.load(save_fragility_run(reg))
    n = len(figures_for(record))
    assert n >= 4  # distributions, AUROC (two strata), Δ_g heatmap, temperature: from stored tables only
    path = write_report(record, tmp_path / "fragility.html")
    with browser_page() as page:
        page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file://") else route.continue_())
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("#fig-0 .main-svg", timeout=30_000)
        assert page.locator(".js-plotly-plot").count() == n
        summary = page.locator("#key-numbers-table").inner_text()
        assert "mean_fds" in summary and "brittle_share_confident_0.8" in summary
