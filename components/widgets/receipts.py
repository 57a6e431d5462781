"""Widget sections of the Receipts page.

Widget keys: value widgets ``rc_``, buttons ``act_rc_``, uploads ``up_rc_``,
display elements ``view_rc_``. Results live in session state under
:class:`RcKeys`; the executed cube and the gate comparison are result slots
(:data:`CUBE_SLOT`, :data:`GATE_SLOT`) tied to the inputs they were executed
from, so after an edit they are marked stale and cannot be saved. Every action runs inside :func:`components.feedback.guarded`,
so a refusal shows one message and keeps what the user typed. Caching is
app-side only (``st.cache_resource`` for the immutable benchmark and the
fitted baseline report).
"""
from __future__ import annotations

import hashlib
import json
from typing import Literal

import pandas as pd
import streamlit as st

from audit_core.limits import Limits
from audit_core.receipts import (
    control_consistency,
    account,
    evaluate_baseline,
    execute_state_cube,
    generate_benchmark,
    gold_from_benchmark,
    load_state,
    parse_predictions,
    reason_debt_grid,
)
from audit_core.receipts.baseline import TRIVIAL_MODELS
from audit_core.receipts.controls import cube_controls
from audit_core.runs.gate import DEFAULT_GATE_SCOPE, DEFAULT_GATE_YAML, DEPLOYMENT_SCOPES, compare_gate
from audit_core.runs.gate_context import comparison_notes
from audit_core.safe_text import load_yaml
from components.counts import count_input
from components.feedback import code, guarded, md_escape, stale_notice
from components.figures.receipts import baseline_figure, cube_view, reason_debt_figure
from components.glossary import table as show_table
from components.state import PERSIST, Provenance, ResultSlot, digest, registry, workspace_key

__all__ = ["RcKeys", "EXAMPLES", "editor_section", "cube_section", "benchmark_section",
           "predictions_section", "gate_section"]


class RcKeys:
    """Session-state keys (not widget keys) of the Receipts page."""

    CUBE = "receipts_cube"  # dict: old, new, cube (StateCube), controls
    BENCH = workspace_key("receipts_bench_params")  # (n_cases, seed)
    BASELINE = workspace_key("receipts_baseline_ready")  # bool
    SCORE = workspace_key("receipts_score")  # dict of frames
    GATE = "receipts_gate"  # GateComparison
    SAVED = workspace_key("receipts_saved")  # str message


#: The executed cube, tied to the two state texts and options it was executed from.
CUBE_SLOT = ResultSlot(RcKeys.CUBE, "cube")
#: What differs between the gate's two sides besides the model (:func:`comparison_notes`), for the shown result.
_GATE_NOTES = workspace_key("receipts_gate_notes")
#: The release-gate comparison, tied to the runs, scopes and rules it was executed from.
GATE_SLOT = ResultSlot(RcKeys.GATE, "release-gate comparison")
_CUBE_INPUTS = ("rc_old_text", "rc_new_text", "rc_granularity", "rc_missing_unknown")
_GATE_INPUTS = ("rc_gate_old_runs", "rc_gate_new_runs", "rc_gate_old_scope", "rc_gate_new_scope",
                "rc_gate_old_rules", "rc_gate_new_rules")


def _inputs(keys: tuple[str, ...]) -> Provenance:
    return Provenance(inputs=digest([st.session_state.get(k) for k in keys]))


def _stale(slot: ResultSlot, keys: tuple[str, ...]) -> bool:
    """Show the stale notice for ``slot`` when its inputs were edited since; True when stale."""
    changed = slot.changed(_inputs(keys))
    if changed:
        stale_notice(slot.what, "other inputs than the ones in the editors above (they were edited since)")
    return bool(changed)


def _policy(amount: int, role: str, rule: str, authority: str = "r1: true\n  r2: true") -> str:
    return f"""name: loan policy
grounds:
  amount: {{type: number, value: {amount}}}
  role: {{type: text, value: {role}}}
  region: {{type: text, value: EU}}
  filed: {{type: date, value: 2024-03-01}}
norms:
  default: approve
  on_unknown: refer
  rules:
    - id: r1
      when: '{rule}'
      then: deny
    - id: r2
      when: 'filed - date("2024-01-01") > 365'
      then: review
authority:
  {authority}
"""


def _logical(facts: str, body: str, mask: str) -> str:
    return f"""name: Horn world
grounds: {{{facts}}}
norms:
  default: fails
  rules:
    - {{id: h1, when: '{body}', then: holds}}
    - {{id: h2, when: 'p2 and p3', then: fails}}
authority: {{{mask}}}
"""


def _gate_example(scope_old: str, scope_new: str, ece_old: float, ece_new: float) -> tuple[str, str]:
    import yaml

    base = load_yaml(DEFAULT_GATE_YAML, what="The default gate rules")

    def one(scope: str, ece: float) -> str:
        d = {"name": "release gate",
             "grounds": {"test_auroc": {"type": "number", "value": 0.81},
                         "ood_ece": {"type": "number", "value": ece},
                         "worst_class_coverage_90": {"type": "number", "value": 0.88},
                         "brittle_share_confident": {"type": "number", "value": None},
                         "deployment_scope": {"type": "text", "value": scope}},
             **base}
        return yaml.safe_dump(d, sort_keys=False)

    return one(scope_old, ece_old), one(scope_new, ece_new)


#: name -> (old text, new text)
EXAMPLES: dict[str, tuple[str, str]] = {
    "Policy: grounds and norms each suffice": (
        _policy(8000, "clerk", "amount > 10000"), _policy(12000, "clerk", "amount > 5000")),
    "Policy: only the joint {G,N} suffices": (
        _policy(8000, "clerk", "amount > 10000"), _policy(8000, "intern", 'role == "intern"')),
    "Policy: no-op amendment": (
        _policy(8000, "clerk", "amount > 10000"), _policy(8000, "clerk", "amount >= 10001")),
    "Policy: absent authority refers": (
        _policy(15000, "clerk", "amount > 10000", "r2: 'false'"),
        _policy(15000, "clerk", "amount > 10000", "r1: 'false'\n  r2: 'false'")),
    "Logical: facts, Horn implications, authority mask": (
        _logical("p0: true, p1: false, p2: true, p3: true", "p0 and p1", "h1: true, h2: true"),
        _logical("p0: true, p1: true, p2: true, p3: true", "p0 and p1", "h1: true, h2: false")),
    "Release gate: OOD ECE worsens, scope moves to production": _gate_example("internal", "production", 0.03, 0.08),
}


def _load_example() -> None:
    old, new = EXAMPLES[st.session_state["rc_example"]]
    st.session_state["rc_old_text"] = old
    st.session_state["rc_new_text"] = new


def editor_section() -> None:
    """Old and new state editors, options and the Execute button."""
    if "rc_old_text" not in st.session_state:
        st.session_state["rc_example"] = next(iter(EXAMPLES))
        _load_example()
    c0, c1 = st.columns([3, 1])
    c0.selectbox("Example", list(EXAMPLES), key="rc_example", persist_state=PERSIST)
    c1.button("Load example", key="act_rc_load_example", on_click=_load_example)
    a, b = st.columns(2)
    a.text_area("Old state (YAML or JSON)", key="rc_old_text", persist_state=PERSIST, height=380)
    b.text_area("New state (YAML or JSON)", key="rc_new_text", persist_state=PERSIST, height=380)
    o1, o2, o3 = st.columns(3)
    o1.radio("Sources", ["parts", "items"], key="rc_granularity", persist_state=PERSIST, horizontal=True,
             help="parts: G, N, A (8 cells). items: each changed ground, rule or authority entry.")
    o2.checkbox("Treat undeclared grounds as unknown", key="rc_missing_unknown", persist_state=PERSIST,
                help="Off: a hybrid whose rule reads a ground it lacks is an error. On: that ground is UNKNOWN.")
    if o3.button("Execute cube", key="act_rc_execute", type="primary"):
        with guarded("executing the cube"):
            old = load_state(st.session_state["rc_old_text"], label="old state")
            new = load_state(st.session_state["rc_new_text"], label="new state")
            missing: Literal["unknown", "error"] = "unknown" if st.session_state.get("rc_missing_unknown") else "error"
            gran = st.session_state.get("rc_granularity", "parts")
            cap = Limits.from_env().max_cube_k
            sc = execute_state_cube(old, new, granularity=gran, mode="full", missing=missing, max_sources=cap)
            pruned = execute_state_cube(old, new, granularity=gran, mode="pruned", missing=missing, max_sources=cap)
            CUBE_SLOT.put({"old": old, "new": new, "cube": sc, "pruned_calls": pruned.cube.calls,
                           "controls": _controls(old, new, sc, gran, missing)}, _inputs(_CUBE_INPUTS))
            st.session_state[RcKeys.SAVED] = None


def _controls(old, new, sc, gran: Literal["parts", "items"], missing: Literal["error", "unknown"]) -> pd.DataFrame:
    return cube_controls(old, new, sc, granularity=gran, missing=missing)


def cube_section() -> None:
    """The executed cube: verdicts, receipt, figure, cells, traces, controls, save and download."""
    res = CUBE_SLOT.value
    if res is None:
        st.info("Edit the two states (or load an example) and press **Execute cube**.")
        return
    stale = _stale(CUBE_SLOT, _CUBE_INPUTS)
    sc = res["cube"]
    cube = sc.cube
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Old verdict", cube.v_old)
    m2.metric("New verdict", cube.v_new)
    m3.metric("Receipt", cube.receipt_text if cube.changed else "none (no-op)")
    m4.metric("Adjudicator calls", f"{res['pruned_calls']} pruned / {cube.calls} full")
    if cube.changed:
        st.success(f"Receipt (every minimal replacement set that reproduces {code(repr(cube.v_new))}): "
                   f"{code(cube.receipt_text)}")
    else:
        st.info("The endpoints agree: a no-op revision has no receipt.")
    st.plotly_chart(cube_view(cube), key="view_rc_cube")
    st.markdown("**Cells** (each hybrid, its verdict and the rule that governed it)")
    st.dataframe(sc.to_frame(), hide_index=True, key="view_rc_cells")
    with st.expander("Adjudicator trace of every cell"):
        st.dataframe(sc.trace_frame(), hide_index=True, key="view_rc_trace")
    st.markdown("**Paired consistency controls** (executed)")
    st.dataframe(res["controls"], hide_index=True, key="view_rc_controls")
    payload = {"old": res["old"].to_dict(), "new": res["new"].to_dict(), "cube": sc.to_dict(),
               "controls": res["controls"].to_dict(orient="records")}
    text = json.dumps(payload, indent=2, default=str)
    c1, c2 = st.columns(2)
    c1.download_button("Download cube (JSON)", text, file_name="receipt_cube.json", mime="application/json",
                       key="act_rc_download_cube", disabled=stale)
    if c2.button("Save to registry", key="act_rc_save_cube", disabled=stale):
        with guarded("saving the cube"):
            run_id = _save("cube", payload, {"cells": sc.to_frame(), "trace": sc.trace_frame(),
                                             "controls": res["controls"]})
            st.session_state[RcKeys.SAVED] = f"Saved as run {run_id}."
    if st.session_state.get(RcKeys.SAVED) and not stale:
        st.success(st.session_state[RcKeys.SAVED])


def _save(kind: str, payload: dict, tables: dict[str, pd.DataFrame]) -> str:
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    clean = {k: v.astype({c: str for c in v.columns if v[c].dtype == object}) for k, v in tables.items()}
    return registry().save(
        audit_kind="receipts", dataset_name=f"receipts: {kind}",
        dataset_fingerprint=hashlib.sha256(blob).hexdigest(), grouping_hash=None,
        model_spec={"kind": f"receipts-{kind}"}, config=json.loads(json.dumps(payload, default=str)),
        tables=clean, manifest={"receipts_kind": kind},
    )


@st.cache_resource(show_spinner="Generating and certifying the benchmark…", max_entries=2)
def _bench(n_cases: int, seed: int):
    return generate_benchmark(n_cases=n_cases, seed=seed)


@st.cache_resource(show_spinner="Training and scoring the learned baseline…", max_entries=2)
def _baseline(n_cases: int, seed: int):
    return evaluate_baseline(_bench(n_cases, seed), seed=seed)


def benchmark_section() -> None:
    """Generate the balanced benchmark (balance, difficulty mix), then train and score the baselines."""
    c1, c2, c3 = st.columns(3)
    count_input(c1, "Cases", count="benchmark_cases", key="rc_bench_n", persist_state=PERSIST, min_value=40, value=2000, step=500)
    c2.number_input("Seed", min_value=0, max_value=2**31 - 1, value=0, key="rc_bench_seed", persist_state=PERSIST)
    if c3.button("Generate benchmark", key="act_rc_generate"):
        with guarded("generating the benchmark"):
            chosen = (int(st.session_state["rc_bench_n"]), int(st.session_state["rc_bench_seed"]))
            _bench(*chosen)
            st.session_state[RcKeys.BENCH] = chosen
            st.session_state[RcKeys.BASELINE] = False
    params = st.session_state.get(RcKeys.BENCH)
    if params is None:
        st.info("Generate a benchmark to train the learned baseline and to score uploaded predictions.")
        return
    bench = _bench(*params)
    df = bench.to_frame()
    base = df[df.control == ""]
    stats, cfg = bench.stats, bench.config
    st.caption(f"{len(base)} cases + {len(df[df.control != ''])} controls (seed {params[1]:d}); "
               f"control relations violated by executed receipts: {len(bench.control_violations)}.")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Verdict changes", f"{base.changed.mean():.1%}", f"quota {cfg.change_share:.0%} per stratum × split",
              delta_color="off", delta_arrow="off")
    m2.metric("No-op controls", f"{(base.mutation == 'noop').mean():.1%}", "never change the verdict",
              delta_color="off", delta_arrow="off")
    m3.metric("Acceptance rate", f"{stats.acceptance_rate:.1%}", f"{stats.candidates} candidates executed",
              delta_color="off", delta_arrow="off")
    m4.metric("Generation time", f"{stats.seconds:.1f} s", "certification included", delta_color="off", delta_arrow="off")
    st.markdown("**Balance** — share of cases that change the verdict in each stratum and split, beside its quota. "
                "Without it most random edits are inert and “no change” would be the majority answer.")
    st.dataframe(bench.balance_frame(), hide_index=True, key="view_rc_bench_balance")
    st.markdown("**Receipt difficulty** — receipt families among the changing cases. Alternatives "
                "(`{G} | {N}`) and joint sets (`{G,N}`) come only from multi-source changes, which are held out "
                "of training.")
    st.dataframe(bench.difficulty_frame(), hide_index=True, key="view_rc_bench_difficulty")
    with st.expander("Cases by split, mutation and control"):
        summary = (df.groupby(["split", "mutation", "control"], dropna=False)
                   .agg(cases=("case_id", "size"), changed=("changed", "mean"), pruned_calls=("calls_pruned", "mean"))
                   .reset_index())
        st.dataframe(summary, hide_index=True, key="view_rc_bench_summary")
        st.dataframe(bench.acceptance_frame(), hide_index=True, key="view_rc_bench_acceptance")
    st.download_button("Download benchmark (JSONL with texts and gold)", _bench_jsonl(bench),
                       file_name="receipts_benchmark.jsonl", key="act_rc_download_bench")
    if st.button("Train and score the learned baseline", key="act_rc_train"):
        with guarded("training the learned baseline"):
            _baseline(*params)
            st.session_state[RcKeys.BASELINE] = True
    if st.session_state.get(RcKeys.BASELINE):
        report = _baseline(*params)
        st.markdown(f"**Baseline table** — trained on {report.n_train:,} single-source and no-op train cases; "
                    f"the trivial baselines ({', '.join(map(code, TRIVIAL_MODELS))}) are scored on every set. "
                    "Receipt accuracy on changing cases carries a 95% percentile-bootstrap interval over cases.")
        st.dataframe(report.compact_frame(), hide_index=True, key="view_rc_baseline")
        with st.expander("Every column (drift, misattribution, reason debt at confidence 0.8)"):
            st.dataframe(report.to_frame(), hide_index=True, key="view_rc_baseline_full")
        st.plotly_chart(baseline_figure(report.to_frame()), key="view_rc_baseline_fig")
        st.markdown("**Prediction is not certification** — each claim with the numbers that decide it")
        verdicts = report.findings["holds"].map({True: "holds", False: "does not hold"})
        st.dataframe(report.findings.assign(holds=verdicts), hide_index=True, key="view_rc_findings")
        if st.button("Save baseline report to registry", key="act_rc_save_baseline"):
            with guarded("saving the baseline report"):
                rid = _save("baseline", report.to_dict(), {"baseline": report.to_frame(), "findings": report.findings})
                st.success(f"Saved as run {md_escape(rid)}.")


def _bench_jsonl(bench) -> str:
    lines = []
    for c in bench.cases:
        d = c.to_dict()
        d["text"] = c.text
        lines.append(json.dumps(d))
    return "\n".join(lines) + "\n"


def predictions_section() -> None:
    """Upload a JSONL of predictions and score it with the full accounting."""
    params = st.session_state.get(RcKeys.BENCH)
    st.caption('One JSON object per line: {"case_id": ..., "receipt": [["G"], ["N"]], "v_old": ..., '
               '"v_new": ..., "confidence": 0.8, "cube": {"": ..., "G": ..., "G+N": ...}}. '
               "Only case_id and receipt are required.")
    up = st.file_uploader("Predictions (JSONL)", type=["jsonl", "json", "txt"], key="up_rc_predictions")
    if up is None:
        return
    if params is None:
        st.warning("Generate the benchmark the predictions refer to first (same size and seed).")
        return
    with guarded("scoring the predictions"):
        bench = _bench(*params)
        gold = gold_from_benchmark(bench.cases)
        parsed = parse_predictions(up.getvalue(), gold=gold)
        if parsed.errors:
            st.warning(f"{len(parsed.errors)} of {parsed.n_lines:,} lines refused; the other "
                       f"{len(parsed.predictions)} are scored.")
            st.dataframe(parsed.errors_frame(), hide_index=True, key="view_rc_pred_errors")
        scored = {p.case_id for p in parsed.predictions}
        sub = {k: v for k, v in gold.items() if k in scored}
        acc = account(sub, parsed.predictions)
        st.dataframe(acc.to_frame(), hide_index=True, key="view_rc_accounting")
        cons = control_consistency(gold, parsed.predictions)
        if cons.counts:
            st.dataframe(cons.to_frame(), hide_index=True, key="view_rc_consistency")
            if cons.violations:
                st.caption("Violated pairs (each proves an error): " +
                           ", ".join(f"{code(b)} ↔ {code(c)}" for _, b, c in cons.violations[:20]))
        grid = reason_debt_grid(sub, parsed.predictions)
        if grid["n_with_confidence"].max() > 0:
            st.dataframe(grid, hide_index=True, key="view_rc_reason_debt")
            st.plotly_chart(reason_debt_figure(grid), key="view_rc_reason_debt_fig")
        else:
            st.caption("No prediction carries a confidence, so reason debt is not reported.")


def gate_section() -> None:
    """The release gate across saved runs: two runs, or one run under edited rules or scope."""
    with guarded("reading the run registry"):
        runs = registry().list_runs(status="done")
        runs = runs[runs["audit_kind"].isin(["model", "fragility", "transport"])]
        if runs.empty:
            st.info("No saved model, fragility or transport runs yet. Train a model on Data & groups, "
                    "or try the release-gate example in the editor above.")
            return
        labels = {r["run_id"]: f"{r['audit_kind']} · {r['dataset_name']} · {r['model'] or '-'} · {r['run_id']}"
                  for r in runs.to_dict("records")}
        ids = list(labels)
        a, b = st.columns(2)
        a.multiselect("Old: runs", ids, default=ids[:1], format_func=lambda i: labels[i], key="rc_gate_old_runs", persist_state=PERSIST)
        b.multiselect("New: runs (the same runs to compare rules or scope)", ids, default=ids[:1],
                      format_func=lambda i: labels[i], key="rc_gate_new_runs", persist_state=PERSIST)
        # one default for both sides: the gate compares only what the user changed
        same = DEPLOYMENT_SCOPES.index(DEFAULT_GATE_SCOPE)
        a.selectbox("Old deployment scope", DEPLOYMENT_SCOPES, index=same, key="rc_gate_old_scope", persist_state=PERSIST)
        b.selectbox("New deployment scope", DEPLOYMENT_SCOPES, index=same, key="rc_gate_new_scope", persist_state=PERSIST)
        a.text_area("Old release rules (norms + authority)", DEFAULT_GATE_YAML, height=260, key="rc_gate_old_rules", persist_state=PERSIST)
        b.text_area("New release rules (norms + authority)", DEFAULT_GATE_YAML, height=260, key="rc_gate_new_rules", persist_state=PERSIST)
        if st.button("Execute gate cube", key="act_rc_gate"):
            reg = registry()
            old_runs = [reg.load(r) for r in st.session_state["rc_gate_old_runs"]]
            new_runs = [reg.load(r) for r in st.session_state["rc_gate_new_runs"]]
            GATE_SLOT.put(compare_gate(
                old_runs, new_runs, old_scope=st.session_state["rc_gate_old_scope"],
                new_scope=st.session_state["rc_gate_new_scope"],
                old_rules=st.session_state["rc_gate_old_rules"], new_rules=st.session_state["rc_gate_new_rules"]),
                _inputs(_GATE_INPUTS))
            st.session_state[_GATE_NOTES] = comparison_notes(old_runs, new_runs)
    gc = GATE_SLOT.value
    if gc is None:
        return
    stale = _stale(GATE_SLOT, _GATE_INPUTS)
    cube = gc.cube.cube
    st.metric("Release verdict", f"{cube.v_old} → {cube.v_new}",
              f"receipt {cube.receipt_text}" if cube.changed else "no change", delta_color="off", delta_arrow="off")
    for note in st.session_state.get(_GATE_NOTES) or ():  # different data or configurations on the two sides
        st.info(md_escape(note), icon=":material/compare_arrows:")
    absent = sorted(set(gc.old_grounds.absent) | set(gc.new_grounds.absent))
    if absent:
        st.warning("Absent grounds (declared UNKNOWN, never guessed): " + ", ".join(map(code, absent)))
    g1, g2 = st.columns(2)
    with g1:
        show_table(gc.old_grounds.to_frame(), hide_index=True, key="view_rc_gate_old_grounds")
    with g2:
        show_table(gc.new_grounds.to_frame(), hide_index=True, key="view_rc_gate_new_grounds")
    if cube.k:
        st.plotly_chart(cube_view(cube, title=f"Release gate: {cube.v_old} → {cube.v_new}"), key="view_rc_gate_cube")
    st.dataframe(gc.cube.to_frame(), hide_index=True, key="view_rc_gate_cells")
    with st.expander("Adjudicator trace of every gate cell"):
        st.dataframe(gc.cube.trace_frame(), hide_index=True, key="view_rc_gate_trace")
    payload = gc.to_dict()
    c1, c2 = st.columns(2)
    c1.download_button("Download gate cube (JSON)", json.dumps(payload, indent=2, default=str),
                       file_name="release_gate_cube.json", key="act_rc_download_gate", disabled=stale)
    if c2.button("Save gate cube to registry", key="act_rc_save_gate", disabled=stale):
        with guarded("saving the gate cube"):
            rid = _save("release-gate", payload, {"cells": gc.cube.to_frame(), "trace": gc.cube.trace_frame(),
                                                   "old_grounds": gc.old_grounds.to_frame(),
                                                   "new_grounds": gc.new_grounds.to_frame()})
            st.success(f"Saved as run {md_escape(rid)}.")
