"""Real browser, fresh server: Streamlit's raw page list never shows.

With a ``pages/`` folder beside ``app.py``, a fresh server's first run goes
through Streamlit's old (v1) page discovery, whose sidebar lists the file
names (``app``, ``data groups``, ``home``, …) until ``app.py`` calls
``st.navigation``; that took over 4 s (the imports and the sample load ran
first) with an empty main area. A MutationObserver installed before the page
loads records every link the sidebar ever shows; none may be a raw file name,
and Streamlit's own navigation element must never appear.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from browser import WAIT_MS, browser_page, chromium_path, serve_app

pytestmark = pytest.mark.browser

RAW_NAMES = {"app", "data groups", "data_groups", "home", "fragility", "transport", "receipts", "runs"}
OURS = ["Home", "Data & groups", "Fragility", "Transport", "Receipts", "Runs & reports"]
_OBSERVER = """
window.__navLog = [];
const linkText = a => {  // the label without the icon's ligature text ("home" of :material/home:)
  const c = a.cloneNode(true);
  c.querySelectorAll('[data-testid="stIconMaterial"], [data-testid="stIconEmoji"]').forEach(i => i.remove());
  return c.textContent.trim();
};
window.__linkText = linkText;
const record = () => {
  const nav = document.querySelector('[data-testid="stSidebarNav"]');
  const side = document.querySelector('[data-testid="stSidebar"]');
  const links = side ? Array.from(side.querySelectorAll('a')).map(linkText) : [];
  if (nav || links.length) window.__navLog.push({t: performance.now(), streamlitNav: !!nav, links});
};
new MutationObserver(record).observe(document, {subtree: true, childList: true, characterData: true});
"""


@pytest.mark.parametrize("path", ["", "/fragility"])
def test_fresh_server_never_shows_the_raw_page_list(tmp_path: Path, path: str) -> None:
    chromium_path()
    with serve_app(tmp_path / "registry.sqlite3") as url, browser_page(width=1600, height=1000) as page:
        page.add_init_script(_OBSERVER)
        t0 = time.perf_counter()
        page.goto(url + path, wait_until="domcontentloaded")  # the first request this server gets
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_role("link", name="Data & groups").wait_for(timeout=WAIT_MS)
        nav_s = time.perf_counter() - t0
        first = page.screenshot()
        page.get_by_role("heading").first.wait_for(timeout=WAIT_MS)  # the page itself rendered
        log = page.evaluate("() => window.__navLog")
        labels = page.evaluate("() => Array.from(document.querySelectorAll('[data-testid=\"stSidebar\"] a'))"
                               ".map(window.__linkText)")
        if os.environ.get("AUDIT_SCREENSHOT_DIR") and not path:
            out = Path(os.environ["AUDIT_SCREENSHOT_DIR"])
            out.mkdir(parents=True, exist_ok=True)
            (out / "fresh_server_first_paint.png").write_bytes(first)
    print({"path": path or "/", "navigation_on_screen_s": round(nav_s, 2), "samples": len(log)})
    assert log, "the observer saw no sidebar"
    assert not any(entry["streamlitNav"] for entry in log), "Streamlit's own page list was rendered"
    seen = {name for entry in log for name in entry["links"]}  # raw names are the lower-case file stems
    assert not (seen & RAW_NAMES), f"raw page names shown: {sorted(seen & RAW_NAMES)}"
    assert labels == OURS
