"""Real browser: Markdown in a column name or a file name renders as text (no Markdown injection).

A refusal names the column (duplicate column names) and the file; a caption
names the file of the table read. Before the fix Streamlit rendered them as
Markdown: the image was fetched from its host and "sign in" was a link. The
test listens to every request the page makes and looks for links and images
in the DOM.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from browser import WAIT_MS, browser_page, chromium_path
from journeys.steps import idle

pytestmark = pytest.mark.browser

COLUMN = "![x](http://127.0.0.1:1/x.png) [sign in](http://evil.example)"
FILE_MD = "![f](http:127.0.0.1:1) [file link](http:evil.example) *loud*"
LINKS = ("() => Array.from(document.querySelectorAll('a')).map(a => a.href)"
         ".filter(h => h.includes('evil') || h.includes('127.0.0.1:1'))")


def test_markdown_in_names_is_shown_as_text(tmp_path: Path, shared_app_url: str) -> None:
    chromium_path()
    dup = tmp_path / f"{FILE_MD} dup.csv"
    dup.write_text(f"{COLUMN},{COLUMN},label\n1,2,yes\n3,4,no\n")
    good = tmp_path / f"{FILE_MD}.csv"
    rows = "\n".join(f"{i % 7},{i % 3},{'yes' if i % 2 else 'no'}" for i in range(60))
    good.write_text(f"{COLUMN},b,label\n{rows}\n")
    requests: list[str] = []
    url = shared_app_url  # the shared server (tests/conftest.py): this test needs only a fresh browser session
    with browser_page(width=1600) as page:
        page.on("request", lambda r: requests.append(r.url))
        page.goto(url + "/data_groups", wait_until="domcontentloaded")
        page.get_by_text("Upload a file").click(timeout=WAIT_MS)
        page.get_by_text("CSV, Parquet or Excel (.xlsx)").wait_for(timeout=WAIT_MS)
        page.locator('input[type="file"]').first.set_input_files(str(dup))
        error = page.locator('[data-testid="stAlertContentError"]').filter(has_text="duplicate column names")
        error.first.wait_for(timeout=WAIT_MS)
        refusal = error.first.inner_text().replace("\u2060", "")  # the invisible word joiner that stops autolinks
        refusal_links = page.evaluate(LINKS)  # Streamlit links bare URLs even when their characters are escaped
        # the uploader takes several files (stacked): remove the refused one, then upload the good one
        page.locator('[data-testid="stFileChipDeleteBtn"] button').first.click()
        page.locator('[data-testid="stFileChip"]').first.wait_for(state="detached", timeout=WAIT_MS)
        idle(page)  # the removal's rerun is over: a file set while it still runs can be lost on a loaded machine
        page.locator('input[type="file"]').first.set_input_files(str(good))
        caption = page.locator('[data-testid="stCaptionContainer"]').filter(has_text="rows ×").filter(has_text="file link")
        caption.first.wait_for(timeout=WAIT_MS)
        caption_text = caption.first.inner_text().replace("\u2060", "")
        page.wait_for_timeout(1500)  # give any image time to load
        links = page.evaluate(LINKS)
        images = page.evaluate("() => Array.from(document.querySelectorAll('img')).map(i => i.src)"
                               ".filter(s => s.includes('127.0.0.1:1') || s.includes('x.png'))")
        emphasis = page.evaluate("() => Array.from(document.querySelectorAll('em')).filter(e => "
                                 "e.textContent.includes('loud')).length")
    outside = [u for u in requests if "evil.example" in u or "127.0.0.1:1/" in u or u.rstrip("/").endswith(":1")]
    assert outside == [], outside
    assert refusal_links == [] and links == [] and images == [] and emphasis == 0, (refusal_links, links, images)
    assert COLUMN in refusal, refusal  # the refusal names the column, literally
    assert f"{FILE_MD}.csv" in caption_text, caption_text  # the caption names the file, literally
