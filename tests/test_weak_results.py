"""Warnings where a result is weak: an identifier-like column, a constant model, small Transport partitions, a
stress that cannot run.

Each is a case the product used to pass over in silence (a key taken as a numeric feature, a model that learned
nothing announced as ready, partitions of a handful of records, a stress skipped without a word).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core.data.roles import MIN_ID_UNIQUE_SHARE, infer_roles, propose_roles

from real_data import DATASETS, require


# ---------------------------------------------------------------------------
# An identifier-like column is proposed as an identifier
# ---------------------------------------------------------------------------


def test_a_repeated_key_named_like_an_identifier_is_proposed_as_identifier():
    # 40 rows, 30 distinct student numbers (75 %): each of 10 students takes two courses; not unique, so the
    # inference keeps it numeric, and the proposal says why it is a key
    ids = np.r_[np.arange(1000, 1030), np.arange(1000, 1010)]
    frame = pd.DataFrame({
        "id_student": ids,
        "score": ids,  # the same numbers under a plain name: a feature
        "student_id": np.arange(40) % 15 + 7,  # named like a key but 15 of 40 values (37.5 %): kept
        "x": np.linspace(0, 1, 40),
    })
    assert infer_roles(frame)["id_student"] == "numeric"
    props = propose_roles(frame)
    assert set(props) == {"id_student"}
    assert props["id_student"].role == "identifier"
    assert props["id_student"].reason == ("named like a key, with 30 distinct whole numbers in 40 rows (75%): "
                                          "probably a key, not evidence")
    assert 15 / 40 < MIN_ID_UNIQUE_SHARE <= 30 / 40
    assert propose_roles(frame, {**infer_roles(frame), "id_student": "identifier"}) == {}


def test_oulad_id_student_is_proposed_as_identifier():
    frame = pd.read_csv(require(DATASETS / "oulad" / "studentInfo.csv"))
    props = propose_roles(frame)
    assert props["id_student"].role == "identifier"
    assert "28,785 distinct whole numbers in 32,593 rows (88%)" in props["id_student"].reason


# ---------------------------------------------------------------------------
# A model whose predictions are constant
# ---------------------------------------------------------------------------


def _toy(n: int = 100) -> "AuditDataset":
    from audit_core.data.dataset import DatasetConfig, build_dataset

    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    y = np.where(np.arange(n) % 10 < 3, "yes", "no")  # 30 % positives
    frame = pd.DataFrame({"x": x + (y == "yes") * 2.0, "y": y})
    return build_dataset(frame, DatasetConfig(name="toy", targets=(
        {"kind": "class", "name": "t", "column": "y", "positive": "yes"},), roles={"y": "ignore"}))


def test_a_model_that_cannot_split_gets_the_constant_prediction_warning():
    """100 rows, 75 for training: LightGBM's 50 rows per leaf allow no split, so every row gets the training
    prevalence, 23 of 75 (stratified), about 0.307."""
    from audit_core.models.training import MIN_PREDICTION_SPREAD, train_workspace
    from audit_core.models.zoo import ModelSpec

    ws = train_workspace(_toy(), spec=ModelSpec(kind="lightgbm", seed=0))
    assert len(ws.train_index) == 75 and int(ws.dataset.primary.y[ws.train_index].sum()) == 23
    codes = dict(ws.warnings)
    message = codes["TRAIN_CONSTANT_PREDICTIONS"]
    assert message.startswith("The model's predictions are (nearly) constant: over the 25 held-out rows no class "
                              "probability moves by more than 0.0000 (every row gets about (0.693, 0.307)), and "
                              "the held-out AUROC is 0.500.")
    assert "With 75 training rows" in message
    lr = train_workspace(_toy(), spec=ModelSpec(kind="logistic_regression", seed=0))
    p = lr.model.predict_proba(lr.dataset.frame.iloc[lr.test_index])
    assert (p.max(0) - p.min(0)).max() > MIN_PREDICTION_SPREAD
    assert "TRAIN_CONSTANT_PREDICTIONS" not in dict(lr.warnings)


# ---------------------------------------------------------------------------
# Transport: partitions below the declared minimum per class; a stress that cannot run
# ---------------------------------------------------------------------------


def test_partition_warnings_name_the_partition_the_class_and_the_fewest_records():
    from audit_core.transport.cautions import partition_warnings

    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    parts = np.array([[0, 0, 1, 2, 0, 0, 1, 1, 2, 3],   # refit 0: class 0 has 0 in id_test; class 1 has 1 in selection
                      [0, 1, 2, 3, 0, 0, 0, 1, 2, 3]])  # refit 1: every (partition, class) holds 1 or more
    out = partition_warnings(parts, y, partitions=("train", "calibration", "selection", "id_test"), codes=(0, 1),
                             names=("no", "yes"), minimum=2)
    # fewest over the refits, partition by partition: train no 1 (refit 1), yes 2 (kept); calibration no 1, yes 1
    # (refit 1); selection no 1, yes 1; id_test no 0 (refit 0), yes 1
    assert [(w["partition"], w["class"], w["count"]) for w in out] == [
        ("train", "no", 1), ("calibration", "no", 1), ("calibration", "yes", 1), ("selection", "no", 1),
        ("selection", "yes", 1), ("id_test", "no", 0), ("id_test", "yes", 1)]
    assert out[3]["message"] == (
        "The selection partition holds only 1 record(s) of class 'no' (fewest over 2 refit(s); the declared minimum "
        "is 2 per class): the selective thresholds and conformal quantiles rest on so few records that they can "
        "swing widely. Use more source records, or fewer classes.")


def test_a_small_transport_run_with_one_target_says_which_partitions_are_short_and_that_the_stress_did_not_run():
    """The loan sample's 2019 rows cut to 300 (about 60 positives): 10 % for selection leaves about 6 positives."""
    from audit_core.data.dataset import DatasetConfig, build_dataset
    from audit_core.data.samples import load_sample
    from audit_core.limits import MIN_PARTITION_CLASS_ROWS
    from audit_core.transport import TransportConfig, run_transport
    from audit_core.transport.splits import PARTITIONS

    frame, info = load_sample("loan_synthetic")
    frame = pd.concat([frame[frame["year"] == 2019].head(300), frame[frame["year"] == 2023].head(300)])
    ds = build_dataset(frame, DatasetConfig(
        name="loan", targets=info.target_definitions[:1], domain_column="year", source_domain=2019, target_domain=2023,
        key_column="application_id", roles={c: "ignore" for c in info.exclude_columns}))
    config = TransportConfig.from_dataset(ds, n_refits=2, n_bootstrap=20, n_random_sets=2, stress_max_rows=300,
                                          models=("logistic_regression",))
    result = run_transport(ds.frame, config=config)
    warnings = result.manifest["warnings"]
    # the counts re-derived from the stored partitions and labels
    source = ds.frame[ds.frame["year"] == 2019]
    y = ds.primary.y[(ds.frame["year"] == 2019).to_numpy()]
    codes = np.array(result.manifest["partitions"]["codes"])
    names = ("not " + str(info.target_definitions[0]["positive"]), str(info.target_definitions[0]["positive"]))
    expected = []
    for k, partition in enumerate(PARTITIONS):
        for cls, name in enumerate(names):
            fewest = int(min(((p == k) & (y == cls)).sum() for p in codes))
            if fewest < MIN_PARTITION_CLASS_ROWS:
                expected.append((partition, name, fewest))
    assert len(source) == 300
    got = [(w["partition"], w["class"], w["count"]) for w in warnings if w["code"] == "TRANSPORT_FEW_IN_PARTITION"]
    assert got == expected and ("selection", names[1]) in {(p, c) for p, c, _ in got}
    stress = [w["message"] for w in warnings if w["code"] == "TRANSPORT_STRESS_ONE_TARGET"]
    assert stress == [f"The target-definition stress did not run: it compares the primary target "
                      f"{info.target_definitions[0]['name']!r} with another definition of the target, and only one is "
                      f"declared. Declare a second target to run it."]
    assert not (result.table["analysis"] == "target_decomposition").any()


def test_the_constant_prediction_warning_is_saved_with_the_model_run(tmp_path):
    """Saved runs keep the held-out warnings in their manifest (the Runs page and the CLI show them from there)."""
    from audit_core.models.training import train_workspace
    from audit_core.models.zoo import ModelSpec
    from audit_core.runs.registry import RunRegistry
    from audit_core.runs.save import save_workspace

    ws = train_workspace(_toy(), spec=ModelSpec(kind="lightgbm", seed=0))
    registry = RunRegistry(tmp_path / "registry.sqlite3")
    saved = registry.load(save_workspace(registry, ws))
    assert [w["code"] for w in saved.manifest["warnings"]] == [c for c, _ in ws.warnings]
    assert "TRAIN_CONSTANT_PREDICTIONS" in {w["code"] for w in saved.manifest["warnings"]}
