"""Regenerate the demo and Transport screenshots in ``docs/screenshots`` at 1600 px.

Starts the app on a free port with a throw-away registry, runs the guided demo on
Home (the bundled loan sample), captures its four steps, opens the full Transport
page in the demo's workspace and captures every result tab, then runs the
Transport forecast mode (target labels not available yet) and captures its
sentences and figure. Needs Chromium
(Debian's ``chromium``) and Playwright (``requirements-test.txt``)::

    .venv/bin/python docs/make_screenshots.py
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

from browser import browser_page, serve_app  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
LONG = 600_000
DEMO_STEPS = ("home_demo_step1_case_collapses", "home_demo_step2_winner_vs_stable",
              "home_demo_step3_rule_does_not_transport", "home_demo_step4_release_gate")
TRANSPORT_TABS = {"ID vs OOD": "transport", "Calibration": "transport_calibration",
                  "Selective": "transport_selective", "Conformal": "transport_conformal",
                  "Stress": "transport_stress", "Heterogeneity": "transport_heterogeneity"}


def _main(page):
    return page.locator('[data-testid="stMain"]').first


def _idle(page) -> None:
    """Wait until Streamlit has finished its rerun (no running indicator), then let the figures draw."""
    for _ in range(2):  # the running indicator appears a moment after the run starts
        page.wait_for_timeout(500)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=LONG)
    time.sleep(1.5)


def _tab_shot(page, name: str, path: Path) -> None:
    _main(page).get_by_role("tab", name=name).first.click()
    _idle(page)
    panel = _main(page).get_by_role("tabpanel").filter(has=page.locator(":visible")).first
    panel.screenshot(path=str(path))
    print("wrote", path.relative_to(ROOT))


def _forecast_shot(page, url: str, path: Path) -> None:
    """Transport with "Target labels: not available yet" on the loan sample: the findings and the forecast figure."""
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("link", name="Transport", exact=True).first.click(timeout=LONG)
    _idle(page)
    page.get_by_text("not available yet — forecast from the source").click()
    _idle(page)
    page.get_by_role("button", name="Lock tolerances").click()
    _idle(page)
    for label, value in (("Refits R", 2), ("Bootstrap resamples", 200)):
        box = page.get_by_label(label, exact=True)
        box.fill(str(value))
        box.press("Enter")
        _idle(page)
    page.get_by_role("button", name="Run transport audit").click()
    page.get_by_text("Saved to the registry as run", exact=False).wait_for(timeout=LONG)
    _idle(page)
    page.set_viewport_size({"width": 1600, "height": 4000})
    _idle(page)
    top = _main(page).get_by_text("What this run found", exact=True).first
    figure = _main(page).locator(".js-plotly-plot").filter(has_text="unchanged from source (ID test)").first
    top.scroll_into_view_if_needed()
    _idle(page)
    a, b = top.bounding_box(), figure.bounding_box()
    assert a is not None and b is not None
    page.screenshot(path=str(path), clip={"x": b["x"] - 20, "y": a["y"] - 20, "width": b["width"] + 40,
                                          "height": b["y"] + b["height"] - a["y"] + 40})
    print("wrote", path.relative_to(ROOT))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, serve_app(Path(tmp) / "registry.sqlite3", timeout=300) as url, \
            browser_page(width=1600, height=1200) as page:
        page.goto(url, wait_until="domcontentloaded")
        _main(page).get_by_role("button", name="Run the demo").click(timeout=LONG)
        tabs = _main(page).get_by_role("tab")
        tabs.first.wait_for(timeout=LONG)
        _idle(page)
        for i, stem in enumerate(DEMO_STEPS):
            _tab_shot(page, tabs.nth(i).inner_text(), OUT / f"{stem}.png")
        _main(page).get_by_role("tab").nth(2).click()
        _idle(page)
        _main(page).get_by_role("button", name="Open the full Transport audit", exact=False).first.click()
        _main(page).get_by_role("tab", name="ID vs OOD").wait_for(timeout=LONG)
        _idle(page)
        for tab, stem in TRANSPORT_TABS.items():
            _tab_shot(page, tab, OUT / f"{stem}.png")
    with tempfile.TemporaryDirectory() as tmp, serve_app(Path(tmp) / "registry.sqlite3", timeout=300) as url, \
            browser_page(width=1600, height=1200) as page:
        _forecast_shot(page, url, OUT / "transport_forecast.png")


if __name__ == "__main__":
    main()
