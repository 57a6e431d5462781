"""What the gate notes besides the verdict: different data, different configurations (known answers)."""
from __future__ import annotations

from types import SimpleNamespace

from audit_core.runs.gate_context import comparison_notes


def _run(kind: str, config: dict, *, name: str = "loan", fingerprint: str = "a" * 64) -> SimpleNamespace:
    """The fields of a RunRecord that the notes read."""
    return SimpleNamespace(audit_kind=kind, config=config, dataset_name=name, dataset_fingerprint=fingerprint)


def test_the_same_data_and_configuration_give_no_note():
    runs = [_run("model", {"model": {"kind": "lr", "seed": 0}}), _run("transport", {"n_refits": 10})]
    assert comparison_notes(runs, list(runs)) == []


def test_settings_that_differ_are_named_by_dotted_path_with_short_values():
    old = [_run("transport", {"audits": [{"k": 1}], "models": ["lr"], "grid": list(range(30)), "name": "a"})]
    new = [_run("transport", {"audits": [{"k": 2}], "models": ["lr", "lgbm"], "grid": list(range(31)), "name": "a"})]
    assert comparison_notes(old, new) == [
        'The transport runs were configured differently: audits.0.k (1 → 2); grid; models (["lr"] → ["lr", "lgbm"]).']


def test_more_than_eight_settings_are_counted_and_kinds_on_one_side_only_are_not_compared():
    old = [_run("fragility", {f"s{i}": 0 for i in range(10)}), _run("model", {"x": 1})]
    new = [_run("fragility", {f"s{i}": 1 for i in range(10)}), _run("transport", {"x": 2})]
    (note,) = comparison_notes(old, new)
    assert note == ("The fragility runs were configured differently: " + "; ".join(f"s{i} (0 → 1)" for i in range(8))
                    + "; and 2 more.")


def test_different_data_is_named_with_the_fingerprints():
    old = [_run("model", {}, name="loan", fingerprint="1" * 64)]
    new = [_run("model", {}, name="german.data", fingerprint="2" * 64), _run("transport", {}, name="loan",
                                                                          fingerprint="1" * 64)]
    assert comparison_notes(old, new) == [
        "The two sides read different data: old 'loan' (SHA-256 111111111111), new 'german.data' (SHA-256 "
        "222222222222), 'loan' (SHA-256 111111111111). The verdicts are compared as they stand; a change may come "
        "from the data, not the model."]
