"""AppTest of Home's guided demo: one click runs every audit, saves the runs and shows the four steps.

The numbers on screen are checked against the library's own result objects
(the findings recomputed from the DemoResult the page holds, and its tables),
not against copies of the page's output.
"""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_text import texts

from audit_core.findings import fragility_findings, gate_findings, transport_findings
from audit_core.findings.finding import num
from audit_core.runs.registry import RunRegistry

from test_demo import SMALL

ROOT = Path(__file__).resolve().parents[1]


def _home() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    at.session_state["demo_options"] = SMALL
    return at


def test_run_the_demo_shows_four_steps_with_the_library_numbers(registry_path: Path) -> None:
    at = _home()
    assert at.button(key="act_demo_run").label == "Run the demo"
    at.button(key="act_demo_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, texts(at, "error")
    result = at.session_state["demo_result"]
    labels = [t.label for t in at.tabs]
    # short labels that fit side by side at 1600 px; each tab opens with its question, in plain words: a title
    # never claims what its sentences may not find ("most stable")
    assert labels[:4] == ["1 · A confident prediction that collapses", "2 · Which model holds up?",
                          "3 · Does the rule still hold?", "4 · The release decision"]
    headings = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert headings[:4] == ["#### A confident prediction that collapses",
                            "#### Which model ranks best, and which holds up when evidence goes missing?",
                            "#### Does the operating rule still hold on the new domain?",
                            "#### The release decision: what blocks, what passed, what is unknown"]
    shown = [t.value for t in at.text]
    # step 1: the striking case, its p̂ and the headline count, from the audit itself
    row = result.audit.certificates.iloc[result.case.index]
    case_line = next(t for t in shown if t.startswith("⚠️ Case ") or t.startswith("✓ Case "))
    assert str(row["key"]) in case_line and num(float(row["p_hat"]), 3) in case_line
    frag = {f.kind: f.text for f in fragility_findings(result.audit, models=result.models)}
    trans = {f.kind: f.text for f in transport_findings(result.transport)}
    gate = [f.text for f in gate_findings(result.gate)]
    body = "\n".join(shown)
    for text in (frag["confident_flips"], frag["winner_vs_stable"], trans["selective_threshold"], *gate):
        assert text in body, text
    n_conf = int((result.audit.certificates["p_hat"] >= 0.8).sum())
    assert f"of {n_conf} confident predictions" in frag["confident_flips"]
    # the gate's verdict is the library's, for the saved runs
    verdict = result.gate.verdict_b
    assert ("blocked" if verdict == "block" else "allowed" if verdict == "release" else "referred") in gate[0]
    # the runs are in the registry, done; the user's own workspace holds no demo result
    runs = RunRegistry(registry_path).list_runs()
    assert set(runs["run_id"]) == set(result.run_ids.values()) and (runs["status"] == "done").all()
    assert at.session_state["workspace"] is None and "fragility_audit" not in at.session_state
    # the case's feature values, with the removed groups marked; no "None" strings anywhere in its table
    values = next(df.value for df in at.dataframe if "removed to flip" in df.value.columns)
    assert len(values) == len(result.workspace.grouping.raw_map())
    assert not values.astype(str).isin(["None", "nan"]).any().any()
    cert = result.audit.batch.certificate(result.case.index)
    removed = set(cert.removal_order_names()[:min(result.case.k_star, cert.protocol.k)])
    assert set(values.loc[values["removed to flip"] == "yes", "evidence group"]) == removed
    assert set(values["evidence group"].iloc[:(values["removed to flip"] == "yes").sum()]) == removed  # listed first
    # the gate's grounds: unknown ones say so (never "None"); the receipt's grounds are marked
    grounds = next(df.value for df in at.dataframe if "changed the decision" in df.value.columns)
    assert not grounds.astype(str).isin(["None", "nan"]).any().any()
    in_receipt = {n.split(":", 1)[1] for s in result.gate.receipt for n in s if n.startswith("G:")}
    assert set(grounds.loc[grounds["changed the decision"] == "yes", "name in the rules"]) == in_receipt
    # plain words first: each ground's plain name, its symbol last
    assert list(grounds.columns) == ["what the gate reads", "before the audits", "after", "changed the decision",
                                     "name in the rules"]
    assert "how far the stated probabilities are off on the target domain (ECE)" in set(grounds["what the gate reads"])
    # step 1's button opens the full Fragility page in the demo's workspace, on the same results, not stale
    at.button(key="act_demo_open_1").click().run()
    assert not at.exception and not at.error, texts(at, "error")
    assert at.title[0].value == "Fragility"
    assert at.session_state["fragility_audit"] is result.audit
    assert at.session_state["workspace"] is result.workspace
    assert not any("shown for reference only" in t for t in texts(at, "warning"))
    assert any(f"saved as run {result.run_ids['fragility']}" in t for t in texts(at, "success"))
    # the case inspector opens on the demo's striking case and says how its list relates to the headline
    K = int(result.audit.batch.protocol.k)
    assert at.selectbox(key="fr_case").value == result.case.key
    s = result.audit.certificates
    listed = s[(s["p_hat"] >= 0.8) & (s["k_star"] <= K)]
    note = next(c for c in texts(at, "caption") if c.startswith("Listed: "))
    # the list is the fragile cases (certificate), the count beside it says so and names the brittle test apart
    assert (f"the {len(listed)} confident cases (probability ≥ 0.8) that are **fragile**: their certificate flips "
            f"when at most {K} evidence groups" in note)
    assert "the **brittle** count is a different test (the donor test)" in note
    names = result.workspace.dataset.primary.class_names
    trajectory = next(c for c in texts(at, "caption") if c.startswith("Predicted '"))
    assert f"Predicted '{names[int(s['y_hat'].iloc[result.case.index])]}'" in trajectory and "ŷ" not in trajectory
