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
    assert list(record.tables) == ["summary", "auroc", "incremental", "search", "delta", "temperature", "scores", "metrics"]
    assert len(record.tables["summary"]) == 40
    assert record.manifest["seeds"] == {"model": 0, "certificate": 0, "cases": 0, "stressors": 0}
    assert record.manifest["summary"]["n_cases"] == 40
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
    assert cube.manifest["summary"]["receipt"] == "{G}" and cube.manifest["summary"]["controls_hold"]
    assert list(cube.tables["verdicts"]["verdict"]) == ["no", "ok"]
    bench = RunRegistry(reg).load(bench_line.split("\t")[2])
    assert bench.manifest["summary"]["n_base_cases"] == 60 and bench.manifest["seeds"]["benchmark"] == 1


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
    proc = subprocess.Popen([str(SCRIPT), "run", str(cfg), "--registry", str(reg), "--out", str(tmp_path / "o")],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
