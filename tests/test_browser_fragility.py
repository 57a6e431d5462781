"""Real-browser test: sample → train LR → Fragility → run → case trajectory figure is drawn."""
from __future__ import annotations

from pathlib import Path

import pytest

from audit_core.runs.registry import RunRegistry

from browser import WAIT_MS, browser_page, chromium_path, serve_app

pytestmark = pytest.mark.browser


def test_fragility_flow_in_chromium(tmp_path: Path) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page() as page:
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("link", name="Data & groups").first.click()
        page.get_by_text("loan_synthetic.csv", exact=False).first.wait_for(timeout=WAIT_MS)
        page.get_by_role("button", name="Train model").click()
        page.get_by_text("Model ready: logistic_regression", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("link", name="Fragility").first.click()
        page.get_by_role("button", name="Run fragility audit").wait_for(timeout=WAIT_MS)
        cap = page.get_by_role("spinbutton", name="Case-sample cap")
        cap.fill("40")
        cap.press("Enter")
        page.get_by_role("button", name="Run fragility audit").click()
        page.get_by_text("Certified 40 cases", exact=False).wait_for(timeout=WAIT_MS)
        heading = page.get_by_text("Case trajectory", exact=False).first
        heading.wait_for(timeout=WAIT_MS)
        heading.scroll_into_view_if_needed()
        block = page.locator('[data-testid="stVerticalBlock"]').filter(has=page.get_by_text("Case trajectory")).last
        chart = block.locator('[data-testid="stPlotlyChart"]').first
        chart.wait_for(timeout=WAIT_MS)
        assert chart.locator(".main-svg").count() > 0
    runs = RunRegistry(registry_path).list_runs(audit_kind="fragility")
    assert len(runs) == 1 and runs["status"].iloc[0] == "done"
