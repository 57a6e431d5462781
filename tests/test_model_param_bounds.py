"""Model parameters are counts of work too: n_estimators, max_iter and the MLP's layers are bounded
(``audit_core.limits``: ``AUDIT_MAX_TREES``, ``AUDIT_MAX_ITERATIONS``, ``AUDIT_MAX_WIDTH``; every other whole
number by ``AUDIT_MAX_MODEL_SIZE``), refused before anything is fitted with a message naming the parameter, the
bound and its variable: from a CLI config, from the library (every ``ModelSpec``), from a Transport config
and on the Transport page, which refits the model trained on Data & groups with its settings.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_text import texts

from audit_core.errors import AuditInputError
from audit_core.models.zoo import ModelSpec, make_estimator
from audit_core.runs.config import parse_config
from audit_core.runs.registry import RunRegistry
from audit_core.transport.config import TransportConfig

ROOT = Path(__file__).resolve().parents[1]
TREES = ("the most allowed is 5,000 (limit AUDIT_MAX_TREES). Use a smaller value, or set the environment variable "
         "AUDIT_MAX_TREES (at most 1,000,000).")


def _config(params: dict, kind: str = "lightgbm") -> dict:
    return {"data": {"sample": "loan_synthetic"}, "model": {"kind": kind, "params": params},
            "audits": [{"kind": "model"}]}


def _refused(call) -> str:
    with pytest.raises(AuditInputError) as err:
        call()
    assert err.value.code == "LIMIT_COUNT", err.value.message
    return err.value.message


@pytest.mark.parametrize("value", [10**9, 1e9, 5001, 5000.5])
def test_a_config_with_too_many_trees_is_refused_naming_the_parameter(value):
    msg = _refused(lambda: parse_config(_config({"n_estimators": value})))
    assert msg.startswith("model.params.n_estimators asks for ") and msg.endswith(TREES)


def test_iterations_layers_and_other_sizes_have_their_own_bounds():
    msg = _refused(lambda: parse_config(_config({"max_iter": 10**7}, "hist_gradient_boosting")))
    assert msg.startswith("model.params.max_iter asks for 10,000,000 solver iterations or training epochs; "
                          "the most allowed is 10,000 (limit AUDIT_MAX_ITERATIONS)")
    msg = _refused(lambda: parse_config(_config({"hidden_layer_sizes": [64, 100_000]}, "mlp")))
    assert msg.startswith("model.params.hidden_layer_sizes[1] asks for 100,000 hidden units; the most allowed is "
                          "512 (limit AUDIT_MAX_WIDTH)")
    msg = _refused(lambda: parse_config(_config({"hidden_layer_sizes": [8] * 101}, "mlp")))
    assert msg.startswith("model.params.hidden_layer_sizes asks for 101 entries in one list")
    msg = _refused(lambda: parse_config(_config({"num_leaves": 10**6})))
    assert "model.params.num_leaves asks for 1,000,000" in msg and "(limit AUDIT_MAX_MODEL_SIZE)" in msg
    # at the bounds, and a float that is not a count (C), are accepted
    parse_config(_config({"n_estimators": 5000, "num_leaves": 100_000}))
    parse_config(_config({"C": 1e9, "max_iter": 10_000}, "logistic_regression"))
    parse_config(_config({"hidden_layer_sizes": [512] * 100}, "mlp"))


def test_the_bound_follows_its_variable(monkeypatch):
    monkeypatch.setenv("AUDIT_MAX_TREES", "50")
    msg = _refused(lambda: parse_config(_config({"n_estimators": 51})))
    assert "the most allowed is 50 (limit AUDIT_MAX_TREES)" in msg
    parse_config(_config({"n_estimators": 50}))


def test_every_model_spec_and_transport_config_is_bounded_before_fitting():
    msg = _refused(lambda: make_estimator(ModelSpec(kind="random_forest", params={"n_estimators": 10**9})))
    assert msg.startswith("model.params.n_estimators asks for 1,000,000,000 trees") and msg.endswith(TREES)
    base = {"targets": ({"kind": "class", "name": "d", "column": "defaulted", "positive": "yes"},),
            "numeric": ("age",), "domain_column": "year", "source_value": 2019, "target_value": 2023,
            "models": ("lightgbm",)}
    msg = _refused(lambda: TransportConfig(**base, model_params={"lightgbm": {"n_estimators": 10**9}}))
    assert msg.startswith("model_params.lightgbm.n_estimators asks for 1,000,000,000 trees") and msg.endswith(TREES)


def test_the_cli_refuses_a_config_with_exit_2_before_any_run(tmp_path):
    from test_cli import cli

    cfg = tmp_path / "big.yaml"
    cfg.write_text("data: {sample: loan_synthetic}\nmodel: {kind: lightgbm, params: {n_estimators: 1000000000}}\n"
                   "audits: [{kind: model}]\n")
    reg = tmp_path / "registry.sqlite3"
    done = cli("run", str(cfg), "--registry", str(reg), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "model.params.n_estimators asks for 1,000,000,000 trees or boosting rounds" in done.stderr
    assert "AUDIT_MAX_TREES" in done.stderr and "Traceback" not in done.stderr
    assert not reg.exists() or RunRegistry(reg).list_runs().empty  # refused before a run was created


def test_the_transport_page_refuses_the_models_oversized_settings(tmp_path, monkeypatch):
    """The page refits the Data & groups model with its settings: oversized ones are refused by name, no
    traceback, and the page keeps the user's setup."""
    from audit_core.models.training import train_workspace
    from test_page_transport_models import TINY, _loan_dataset, _loan_with

    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(tmp_path / "registry.sqlite3"))
    ws = train_workspace(_loan_dataset(), spec=ModelSpec(kind="lightgbm", seed=0, params={"n_estimators": 20}))
    spec = {**dict(ws.model.spec), "params": {"n_estimators": 10**9}}  # e.g. a model saved by an older version
    ws = dataclasses.replace(ws, model=dataclasses.replace(ws.model, spec=spec))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    _loan_with(at, ws)
    at.run()
    at.switch_page("pages/transport.py").run()
    assert not at.exception, at.exception
    at.button(key="act_tr_lock").click().run()
    for k, v in TINY.items():
        at.number_input(key=k).set_value(v)
    at.button(key="act_tr_run").click().run()
    assert not at.exception, at.exception
    assert texts(at, "error") == ["model_params.lightgbm.n_estimators asks for 1,000,000,000 trees or boosting "
                                  "rounds; " + TREES]
    assert at.number_input(key="tr_refits").value == TINY["tr_refits"]  # nothing the user set is lost
