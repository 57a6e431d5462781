"""The printing Chromium has no network, and a report opened in a browser asks nothing of the network.

A canary HTTP server on loopback counts every request it gets. A page that
asks for it in eight ways (stylesheet, script, CSS ``url()``, image, iframe,
SVG ``fill:url()``, ``fetch``, a script-made image) is printed by
:func:`components.report.write_pdf`: the canary hears nothing, and the PDF is
written. Then the reports of runs whose names are hostile markup pointing at
the canary (:mod:`tests.hostile_names`) are printed, and opened in a Chromium
that *has* network: neither makes a request.
"""
from __future__ import annotations

import http.server
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from components.report import write_pdf, write_report
from tests.browser import chromium_path
from tests.hostile_names import hostile_registry

pytestmark = pytest.mark.browser


class Canary:
    """A loopback HTTP server that answers every request and remembers its path."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"canary")

            do_POST = do_GET

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.host = f"127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def canary():
    c = Canary()
    yield c
    c.close()


def _page(host: str, port: int) -> str:
    return f"""<!doctype html><html><head><link rel=stylesheet href="http://{host}/css">
<script src="http://{host}/js"></script><style>body{{background:url(http://{host}/bg)}}</style></head>
<body><p>local</p><img src="http://{host}/img"><iframe src="http://localhost:{port}/iframe"></iframe>
<svg width=20 height=20><rect width=10 height=10 style="fill:url(http://{host}/svg#a)"/></svg>
<script>fetch("http://{host}/fetch"); new Image().src = "http://localhost:{port}/img2";</script></body></html>"""


def test_the_canary_hears_a_browser_with_network(canary, tmp_path):
    """The page does reach the canary when Chromium may use the network (so the zero below means something)."""
    page = tmp_path / "p.html"
    page.write_text(_page(canary.host, canary.port))
    canary.hits.clear()
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium_path(), "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                        "--virtual-time-budget=10000", "--dump-dom", page.as_uri()], capture_output=True, timeout=120)
    assert {"/css", "/img", "/fetch", "/svg"} <= set(canary.hits)


def test_the_printing_chromium_makes_no_request(canary, tmp_path):
    chromium_path()
    page = tmp_path / "p.html"
    page.write_text(_page(canary.host, canary.port))
    canary.hits.clear()
    pdf = write_pdf(page, tmp_path / "p.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    assert canary.hits == []


def test_hostile_reports_make_no_request_printed_or_opened(canary, tmp_path):
    chromium = chromium_path()
    reg, ids = hostile_registry(tmp_path, canary.host)
    canary.hits.clear()
    for kind, run_id in ids.items():
        html = write_report(reg.load(run_id), tmp_path / f"{kind}.html")
        assert write_pdf(html, tmp_path / f"{kind}.pdf").read_bytes().startswith(b"%PDF")
        with tempfile.TemporaryDirectory() as profile:  # a browser with network, as a reader opens the file
            subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                            "--virtual-time-budget=10000", "--dump-dom", Path(html).as_uri()],
                           capture_output=True, timeout=180)
    assert canary.hits == []
