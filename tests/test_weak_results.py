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
