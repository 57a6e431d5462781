"""The self-contained HTML report of a saved run (:mod:`.document`) and the per-audit figure registry (:mod:`.builders`)."""
from .builders import REPORT_FIGURES, FigureBuilder, figures_for, model_report_figures, register_report_figures
from .document import MAX_TABLE_ROWS, render_report, summary_frame, write_report

__all__ = [
    "MAX_TABLE_ROWS",
    "REPORT_FIGURES",
    "FigureBuilder",
    "figures_for",
    "model_report_figures",
    "register_report_figures",
    "render_report",
    "summary_frame",
    "write_report",
]
