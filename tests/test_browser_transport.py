"""Real-browser test: synthetic loan sample → Transport with its source and target years → frontier figure."""
from __future__ import annotations

from pathlib import Path

import pytest

from audit_core.runs.registry import RunRegistry

from browser import WAIT_MS, browser_page, chromium_path, serve_app

pytestmark = pytest.mark.browser


def test_transport_frontier_in_chromium(tmp_path: Path) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing; never skips there
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page() as page:
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_text("which confident predictions collapse", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("link", name="Transport", exact=True).first.click()
        page.get_by_text("Binary targets only", exact=False).first.wait_for(timeout=WAIT_MS)
        # the sample's source and target years are preselected
        body = page.locator("section.main, [data-testid='stMain']").first
        body.get_by_text("Target value (evaluation only)").wait_for(timeout=WAIT_MS)
        page.get_by_role("button", name="Lock tolerances").click()
        page.get_by_text("Tolerances and headline slice locked", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("button", name="Run transport audit").click()
        page.get_by_text("Saved to the registry as run", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("tab", name="Conformal").click()
        frontier = page.get_by_text("Coverage–set-size frontier", exact=False)
        frontier.first.wait_for(timeout=WAIT_MS)
        assert page.locator(".js-plotly-plot").filter(has_text="label-conditional").count() >= 1
    runs = RunRegistry(registry_path).list_runs()
    assert len(runs) == 1 and runs["audit_kind"].iloc[0] == "transport"
    cfg = RunRegistry(registry_path).load(runs["run_id"].iloc[0]).config
    # the sample's source and target years were preselected on the page
    assert (cfg["domain_column"], cfg["source_value"], cfg["target_value"]) == ("year", 2019, 2023)
