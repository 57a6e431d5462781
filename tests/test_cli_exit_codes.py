"""The exit-code table of ``docs/cli.md``, checked by running representative cases per row (real entry point).

The table is parsed from the document; every row must have at least one
case here and every case's code must be a row, so a code added to the
program or the document without the other fails. The usage/config row has
one case per class of the hardening round: arguments, counts over their
bound, hostile YAML, non-UTF-8 state files, missing columns, outputs that
are files, read-only registries and configs pointed at a "system file".
"""
from __future__ import annotations

import re
import sqlite3
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from audit_core.runs.registry import RunRegistry
from tests.test_cli import ROOT, cli

DOC = ROOT / "docs" / "cli.md"
CONFIG_HEAD = "data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\n"
STATE = 'grounds: {x: 3}\nnorms: {default: ok, rules: [{id: r, when: "x > 2", then: "no"}]}\nauthority: {r: "true"}\n'


def documented_codes(text: str) -> dict[int, str]:
    """``code -> meaning`` from the table under ``## Exit codes``."""
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|\s*$", section, flags=re.MULTILINE)
    return {int(code): meaning for code, meaning in rows}


def test_the_table_parser_reads_rows_only() -> None:
    doc = "## Exit codes\n\n| code | meaning |\n|---|---|\n| 0 | fine |\n| 7 | odd |\n\n## Next\n| 9 | not this |\n"
    assert documented_codes(doc) == {0: "fine", 7: "odd"}


@dataclass(frozen=True)
class Case:
    """One command line: ``setup(tmp)`` writes its files and returns the arguments after the registry."""

    code: int
    setup: Callable[[Path], list[str]]
    stderr: str  # a fragment the message must contain
    saves_nothing: bool = True
    subprocess: bool = False  # through the installed command (one case per row); else audit_cli.main in-process


def _cfg(tmp: Path, body: str, name: str = "cfg.yaml") -> str:
    (tmp / name).write_text(textwrap.dedent(body))
    return str(tmp / name)


def _run(body: str, *extra: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["run", _cfg(tmp, body), "--out", str(tmp / "out"), *extra]


def _two_model_runs(tmp: Path) -> list[str]:
    """A (held-out AUROC 0.82) and B (0.60): under scope internal, A release -> B block fails the gate."""
    reg = RunRegistry(tmp / "registry.sqlite3")
    ids = []
    for auc in (0.82, 0.60):
        metrics = pd.DataFrame({"split": ["test"], "metric": ["auroc"], "value": [auc]})
        ids.append(reg.save(audit_kind="model", dataset_name="d", dataset_fingerprint="f" * 64, grouping_hash=None,
                            model_spec={"kind": "logistic_regression"}, config={}, tables={"metrics": metrics}))
    return ["gate", ids[0], ids[1], "--scope", "internal"]


def _non_utf8_state(tmp: Path) -> list[str]:
    (tmp / "old.yaml").write_bytes(STATE.encode() + b"# caf\xe9 in Latin-1\n")
    (tmp / "new.yaml").write_text(STATE)
    return ["run", _cfg(tmp, CONFIG_HEAD + "audits: [{kind: receipts, mode: cube, old: old.yaml, new: new.yaml}]\n"),
            "--out", str(tmp / "out")]


def _failing_cube(tmp: Path) -> list[str]:
    (tmp / "old.yaml").write_text(STATE)
    (tmp / "new.yaml").write_text(STATE.replace("x", "y"))  # the hybrids lack x: the cube fails at run time
    return ["run", _cfg(tmp, CONFIG_HEAD + "audits: [{kind: receipts, mode: cube, old: old.yaml, new: new.yaml}]\n"),
            "--out", str(tmp / "out")]


def _out_is_a_file(tmp: Path) -> list[str]:
    (tmp / "out").write_text("not a folder")
    return ["run", _cfg(tmp, CONFIG_HEAD + "audits: [{kind: model, bootstrap: 0}]\n"), "--out", str(tmp / "out")]


def _schema_1_registry(tmp: Path) -> list[str]:
    """A registry written by the previous release (schema 1): browsable, but `run` may not save into it."""
    make_schema_1_registry(tmp / "registry.sqlite3")
    return ["run", _cfg(tmp, CONFIG_HEAD + "audits: [{kind: model, bootstrap: 0}]\n"), "--out", str(tmp / "out")]


def _system_file(tmp: Path) -> list[str]:
    """A config pointed at a file of 30 distinct long lines (like /etc/passwd) as a one-column table."""
    lines = [f"user{i}:x:{1000 + i}:{1000 + i}:User number {i}:/home/user{i}:/bin/bash" for i in range(30)]
    (tmp / "passwd").write_text("\n".join(["root:x:0:0:root:/root:/bin/bash", *lines]) + "\n")
    return ["run", _cfg(tmp, f"""\
        data: {{path: {tmp / 'passwd'}, delimiter: "\\t"}}
        dataset: {{targets: [{{kind: class, name: t, column: "root:x:0:0:root:/root:/bin/bash", positive: "yes"}}]}}
        model: {{kind: logistic_regression}}
        audits: [{{kind: model}}]
        """), "--out", str(tmp / "out")]


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi"))

CASES: dict[str, Case] = {
    "list-empty": Case(0, lambda tmp: ["list"], "", subprocess=True),
    "gate-fails": Case(1, _two_model_runs, "", saves_nothing=False, subprocess=True),
    "n-jobs-0": Case(2, _run(CONFIG_HEAD + "audits: [{kind: model}]\n", "--backend", "processes", "--n-jobs", "0"),
                     "argument --n-jobs: must be a whole number of at least 1, got 0", subprocess=True),
    "count-over-bound": Case(2, _run(CONFIG_HEAD + "audits: [{kind: model, bootstrap: 2000000000}]\n"),
                             "audits[0].bootstrap asks for 2,000,000,000 bootstrap replicates; the most allowed is "
                             "10,000 (limit AUDIT_MAX_BOOTSTRAP)"),
    "grid-over-bound": Case(2, _run(CONFIG_HEAD + "audits: [{kind: fragility, grid: ["
                                    + ", ".join(f"{i / 100_000:.5f}" for i in range(1, 100_001)) + "]}]\n"),
                            "audits[0].grid asks for 100,000 entries in one list"),
    "yaml-5000-deep": Case(2, _run(CONFIG_HEAD + "audits: " + "[" * 5000 + "]" * 5000 + "\n"),
                           "nests lists and mappings more than 100 levels deep (line 3)"),
    "yaml-duplicate-key": Case(2, _run(CONFIG_HEAD + "audits: [{kind: model}]\nmodel: {kind: lightgbm}\n"),
                               "has the key 'model' twice in one mapping (line 2 and line 4)"),
    "yaml-alias-bomb": Case(2, _run(CONFIG_HEAD + "audits: [{kind: model}]\n" + BOMB),
                            "expands to more than 1,000,000 values through its anchors and aliases"),
    "state-not-utf8": Case(2, _non_utf8_state, "is not UTF-8 text (byte"),
    "missing-codes-column": Case(2, _run(CONFIG_HEAD + "audits: [{kind: fragility, missing_codes: {incme: [-1]}}]\n"),
                                 "audits[0].missing_codes names the column 'incme', which is not in the data. "
                                 "Did you mean 'income_real'?"),
    "out-is-a-file": Case(2, _out_is_a_file, "is a file, not a folder"),
    "gate-junit-is-a-folder": Case(2, lambda tmp: [*_two_model_runs(tmp), "--junit", str(tmp)],
                                   "Check that its folder is a folder and is writable", saves_nothing=False),
    "registry-read-only": Case(2, _schema_1_registry, "is open read-only (it uses schema version 1, older than 2)"),
    "config-at-system-file": Case(2, _system_file, "Values present: 'user0:x:1000:1000:User number 0:/home/us'…, "),
    "run-failed": Case(3, _failing_cube, "the receipts audit failed (saved as failed run", saves_nothing=False,
                       subprocess=True),
}


def make_schema_1_registry(path: Path) -> str:
    """A registry file as the previous release wrote it (schema 1: no ``interrupted``, no ``owner``), one done run."""
    from audit_core.runs.registry import _schema

    v1 = (_schema._SCHEMA.replace(", 'interrupted'", "").replace("    error               TEXT,\n    owner               TEXT\n",
                                                                 "    error               TEXT\n"))
    assert "owner" not in v1 and "interrupted" not in v1
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA application_id = {_schema.APPLICATION_ID}")
    con.execute("PRAGMA user_version = 1")
    con.executescript(v1)
    con.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"), ("application", "x"),
                                                       ("created_at", "2024-01-01T00:00:00.000000+00:00")])
    con.execute("INSERT INTO runs VALUES ('20240101T000000000000-00000001', '2024-01-01T00:00:00.000000+00:00', "
                "'2024-01-01T00:00:00.000000+00:00', 'model', 'done', 'd', 'fp', NULL, 'lr', '{\"kind\": \"lr\"}', "
                "'{}', '{}', NULL)")
    con.commit()
    con.execute("PRAGMA journal_mode = WAL")
    con.close()
    return "20240101T000000000000-00000001"


def test_the_reliability_document_copies_the_same_codes() -> None:
    reliability = documented_codes((ROOT / "docs" / "reliability.md").read_text().split("## Hardening round 2", 1)[1]
                                   .replace("### Exit codes", "## Exit codes", 1))
    assert set(reliability) == set(documented_codes(DOC.read_text()))


def test_every_documented_code_has_a_case_and_every_case_is_documented() -> None:
    codes = documented_codes(DOC.read_text())
    assert set(codes) == {0, 1, 2, 3}
    assert {c.code for c in CASES.values()} == set(codes)


def _in_process(args: list[str], cwd: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch):
    """``audit_cli.main`` in this process (the same program, without the start-up cost of a new interpreter)."""
    from types import SimpleNamespace

    from audit_cli import main

    monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        code = main(args)
    except SystemExit as exc:  # argparse
        code = exc.code
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def test_every_row_is_run_through_the_installed_command() -> None:
    assert {c.code for c in CASES.values() if c.subprocess} == set(documented_codes(DOC.read_text()))


@pytest.mark.parametrize("name", sorted(CASES))
def test_exit_code_matches_the_table(tmp_path: Path, name: str, capsys, monkeypatch) -> None:
    case = CASES[name]
    reg = tmp_path / "registry.sqlite3"
    args = case.setup(tmp_path)
    before = len(RunRegistry(reg).list_runs()) if reg.exists() else 0
    if case.subprocess:
        done = cli(*args, "--registry", str(reg), cwd=tmp_path)
    else:
        done = _in_process([*args, "--registry", str(reg)], tmp_path, capsys, monkeypatch)
    assert done.returncode == case.code, (done.returncode, done.stderr[-2000:])
    assert documented_codes(DOC.read_text())[done.returncode]
    assert case.stderr in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) <= 8  # one message (argparse adds its usage lines), never a dump
    if case.saves_nothing:
        assert len(RunRegistry(reg).list_runs()) == before  # refused before any run was saved
        assert not (tmp_path / "out").is_dir() or not any((tmp_path / "out").iterdir())


def test_a_config_pointed_at_a_system_file_quotes_at_most_five_short_values(tmp_path: Path, capsys, monkeypatch) -> None:
    args = _system_file(tmp_path)
    done = _in_process([*args, "--registry", str(tmp_path / "r.sqlite3")], tmp_path, capsys, monkeypatch)
    assert done.returncode == 2
    message = done.stderr.strip()
    assert message.count("'user") == 5 and message.endswith("and 25 more.")  # 30 values below the header: 5 quoted
    assert len(message) < 600 and "\n" not in message
    assert "/home/user1:/bin/bash" not in message  # no value is quoted whole past 40 characters
