"""`reliability-audit` with the Fragility and Receipts audits, the release gate, and interrupts (real entry point)."""
from __future__ import annotations

import signal
import os
import subprocess
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from audit_core.runs.plugins.fragility import OPTION_KEYS
from audit_core.runs.registry import RunRegistry
from tests.test_cli import CLI_ENV, ROOT, SCRIPT, _config, cli

FRAGILITY = """\
data: {sample: loan_synthetic}
model: {kind: logistic_regression, seed: 0}
audits:
  - {kind: fragility, max_cases: 40, chunk_size: 15, n_boot: 10, shap_max_cases: 0, search_max_cases: 10,
     perm_repeats: 1, stress_draws: 4}
"""
OLD_STATE = """\
grounds: {x: 3}
norms: {default: ok, rules: [{id: r, when: "x > 2", then: "no"}]}
authority: {r: "true"}
"""


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    return tmp_path / "registry.sqlite3"


@pytest.fixture(scope="module")
def fragility_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """One fragility run through the CLI: (registry, run id, output folder)."""
    tmp = tmp_path_factory.mktemp("frag")
    reg = tmp / "registry.sqlite3"
    done = cli("run", str(_config(tmp, FRAGILITY)), "--registry", str(reg), "--out", str(tmp / "out"), "--html")
    assert done.returncode == 0, done.stderr
    kind, status, run_id, folder = done.stdout.splitlines()[0].split("\t")  # then its findings, indented
    assert (kind, status) == ("fragility", "done")
    return reg, run_id, folder


def test_fragility_run_stores_the_app_tables_and_a_report(fragility_run) -> None:
    reg, run_id, folder = fragility_run
    record = RunRegistry(reg).load(run_id)
    assert list(record.tables) == ["certificates", "auroc", "incremental", "search", "delta", "temperature", "scores", "metrics"]
    assert len(record.tables["certificates"]) == 40
    assert record.manifest["seeds"] == {"model": 0, "certificate": 0, "cases": 0, "stressors": 0}
    assert record.manifest["key_numbers"]["n_cases"] == 40
    assert {"python", "numpy", "scikit-learn", "lightgbm"} <= set(record.manifest["versions"])
    html = (Path(folder) / "report.html").read_text()
    assert 'id="fig-0"' in html and "mean_fds" in html
    for name, df in record.tables.items():
        pd.testing.assert_frame_equal(pd.read_parquet(Path(folder) / "tables" / f"{name}.parquet"), df)


def test_gate_exit_codes_on_runs_built_to_pass_and_to_fail(fragility_run) -> None:
    """A: the CLI fragility run (AUROC ≈ 0.82). B: the same run with a held-out AUROC of 0.6 (blocked)."""
    reg, good_id, _ = fragility_run
    registry = RunRegistry(reg)
    good = registry.load(good_id)
    metrics = good.tables["metrics"].copy()
    metrics.loc[(metrics["split"] == "test") & (metrics["metric"] == "auroc"), "value"] = 0.6
    bad_id = registry.save(audit_kind="fragility", dataset_name=good.dataset_name,
                           dataset_fingerprint=good.dataset_fingerprint, grouping_hash=good.grouping_hash,
                           model_spec=good.model_spec, config=good.config,
                           tables={**good.tables, "metrics": metrics}, manifest=good.manifest)
    fails = cli("gate", good_id, bad_id, "--scope", "internal", "--registry", str(reg))
    assert fails.returncode == 1, fails.stderr
    assert "release gate (internal): A release -> B block: FAILED; receipt {G:test_auroc}" in fails.stdout
    assert fails.stdout.strip().endswith("gate: FAILED")
    # the gate's findings, in words: the verdict with its rule, and what accounts for the change
    assert ("alert: Release is blocked: the model ranks held-out cases with an AUROC of 0.60, below the 0.70 minimum."
            in fails.stdout)
    assert ("info: Against the baseline runs the verdict goes from allowed to blocked; the model's ranking quality on "
            "held-out rows (AUROC) alone accounts for the change.") in fails.stdout
    passes = cli("gate", bad_id, good_id, "--scope", "internal", "--registry", str(reg))
    assert passes.returncode == 0, passes.stderr
    assert "A block -> B release: PASSED; receipt {G:test_auroc}" in passes.stdout
    # production also needs transport grounds: unknown -> refer, which does not pass
    refer = cli("gate", bad_id, good_id, "--registry", str(reg))
    assert refer.returncode == 1 and "-> B refer: FAILED" in refer.stdout
    # every Transport ground is absent (the runs are fragility runs)
    assert ("absent grounds: ood_ece, worst_class_coverage_90, worst_subgroup_coverage_90, n_transport_sensitive, "
            "n_transport_worse") in refer.stdout
    unknown = cli("gate", good_id, "nope", "--registry", str(reg))
    assert unknown.returncode == 2 and "No saved run with id 'nope'" in unknown.stderr
    norules = cli("gate", good_id, bad_id, "--rules", "absent.yaml", "--registry", str(reg))
    assert norules.returncode == 2 and norules.stderr.strip() == "error: the rules file absent.yaml does not exist"


def test_receipts_cube_and_benchmark_runs(tmp_path: Path, reg: Path) -> None:
    (tmp_path / "old.yaml").write_text(OLD_STATE)
    (tmp_path / "new.yaml").write_text(OLD_STATE.replace("{x: 3}", "{x: 1}"))
    cfg = _config(tmp_path, """\
        data: {sample: loan_synthetic}
        model: {kind: logistic_regression}   # required by the config schema; not trained for receipts-only configs
        audits:
          - {kind: receipts, mode: cube, old: old.yaml, new: new.yaml}
          - {kind: receipts, mode: benchmark, n_cases: 60, seed: 1}
        """)
    done = cli("run", "cfg.yaml", "--registry", str(reg), "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (cube_line, bench_line) = done.stdout.strip().splitlines()
    cube = RunRegistry(reg).load(cube_line.split("\t")[2])
    assert list(cube.tables) == ["cells", "trace", "controls", "receipt", "verdicts"]
    assert cube.manifest["key_numbers"]["receipt"] == "{G}" and cube.manifest["key_numbers"]["controls_hold"]
    assert list(cube.tables["verdicts"]["verdict"]) == ["no", "ok"]
    bench = RunRegistry(reg).load(bench_line.split("\t")[2])
    assert bench.manifest["key_numbers"]["n_base_cases"] == 60 and bench.manifest["seeds"]["benchmark"] == 1


@pytest.mark.parametrize(
    ("audit", "message"),
    [
        ("{kind: fragility, max_case: 40}",
         "error: Unknown key 'max_case' in audits[0]. Did you mean 'max_cases'? Allowed keys: "
         + ", ".join(sorted(OPTION_KEYS)) + "."),
        ("{kind: fragility, chunk_size: '5'}", "error: audits[0].chunk_size must be a whole number, got a string ('5')."),
        ("{kind: fragility, path: random}", "error: audits[0].path must be 'static' or 'adaptive', got 'random'."),
        ("{kind: fragility, grid: [0.5, 0.2]}", "error: audits[0].grid must be increasing severities in (0, 1], got [0.5, 0.2]."),
        ("{kind: receipts}", "error: Missing required key 'mode' in audits[0]."),
        ("{kind: receipts, mode: cubes}", "error: audits[0].mode must be one of 'cube', 'benchmark', got 'cubes'."),
        ("{kind: receipts, mode: cube, old: old.yaml}", "error: Missing required key 'new' in audits[0] (mode cube)."),
        ("{kind: receipts, mode: benchmark, n_case: 5}",
         "error: Unknown key 'n_case' in audits[0] (mode benchmark). Did you mean 'n_cases'? Allowed keys: mode, n_cases, seed."),
        ("{kind: receipts, mode: cube, old: nope.yaml, new: nope.yaml}",
         "error: audits[0].old must be an existing state file (YAML or JSON), got '{tmp}/nope.yaml'."),
    ],
    ids=["fr-unknown-key", "fr-wrong-type", "fr-bad-path", "fr-bad-grid", "rc-no-mode", "rc-bad-mode",
         "rc-missing-new", "rc-unknown-key", "rc-missing-file"],
)
def test_bad_audit_configs_exit_2_with_exact_messages(tmp_path: Path, reg: Path, audit: str, message: str) -> None:
    _config(tmp_path, f"data: {{sample: loan_synthetic}}\nmodel: {{kind: logistic_regression}}\naudits: [{audit}]\n")
    done = cli("run", "cfg.yaml", "--registry", str(reg), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == message.replace("{tmp}", str(tmp_path))
    assert RunRegistry(reg).list_runs().empty


def _long_run(tmp_path: Path, reg: Path) -> subprocess.Popen:
    """A CLI run that lasts minutes, returned once the registry shows it running."""
    cfg = _config(tmp_path, textwrap.dedent("""\
        data: {sample: loan_synthetic}
        model: {kind: logistic_regression}
        audits: [{kind: model, bootstrap: 5000000, chunk_size: 1000}]
        """))
    # 5,000,000 replicates run for minutes, so a signal always lands mid-run; they are over the default bound
    # of AUDIT_MAX_BOOTSTRAP, which the operator raises for this run (as docs/reliability.md describes).
    env = {**os.environ, **CLI_ENV, "AUDIT_MAX_BOOTSTRAP": "5000000"}
    # A suite started in the background by a script (`make test &` without job control) runs with SIGINT ignored,
    # and the child would inherit that: Python then installs no KeyboardInterrupt handler and the SIGINT case could
    # never pass. The child starts with SIGINT at its default, as from a terminal, so the test reads the CLI only.
    proc = subprocess.Popen([str(SCRIPT), "run", str(cfg), "--registry", str(reg), "--out", str(tmp_path / "o")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if reg.exists() and (RunRegistry(reg).list_runs()["status"] == "running").any():
            return proc
        time.sleep(0.2)
    proc.kill()
    pytest.fail("the run never started")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_marks_the_current_run_failed(tmp_path: Path, reg: Path, sig: signal.Signals) -> None:
    proc = _long_run(tmp_path, reg)
    try:
        time.sleep(0.5)
        # the child's signal dispositions (an inherited ignored or blocked signal is never honoured)
        masks = " ".join(ln.strip() for ln in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                         if ln.startswith(("SigBlk", "SigIgn", "SigCgt"))) if Path(f"/proc/{proc.pid}").exists() else ""
        proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=300)  # honoured at the next bytecode; a busy machine can take long
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)  # the CLI prints every thread's stack (faulthandler)
            time.sleep(3)
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"{sig.name} not honoured in 300 s; child {masks}; its stderr ends:\n{err[-6000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err
    runs = RunRegistry(reg).list_runs()
    assert list(runs["status"]) == ["failed"]
    record = RunRegistry(reg).load(runs["run_id"].iloc[0])
    expected = "interrupted (KeyboardInterrupt" + (")" if sig == signal.SIGINT else ": terminated by signal SIGTERM)")
    assert record.error == expected
    assert err.strip().startswith("error: interrupted")


def test_usr1_prints_every_thread_stack_and_the_run_goes_on(tmp_path: Path, reg: Path) -> None:
    """``kill -USR1`` shows where a long run is (faulthandler on stderr); the run is not stopped by it."""
    proc = _long_run(tmp_path, reg)
    try:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        assert proc.poll() is None, "SIGUSR1 stopped the run"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "most recent call first" in err and "audit_core" in err, err[-3000:]
    assert proc.returncode == 3


def test_gate_notes_when_the_two_sides_come_from_different_data_or_configurations(fragility_run) -> None:
    """The same run on both sides: no note. A copy saved as if from another file and with fewer cases: the gate
    still compares, and says that the data and the fragility configuration differ."""
    reg, run_id, _ = fragility_run
    registry = RunRegistry(reg)
    run = registry.load(run_id)
    other_id = registry.save(audit_kind="fragility", dataset_name="german.data", dataset_fingerprint="ab" * 32,
                             grouping_hash=run.grouping_hash, model_spec=run.model_spec,
                             config={**run.config, "audit": {**run.config["audit"], "max_cases": 30}}, tables=dict(run.tables), manifest=run.manifest)
    same = cli("gate", run_id, run_id, "--scope", "internal", "--registry", str(reg))
    assert same.returncode == 0 and "note:" not in same.stdout, same.stdout
    other = cli("gate", run_id, other_id, "--scope", "internal", "--registry", str(reg))
    assert other.returncode == 0, other.stderr
    notes = [line for line in other.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: The two sides read different data: old {run.dataset_name!r} (SHA-256 {run.dataset_fingerprint[:12]}), "
        f"new 'german.data' (SHA-256 abababababab). The verdicts are compared as they stand; a change may come from "
        "the data, not the model.",
        "note: The fragility runs were configured differently: audit.max_cases (40 → 30).",
    ]
    assert other.stdout.strip().endswith("gate: PASSED")
    as_json = cli("gate", run_id, other_id, "--scope", "internal", "--json", "--registry", str(reg))
    assert as_json.returncode == 0 and as_json.stderr.count("note: ") == 2


def _runs_on_disk(reg: Path) -> list[tuple[str, str, int]]:
    """``(run_id, status, n_tables)`` of every run, read through a read-only connection (never a write)."""
    import sqlite3

    if not reg.exists():
        return []
    try:
        con = sqlite3.connect(f"file:{reg}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute("SELECT r.run_id, r.status, (SELECT COUNT(*) FROM run_tables t WHERE t.run_id = r.run_id) "
                               "FROM runs r ORDER BY r.created_at").fetchall()
        finally:
            con.close()
    except sqlite3.OperationalError:  # the file exists but its schema is not written yet
        return []


@pytest.mark.parametrize("when", ["running", "folder", "done"])
def test_sigkill_never_leaves_a_done_run_without_its_output_folder(tmp_path: Path, reg: Path, when: str) -> None:
    """``kill -9`` of ``run --html`` at the moment a run starts, its folder appears, or a run reads done.

    Whatever the moment, every run the registry calls done has its whole folder: the bundle, the report and
    one Parquet file per table. The kill is triggered by what the test sees on disk, not by a delay, so a busy
    machine only moves it later, and the check holds at any moment.
    """
    cfg = _config(tmp_path, textwrap.dedent("""\
        data: {sample: loan_synthetic}
        model: {kind: logistic_regression, seed: 0}
        audits: [{kind: model, bootstrap: 20, chunk_size: 5}, {kind: model, bootstrap: 20, chunk_size: 5}]
        """))
    out = tmp_path / "o"
    proc = subprocess.Popen([str(SCRIPT), "run", str(cfg), "--registry", str(reg), "--out", str(out), "--html"],
                            cwd=ROOT, env={**os.environ, **CLI_ENV}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    landed = False
    try:
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            runs = _runs_on_disk(reg)
            if ((when == "running" and any(s == "running" for _, s, _n in runs))
                    or (when == "folder" and out.exists() and any(out.iterdir()))
                    or (when == "done" and any(s == "done" for _, s, _n in runs))):
                proc.kill()
                landed = True
                break
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
    assert landed, f"the CLI ended (exit {proc.returncode}) before the kill point {when!r} was seen"
    for run_id, status, n_tables in _runs_on_disk(reg):
        if status != "done":
            continue
        folder = out / run_id
        assert (folder / "bundle.json").is_file() and (folder / "report.html").is_file(), (when, run_id)
        assert len(list((folder / "tables").glob("*.parquet"))) == n_tables > 0, (when, run_id)


def test_run_prints_the_warnings_its_manifest_keeps(tmp_path: Path, reg: Path) -> None:
    """100 rows, LightGBM on 75: constant predictions. The run is done; the CLI says the model learned nothing."""
    import numpy as np

    rng = np.random.default_rng(0)
    y = np.where(np.arange(100) % 10 < 3, "yes", "no")
    pd.DataFrame({"x": rng.normal(size=100) + (y == "yes") * 2.0, "z": rng.normal(size=100), "y": y}).to_csv(
        tmp_path / "toy.csv", index=False)
    _config(tmp_path, """\
        data: {path: toy.csv}
        dataset: {targets: [{kind: class, name: t, column: y, positive: 'yes'}], roles: {y: ignore}}
        model: {kind: lightgbm, seed: 0}
        audits:
          - {kind: fragility, max_cases: 5, chunk_size: 5, n_boot: 2, shap_max_cases: 0, search_max_cases: 2,
             perm_repeats: 1, stress_draws: 2}
        """)
    done = cli("run", "cfg.yaml", "--registry", str(reg), "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("  warning: ")]
    assert any(w.startswith("  warning: The model's predictions are (nearly) constant: over the 25 held-out rows")
               for w in warnings), done.stdout
