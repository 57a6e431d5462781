"""``reliability-audit``: the command line (run audits from a config, report, gate, list, export, import)."""
from .commands import EXIT_GATE_FAILED, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, build_parser, main

__all__ = ["EXIT_GATE_FAILED", "EXIT_OK", "EXIT_RUN_FAILED", "EXIT_USAGE", "build_parser", "main"]
