"""Real browser: what a user types is never overwritten by a rerun that started before the edit.

The server's messages are held back with Playwright's WebSocket routing, so the
race seen under load (issue 10, item 7) happens every time: the user commits one
field (a rerun starts), types into another field before that rerun's messages
arrive, and only then do they arrive. A rerun that pushes widget values back to
the browser (``set_value``) resets the field being typed in, and pressing Enter
then commits the old value; the saved run's config says 10 where the user typed 2.
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

    def release(self) -> None:
        self.holding = False
        held, self.held = self.held, []
        for m in held:
            self.client.send(m)


def _settle(page) -> None:
    page.wait_for_timeout(400)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)


def test_typing_during_a_rerun_is_kept(tmp_path: Path) -> None:
    chromium_path()
    sock = _HeldSocket()
    with serve_app(tmp_path / "registry.sqlite3") as url, browser_page() as page:
        page.route_web_socket("**/_stcore/stream", sock.route)
        page.goto(url + "/transport", wait_until="domcontentloaded")
        refits = page.get_by_role("spinbutton", name="Refits R", exact=True)
        sets = page.get_by_role("spinbutton", name="Random sets J per refit", exact=True)
        sets.wait_for(timeout=120_000)
        _settle(page)
        # 1. commit "Refits R": a rerun starts; its messages are held (a busy server, a slow network)
        sock.holding = True
        refits.fill("2")
        refits.press("Enter")
        page.wait_for_timeout(1500)  # the rerun runs on the server; its deltas wait in `held`
        # 2. the user types into another field before that rerun's messages arrive
        sets.fill("2")
        # 3. the rerun's messages arrive, then the user presses Enter
        sock.release()
        page.wait_for_timeout(1500)
        assert sets.input_value() == "2", "the rerun overwrote what the user was typing"
        sets.press("Enter")
        _settle(page)
        page.wait_for_timeout(500)
        assert sets.input_value() == "2"
        assert refits.input_value() == "2"
