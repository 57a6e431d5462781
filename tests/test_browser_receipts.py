"""Real-browser test: execute one cube on the Receipts page and see the cube figure."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser import WAIT_MS, browser_page, chromium_path

pytestmark = pytest.mark.browser


def test_receipts_cube_in_chromium(shared_app_url: str) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing
    url = shared_app_url  # the shared server (tests/conftest.py): this test needs only a fresh browser session
    with browser_page() as page:
        page.goto(url + "/receipts", wait_until="domcontentloaded")
        page.get_by_text("Old and new evaluator state", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("button", name="Execute cube").click()
        page.get_by_text("Receipt (every minimal replacement set", exact=False).wait_for(timeout=WAIT_MS)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.wait_for(timeout=WAIT_MS)
        page.locator(".js-plotly-plot .gl-container, .js-plotly-plot canvas, .js-plotly-plot svg").first.wait_for(
            timeout=WAIT_MS)
        assert "{G} | {N}" in page.get_by_text("Receipt (every minimal replacement set", exact=False).inner_text()
        if os.environ.get("AUDIT_SCREENSHOT_DIR"):
            out = Path(os.environ["AUDIT_SCREENSHOT_DIR"])
            out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out / "receipts.png"), full_page=True)
