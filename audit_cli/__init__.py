"""``reliability-audit``: run audits headless from a config, report, gate and list runs.

Installed as a console command by ``pip install -e .`` (``make run`` /
``make test`` do it); ``python -m audit_cli`` is the same program. It is its
own package because it needs the Plotly-based HTML report
(``components.report``), which the library ``audit_core`` never imports, and
it is not part of the Streamlit app. See ``docs/cli.md``.

* :mod:`audit_cli.parser` — the arguments, ``--help`` and the exit codes;
* :mod:`audit_cli.commands` — the subcommands and :func:`main`, which
  dispatches to them and turns errors into exit codes.

Exit codes
----------
0  success (``gate``: the release gate passed)
1  ``gate``: the release gate failed
2  usage or config error (bad arguments, invalid config, missing file,
   unknown run id, data that does not match its declarations, invalid gate
   rules)
3  a run failed (saved as a ``failed`` run with its error), the command was
   interrupted (Ctrl-C / SIGTERM: the current run is saved as ``failed``),
   or an unexpected error
"""
from .commands import console_main, main
from .parser import EXIT_GATE_FAILED, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, build_parser

__all__ = ["EXIT_GATE_FAILED", "EXIT_OK", "EXIT_RUN_FAILED", "EXIT_USAGE", "build_parser", "console_main", "main"]
