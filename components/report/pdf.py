"""The report's one-page summary as a PDF, printed by headless Chromium when it is installed.

Chromium prints the HTML report with its print stylesheet (the executive
summary only, one A4 page). Without Chromium, :func:`write_pdf` raises the
declared ``REPORT_PDF_NO_CHROMIUM`` error, whose message says how to get it;
nothing else changes (the HTML report is still written).

The printing Chromium has no network: it opens the report as a local file,
and every other request (``http``, ``https``, ``ws``, whatever the page or a
name in it asks for) is refused twice over: every host name resolves to
nothing (``--host-resolver-rules``), and every connection, loopback included,
goes through a proxy that does not exist (``--proxy-server`` with
``<-loopback>`` taken off the bypass list). The report is self-contained
(Plotly and styles inline), so nothing it needs is lost.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from audit_core.errors import excerpt, fail, register_messages
from audit_core.limits import setting

__all__ = ["chromium_executable", "write_pdf"]

register_messages(
    {
        "REPORT_PDF_NO_CHROMIUM": (
            "No PDF written: Chromium was not found (looked for ${env}, then chromium, chromium-browser and "
            "google-chrome on PATH). Install it (e.g. apt-get install chromium) or set {env} to its executable; "
            "the HTML report was written and prints its one-page summary from any browser."
        ),
        "REPORT_PDF_FAILED": (
            "No PDF written: Chromium could not print the report ({reason}). The HTML report was written and "
            "prints its one-page summary from any browser."
        ),
    }
)

#: Environment variable naming the Chromium (or Chrome) executable to print with.
CHROMIUM_ENV = "AUDIT_CHROMIUM"
_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Refuse every network request: no host name resolves, and every connection (loopback too) is sent to a
#: proxy on the discard port, where nothing answers.
_OFFLINE = ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            "--dns-prefetch-disable"]
_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-pdf-header-footer", "--virtual-time-budget=15000",
          *_OFFLINE]


def chromium_executable() -> str | None:
    """``$AUDIT_CHROMIUM`` if set, else the first of chromium / chromium-browser / google-chrome on ``PATH``."""
    named = setting(CHROMIUM_ENV)
    if named:
        return named if Path(named).is_file() else None
    return next((p for p in map(shutil.which, _NAMES) if p), None)


def write_pdf(html_path: str | Path, pdf_path: str | Path, *, timeout: float = 120.0) -> Path:
    """Print the HTML report at ``html_path`` to ``pdf_path`` (its one-page summary) with headless Chromium.

    Raises
    ------
    AuditInputError
        ``REPORT_PDF_NO_CHROMIUM`` when no Chromium is found;
        ``REPORT_PDF_FAILED`` when Chromium exits with an error or writes no PDF.
    """
    exe = chromium_executable()
    if exe is None:
        raise fail("REPORT_PDF_NO_CHROMIUM", env=CHROMIUM_ENV)
    src, out = Path(html_path).resolve(), Path(pdf_path).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="audit-pdf-") as profile:
        cmd = [exe, *_FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={out}", src.as_uri()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise fail("REPORT_PDF_FAILED", reason=excerpt(f"{type(exc).__name__}: {exc}", 160)) from None
    if done.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
        raise fail("REPORT_PDF_FAILED", reason=excerpt(done.stderr.strip() or f"exit code {done.returncode}", 160))
    return out
