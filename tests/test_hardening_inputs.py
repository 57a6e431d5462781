"""Hand-written hostile and bad inputs, and the configurable caps (``audit_core.limits``).

Each case must give a valid result or a declared error; where a cap is hit the
message must name the environment variable that raises it.
"""
from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.intake import ReadOptions, read_table
from audit_core.errors import MESSAGES, AuditInputError
from audit_core.expr import evaluate_mask, parse_expression
from audit_core.limits import ENV_VARS, Limits
from audit_core.models.importing import import_model
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ModelSpec
from audit_core.receipts.state import state_from_dict
from audit_core.receipts.state_cube import execute_state_cube

from hardening_cases import declared_or_valid, expr_frame
from toy_data import excel_bytes, parquet_bytes

DEFAULT = Limits.from_env({})


def code_of(call) -> str:
    return declared_or_valid(call)


def raises(code: str, call) -> AuditInputError:
    with pytest.raises(AuditInputError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert code in MESSAGES
    return err.value


# ---------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------


def test_limits_defaults_and_env(monkeypatch):
    assert DEFAULT == Limits()
    env = {"AUDIT_MAX_UPLOAD_MB": "0.5", "AUDIT_MAX_ROWS": "3", "AUDIT_MAX_COLUMNS": "4",
           "AUDIT_MAX_EXPANSION_MB": "1", "AUDIT_MAX_EXACT_GROUPS": "6", "AUDIT_MAX_CUBE_K": "5"}
    lim = Limits.from_env(env)
    assert (lim.max_upload_bytes, lim.max_rows, lim.max_columns, lim.max_exact_groups, lim.max_cube_k) == (
        524_288, 3, 4, 6, 5)
    opts = ReadOptions.from_limits(lim, delimiter=";")
    assert (opts.max_bytes, opts.max_rows, opts.max_columns, opts.max_expansion_bytes, opts.delimiter) == (
        524_288, 3, 4, 1_048_576, ";")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert Limits.from_env() == lim


@pytest.mark.parametrize("value", ["lots", "-1", "nan", "0", "1e99"])
@pytest.mark.parametrize("field", sorted(ENV_VARS))
def test_limit_bad_value_names_the_variable(field, value):
    var = ENV_VARS[field][0]
    err = raises("LIMIT_BAD_VALUE", lambda: Limits.from_env({var: value}))
    assert var in err.message


def test_row_and_column_caps_name_their_variable():
    lim = Limits.from_env({"AUDIT_MAX_ROWS": "3", "AUDIT_MAX_COLUMNS": "2", "AUDIT_MAX_UPLOAD_MB": "0.001"})
    csv = b"a,b\n1,2\n3,4\n5,6\n7,8\n"
    assert "AUDIT_MAX_ROWS" in raises("TOO_MANY_ROWS", lambda: read_table(csv, name="r.csv",
                                                                          options=ReadOptions.from_limits(lim))).message
    wide = b"a,b,c\n1,2,3\n"
    assert "AUDIT_MAX_COLUMNS" in raises("TOO_MANY_COLUMNS", lambda: read_table(wide, name="w.csv",
                                                                               options=ReadOptions.from_limits(lim))).message
    big = b"a\n" + b"1\n" * 2000
    assert "AUDIT_MAX_UPLOAD_MB" in raises("FILE_TOO_LARGE", lambda: read_table(big, name="b.csv",
                                                                               options=ReadOptions.from_limits(lim))).message


def test_user_read_options_read_limits(monkeypatch):
    from audit_core.data.intake import user_read_options

    monkeypatch.setenv("AUDIT_MAX_COLUMNS", "7")
    monkeypatch.setenv("AUDIT_MAX_UPLOAD_MB", "1")
    opts = user_read_options(encoding="latin-1")
    assert (opts.max_columns, opts.max_bytes, opts.encoding) == (7, 1_048_576, "latin-1")


def test_config_files_read_limits(tmp_path, monkeypatch):
    from audit_core.runs.config import load_config, load_data

    (tmp_path / "t.csv").write_text("a,b,y\n1,2,0\n3,4,1\n5,6,0\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: c\ndata: {path: t.csv}\ndataset: {targets: [{kind: class, name: y, column: y, positive: 1}]}\n"
                   "model: {kind: logistic_regression}\naudits: [{kind: model}]\n")
    monkeypatch.setenv("AUDIT_MAX_ROWS", "2")
    err = raises("TOO_MANY_ROWS", lambda: load_data(load_config(cfg), base_dir=tmp_path))
    assert "AUDIT_MAX_ROWS" in err.message


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------


def test_very_wide_table_is_refused_by_the_default_cap():
    header = ",".join(f"c{i}" for i in range(20_000)).encode()
    data = header + b"\n" + b",".join(b"1" for _ in range(20_000)) + b"\n"
    err = raises("TOO_MANY_COLUMNS", lambda: read_table(data, name="wide.csv", options=ReadOptions.from_limits(DEFAULT)))
    assert "20,000" in err.message and "AUDIT_MAX_COLUMNS" in err.message


@pytest.mark.parametrize(
    "data, encoding",
    [
        ("a,b\né,1\nü,2\n".encode("utf-8-sig"), "utf-8-sig"),
        ("a,b\né,1\nü,2\n".encode("utf-16"), "utf-16"),  # BOM + little endian
        (b"\xfe\xff" + "a,b\né,1\nü,2\n".encode("utf-16-be"), "utf-16"),
        ("a,b\né,1\nü,2\n".encode("latin-1"), None),
        ("a,b\né,1\nü,2\n".encode("cp1252"), None),
    ],
)
def test_encodings_and_boms(data, encoding):
    t = read_table(data, name="enc.csv")
    assert list(t.frame.columns) == ["a", "b"] and t.frame["a"].tolist() == ["é", "ü"]
    if encoding:
        assert t.encoding == encoding


def test_wrong_declared_encoding_is_declared():
    raises("BAD_ENCODING", lambda: read_table("a\n€\n".encode("utf-16"), name="x.csv",
                                              options=ReadOptions.from_limits(DEFAULT, encoding="ascii")))


def test_ragged_rows():
    assert "line 3" in raises("CSV_RAGGED", lambda: read_table(b"a,b\n1,2\n3,4,5\n", name="r.csv")).message


def test_very_long_strings_load_as_text():
    long = "x" * 2_000_000
    t = read_table(f"a,b\n{long},1\ny,2\n".encode(), name="long.csv")
    assert len(t.frame["a"].iloc[0]) == 2_000_000


@pytest.mark.parametrize(
    "header, code",
    [(b"a,a", "DUPLICATE_COLUMNS"), (b"a, a ", "DUPLICATE_COLUMNS"), (b"a,", "BLANK_COLUMN_NAME"),
     (b",b", "BLANK_COLUMN_NAME")],
)
def test_duplicate_and_empty_column_names(header, code):
    raises(code, lambda: read_table(header + b"\n1,2\n", name="h.csv"))


def test_html_column_names_are_kept_verbatim():
    t = read_table(b"<script>alert(1)</script>,<b>x</b>\n1,2\n3,4\n", name="h.csv")
    assert list(t.frame.columns) == ["<script>alert(1)</script>", "<b>x</b>"]


def test_inf_is_declared_or_missing():
    data = b"a,b\n1,inf\n2,3\n"
    raises("INF_VALUES", lambda: read_table(data, name="i.csv"))
    t = read_table(data, name="i.csv", options=ReadOptions.from_limits(DEFAULT, inf_as_missing=True))
    assert t.frame["b"].isna().tolist() == [True, False]


def test_xlsx_zip_bomb_refused_before_expansion():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("xl/worksheets/sheet1.xml", b"0" * 30_000_000)
    data = buf.getvalue()
    lim = Limits.from_env({"AUDIT_MAX_EXPANSION_MB": "10"})
    err = raises("DECOMPRESSION_CAP", lambda: read_table(data, name="bomb.xlsx", options=ReadOptions.from_limits(lim)))
    assert len(data) < 100_000 and "AUDIT_MAX_EXPANSION_MB" in err.message


def test_parquet_bomb_refused_before_expansion():
    import pyarrow as pa

    table = pa.table({"z": pa.array(np.zeros(2_000_000))})
    data = parquet_bytes(table)
    lim = Limits.from_env({"AUDIT_MAX_EXPANSION_MB": "5"})
    err = raises("DECOMPRESSION_CAP", lambda: read_table(data, name="bomb.parquet", options=ReadOptions.from_limits(lim)))
    assert "AUDIT_MAX_EXPANSION_MB" in err.message


def test_excel_and_parquet_small_files_load():
    assert read_table(excel_bytes([["a", "b"], [1, "x"]]), name="ok.xlsx").frame.shape == (1, 2)
    import pyarrow as pa

    assert read_table(parquet_bytes(pa.table({"a": [1, 2]})), name="ok.parquet").frame.shape == (2, 1)


# ---------------------------------------------------------------------------
# Datasets and training on degenerate tables
# ---------------------------------------------------------------------------


def _train(frame: pd.DataFrame, positive=1) -> str:
    def run():
        ds = build_dataset(frame, DatasetConfig(name="t", targets=({"kind": "class", "name": "y", "column": "y",
                                                                     "positive": positive},)))
        return train_workspace(ds, spec=ModelSpec(kind="logistic_regression", seed=0))

    return code_of(run)


def test_one_row_is_declared():
    assert _train(pd.DataFrame({"x": [1.0], "y": [1]})) != "ok"


def test_single_class_is_declared():
    assert _train(pd.DataFrame({"x": np.arange(40.0), "y": [1] * 40})) != "ok"


def test_target_with_nan_is_declared():
    frame = pd.DataFrame({"x": np.arange(40.0), "y": [0.0, 1.0] * 19 + [np.nan, np.nan]})
    assert _train(frame) in {"TARGET_MISSING_VALUES", "ok"}
    assert _train(frame) == "TARGET_MISSING_VALUES"


def test_inf_feature_is_declared_when_checked():
    from audit_core.data.intake import check_table

    frame = pd.DataFrame({"x": [1.0, np.inf] * 20, "y": [0, 1] * 20})
    raises("INF_VALUES", lambda: check_table(frame))


# ---------------------------------------------------------------------------
# Expressions: no attribute access, no calls outside the grammar, bounded depth
# ---------------------------------------------------------------------------

HOSTILE = [
    "__import__('os').system('touch /tmp/pwned')",
    "a.__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "b.upper()",
    "eval('1')",
    "exec('x=1')",
    "open('/etc/passwd')",
    "lambda: 1",
    "[x for x in a]",
    "a if flag else n",
    "a[0]",
    "globals()",
    "f'{a}'",
    "a := 1",
    "(" * 10_000 + "a" + ")" * 10_000,
    "not " * 5_000 + "flag",
    "-" * 5_000 + "a",
    " + ".join(["a"] * 5_000),
    "a > " + "9" * 100_000,
    "'" + "x" * 100_000 + "'",
]


@pytest.mark.parametrize("text", HOSTILE, ids=[t[:30] for t in HOSTILE])
def test_hostile_expressions_are_declared(text, tmp_path):
    def run():
        return evaluate_mask(parse_expression(text), expr_frame())

    code = code_of(run)
    assert code.startswith("EXPR_"), code
    assert not Path("/tmp/pwned").exists()


# ---------------------------------------------------------------------------
# Model files of untrusted types
# ---------------------------------------------------------------------------


class _Payload:
    def __reduce__(self):
        import os

        return (os.system, ("touch /tmp/hardening_pickle_ran",))


@pytest.mark.parametrize("name", ["m.pkl", "m.joblib", "m.skops", "m"])
def test_pickle_payload_never_runs(name):
    data = pickle.dumps(_Payload())
    table = pd.DataFrame({"a": [1.0, 2.0]})
    raises("IMPORT_PICKLE", lambda: import_model(data, name=name, table=table))
    assert not Path("/tmp/hardening_pickle_ran").exists()


def test_skops_zip_bomb_refused(monkeypatch):
    monkeypatch.setenv("AUDIT_MAX_EXPANSION_MB", "5")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("schema.json", b" " * 20_000_000)
    err = raises("DECOMPRESSION_CAP", lambda: import_model(buf.getvalue(), name="m.skops",
                                                           table=pd.DataFrame({"a": [1.0]})))
    assert "AUDIT_MAX_EXPANSION_MB" in err.message


# ---------------------------------------------------------------------------
# Receipts cube cap
# ---------------------------------------------------------------------------


def _many_rule_states(n: int):
    def state(then: str) -> dict:
        rules = [{"id": f"r{i}", "when": f"x > {i}", "then": then} for i in range(n)]
        return {"grounds": {"x": 5}, "norms": {"default": "ok", "rules": rules},
                "authority": {f"r{i}": "true" for i in range(n)}}

    return state_from_dict(state("deny")), state_from_dict(state("refer"))


def test_cube_cap_names_its_variable():
    old, new = _many_rule_states(6)
    cap = Limits.from_env({"AUDIT_MAX_CUBE_K": "4"}).max_cube_k
    err = raises("RC_CUBE_TOO_MANY_SOURCES",
                 lambda: execute_state_cube(old, new, granularity="items", mode="pruned", max_sources=cap))
    assert "AUDIT_MAX_CUBE_K" in err.message
    assert execute_state_cube(old, new, granularity="items", mode="pruned", max_sources=6).cube.k == 6
