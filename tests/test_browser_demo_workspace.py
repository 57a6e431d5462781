"""Real-browser test: the guided demo keeps the user's work.

In Chromium at 1600 px: upload a public file as shipped on Data & groups
(South German credit, whitespace-delimited with a German header), declare a
target and a domain, group columns by a rule and a CSV, train a model; then
"Run the demo" on Home. Afterwards Data & groups still shows the upload, the
target, the same "Model ready" line (model, AUROC, number of evidence groups,
run id) and no banner. The story's button opens Fragility in the demo's
workspace (the banner says so); "Back to your workspace" returns to the
upload, intact again.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from audit_core.models.zoo import ZOO

from browser import WAIT_MS, browser_page, chromium_path, script_idle, serve_app
from journeys.steps import Journey, goto, idle, main, ui_groups, ui_train, ui_upload, wait_text
from real_data import DATASETS, require

pytestmark = pytest.mark.browser

CREDIT = Journey(
    name="south_german_credit",
    files=(DATASETS / "south_german_credit" / "SouthGermanCredit.asc",),
    accept_codes=False,
    target={"kind": "class", "name": "good_credit", "column": "kredit", "positive": 1},
    domain=("telef", "1", "2"),
    rule="regex: ^(laufkont|sparkont)$ -> accounts",
    group_csv="column,group\nhoehe,loan\nlaufzeit,loan\n",
)
BANNER = "You are looking at the demo's workspace"


def _home(page) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Home", exact=True).click()
    main(page).get_by_role("button", name="Run the demo").wait_for(timeout=WAIT_MS)
    idle(page)


def _users_work(page) -> tuple[str, str, str, str]:
    """The file caption, the primary target, the domain and the "Model ready" line, as Data & groups shows them."""
    caption = wait_text(page, "SouthGermanCredit.asc · ").inner_text()
    ready = wait_text(page, "Model ready: logistic_regression ").inner_text()
    primary = main(page).get_by_role("combobox", name="Primary target (used for training)").input_value()
    domain = main(page).get_by_role("combobox", name="Domain", exact=True).input_value()
    assert "good_credit" in primary and "telef" in domain, (primary, domain)
    return caption, primary, domain, ready


def test_the_demo_keeps_the_upload_target_groups_and_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chromium_path()
    require(CREDIT.files[0])
    monkeypatch.setenv("AUDIT_DEMO_SIZE", "quick")  # the demo's code path with small sizes
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page(width=1600, height=1200) as page:
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("button", name="Run the demo").wait_for(timeout=WAIT_MS)
        ui_upload(page, CREDIT, tmp_path)
        ui_groups(page, CREDIT, tmp_path)
        ui_train(page, "logistic_regression", ZOO["logistic_regression"][0])
        before = _users_work(page)
        page.screenshot(path=str(tmp_path / "before.png"), full_page=True)

        _home(page)
        main(page).get_by_role("button", name="Run the demo").click()
        page.get_by_role("tab", name="1 · ", exact=False).first.wait_for(timeout=WAIT_MS)
        script_idle(page)  # the demo's run is over: a banner it drew would be on the page
        assert main(page).get_by_text(BANNER).count() == 0

        goto(page, url, "Data & groups")
        assert _users_work(page) == before
        assert main(page).get_by_text(BANNER).count() == 0

        _home(page)
        page.get_by_role("tab", name="1 · ", exact=False).first.click()
        main(page).get_by_role("tabpanel").get_by_role("button", name="Open the full Fragility audit").click()
        page.get_by_text("Case trajectory", exact=False).first.wait_for(timeout=WAIT_MS)
        wait_text(page, BANNER)
        page.screenshot(path=str(tmp_path / "demo_workspace.png"), full_page=False)

        main(page).get_by_role("button", name="Back to your workspace").click()
        page.get_by_text(BANNER).wait_for(state="detached", timeout=WAIT_MS)
        goto(page, url, "Data & groups")
        assert _users_work(page) == before
