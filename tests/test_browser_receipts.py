"""Real-browser test: execute one cube on the Receipts page and see the cube figure."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser import browser_page, chromium_path, serve_app

pytestmark = pytest.mark.browser


def test_receipts_cube_in_chromium(tmp_path: Path) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page() as page:
        page.goto(url + "/receipts", wait_until="domcontentloaded")
        page.get_by_text("Old and new evaluator state", exact=False).wait_for(timeout=60_000)
        page.get_by_role("button", name="Execute cube").click()
        page.get_by_text("Receipt (every minimal replacement set", exact=False).wait_for(timeout=60_000)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.wait_for(timeout=60_000)
        page.locator(".js-plotly-plot .gl-container, .js-plotly-plot canvas, .js-plotly-plot svg").first.wait_for(
            timeout=60_000)
        assert "{G} | {N}" in page.get_by_text("Receipt (every minimal replacement set", exact=False).inner_text()
        if os.environ.get("AUDIT_SCREENSHOT_DIR"):
            out = Path(os.environ["AUDIT_SCREENSHOT_DIR"])
            out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out / "receipts.png"), full_page=True)
