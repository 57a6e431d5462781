"""Messages about what was read say what is true: weights, the sheet read, values as the user wrote them.

Before: weights all 1e308 summed to infinity and every weight became 0 ("has
weight 0"); a workbook whose first sheet is a one-cell note was refused as
having no rows; a domain value absent from an integer column listed the values
present as ``np.int64(2019)``; ``positive: "1"`` on a 0/1 integer column was
refused as absent ("Values present: 0, 1").
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl import Workbook

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.intake import read_table
from audit_core.data.targets import ClassTarget, value_mask
from audit_core.errors import AuditInputError
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ModelSpec

ROOT = Path(__file__).resolve().parents[1]


def _frame(n: int = 200, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = (x + rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"x": x, "y": y, "year": np.where(np.arange(n) % 2 == 0, 2019, 2021)})


def test_weights_near_the_float_maximum_are_equal_weights_not_zero():
    frame = _frame().assign(w=1e308)
    ds = build_dataset(frame, DatasetConfig(name="t", targets=({"kind": "class", "name": "t", "column": "y",
                                                                 "positive": 1},), weight_column="w"))
    # 1e308 each: their sum overflows, but every row weighs the same, so each weight is 1.
    np.testing.assert_array_equal(ds.weights, np.ones(len(frame)))
    ws = train_workspace(ds, spec=ModelSpec(kind="logistic_regression"))
    assert ws.model.n_classes == 2
    # Mixed with small weights, the ratio is kept: [1e308, 1e308 / 3] -> mean 2/3 of the largest.
    frame.loc[frame.index[1::2], "w"] = 1e308 / 3
    ds = build_dataset(frame, DatasetConfig(name="t", targets=({"kind": "class", "name": "t", "column": "y",
                                                                 "positive": 1},), weight_column="w"))
    np.testing.assert_allclose(ds.weights[:2], [1.5, 0.5])


def test_absent_domain_value_lists_values_as_written():
    with pytest.raises(AuditInputError) as info:
        build_dataset(_frame(), DatasetConfig(name="t", targets=({"kind": "class", "name": "t", "column": "y",
                                                                   "positive": 1},),
                                              domain_column="year", source_domain="2020"))
    assert info.value.code == "DATASET_DOMAIN_VALUES"
    assert info.value.message == (
        "The domain column 'year' has no rows with value '2020'. Values present: 2019, 2021."
    )


def test_domain_written_as_text_selects_the_integer_year():
    ds = build_dataset(_frame(), DatasetConfig(name="t", targets=({"kind": "class", "name": "t", "column": "y",
                                                                    "positive": 1},),
                                               domain_column="year", source_domain="2019"))
    np.testing.assert_array_equal(ds.domain_mask("2019"), np.arange(200) % 2 == 0)


def test_value_mask_prefers_equal_values_then_text_form():
    mixed = pd.Series([1, "1", 2], dtype=object)
    assert value_mask(mixed, "1").tolist() == [False, True, False]  # an equal value wins
    assert value_mask(pd.Series([0.0, 1.0, np.nan]), "1").tolist() == [False, True, False]
    assert value_mask(pd.Series(["a", "b"]), "c").tolist() == [False, False]


def test_positive_class_written_as_text_on_a_0_1_integer_column():
    frame = _frame()
    labels = ClassTarget(name="t", column="y", positive="1").apply(frame)
    np.testing.assert_array_equal(labels.y, frame["y"].to_numpy())
    assert labels.class_names == ("not 1", "1")


def test_cli_accepts_positive_1_on_a_0_1_column(tmp_path: Path):
    _frame(120).drop(columns="year").to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "cfg.yaml").write_text(textwrap.dedent("""\
        data: {path: d.csv}
        dataset: {targets: [{kind: class, name: t, column: y, positive: "1"}]}
        model: {kind: logistic_regression, seed: 0}
        audits: [{kind: model, bootstrap: 20, chunk_size: 5}]
    """))
    done = subprocess.run(
        [str(Path(sys.executable).with_name("reliability-audit")), "run", str(tmp_path / "cfg.yaml"),
         "--registry", str(tmp_path / "r.sqlite3"), "--out", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert "does not occur" not in done.stderr + done.stdout


def _note_then_table() -> bytes:
    book = Workbook()
    note = book.active
    note.title = "About"
    note["A1"] = "Exported from the loan system on 2024-03-01; see the Data sheet."
    data = book.create_sheet("Data")
    data.append(["age", "city", "y"])
    for i in range(12):
        data.append([20 + i, "Bern" if i % 3 else "Zürich", i % 2])
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def test_first_sheet_with_a_one_cell_note_is_passed_over():
    table = read_table(_note_then_table(), name="loans.xlsx")
    assert table.report.sheet == "Data"
    assert table.frame.shape == (12, 3) and list(table.frame.columns) == ["age", "city", "y"]
    text = " ".join(table.report.lines())
    assert "Read sheet 'Data' (the first sheet with a table" in text
    assert "passed over: 'About' (1 × 1)" in text
