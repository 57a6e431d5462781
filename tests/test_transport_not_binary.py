"""Transport is binary-only: every path to a non-binary target ends in a declared refusal.

The class of inputs: a three-class target column where the source domain
lacks some class (the middle one, the last one, none), read as text or as
integer codes, declared without a positive class (multi-class: refused with
``TRANSPORT_NOT_BINARY``) or with each possible positive class (binary: runs,
or a declared refusal when the positive class is absent from a domain), in
one table with a domain column or in two tables. Paths: the library, the CLI
executor (Transport alone, and with a model audit, which trains first) and
the Transport page.

Before: with a model audit in the config, training raised scikit-learn's
``ValueError: y_true contains values {2} not belonging to the passed labels
[0, 1]``; Transport itself said "target 'y' has 2 classes" for a three-class
target (the source's count).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core.errors import AuditInputError
from audit_core.runs.config import parse_config
from audit_core.runs.execute import run_config
from audit_core.runs.registry import RunRegistry
from audit_core.transport import TransportConfig, run_transport

CLASSES = {"text": ["high", "low", "mid"], "codes": [0, 1, 2]}  # sorted: the middle class is index 1
SOURCE_LACKS = {"middle": [1], "last": [2], "nothing": []}
DECLARED = {"TRANSPORT_NOT_BINARY", "TRANSPORT_TARGET_IN_DOMAIN", "TRANSPORT_SMALL_PARTITION"}


def _frame(kind: str, lacks: list[int], seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = CLASSES[kind]
    src_classes = [v for i, v in enumerate(values) if i not in lacks]
    n_src, n_tgt = 400, 200
    y = np.r_[rng.choice(np.array(src_classes, dtype=object), n_src), rng.choice(np.array(values, dtype=object), n_tgt)]
    x = rng.normal(size=n_src + n_tgt) + (y == values[-1])
    return pd.DataFrame({"x": x, "k": rng.choice(["a", "b"], n_src + n_tgt), "dom": ["s"] * n_src + ["t"] * n_tgt,
                         "y": pd.Series(y).astype(type(values[0]) if kind == "codes" else object)})


CASES = [(k, lack, pos, two) for k, lack in itertools.product(CLASSES, SOURCE_LACKS)
         for pos in [None, *CLASSES[k]] for two in (False, True)]


@pytest.mark.parametrize("kind,lack,positive,two_tables", CASES)
def test_library_reaches_a_result_or_a_declared_refusal(kind, lack, positive, two_tables):
    df = _frame(kind, SOURCE_LACKS[lack])
    target = {"kind": "class", "name": "y", "column": "y", **({"positive": positive} if positive is not None else {})}
    common = dict(targets=(target,), numeric=("x",), categorical=("k",), n_refits=1, n_bootstrap=5, stresses=(),
                  mappings=("raw",))
    if two_tables:
        cfg = TransportConfig(**common)
        call = lambda: run_transport(df[df.dom == "s"], df[df.dom == "t"], config=cfg)  # noqa: E731
    else:
        cfg = TransportConfig(**common, domain_column="dom", source_value="s", target_value="t")
        call = lambda: run_transport(df, config=cfg)  # noqa: E731
    try:
        res = call()
    except AuditInputError as err:
        assert err.code in DECLARED, (err.code, err.message)
        if positive is None:
            assert err.code == "TRANSPORT_NOT_BINARY" and "binary-only" in err.message
            assert "3 classes" in err.message and "Declare a positive class" in err.message
        else:
            absent = CLASSES[kind].index(positive) in SOURCE_LACKS[lack]
            assert absent and err.code == "TRANSPORT_TARGET_IN_DOMAIN" and "source domain" in err.message
        return
    assert positive is not None and len(res.verdicts)


def _config(tmp: Path, audits: list[dict]) -> dict:
    path = tmp / "three.csv"
    _frame("text", [1]).to_csv(path, index=False)
    return parse_config({"data": {"path": str(path)},
                         "dataset": {"targets": [{"kind": "class", "name": "y", "column": "y"}],
                                     "domain_column": "dom", "source_domain": "s", "target_domain": "t"},
                         "model": {"kind": "logistic_regression"}, "audits": audits})


def test_cli_transport_alone_saves_a_failed_run_with_the_binary_only_refusal(tmp_path):
    out = run_config(_config(tmp_path, [{"kind": "transport", "n_refits": 1, "n_bootstrap": 5}]),
                     registry=RunRegistry(tmp_path / "r.sqlite3"), base_dir=tmp_path)
    assert out[0].status == "failed"
    assert out[0].error.startswith("Transport is binary-only: target 'y' makes every value of column 'y' a class "
                                   "(3 classes: 'high', 'low', 'mid'; the source domain holds 2 of them)")


def test_cli_with_a_model_audit_refuses_before_training(tmp_path):
    cfg = _config(tmp_path, [{"kind": "model", "bootstrap": 0}, {"kind": "transport", "n_refits": 1, "n_bootstrap": 5}])
    with pytest.raises(AuditInputError) as e:
        run_config(cfg, registry=RunRegistry(tmp_path / "r.sqlite3"), base_dir=tmp_path)
    assert e.value.code == "TRAIN_CLASS_ABSENT"
    assert "class 'low' has no row among the 400 eligible training rows (source domain dom = 's')" in e.value.message


def test_transport_page_shows_the_refusal(tmp_path, monkeypatch):
    from tests.transport_page import transport_page

    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "r.sqlite3"))
    at = transport_page(_frame("text", [1]), name="three.csv", timeout=180)
    at.button(key="act_tr_lock").click().run()
    at.number_input(key="tr_refits").set_value(1)
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("Transport is binary-only") and "3 classes" in errors[0]
