"""The ``reliability-audit`` arguments: one subparser per command, one-line usage errors (exit 2), the exit codes."""
from __future__ import annotations

import argparse
import sys

__all__ = ["EXIT_GATE_FAILED", "EXIT_OK", "EXIT_RUN_FAILED", "EXIT_USAGE", "build_parser"]

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_RUN_FAILED = 3
_EPILOG = """exit codes: 0 ok · 1 gate failed · 2 usage/config error · 3 run failed
registry: --registry PATH, else $AUDIT_REGISTRY_PATH, else ~/.reliability_audit/registry.sqlite3"""


def _positive(text: str) -> int:
    """A whole number of at least 1 (worker counts); argparse turns the error into exit 2."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text[:20]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse that exits with 2 and one line (no usage dump) on bad arguments."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render ``--help``)."""
    p = _Parser(
        prog="reliability-audit",
        description="Run reliability audits from a config file and work with saved runs.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    def registry_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--registry", metavar="PATH",
                        help="registry file (default: $AUDIT_REGISTRY_PATH or ~/.reliability_audit/registry.sqlite3)")

    r = sub.add_parser("run", help="run the audits a config declares", epilog=_EPILOG,
                       description="Run every audit of CONFIG.yaml, save each as a run in the registry, and write its "
                       "tables (Parquet) and a JSON bundle to --out/<run id>/.")
    r.add_argument("config", metavar="CONFIG.yaml")
    r.add_argument("--out", metavar="DIR", default="audit-output", help="output folder (default: ./audit-output)")
    registry_arg(r)
    r.add_argument("--backend", choices=("serial", "processes", "dask"), default=None,
                   help="where batch work runs (default: serial; dask when a scheduler is given)")
    r.add_argument("--n-jobs", type=_positive, metavar="N", help="worker processes for --backend processes")
    r.add_argument("--dask-scheduler", metavar="ADDRESS", help="existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    r.add_argument("--dask-local", type=_positive, metavar="N", help="start a local Dask cluster of N worker processes")
    r.add_argument("--html", action="store_true", help="also write report.html next to each run's tables")

    rep = sub.add_parser("report", help="write the self-contained HTML report of a saved run", epilog=_EPILOG)
    rep.add_argument("run_id", metavar="RUN_ID")
    rep.add_argument("--html", required=True, metavar="OUT.html")
    rep.add_argument("--pdf", metavar="OUT.pdf", help="also print the one-page summary to a PDF with headless Chromium "
                     "(skipped with a message when Chromium is absent)")
    rep.add_argument("--baseline", metavar="RUN_A", help="open the summary with the release gate from RUN_A (comma-separated "
                     "run ids) to this run")
    registry_arg(rep)

    g = sub.add_parser("gate", help="release gate between two saved runs (Receipts)", epilog=_EPILOG,
                       description="Compare RUN_A (baseline) with RUN_B (candidate) through the release gate "
                       "(audit_core.runs.gate.compare_runs): execute the cube between the two gate states and "
                       "print the grounds, both verdicts and the receipt. Each side may list several runs "
                       "separated by commas (e.g. a model, a fragility and a transport run). "
                       "Exit 0 if the candidate's verdict is 'release', 1 otherwise.")
    g.add_argument("run_a", metavar="RUN_A")
    g.add_argument("run_b", metavar="RUN_B")
    g.add_argument("--scope", metavar="SCOPE", default=None,
                   help="deployment scope of both sides (default: production; also research, internal, regulated)")
    g.add_argument("--rules", metavar="RULES.yaml", help="release rules (norms + authority; default: the built-in rules)")
    g.add_argument("--json", action="store_true", help="print the gate rule by rule as one JSON document on stdout "
                   "(docs/cli.md); the notes and the verdict line go to stderr")
    g.add_argument("--junit", metavar="FILE.xml", help="also write the gate as JUnit XML: one testcase per rule (a "
                   "failed rule is a failure with its receipt, an unknown one is skipped with the reason)")
    g.add_argument("--markdown", metavar="FILE.md", help="also write the rules as a Markdown table (e.g. for a GitHub "
                   "job summary: append it to $GITHUB_STEP_SUMMARY)")
    registry_arg(g)

    ls = sub.add_parser("list", help="list saved runs, newest first", epilog=_EPILOG)
    ls.add_argument("--kind", metavar="K", help="only this audit kind")
    ls.add_argument("--fingerprint", metavar="F", help="only this dataset fingerprint (a prefix is enough)")
    ls.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    registry_arg(ls)

    ex = sub.add_parser("export", help="export a saved run as a JSON bundle, Parquet tables and/or a model card",
                        epilog=_EPILOG)
    ex.add_argument("run_id", metavar="RUN_ID")
    ex.add_argument("--bundle", metavar="OUT.json")
    ex.add_argument("--parquet", metavar="DIR")
    ex.add_argument("--model-card", metavar="OUT.md", help="a skops model card (Markdown): model, data fingerprint, "
                    "metrics, findings and the release verdict")
    ex.add_argument("--scope", metavar="SCOPE", default=None,
                    help="deployment scope of the model card's release verdict (default: production)")
    registry_arg(ex)

    cf = sub.add_parser("check-forecast", help="a label-free Transport run's forecasts against the labelled run's values",
                        epilog=_EPILOG, description="Compare the forecasts of FORECAST_RUN (a Transport run with "
                        "target_labels absent or hidden) with the values realised in LABELLED_RUN (the labelled run of "
                        "the same declaration on the same target records), averaged over refits, and print the table "
                        "and a one-line summary. Runs that do not match are refused (exit 2).")
    cf.add_argument("forecast_run", metavar="FORECAST_RUN")
    cf.add_argument("labelled_run", metavar="LABELLED_RUN")
    cf.add_argument("--format", choices=("text", "csv", "json"), default="text",
                    help="text: an aligned table and the summary line (default); csv: the table; json: table and counts")
    registry_arg(cf)

    im = sub.add_parser("import", help="import a JSON bundle into the registry (same run id)", epilog=_EPILOG)
    im.add_argument("bundle", metavar="BUNDLE.json")
    registry_arg(im)
    return p
