"""The ``reliability-audit`` subcommands, and :func:`main`: dispatch, and errors turned into exit codes.

The library is imported inside the commands, after parsing, so ``--help``
and usage errors answer before any heavy import.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import faulthandler
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from .parser import EXIT_GATE_FAILED, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, build_parser

if TYPE_CHECKING:  # the library is imported inside the commands, after parsing
    from audit_core.runs.gate import GateResult
    from audit_core.runs.parallel import Backend
    from audit_core.runs.plugin import ExecutionOptions
    from audit_core.runs.registry import RunRecord, RunRegistry

__all__ = ["main"]


def terminal_text(text: object) -> str:
    """:func:`audit_core.safe_text.terminal_text`, imported when first used (``--help`` imports no library)."""
    from audit_core.safe_text import terminal_text as shown

    return shown(text)


def _err(message: str) -> None:
    print(f"error: {terminal_text(message)}", file=sys.stderr)


def _terminal_lines(text: str) -> str:
    """``text`` with :func:`~audit_core.safe_text.terminal_text` applied to each line and tab-separated cell."""
    return "\n".join("\t".join(map(terminal_text, line.split("\t"))) for line in text.split("\n"))


class _TerminalStream:
    """A text stream through which everything the CLI prints passes: control characters shown as escapes.

    A name from data (a column, a category, a run name) may hold an escape
    sequence (an OSC 8 hyperlink, a clear-screen, a window title) or a C0/C1
    control; written through this stream it reaches the terminal as visible
    text (``\\x1b]8;;…``). The CLI's own line breaks and tabs are kept; the
    fields of its tab-separated lines are escaped where they are printed, so
    a name cannot forge a line or a column either.
    """

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(_terminal_lines(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


@contextlib.contextmanager
def _terminal_output() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`_TerminalStream` while a command runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _TerminalStream(out), _TerminalStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def _registry(path: str | None) -> RunRegistry:
    from audit_core.runs.registry import RunRegistry

    return RunRegistry(path)


class _Bars:
    """tqdm progress bars on a TTY (one per step); silent otherwise."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.step: str | None = None
        self.bar: Any = None

    def __call__(self, done: int, total: int, step: str) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if step != self.step:
            self.close()
            self.step = step
            self.bar = tqdm(total=total, desc=terminal_text(step), unit="item", leave=False,
                            file=getattr(sys.stderr, "raw", sys.stderr))  # the bar's own \r and escapes
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@contextlib.contextmanager
def _execution(args: argparse.Namespace) -> Iterator[ExecutionOptions]:
    from audit_core.runs.plugin import ExecutionOptions
    from audit_core.runs.parallel import local_cluster

    if args.dask_local is not None and args.dask_scheduler:
        raise _Usage("use either --dask-scheduler or --dask-local, not both")
    wants_dask = args.dask_local is not None or bool(args.dask_scheduler)
    backend: Backend = args.backend or ("dask" if wants_dask else "serial")
    if wants_dask and backend != "dask":
        raise _Usage(f"--dask-scheduler/--dask-local need --backend dask, not {backend!r}")
    if backend == "dask" and not wants_dask:
        raise _Usage("--backend dask needs --dask-scheduler ADDRESS or --dask-local N")
    if args.n_jobs is not None and backend != "processes":
        raise _Usage("--n-jobs applies to --backend processes only")
    if args.dask_local is not None:
        with local_cluster(args.dask_local):  # the cluster's client is the current client
            yield ExecutionOptions(backend="dask")
        return
    yield ExecutionOptions(backend=backend, n_jobs=args.n_jobs, scheduler_address=args.dask_scheduler)


class _Usage(Exception):
    """A usage error detected after parsing (exit 2)."""


class _OutputsLost(Exception):
    """A run was saved but its output files could not be written (exit 3)."""


def _check_out(out: Path) -> None:
    """Refuse an --out that is a file, cannot be created or cannot be written, before any run starts."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise _Usage(f"--out {out} is a file, not a folder: name a folder (it is created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise _Usage(f"--out {out} cannot be written ({exc.strerror or exc}): name a writable folder") from None


def _write_outputs(record: RunRecord, out: Path, *, html: bool) -> Path:
    from audit_core.runs.bundle import export_bundle
    from audit_core.runs.export import write_file, write_parquet_tables

    folder = out / record.run_id
    write_parquet_tables(record, folder / "tables")
    write_file(folder / "bundle.json", export_bundle(record))
    if html:
        from components.report import write_report

        write_report(record, folder / "report.html")
    return folder


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signal.Signals(signum).name}")


def _cmd_run(args: argparse.Namespace) -> int:
    from audit_core.errors import AuditInputError
    from audit_core.limits import COUNT_FIELDS, Limits
    from audit_core.runs.execute import run_config
    from audit_core.runs.config import load_config

    limits = Limits.from_env()
    for option, count in COUNT_FIELDS["cli"].items():  # worker counts: --n-jobs, --dask-local
        limits.check_count(count, getattr(args, option), where="--" + option.replace("_", "-"))
    config = load_config(args.config)
    registry = _registry(args.registry)
    registry.require_writable()  # a read-only registry: refuse before any work is done
    _check_out(Path(args.out))
    bars = _Bars()
    # SIGTERM behaves like Ctrl-C: run_config saves the current run as failed, then main() exits 3.
    previous = signal.signal(signal.SIGTERM, _terminate)
    folders: dict[str, Path | AuditInputError] = {}

    def write_folder(record: RunRecord) -> None:
        """Each run's output folder is written before the run is marked done (a kill leaves it not done)."""
        try:
            folders[record.run_id] = _write_outputs(record, Path(args.out), html=args.html)
        except AuditInputError as exc:  # e.g. a full disk: the results are sound, the run is still done
            folders[record.run_id] = exc

    try:
        with _execution(args) as execution:
            outcomes = run_config(config, registry=registry, base_dir=Path.cwd(), execution=execution, progress=bars,
                                  before_done=write_folder)
    finally:
        signal.signal(signal.SIGTERM, previous)
        bars.close()
    status = EXIT_OK
    for o in outcomes:
        if o.status == "done":
            folder = folders[o.run_id]
            if isinstance(folder, AuditInputError):
                raise _OutputsLost(f"{folder.message} The {o.kind} run {o.run_id} is saved in the registry: "
                                   f"write its files again with `reliability-audit export {o.run_id}`.")
            print("\t".join(map(terminal_text, (o.kind, "done", o.run_id, str(folder)))))
            from audit_core.findings import record_findings

            record = registry.load(o.run_id)
            _print_findings(record_findings(record), indent="  ")
            for weak in record.manifest.get("warnings") or ():  # short partitions, a stress that could not run
                print(f"  warning: {terminal_text(weak['message'])}")
        else:
            print("\t".join(map(terminal_text, (o.kind, "failed", o.run_id, str(o.error)))))
            _err(f"the {o.kind} audit failed (saved as failed run {o.run_id}): {o.error}")
            status = EXIT_RUN_FAILED
    return status


def _print_findings(findings, *, indent: str = "") -> None:
    """One line per finding: ``severity: sentence``."""
    for f in findings:
        print(f"{indent}{f.severity}: {terminal_text(f.text)}")


def _cmd_report(args: argparse.Namespace) -> int:
    from audit_core.errors import AuditInputError
    from components.report import write_pdf, write_report

    registry = _registry(args.registry)
    record = registry.load(args.run_id)
    gate = None
    if args.baseline:
        from audit_core.runs.gate import compare_runs

        gate = compare_runs([registry.load(i) for i in args.baseline.split(",") if i], record)
    path = write_report(record, args.html, gate=gate)
    print(path)
    if args.pdf:
        try:
            print(write_pdf(path, args.pdf))
        except AuditInputError as exc:  # no Chromium, or it failed: the HTML report stands
            print(f"warning: {exc.message}", file=sys.stderr)
    return EXIT_OK


def _cmd_gate(args: argparse.Namespace) -> int:
    from audit_core.runs.gate import compare_runs
    from audit_core.safe_text import read_text_file

    rules = None
    if args.rules:
        path = Path(args.rules)
        if not path.is_file():
            raise _Usage(f"the rules file {path} does not exist")
        rules = read_text_file(path, what=f"The rules file {path}")
    registry = _registry(args.registry)
    side = {name: [registry.load(i) for i in getattr(args, name).split(",") if i] for name in ("run_a", "run_b")}
    if not side["run_a"] or not side["run_b"]:
        raise _Usage("RUN_A and RUN_B each need at least one run id")
    result = compare_runs(side["run_a"], side["run_b"], rules_yaml=rules, scope=args.scope)
    from audit_core.runs.gate_context import comparison_notes

    notes = comparison_notes(side["run_a"], side["run_b"])  # different data or configurations: said, not hidden
    _write_gate_files(args, result, notes)
    verdict = "gate: PASSED" if result.passed else "gate: FAILED"
    if args.json:
        from audit_core.findings.gate_report import gate_report

        print(json.dumps(gate_report(result, notes=notes).to_dict(), indent=2, sort_keys=True))
        for line in [*(f"note: {note}" for note in notes), verdict]:  # stdout stays one JSON document
            print(line, file=sys.stderr)
        return EXIT_OK if result.passed else EXIT_GATE_FAILED
    print(result.to_frame().to_string(index=False))
    print(result.summary_text())
    from audit_core.findings import gate_findings

    _print_findings(gate_findings(result))
    for note in notes:
        print(f"note: {note}")
    print(verdict)
    return EXIT_OK if result.passed else EXIT_GATE_FAILED


def _write_gate_files(args: argparse.Namespace, result: GateResult, notes: list[str]) -> None:
    """``--junit`` / ``--markdown``: the gate rule by rule, each file written atomically (a failed write leaves
    none; the error is one line and exit 2)."""
    if not args.junit and not args.markdown:
        return
    import io

    from audit_core.findings.gate_report import gate_report
    from audit_core.runs.export import write_file

    report = gate_report(result, notes=notes)
    if args.junit:
        buf = io.BytesIO()
        report.to_junit().write(buf, encoding="utf-8", xml_declaration=True)
        write_file(args.junit, buf.getvalue() + b"\n")
        print(f"JUnit XML: {args.junit}", file=sys.stderr)
    if args.markdown:
        write_file(args.markdown, report.to_markdown().encode("utf-8"))
        print(f"Markdown: {args.markdown}", file=sys.stderr)


def _cmd_list(args: argparse.Namespace) -> int:
    runs = _registry(args.registry).list_runs(audit_kind=args.kind)
    if args.fingerprint:
        runs = runs[runs["dataset_fingerprint"].str.startswith(args.fingerprint)]
    if args.json:
        for row in runs.to_dict(orient="records"):
            print(json.dumps(row, sort_keys=True, default=str))
    elif runs.empty:
        print("no saved runs")
    else:
        view = runs.assign(dataset_fingerprint=runs["dataset_fingerprint"].str[:12])
        cols = ["run_id", "created_at", "audit_kind", "status", "dataset_name", "dataset_fingerprint", "model", "n_tables"]
        print(view[cols].to_string(index=False))
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    from audit_core.runs.bundle import export_bundle
    from audit_core.runs.export import write_file, write_parquet_tables

    if not args.bundle and not args.parquet and not args.model_card:
        raise _Usage("export needs --bundle OUT.json, --parquet DIR and/or --model-card OUT.md")
    record = _registry(args.registry).load(args.run_id)
    if args.bundle:
        write_file(args.bundle, export_bundle(record))
        print(args.bundle)
    if args.parquet:
        for p in write_parquet_tables(record, args.parquet):
            print(p)
    if args.model_card:
        from audit_core.findings.card import write_model_card
        from audit_core.runs.gate import DEFAULT_GATE_SCOPE

        print(write_model_card(record, args.model_card, scope=args.scope or DEFAULT_GATE_SCOPE))
    return EXIT_OK


def _cmd_import(args: argparse.Namespace) -> int:
    from audit_core.runs.bundle import import_bundle

    path = Path(args.bundle)
    if not path.is_file():
        raise _Usage(f"the bundle file {path} does not exist")
    run_id = import_bundle(_registry(args.registry), path.read_bytes(), name=path.name)
    print(run_id)
    return EXIT_OK


def _cmd_check_forecast(args: argparse.Namespace) -> int:
    from audit_core.forecast.check import check_forecast_runs
    from audit_core.safe_text import csv_text, map_text

    check = check_forecast_runs(_registry(args.registry), args.forecast_run, args.labelled_run)
    table = check.table
    if args.format == "csv":
        sys.stdout.write(csv_text(table, index=False))
    elif args.format == "json":
        print(json.dumps({"sentence": check.summary(), "n": check.n, "n_inside": check.n_inside,
                          "n_beats_naive": check.n_beats_naive, "n_unknown": check.n_unknown,
                          "n_unmatched": check.n_unmatched, "level": check.level,
                          "table": json.loads(table.to_json(orient="records"))}, sort_keys=True))
    else:
        shown = ["model", "mapping", "quantity", "method", "status", "value", "low", "high", "realised", "inside",
                 "naive", "beats_naive"]
        print(map_text(table[shown], terminal_text).to_string(index=False, float_format=lambda v: f"{v:.4f}")
              if len(table) else "no forecast quantity was realised")
        print(terminal_text(check.summary()))
    return EXIT_OK


_COMMANDS = {
    "run": _cmd_run,
    "check-forecast": _cmd_check_forecast,
    "report": _cmd_report,
    "gate": _cmd_gate,
    "list": _cmd_list,
    "export": _cmd_export,
    "import": _cmd_import,
}


def _stacks_on_usr1() -> None:
    """``kill -USR1 PID`` prints every thread's stack to stderr (where a long run is); the run goes on.

    Only when stderr is a real file: a caller that captures it in memory (a test calling :func:`main`) has none.
    """
    if not hasattr(signal, "SIGUSR1"):
        return
    try:
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True, chain=False)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both an OSError and a ValueError
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``reliability-audit``; returns the exit code (see the module docstring)."""
    args = build_parser().parse_args(argv)  # --help and usage errors exit here, before heavy imports
    from audit_core.errors import AuditInputError
    from audit_core.native_threads import pin_blas_threads

    pin_blas_threads()  # the same fixed BLAS thread count as the app, so a run's digits match it
    _stacks_on_usr1()

    try:
        with _terminal_output():
            return _COMMANDS[args.command](args)
    except _Usage as exc:
        _err(str(exc))
        return EXIT_USAGE
    except _OutputsLost as exc:
        _err(str(exc))
        return EXIT_RUN_FAILED
    except AuditInputError as exc:
        _err(exc.message)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        _err(f"interrupted ({exc})" if str(exc) else "interrupted")
        return EXIT_RUN_FAILED
    except Exception as exc:  # noqa: BLE001 - one line, no traceback, for the operator
        _err(f"unexpected {type(exc).__name__}: {exc}")
        return EXIT_RUN_FAILED


def console_main() -> None:
    """The installed ``reliability-audit`` command and ``python -m audit_cli``: :func:`main`, then a hard exit.

    After the command has finished and its output is flushed, the process
    ends with ``os._exit`` instead of the interpreter's normal shutdown. The
    native thread pools loaded by the numerical libraries (OpenMP, OpenBLAS)
    sometimes aborted the process during that shutdown ("terminate called
    without an active exception", exit 134) after a successful run: 2 of 6
    runs of a model audit with ``--html``, 0 of 8 with one BLAS/OpenMP thread.
    Nothing of the command's work happens at that point; every run is saved
    and every file closed before :func:`main` returns.
    """
    import logging

    code = main()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
