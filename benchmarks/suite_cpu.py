"""CPU time of the test suite, per test file: where the suite's time goes.

Issue 23 item 8 asks for the suite's CPU by file before and after making it
faster. This module is both a pytest plugin and the command that uses it:

    python -m benchmarks.suite_cpu [PYTEST ARGS ...]

runs ``python -m pytest -p benchmarks.suite_cpu PYTEST ARGS`` (for example
``-n 3 --dist loadgroup``), then prints one row per test file: the CPU seconds
spent in the pytest process running its tests (setup, call and teardown,
``time.process_time``), the CPU seconds of the child processes it waited for
(app servers, CLI runs, worker processes: ``RUSAGE_CHILDREN``), the number of
tests and the wall seconds, sorted by total CPU, with the totals and the share
of the top files. Under pytest-xdist every worker records its own tests.

A browser's CPU is not counted: Chromium is started by Playwright's driver,
whose children the test process never waits for. Module- and session-scoped
fixtures are charged to the first test that uses them, which is what a file
costs when it runs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

__all__ = ["main", "per_file"]

_OUT = "AUDIT_SUITE_CPU_DIR"


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # noqa: ANN001 - pytest's hook signature
    out = os.environ.get(_OUT)
    cpu, kids, wall = time.process_time(), _children(), time.perf_counter()
    yield
    if out:
        row = {"file": item.nodeid.split("::")[0], "cpu": time.process_time() - cpu,
               "children": _children() - kids, "wall": time.perf_counter() - wall}
        with open(Path(out) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def per_file(directory: Path) -> list[dict]:
    """Sum the recorded rows of ``directory`` by test file, largest total CPU first.

    Returns
    -------
    list of dict
        ``file``, ``tests``, ``cpu``, ``children``, ``total`` (s) and ``wall`` (s, summed over tests).
    """
    sums: dict[str, dict] = defaultdict(lambda: {"tests": 0, "cpu": 0.0, "children": 0.0, "wall": 0.0})
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            s = sums[row["file"]]
            s["tests"] += 1
            for k in ("cpu", "children", "wall"):
                s[k] += row[k]
    rows = [{"file": f, **s, "total": s["cpu"] + s["children"]} for f, s in sums.items()]
    return sorted(rows, key=lambda r: -r["total"])


def main(argv: list[str] | None = None) -> int:
    """Run pytest with this plugin and print the per-file CPU table; return pytest's exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=40, help="files to list (default 40)")
    args, pytest_args = parser.parse_known_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", "pytest", "-p", "benchmarks.suite_cpu", *pytest_args],
                               env=dict(os.environ, **{_OUT: tmp}))
        wall = time.perf_counter() - start
        rows = per_file(Path(tmp))
    total = sum(r["total"] for r in rows) or 1.0
    print(f"\nsuite wall time {wall:.0f} s; CPU {total:.0f} s in {sum(r['tests'] for r in rows)} tests "
          f"({sum(r['cpu'] for r in rows):.0f} s in pytest, {sum(r['children'] for r in rows):.0f} s in children)")
    print(f"{'file':60} {'tests':>5} {'pytest s':>9} {'children s':>10} {'total s':>8} {'share':>6}")
    for r in rows[: args.top]:
        print(f"{r['file'][:60]:60} {r['tests']:5d} {r['cpu']:9.1f} {r['children']:10.1f} {r['total']:8.1f} "
              f"{r['total'] / total:6.1%}")
    top = rows[: args.top]
    print(f"top {len(top)} files: {sum(r['total'] for r in top) / total:.0%} of the CPU; the other "
          f"{len(rows) - len(top)} files: {total - sum(r['total'] for r in top):.0f} s")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
