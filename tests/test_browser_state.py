"""Real browser: a rerun that started before the user's edit never undoes it.

The race seen under load: the user commits "Random sets J per refit" = 2 while
an earlier rerun A (started by the previous field, J = 10 in its widget
states) is still on its way. When A's messages arrive after the commit and A
pushed widget values back to the browser (``set_value``; the old
``keep_widget_state`` re-assigned every page widget on every run), the
browser's widget manager takes J = 10 again (``useBasicWidgetState`` applies a
pushed value whenever it arrives), so the next interaction sends J = 10 and the
saved run says 10. Playwright's WebSocket routing holds the server's messages
to make that order happen every time. Before the fix the field ends at 10.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from browser import WAIT_MS, browser_page, chromium_path, serve_app

pytestmark = pytest.mark.browser


class _HeldSocket:
    """Route the app's WebSocket through the test; hold server → browser messages on demand."""

    def __init__(self) -> None:
        self.holding = False
        self.held: list = []
        self.client = None

    def route(self, ws) -> None:
        server = ws.connect_to_server()
        self.client = ws
        ws.on_message(lambda m: server.send(m))
        server.on_message(self._from_server)

    def _from_server(self, message) -> None:
        if self.holding:
            self.held.append(message)
        else:
            self.client.send(message)

    def release(self, n: int | None = None, *, keep_holding: bool = False) -> None:
        """Deliver the first ``n`` held messages (all by default), in order; stop holding unless told."""
        n = len(self.held) if n is None else n
        now, self.held = self.held[:n], self.held[n:]
        for m in now:
            self.client.send(m)
        while not keep_holding and self.held:
            now, self.held = self.held, []
            for m in now:
                self.client.send(m)
        self.holding = keep_holding


def _settle(page) -> None:
    page.wait_for_timeout(400)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=WAIT_MS)


def _until_held(page, sock: _HeldSocket, more_than: int, *, quiet_s: float = 1.5, timeout_s: float = WAIT_MS / 1000) -> int:
    """Wait until the server sent more than ``more_than`` held messages and then nothing for ``quiet_s`` (the
    run's burst is over; Playwright dispatches the socket callbacks while it waits); the held count."""
    deadline = time.monotonic() + timeout_s
    count, since = len(sock.held), time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(100)
        if len(sock.held) != count:
            count, since = len(sock.held), time.monotonic()
        elif count > more_than and time.monotonic() - since >= quiet_s:
            break
    return len(sock.held)


def test_a_late_rerun_does_not_undo_a_committed_edit(shared_app_url: str) -> None:
    """Rerun A starts before the user commits J = 2 and its messages arrive after; the next edit must send J = 2."""
    chromium_path()
    sock = _HeldSocket()
    url = shared_app_url  # the shared server (tests/conftest.py): this test needs only a fresh browser session
    with browser_page() as page:
        page.route_web_socket("**/_stcore/stream", sock.route)
        page.goto(url + "/transport", wait_until="domcontentloaded")
        refits = page.get_by_role("spinbutton", name="Refits R", exact=True)
        sets = page.get_by_role("spinbutton", name="Random sets J per refit", exact=True)
        cap = page.get_by_role("spinbutton", name="Row cap per test set (stress)", exact=True)
        sets.wait_for(timeout=WAIT_MS)
        _settle(page)
        sock.holding = True
        refits.fill("2")
        refits.press("Enter")  # rerun A (J = 10 in its widget states) runs; its messages are held
        n_a = _until_held(page, sock, 0)
        assert n_a > 0, "rerun A sent nothing"
        sets.fill("2")
        sets.press("Enter")  # the user commits J = 2 (rerun B); B's messages are held too
        _until_held(page, sock, n_a)
        sock.release(n_a, keep_holding=True)  # A's messages arrive late, after the commit
        page.wait_for_timeout(1000)
        cap.fill("400")
        before_c = len(sock.held)
        cap.press("Enter")  # the next edit (rerun C) carries the browser's value of J
        _until_held(page, sock, before_c)
        sock.release()
        _settle(page)
        page.wait_for_timeout(1000)
        assert sets.input_value() == "2", "a rerun that started before the edit undid it"
        assert refits.input_value() == "2" and cap.input_value() == "400"


def _fill(page, label: str, value) -> None:
    box = page.get_by_role("spinbutton", name=label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    _settle(page)


def test_a_transport_run_goes_on_while_the_user_visits_another_page(tmp_path: Path) -> None:
    """Leaving the page during a run used to drop it silently."""
    import os
    import re

    from audit_core.runs.registry import RunRegistry

    chromium_path()
    registry_path = tmp_path / "registry.sqlite3"
    with serve_app(registry_path) as url, browser_page(width=1600, height=1100) as page:
        page.goto(url + "/transport", wait_until="domcontentloaded")
        page.get_by_role("button", name="Lock tolerances").click(timeout=WAIT_MS)
        page.get_by_text("Tolerances and headline slice locked", exact=False).first.wait_for(timeout=WAIT_MS)
        for label, value in (("Refits R", 3), ("Bootstrap resamples", 50), ("Random sets J per refit", 3)):
            _fill(page, label, value)
        page.get_by_role("button", name="Run transport audit").click()
        page.locator('[data-testid="stProgress"]').first.wait_for(timeout=WAIT_MS)  # the run is under way
        page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Home").click()
        page.get_by_text("which confident predictions collapse", exact=False).wait_for(timeout=WAIT_MS)
        sidebar_said = page.get_by_text(re.compile(r"Transport audit running")).count()
        page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Transport", exact=True).click()
        # back on the page: the run is followed again, or already finished and shown
        shown = page.locator('[data-testid="stProgress"]').or_(page.get_by_text("Saved to the registry as run"))
        shown.first.wait_for(timeout=WAIT_MS)
        page.get_by_text(re.compile(r"Saved to the registry as run \S+")).wait_for(timeout=WAIT_MS)
        notice = page.get_by_text("kept running while you were away", exact=False)
        notice.wait_for(timeout=WAIT_MS)
        assert sidebar_said >= 1, "the sidebar of the other page did not say that the run goes on"
        if os.environ.get("AUDIT_SCREENSHOT_DIR"):
            page.screenshot(path=str(Path(os.environ["AUDIT_SCREENSHOT_DIR"]) / "run_continued_notice.png"))
    runs = RunRegistry(registry_path).list_runs(audit_kind="transport")
    assert list(runs["status"]) == ["done"]
