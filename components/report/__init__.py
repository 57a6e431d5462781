"""The self-contained HTML report of a saved run (:mod:`.document`, rendered from the Jinja2 templates in ``templates/`` by
:mod:`.templating`, autoescape on), its PDF summary (:mod:`.pdf`) and the per-audit figure registry (:mod:`.builders`)."""
from .builders import REPORT_FIGURES, FigureBuilder, figures_for, model_report_figures, register_report_figures
from .document import MAX_TABLE_ROWS, key_numbers_frame, render_report, write_report
from .pdf import chromium_executable, write_pdf

__all__ = [
    "MAX_TABLE_ROWS",
    "REPORT_FIGURES",
    "chromium_executable",
    "FigureBuilder",
    "figures_for",
    "model_report_figures",
    "register_report_figures",
    "render_report",
    "key_numbers_frame",
    "write_pdf",
    "write_report",
]
