"""Real-browser test: the loan sample on Transport with "Target labels: not available yet" → the forecast view (the
forecast-against-unchanged figure and the concept-shift sentence), saved as a forecast run."""
from __future__ import annotations

from pathlib import Path

import pytest

from audit_core.runs.registry import RunRegistry

from browser import WAIT_MS, browser_page, chromium_path, script_idle, serve_app

pytestmark = pytest.mark.browser


def _set_number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    script_idle(page)


def test_forecast_view_in_chromium(tmp_path: Path) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing; never skips there
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page() as page:
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_text("which confident predictions collapse", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_role("link", name="Transport", exact=True).first.click()
        page.get_by_text("Binary targets only", exact=False).first.wait_for(timeout=WAIT_MS)
        page.get_by_text("not available yet — forecast from the source").click()
        page.get_by_text("present but hidden from the run", exact=False).wait_for(timeout=WAIT_MS)
        script_idle(page)
        page.get_by_role("button", name="Lock tolerances").click()
        page.get_by_text("Tolerances and headline slice locked", exact=False).wait_for(timeout=WAIT_MS)
        script_idle(page)
        _set_number(page, "Refits R", 1)
        _set_number(page, "Bootstrap resamples", 20)
        page.get_by_role("button", name="Run transport audit").click()
        page.get_by_text("Saved to the registry as run", exact=False).wait_for(timeout=WAIT_MS)
        page.get_by_text("Forecast against unchanged from source", exact=False).first.wait_for(timeout=WAIT_MS)
        page.get_by_text("No label-free forecast can see a concept shift", exact=False).first.wait_for(timeout=WAIT_MS)
        figure = page.locator(".js-plotly-plot").filter(has_text="unchanged from source (ID test)")
        assert figure.count() >= 1
    runs = RunRegistry(registry_path).list_runs()
    assert len(runs) == 1
    rec = RunRegistry(registry_path).load(runs["run_id"].iloc[0])
    assert rec.manifest["target_labels"] == "hidden" and "forecast" in rec.tables
    assert rec.config["n_refits"] == 1
