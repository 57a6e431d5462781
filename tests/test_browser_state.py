"""Real browser: a rerun that started before the user's edit never undoes it (issue 10, item 7).

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

from pathlib import Path

import pytest

from browser import browser_page, chromium_path, serve_app

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
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)


def test_a_late_rerun_does_not_undo_a_committed_edit(tmp_path: Path) -> None:
    """Rerun A starts before the user commits J = 2 and its messages arrive after; the next edit must send J = 2."""
    chromium_path()
    sock = _HeldSocket()
    with serve_app(tmp_path / "registry.sqlite3") as url, browser_page() as page:
        page.route_web_socket("**/_stcore/stream", sock.route)
        page.goto(url + "/transport", wait_until="domcontentloaded")
        refits = page.get_by_role("spinbutton", name="Refits R", exact=True)
        sets = page.get_by_role("spinbutton", name="Random sets J per refit", exact=True)
        cap = page.get_by_role("spinbutton", name="Row cap per test set (stress)", exact=True)
        sets.wait_for(timeout=120_000)
        _settle(page)
        sock.holding = True
        refits.fill("2")
        refits.press("Enter")  # rerun A (J = 10 in its widget states) runs; its messages are held
        page.wait_for_timeout(2000)
        n_a = len(sock.held)
        assert n_a > 0, "rerun A sent nothing"
        sets.fill("2")
        sets.press("Enter")  # the user commits J = 2 (rerun B); B's messages are held too
        page.wait_for_timeout(2000)
        sock.release(n_a, keep_holding=True)  # A's messages arrive late, after the commit
        page.wait_for_timeout(1000)
        cap.fill("400")
        cap.press("Enter")  # the next edit (rerun C) carries the browser's value of J
        page.wait_for_timeout(2000)
        sock.release()
        _settle(page)
        page.wait_for_timeout(1000)
        assert sets.input_value() == "2", "a rerun that started before the edit undid it"
        assert refits.input_value() == "2" and cap.input_value() == "400"
