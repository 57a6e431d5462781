"""Generator, controls, accounting (hand-worked answers), JSONL validation, release-gate extractors."""
from __future__ import annotations

import json

import pytest

from audit_core.errors import AuditInputError
from audit_core.receipts import (
    Gold,
    Prediction,
    account,
    control_consistency,
    generate_benchmark,
    gold_from_benchmark,
    pair_relation_holds,
    parse_predictions,
    reason_debt,
    reason_debt_grid,
)

F = frozenset


@pytest.fixture(scope="module")
def bench():
    return generate_benchmark(n_cases=400, seed=7)


def test_generator_is_deterministic(bench) -> None:
    again = generate_benchmark(n_cases=400, seed=7)
    assert bench.to_frame().equals(again.to_frame())
    assert [c.text for c in bench.cases] == [c.text for c in again.cases]
    other = generate_benchmark(n_cases=400, seed=8)
    assert not bench.to_frame()["receipt"].equals(other.to_frame()["receipt"])


def test_no_unit_leaks_across_splits(bench) -> None:
    df = bench.to_frame()
    per_unit = df.groupby("unit_id")["split"].nunique()
    assert (per_unit == 1).all()
    assert set(df["split"]) == {"train", "val", "test"}
    assert set(df["stratum"]) == {"policy", "logical"}
    assert {"single", "multi", "noop"} <= set(df["mutation"])


def test_every_locked_test_case_has_three_certified_controls(bench) -> None:
    df = bench.to_frame()
    locked = df[(df.control == "") & (df.split == "test") & df.mutation.isin(["single", "noop"])]
    ctl = df[df.control != ""]
    assert len(ctl) == 3 * len(locked)
    assert set(ctl.groupby("base_id")["control"].apply(frozenset)) == {F({"permutation", "distractor", "inverse"})}
    assert bench.control_violations == ()
    assert (df[df.mutation == "noop"]["changed"] == False).all()  # noqa: E712 - equivalent rewrites never change
    perm = next(c for c in bench.cases if c.control == "permutation")
    assert perm.text.splitlines()[0][:3] == f"[{perm.source_order[0]}]"


def test_pruned_calls_never_exceed_full(bench) -> None:
    df = bench.to_frame()
    assert (df["calls_pruned"] <= df["calls_full"]).all()
    assert (df.loc[~df["changed"], "calls_pruned"] == 2).all()


def _g(cid, v_old, v_new, receipt, control="", base=""):
    return Gold(cid, ("G", "N", "A"), v_old, v_new, F(F(s) for s in receipt), {}, control, base or cid)


def test_accounting_known_answers() -> None:
    gold = {
        "a": _g("a", "ok", "no", [{"G"}]),           # change, receipt {G}
        "b": _g("b", "ok", "no", [{"G"}, {"N"}]),    # change
        "c": _g("c", "ok", "ok", []),                # no change
        "d": _g("d", "ok", "ok", []),                # no change
    }
    preds = [
        Prediction("a", F([F({"G"})]), "ok", "no", confidence=0.9),   # correct
        Prediction("b", F([F({"G"})]), "ok", "no", confidence=0.95),  # misattribution, verdicts right
        Prediction("c", F([F({"A"})]), "ok", "no", confidence=0.6),   # drift
        Prediction("d", F(), "ok", "ok", confidence=0.99),            # correct
    ]
    acc = account(gold, preds)
    assert (acc.drift, acc.inertia, acc.misattribution, acc.misattribution_verdicts_correct) == (1, 0, 1, 1)
    assert acc.drift_rate == 0.5 and acc.misattribution_rate == 0.5 and acc.inertia_rate == 0.0
    assert acc.receipt_accuracy == 0.5 and acc.verdict_accuracy == 0.75
    rd = reason_debt(gold, preds, threshold=0.8)
    # predicted changes: a, b, c; accepted (>=0.8): a, b; b is wrong.
    assert (rd.n_predicted_changes, rd.n_accepted, rd.n_accepted_wrong) == (3, 2, 1)
    assert rd.reason_debt == 0.5 and rd.accepted_coverage == pytest.approx(2 / 3)
    assert rd.gold_change_recall == 0.5  # a is accepted and right; 2 gold changes
    grid = reason_debt_grid(gold, preds, thresholds=[0.0, 0.9, 0.99])
    assert list(grid["n_accepted"]) == [3, 2, 0]
    missed = account(gold, [Prediction("a", F(), "ok", "ok")])
    assert missed.inertia == 1 and missed.n_missing == 3


def test_cube_cell_accuracy() -> None:
    cells = {F(): "ok", F({"G"}): "no"}
    gold = {"a": Gold("a", ("G",), "ok", "no", F([F({"G"})]), cells)}
    acc = account(gold, [Prediction("a", F([F({"G"})]), cube={F(): "ok", F({"G"}): "ok"})])
    assert acc.cube_cell_accuracy == 0.5 and acc.n_with_cube == 1


def test_pair_relations_and_consistency_names_the_pair() -> None:
    src = ("G", "N", "A")
    base = {"receipt": {F({"G"})}, "v_old": "ok", "v_new": "no"}
    assert pair_relation_holds("permutation", base, dict(base), sources=src)
    assert not pair_relation_holds("distractor", base, {"receipt": {F({"N"})}}, sources=src)
    # inverse: verdicts must swap, change-ness must match, complement of an inverse set cannot be a forward set
    assert pair_relation_holds("inverse", base, {"receipt": {F({"G"})}, "v_old": "no", "v_new": "ok"}, sources=src)
    assert not pair_relation_holds("inverse", base, {"receipt": set(), "v_old": "no", "v_new": "ok"}, sources=src)
    assert not pair_relation_holds("inverse", base, {"receipt": {F({"G"})}, "v_old": "ok", "v_new": "no"}, sources=src)
    assert not pair_relation_holds("inverse", {"receipt": {F({"N", "A"})}}, {"receipt": {F({"G"})}}, sources=src)
    gold = {"x": _g("x", "ok", "no", [{"G"}]), "x~permutation": _g("x~permutation", "ok", "no", [{"G"}], "permutation", "x")}
    cons = control_consistency(gold, [Prediction("x", F([F({"G"})])), Prediction("x~permutation", F([F({"N"})]))])
    assert cons.rates == {"permutation": 0.0}
    assert cons.violations == (("permutation", "x", "x~permutation"),)


def test_jsonl_validation_keeps_good_lines(bench) -> None:
    gold = gold_from_benchmark(bench.cases)
    ids = [c.case_id for c in bench.cases[:3]]
    cube = {"": "a", "G": "a", "N": "a", "A": "a", "G+N": "a", "G+A": "a", "N+A": "a", "G+N+A": "a"}
    lines = [
        json.dumps({"case_id": ids[0], "receipt": "{G} | {N}", "v_old": "x", "v_new": "y", "cube": cube}),
        "",
        "[1, 2]",
        json.dumps({"case_id": ids[1], "receipt": [["G"], ["G", "N"]]}),
        json.dumps({"case_id": ids[1], "receipt": [], "confidence": 1.5}),
        json.dumps({"case_id": ids[1], "receipt": [], "extra": 1}),
        json.dumps({"case_id": ids[1], "receipt": [], "v_old": "x"}),
        json.dumps({"case_id": ids[2], "receipt": [["G"]], "cube": {"": "a"}}),
        json.dumps({"case_id": ids[0], "receipt": []}),
        json.dumps({"case_id": ids[1], "receipt": [], "confidence": 0.3}),
    ]
    up = parse_predictions("\n".join(lines).encode(), gold=gold)
    assert [p.case_id for p in up.predictions] == [ids[0], ids[1]]
    msgs = {e.line: e.message for e in up.errors}
    assert set(msgs) == {3, 4, 5, 6, 7, 8, 9}
    assert "JSON object" in msgs[3] and "inclusion-minimal" in msgs[4] and "between 0 and 1" in msgs[5]
    assert "unknown field" in msgs[6] and "both" in msgs[7] and "all 8 cells" in msgs[8] and "earlier line" in msgs[9]
    assert up.predictions[0].cube[F({"G", "N"})] == "a"
    with pytest.raises(AuditInputError):
        parse_predictions(b"\n\n", gold=gold)
    with pytest.raises(AuditInputError):
        parse_predictions(b"\xff\xfe\x00", gold=gold)

