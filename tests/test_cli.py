"""The `reliability-audit` command through its real entry point: outputs, messages, exit codes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("reliability-audit")
#: The installed command imports this checkout's packages (not whichever tree ``pip install -e`` pointed at).
CLI_ENV = {"PYTHONPATH": str(ROOT)}
BASE = """\
data: {sample: loan_synthetic}
model: {kind: logistic_regression, seed: 0}
audits: [{kind: model, bootstrap: 20, chunk_size: 5}]
"""


def cli(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the installed console command (``pip install -e .``)."""
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=240,
        env={**os.environ, **CLI_ENV, **(env or {})},
    )


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    return tmp_path / "registry.sqlite3"


def _config(tmp_path: Path, text: str, name: str = "cfg.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_console_script_is_installed_and_every_command_has_help() -> None:
    assert SCRIPT.is_file(), "run `pip install --no-deps -e .` (make run / make test do it)"
    top = cli("--help")
    assert top.returncode == 0 and "exit codes: 0 ok · 1 gate failed · 2 usage/config error · 3 run failed" in top.stdout
    for command in ("run", "gate"):
        assert cli(command, "--help").returncode == 0
    assert "--dask-scheduler ADDRESS" in cli("run", "--help").stdout


def test_run_writes_registry_tables_bundle_and_report(tmp_path: Path, reg: Path) -> None:
    cfg = _config(tmp_path, BASE)
    out = tmp_path / "out"
    done = cli("run", str(cfg), "--registry", str(reg), "--out", str(out), "--html")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # not a TTY: no progress bars
    kind, status, run_id, folder = done.stdout.strip().split("\t")
    assert (kind, status) == ("model", "done")
    record = RunRegistry(reg).load(run_id)
    assert list(record.tables) == ["metrics", "grouping", "baseline", "metric_intervals"]
    assert record.manifest["seeds"] == {"model": 0, "bootstrap": 0, "refits": []}
    assert record.manifest["inputs"][0]["name"] == "loan_synthetic.csv"
    assert len(record.manifest["config_sha256"]) == 64
    for name, df in record.tables.items():
        pd.testing.assert_frame_equal(pd.read_parquet(Path(folder) / "tables" / f"{name}.parquet"), df)
    assert json.loads((Path(folder) / "bundle.json").read_text())["run"]["run_id"] == run_id
    assert (Path(folder) / "report.html").stat().st_size > 1_000_000  # plotly.js embedded

    listed = cli("list", "--registry", str(reg), "--kind", "model", "--json")
    assert [json.loads(line)["run_id"] for line in listed.stdout.splitlines()] == [run_id]
    assert cli("list", "--registry", str(reg), "--fingerprint", "0000").stdout.strip() == "no saved runs"
    html = tmp_path / "r.html"
    assert cli("report", run_id, "--html", str(html), "--registry", str(reg)).returncode == 0
    assert "key-numbers-table" in html.read_text()

    # export -> import into a fresh registry restores the same run id
    bundle = tmp_path / "b.json"
    assert cli("export", run_id, "--bundle", str(bundle), "--registry", str(reg)).returncode == 0
    other = tmp_path / "other.sqlite3"
    imported = cli("import", str(bundle), "--registry", str(other))
    assert imported.returncode == 0 and imported.stdout.strip() == run_id
    again = cli("import", str(bundle), "--registry", str(other))
    assert again.returncode == 2 and f"A run with id {run_id!r} is already in the registry" in again.stderr


def test_backends_write_identical_tables(tmp_path: Path, reg: Path) -> None:
    cfg = _config(tmp_path, BASE.replace("bootstrap: 20", "bootstrap: 40, refit_seeds: [1]"))
    ids = []
    # loky processes are compared in-process in test_parallel.py; here the CLI's own cluster.
    for extra in ([], ["--dask-local", "1"]):
        done = cli("run", str(cfg), "--registry", str(reg), "--out", str(tmp_path / "o"), *extra)
        assert done.returncode == 0, done.stderr
        ids.append(done.stdout.split("\t")[2])
    records = [RunRegistry(reg).load(i) for i in ids]
    assert [r.manifest["execution"]["backend"] for r in records] == ["serial", "dask"]
    for other in records[1:]:
        assert list(other.tables) == list(records[0].tables)
        for name in records[0].tables:
            pd.testing.assert_frame_equal(other.tables[name], records[0].tables[name], check_exact=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "data: {sample: loan_synthetic}\nmodle: {kind: logistic_regression}\naudits: [{kind: model}]\n",
            "error: Unknown key 'modle' in the config. Did you mean 'model'? Allowed keys: audits, data, dataset, model, name.",
        ),
        (
            "data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression, seed: '1'}\naudits: [{kind: model}]\n",
            "error: model.seed must be a whole number, got a string ('1').",
        ),
        (
            "data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\naudits: [{kind: model, bootstrapp: 3}]\n",
            "error: Unknown key 'bootstrapp' in audits[0]. Did you mean 'bootstrap'? "
            "Allowed keys: bootstrap, bootstrap_seed, chunk_size, level, refit_seeds.",
        ),
        (
            "data: {sample: loan_synthetic}\ndataset: {targets: [{kind: expression, name: rich, expression: 'income_real >= '}]}\n"
            "model: {kind: logistic_regression}\naudits: [{kind: model}]\n",
            "error: Bad target definition in dataset.targets[0]: Syntax error at character 16: expected a value, "
            "a column name, a function call or '(', found the end of the expression. Context: income_real >=  ▶ ",
        ),
        (
            "data: {sample: loan_synthetic}\ndataset: {targets: [{kind: class, name: d, column: defaultd, positive: 'yes'}]}\n"
            "model: {kind: logistic_regression}\naudits: [{kind: model}]\n",
            "error: Target `d` uses column `defaultd`, which is not in the data. Did you mean `defaulted`?",
        ),
        (
            "data: {sample: loan_synthetic}\nmodel: {kind: logistic_regression}\naudits: [{kind: fragilty}]\n",
            "error: Unknown audit kind 'fragilty' in audits[0].kind. Did you mean 'fragility'? "
            "Installed audit kinds: fragility, model, receipts, transport.",
        ),
        ("data: [unclosed\n", "error: The config file cfg.yaml is not valid YAML: line 2, column 1: expected ',' or ']', but got '<stream end>'."),
        ("- just\n- a list\n", "error: the config must be a mapping of keys to values, got a list."),
    ],
    ids=["unknown-key", "wrong-type", "unknown-audit-option", "bad-expression", "unknown-column", "unknown-audit", "not-yaml", "not-mapping"],
)
def test_bad_configs_exit_2_with_exact_messages(tmp_path: Path, reg: Path, text: str, message: str) -> None:
    _config(tmp_path, text)
    done = cli("run", "cfg.yaml", "--registry", str(reg), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == message.strip()
    assert RunRegistry(reg).list_runs().empty  # nothing saved


def test_missing_data_file_names_the_resolved_path(tmp_path: Path, reg: Path) -> None:
    _config(tmp_path, "data: {path: data/nope.csv}\nmodel: {kind: logistic_regression}\naudits: [{kind: model}]\n")
    done = cli("run", "cfg.yaml", "--registry", str(reg), cwd=tmp_path)
    base = tmp_path.resolve()
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: The data file {base / 'data' / 'nope.csv'} named in data.path does not exist "
        f"(relative paths are resolved against {base})."
    )
    missing = cli("run", "absent.yaml", "--registry", str(reg), cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.strip() == "error: The config file absent.yaml does not exist."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "dask"], "error: --backend dask needs --dask-scheduler ADDRESS or --dask-local N"),
        (["--n-jobs", "2"], "error: --n-jobs applies to --backend processes only"),
        (["--dask-local", "1", "--dask-scheduler", "tcp://x:1"], "error: use either --dask-scheduler or --dask-local, not both"),
    ],
)
def test_bad_backend_options_exit_2(tmp_path: Path, reg: Path, args: list[str], message: str) -> None:
    cfg = _config(tmp_path, BASE)
    done = cli("run", str(cfg), "--registry", str(reg), *args)
    assert done.returncode == 2 and done.stderr.strip() == message


def test_argparse_errors_exit_2() -> None:
    done = cli("run")
    assert done.returncode == 2 and "error: the following arguments are required: CONFIG.yaml" in done.stderr


def test_unknown_run_ids_exit_2(reg: Path, tmp_path: Path) -> None:
    done = cli("report", "nope", "--html", str(tmp_path / "x.html"), "--registry", str(reg))
    assert done.returncode == 2 and "No saved run with id 'nope'" in done.stderr
    gate = cli("gate", "a", "b", "--registry", str(reg))
    assert gate.returncode == 2 and "No saved run with id 'a'" in gate.stderr


def test_a_failing_audit_is_saved_as_failed_and_exits_3(tmp_path: Path, reg: Path) -> None:
    """An audit that raises: the run is stored as failed and the command exits 3."""
    cfg = _config(tmp_path, BASE.replace("[{kind: model, bootstrap: 20, chunk_size: 5}]", "[{kind: boom}, {kind: model, bootstrap: 0}]"))
    code = textwrap.dedent(
        f"""
        import sys
        from audit_core.runs.plugin import AuditRunner, register_audit
        def run(options, *, context, progress):
            raise RuntimeError("disk full")
        register_audit(AuditRunner(kind="boom", title="Boom", validate_config=lambda o, where: o, run=run))
        import os
        from audit_cli import main
        rc = main(["run", {str(cfg)!r}, "--registry", {str(reg)!r}, "--out", {str(tmp_path / 'o')!r}])
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(rc)  # as console_main ends: a native pool can abort the interpreter's own shutdown
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 3
    runs = RunRegistry(reg).list_runs().sort_values("created_at")
    assert list(runs["status"]) == ["failed", "done"]  # the other audit still ran
    failed = RunRegistry(reg).load(runs["run_id"].iloc[0])
    assert failed.error == "RuntimeError: disk full"
    assert f"error: the boom audit failed (saved as failed run {failed.run_id}): RuntimeError: disk full" in done.stderr
