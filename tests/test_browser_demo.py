"""Real-browser test: Home → "Run the demo" → walk the four steps of the story → open the full Fragility page (in the
demo's workspace)."""
from __future__ import annotations

from pathlib import Path

import pytest

from audit_core.runs.registry import RunRegistry

from browser import WAIT_MS, browser_page, chromium_path, script_idle, serve_app

pytestmark = pytest.mark.browser

STEPS = (
    ("1 · A confident prediction that collapses", "yet the prediction flips to"),
    ("2 · Which model holds up?", "The model that ranks cases best"),
    ("3 · Does the rule still hold?", "the threshold that answers"),
    ("4 · The release decision", "Release is"),
)


def test_run_the_demo_and_walk_the_four_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing
    monkeypatch.setenv("AUDIT_DEMO_SIZE", "quick")  # the same code path with small sizes (seconds, not a minute)
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page(width=1600) as page:
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("button", name="Run the demo").click()
        page.get_by_role("tab", name=STEPS[0][0]).wait_for(timeout=WAIT_MS)
        script_idle(page)  # the demo's run is over: every step's panel is complete before it is counted
        for name, sentence in STEPS:
            page.get_by_role("tab", name=name).click()
            panel = page.get_by_role("tabpanel").filter(has_text=sentence)
            panel.wait_for(timeout=WAIT_MS)
            panel.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)  # the step's figure is drawn
            assert panel.get_by_role("button", name="Open ", exact=False).count() == 1, name
        page.get_by_role("tab", name=STEPS[0][0]).click()
        page.get_by_role("tabpanel").get_by_role("button", name="Open the full Fragility audit").click()
        page.get_by_text("Case trajectory", exact=False).first.wait_for(timeout=WAIT_MS)
        page.get_by_text("Listed: the", exact=False).first.wait_for(timeout=WAIT_MS)
        page.get_by_text("You are looking at the demo's workspace", exact=False).first.wait_for(timeout=WAIT_MS)
    runs = RunRegistry(registry_path).list_runs()
    assert sorted(runs["audit_kind"]) == ["fragility", "model", "transport"] and (runs["status"] == "done").all()
