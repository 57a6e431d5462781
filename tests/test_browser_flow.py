"""Real-browser test of the main flow: sample → train logistic regression → success + group table."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from audit_core.runs.registry import RunRegistry

from browser import WAIT_MS, browser_page, chromium_path, serve_app

pytestmark = pytest.mark.browser


def test_main_flow_in_chromium(tmp_path: Path) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page() as page:
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_text("which confident predictions collapse", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("link", name="Data & groups").first.click()
        page.get_by_text("1 · Data").wait_for(timeout=WAIT_MS)
        # The synthetic loan sample is preselected; logistic regression is the default model.
        page.get_by_text("loan_synthetic.csv", exact=False).first.wait_for(timeout=WAIT_MS)
        page.get_by_role("button", name="Train model").click()
        success = page.get_by_text("Model ready: logistic_regression", exact=False)
        success.wait_for(timeout=WAIT_MS)
        page.get_by_text("Raw-origin table", exact=False).wait_for(timeout=WAIT_MS)
        table = page.locator('[data-testid="stDataFrame"]').filter(has_text="raw_column")
        table.first.wait_for(timeout=WAIT_MS)
        if os.environ.get("AUDIT_SCREENSHOT_DIR"):
            out = Path(os.environ["AUDIT_SCREENSHOT_DIR"])
            out.mkdir(parents=True, exist_ok=True)
            page.set_viewport_size({"width": 1400, "height": 3400})
            page.get_by_text("Evidence groups (transformed features per group)").wait_for(timeout=WAIT_MS)
            page.screenshot(path=str(out / "data_groups.png"))
        text = success.inner_text()
        assert "held-out AUROC" in text and "saved as run" in text
    runs = RunRegistry(registry_path).list_runs()
    assert len(runs) == 1 and runs["status"].iloc[0] == "done"
    assert runs["model"].iloc[0] == "logistic_regression"


def test_subpage_url_on_a_fresh_server_goes_through_app(tmp_path: Path) -> None:
    """The first request of a new server may name a sub-page; it must still get app.py's routing."""
    chromium_path()
    with serve_app(tmp_path / "registry.sqlite3") as url, browser_page() as page:
        page.goto(url + "/data_groups", wait_until="domcontentloaded")
        page.get_by_text("1 · Data").wait_for(timeout=WAIT_MS)
        nav = page.locator('[data-testid="stSidebar"]')  # app.py draws the navigation (Streamlit's own is off)
        nav.get_by_text("Data & groups").wait_for(timeout=WAIT_MS)
        labels = nav.inner_text()
        # app.py's titles, not the file names Streamlit's old pages/ discovery would show
        assert "Home" in labels and "data groups" not in labels and "app" not in labels.split()
