"""Real browser: an uploaded column named ``<script>alert(1)</script>`` renders as text.

Uploads a CSV on Data & groups in Debian's headless Chromium, checks that the
literal string is visible on the page (as text, not markup), that no dialog
fires, and that no ``<script>`` element carrying the payload enters the DOM.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from browser import WAIT_MS, browser_page, chromium_path

pytestmark = pytest.mark.browser

PAYLOAD = "<script>alert(1)</script>"


def test_html_column_name_renders_as_text(tmp_path: Path, shared_app_url: str) -> None:
    chromium_path()  # fails under CI=true when Chromium is missing
    csv = tmp_path / "hostile.csv"
    rows = "\n".join(f"{i % 7},{i % 2},{'ab'[i % 2]}" for i in range(60))
    csv.write_text(f"{PAYLOAD},y,<img src=x onerror=alert(2)>\n{rows}\n")
    dialogs: list[str] = []
    url = shared_app_url  # the shared server (tests/conftest.py): this test needs only a fresh browser session
    with browser_page() as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(url, wait_until="domcontentloaded")
        page.get_by_role("link", name="Data & groups").first.click()
        page.get_by_text("1 · Data").wait_for(timeout=WAIT_MS)
        page.get_by_text("Upload a file").click()
        page.get_by_text("CSV, Parquet or Excel (.xlsx)").wait_for(timeout=WAIT_MS)  # the uploader is rendered
        page.locator('input[type="file"]').first.set_input_files(str(csv))
        page.get_by_text("hostile.csv", exact=False).first.wait_for(timeout=WAIT_MS)  # the table was read
        # The column table is a canvas data grid; its accessible mirror holds the name as a text node.
        # A parsed <script> would leave an empty header cell instead of the literal text.
        header = page.locator('[role="columnheader"]', has_text=PAYLOAD).first
        header.wait_for(state="attached", timeout=WAIT_MS)
        assert header.text_content() == PAYLOAD
        page.wait_for_timeout(1500)  # give any injected handler time to fire
        injected = page.evaluate(
            "() => Array.from(document.querySelectorAll('script')).filter(s => s.textContent.includes('alert(')).length"
        )
        imgs = page.evaluate("() => document.querySelectorAll('img[src=\"x\"]').length")
    assert dialogs == []
    assert injected == 0 and imgs == 0
