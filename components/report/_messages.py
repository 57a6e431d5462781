"""Message templates of the HTML/PDF report, registered once at import."""
from __future__ import annotations

from audit_core.errors import register_messages

__all__: list[str] = []

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
