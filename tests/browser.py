"""Shared helpers for real-browser tests: serve the app and drive Debian's Chromium.

The browser tests run whenever Chromium is present. Under ``CI=true`` a
missing Chromium is a failure, never a skip.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The one ceiling for every browser wait (element, navigation, server start), in milliseconds. A wait ends as
#: soon as the page reaches the state it waits for, so a generous ceiling costs nothing when the machine is quiet;
#: it only has to hold when the app is slow because every core is busy (a 30 s wait timed out at a load of 18).
WAIT_MS = int(os.environ.get("AUDIT_BROWSER_WAIT_MS", "600000"))

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str:
    """Path of Debian's Chromium; fail under CI, skip elsewhere, when absent."""
    path = shutil.which("chromium") or (
        "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None
    )
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing under CI=true: .ci/run must install Debian's chromium package")
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(registry_path: Path, *, timeout: float = WAIT_MS / 1000, file_watcher: str = "none", script: str = "app.py",
              cwd: Path = ROOT, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free localhost port; yield its URL.

    ``script`` and ``cwd`` serve another script the same way (``benchmarks/first_paint.py``'s one-line page);
    ``env`` adds environment variables. The server's log is ``registry_path`` with the suffix ``.log``.

    The file watcher is off (as in ``.streamlit/config.toml``): with it on, an
    edit of any imported ``.py`` file under the project (another engineer's
    work in the same tree) makes Streamlit drop every project module from
    ``sys.modules`` at the start of the next script run, while other sessions'
    scripts are importing or running them; under concurrent sessions this
    fails runs with ``ImportError: ... partially initialized module`` (see
    ``docs/reliability.md``, "Load"). ``file_watcher="auto"`` reproduces it.
    """
    port = free_port()
    env = dict(os.environ, AUDIT_REGISTRY_PATH=str(registry_path), PYTHONUNBUFFERED="1", **(env or {}))
    log = open(registry_path.with_suffix(".log"), "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            script,
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            file_watcher,
        ],
        cwd=cwd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError(
                    "streamlit did not start:\n" + registry_path.with_suffix(".log").read_text()[-3000:]
                )
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def script_idle(page, *, timeout: int = WAIT_MS) -> None:
    """Wait until Streamlit's current script run is over (the app root's ``data-test-script-state``).

    Only meaningful once a run has started (e.g. after the first paint); after an action, wait for the element
    the action draws instead, since the run it starts may not have begun yet.
    """
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(state="attached",
                                                                                         timeout=timeout)


@contextlib.contextmanager
def browser_page(*, width: int = 1400, height: int = 1000):
    """A Playwright page in Debian's headless Chromium (a new browser per call: nothing shared between tests).

    Every wait without its own timeout (clicks, fills, navigation) gets :data:`WAIT_MS`, not Playwright's 30 s.
    """
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(WAIT_MS)
            page.set_default_navigation_timeout(WAIT_MS)
            yield page
        finally:
            browser.close()
