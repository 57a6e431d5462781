"""The guided demo's library side: the striking-case rule on toy summaries, and one small seeded demo run."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig
from audit_core.data.roles import infer_roles
from audit_core.data.samples import load_sample
from audit_core.errors import AuditInputError
from audit_core.findings import fragility_findings, gate_findings, transport_findings
from audit_core.findings.cases import case_finding, striking_case
from audit_core.findings.demo import DemoOptions, run_demo
from audit_core.runs.registry import RunRegistry

#: A demo small enough for tests (seconds), same code path as the app's default sizes.
SMALL = DemoOptions.quick()


def _summary(p, k):
    return pd.DataFrame({"key": [f"c{i}" for i in range(len(p))], "p_hat": p, "k_star": k})


def test_striking_case_fewest_groups_then_highest_confidence():
    # K = 3. Confident (p̂ ≥ 0.8) and flipping within 3: c1 (k* 2), c2 (k* 1, 0.85), c4 (k* 1, 0.95).
    # c0 flips with one group but is not confident; c3 is the most confident but never flips (k* = 4).
    s = _summary([0.55, 0.99, 0.85, 0.999, 0.95], [1, 2, 1, 4, 1])
    c = striking_case(s, k=3)
    assert (c.index, c.key, c.k_star, c.pool, c.n_pool) == (4, "c4", 1, "confident_fragile", 3)


def test_striking_case_fallbacks():
    # no confident case flips: the flipping case with fewest groups (c0, k* 1)
    c = striking_case(_summary([0.55, 0.6, 0.99], [2, 1, 4]), k=3)
    assert (c.key, c.pool, c.n_pool) == ("c1", "fragile", 2)
    # nothing flips: the most confident case (k* = K + 1 for every row)
    c = striking_case(_summary([0.55, 0.97, 0.9], [4, 4, 4]), k=3)
    assert (c.key, c.pool, c.n_pool) == ("c1", "confident", 3)
    assert striking_case(_summary([], []), k=3) is None


def test_case_finding_names_classes_and_groups():
    c = striking_case(_summary([0.9, 0.987], [3, 2]), k=3)
    classes = ("cases with outcome other than 'default'", "cases with outcome = 'default'")
    f = case_finding(c, k=3, y_hat=1, flipped_to=0, groups=["bureau", "loan"], classes=classes)
    assert f.text == ("Case c1: the model says outcome = 'default' with probability 0.987, yet the prediction flips to "
                      "outcome other than 'default' once 2 evidence groups (bureau, loan) are set to reference values.")
    held = striking_case(_summary([0.9], [4]), k=3)
    f = case_finding(held, k=3, y_hat=0, flipped_to=0, groups=["a", "b", "c"], classes=("class 'repaid'",))
    assert f.text == ("Case c0: the model says class 'repaid' with probability 0.900, and the prediction holds even "
                      "with 3 evidence groups (a, b, c) set to reference values.")
    assert f.severity == "good"


def loan_declaration() -> tuple[pd.DataFrame, DatasetConfig, dict, dict]:
    """The loan sample declared as Data & groups declares it by default."""
    frame, info = load_sample("loan_synthetic")
    roles = infer_roles(frame)
    roles.update({c: "ignore" for c in info.exclude_columns})
    cfg = DatasetConfig(name="loan_synthetic", targets=tuple(info.target_definitions), roles=roles,
                        key_column=info.key_column, domain_column=info.domain_column,
                        source_domain=info.source_domain, target_domain=info.target_domain,
                        group_column=info.group_column)
    return frame, cfg, dict(info.evidence_groups), dict(info.missing_codes)


@lru_cache(maxsize=1)
def _demo(path: str):
    frame, cfg, groups, codes = loan_declaration()
    reg = RunRegistry(path)
    seen = []
    result = run_demo(frame, cfg, raw_groups=groups, registry=reg, missing_codes=codes, options=SMALL,
                      progress=lambda f, m: seen.append(f))
    return reg, result, seen


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return _demo(str(tmp_path_factory.mktemp("demo") / "r.sqlite3"))


def test_demo_saves_its_runs_and_reports_progress(demo):
    reg, result, seen = demo
    runs = reg.list_runs()
    assert set(runs["run_id"]) == set(result.run_ids.values())
    assert dict(zip(runs["run_id"], runs["audit_kind"])) == {v: k for k, v in result.run_ids.items()}
    assert (runs["status"] == "done").all()
    assert seen == sorted(seen) and seen[0] == 0.0 and seen[-1] == 1.0


def test_demo_steps_are_the_library_findings(demo):
    _, r, _ = demo
    assert [s.number for s in r.steps] == [1, 2, 3, 4]
    assert [s.page for s in r.steps] == ["fragility", "fragility", "transport", "receipts"]
    case = r.steps[0].findings[0]
    row = r.audit.certificates.iloc[r.case.index]
    assert case.kind == "striking_case" and case.numbers["p_hat"] == row["p_hat"] and case.numbers["k_star"] == row["k_star"]
    assert str(row["key"]) in case.text
    frag = {f.kind: f for f in fragility_findings(r.audit, models=r.models)}
    assert r.steps[1].findings == (frag["winner_vs_stable"],)
    assert r.steps[0].findings[1] == frag["confident_flips"]
    trans = {f.kind: f for f in transport_findings(r.transport)}
    assert r.steps[2].findings[0] == trans["selective_threshold"]
    assert r.steps[3].findings == tuple(gate_findings(r.gate))
    # the gate: the model run alone (A) against the full audit (B)
    assert r.gate.run_ids_a == (r.run_ids["model"],) and set(r.gate.run_ids_b) == set(r.run_ids.values())


def test_demo_stops_with_a_declared_message(tmp_path):
    frame, cfg, groups, codes = loan_declaration()
    reg = RunRegistry(tmp_path / "r.sqlite3")
    with pytest.raises(AuditInputError) as err:
        run_demo(frame, cfg, raw_groups=groups, registry=reg, missing_codes=codes, options=SMALL,
                 should_stop=lambda: True)
    assert err.value.code == "DEMO_STOPPED"
    (model_run,) = reg.list_runs()["run_id"]
    assert err.value.message == (f"The demo was stopped while training the model; the runs saved so far are kept "
                                 f"(model {model_run}).")
