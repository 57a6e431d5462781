"""The notebook library (:mod:`audit_core.api`): one TableSpec, both audits, refusals that name the column.

Known answers: each entry point must give exactly the tables of the hand-written
path the app and the CLI take (DatasetConfig → build_dataset → train_workspace /
TransportConfig.from_dataset → the runner); the refusals are checked by their
full text; a polars copy of a table gives the same tables as the pandas one.
Data are small and generated with seeds; settings are small (1–2 refits, 20
resamples, 40 cases) so each test runs in a few seconds.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit_core import TableSpec, fragility_audit, transport_audit
from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.frames import as_pandas, is_polars_frame
from audit_core.errors import AuditInputError
from audit_core.fragility.audit import run_fragility_audit
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ModelSpec
from audit_core.transport import TransportConfig, run_transport
from audit_core.transport.multiclass.run import (
    MulticlassTransportResult,
    run_multiclass_transport,
)
from audit_core.transport.verdicts import VERDICTS
from tests.api_data import FAST, SMALL, binary_frame, multiclass_frame, spec

ROOT = Path(__file__).resolve().parents[1]
def message(excinfo) -> str:
    return excinfo.value.message


# ---------------------------------------------------------------------------------------------- TableSpec refusals
@pytest.mark.parametrize("kw, text", [
    (dict(features=("x1", "y")),
     "TableSpec declares the column 'y' as the target and as a feature; give each column one role."),
    (dict(key="dom"), "TableSpec declares the column 'dom' as the domain column and as the key column; give each "
                      "column one role."),
    (dict(features="x1"), "TableSpec features: must be a list of column names, got 'x1'."),
    (dict(features=("x1", "x1")), "TableSpec features: names the column 'x1' twice."),
    (dict(categorical=("dom",)), "TableSpec categorical: names 'dom', which is not among the declared features."),
    (dict(groups={"id": "ids"}), "TableSpec groups: names 'id', which is not among the declared features."),
    (dict(target_domain=None), "TableSpec domain: the domain column 'dom' needs both source_domain and target_domain."),
    (dict(target_domain="s"), "TableSpec target_domain: must differ from source_domain, both are 's'."),
    (dict(domain=None), "TableSpec domain: source_domain and target_domain need the domain column that holds them."),
    (dict(target=""), "TableSpec target: must be a column name, got ''."),
])
def test_spec_refusals_name_the_field_and_column(kw, text):
    with pytest.raises(AuditInputError) as e:
        spec(**kw)
    assert message(e) == text


def test_a_column_the_table_lacks_is_named_with_the_closest_one():
    with pytest.raises(AuditInputError) as e:
        fragility_audit(binary_frame(), spec(features=("x2", "x11"), groups={}), options=SMALL)
    assert e.value.code == "SPEC_UNKNOWN_COLUMN"
    assert message(e) == "TableSpec features names the column 'x11', which is not in the table. Did you mean 'x1'?"


def test_spec_builds_the_dataset_config_the_app_declares():
    df = binary_frame()
    cfg = spec().dataset_config(df)
    assert cfg.targets == ({"kind": "class", "name": "y", "column": "y", "positive": "yes"},)
    assert (cfg.domain_column, cfg.source_domain, cfg.target_domain, cfg.key_column) == ("dom", "s", "t", "id")
    ds = build_dataset(df, cfg)
    assert ds.numeric == ("x1", "x2") and ds.categorical == ("k",)  # id, dom, y are never features
    assert spec(features=()).dataset(df).features == ("x1", "x2", "k")  # inferred; the domain is never a feature
    assert TableSpec(target="y", positive="yes", key="id").dataset(df).features == ("x1", "x2", "k", "dom")


# ---------------------------------------------------------------------------------------------- dispatch refusals
def test_regression_like_target_is_refused_naming_the_column():
    df = binary_frame().assign(score=np.linspace(0.5, 3.0, 600))
    with pytest.raises(AuditInputError) as e:
        transport_audit(df, spec(target="score", positive=None), n_refits=1, n_bootstrap=5, options=FAST)
    assert message(e).startswith("The target column 'score' holds 600 distinct non-integer numbers (e.g. 0.5, ")
    with pytest.raises(AuditInputError) as e:  # Fragility reads the same declaration
        fragility_audit(df, spec(target="score", positive=None), options=SMALL)
    assert e.value.code == "SPEC_REGRESSION_TARGET"


def test_two_classes_without_a_positive_class_are_refused_by_transport():
    with pytest.raises(AuditInputError) as e:
        transport_audit(binary_frame(), spec(positive=None), n_refits=1, n_bootstrap=5, options=FAST)
    assert message(e) == ("transport_audit cannot audit the target column 'y': it has two classes ('no', 'yes') and "
                          "no positive class: declare positive= one of them to run the binary protocol.")


def test_one_class_only_is_refused_naming_the_target():
    df = binary_frame().assign(y="yes")
    with pytest.raises(AuditInputError) as e:
        transport_audit(df, spec(positive=None), n_refits=1, n_bootstrap=5, options=FAST)
    assert e.value.code == "TARGET_SINGLE_CLASS" and "`y`" in message(e)


def test_transport_needs_two_domains_and_refuses_options_the_spec_declares():
    df = binary_frame()
    with pytest.raises(AuditInputError) as e:
        transport_audit(df, spec(domain=None, source_domain=None, target_domain=None))
    assert e.value.code == "API_NO_DOMAIN" and "'y'" in message(e)
    with pytest.raises(AuditInputError) as e:
        transport_audit(df, spec(), options={"weight_column": "x1"})
    assert message(e) == ("transport_audit: options['weight_column'] is declared by the TableSpec; set it there.")
    with pytest.raises(AuditInputError) as e:
        transport_audit(df, spec(), options={"n_refit": 2})
    assert message(e).startswith("transport_audit: options['n_refit'] is not a Transport option; allowed: alphas, ")
    with pytest.raises(AuditInputError) as e:
        transport_audit(df, {"target": "y"})
    assert message(e) == "transport_audit: spec must be a TableSpec, got dict."
    with pytest.raises(AuditInputError) as e:
        fragility_audit(df, spec(), model="xgb", options=SMALL)
    assert e.value.code == "API_BAD_ARGUMENT" and "'xgb'" in message(e)


# ---------------------------------------------------------------------------------------------- one entry point
def test_binary_transport_equals_the_hand_written_declaration():
    df = binary_frame()
    report = transport_audit(df, spec(), n_refits=2, n_bootstrap=20, options=FAST)
    ds = build_dataset(df, DatasetConfig(name="toy", targets=({"kind": "class", "name": "y", "column": "y",
                                                               "positive": "yes"},),
                                         roles={"id": "ignore"}, key_column="id", domain_column="dom",
                                         source_domain="s", target_domain="t"))
    direct = run_transport(ds.frame, config=TransportConfig.from_dataset(ds, n_refits=2, n_bootstrap=20, **FAST))
    assert not report.multiclass and type(report.result) is type(direct)
    pd.testing.assert_frame_equal(report.result.table, direct.table)
    pd.testing.assert_frame_equal(report.result.verdicts, direct.verdicts)
    assert report.result.manifest["n_source"] == int((df["dom"] == "s").sum())
    assert report.result.manifest["n_target"] == int((df["dom"] == "t").sum())
    v = report.verdict_table()
    assert len(v) and set(v["verdict"]) <= set(VERDICTS)
    assert (report.headline.model, report.headline.mapping) == ("logistic_regression", "platt")
    assert report.findings and all(f.text for f in report.findings)


def test_multiclass_transport_runs_through_the_same_entry_point():
    df = multiclass_frame()
    report = transport_audit(df, spec(positive=None, groups={}), n_refits=1, n_bootstrap=20, options=FAST)
    assert report.multiclass and isinstance(report.result, MulticlassTransportResult)
    assert report.result.classes == ("distinction", "fail", "pass", "withdrawn")  # every value a class, sorted
    cfg = TransportConfig(targets=({"kind": "class", "name": "y", "column": "y", "positive": None},),
                          numeric=("x1", "x2"), categorical=("k",), domain_column="dom", source_value="s",
                          target_value="t", key_column="id", n_refits=1, n_bootstrap=20, **FAST)
    direct = run_multiclass_transport(df, config=cfg)
    pd.testing.assert_frame_equal(report.result.table, direct.table)
    assert report.headline.multiclass and report.headline.mapping == "temperature"
    assert "mc_reliability_figure" in report._repr_html_()


def test_fragility_equals_the_workspace_path():
    df = binary_frame()
    report = fragility_audit(df, spec(), options=SMALL, seed=3)
    ds = spec().dataset(df)
    ws = train_workspace(ds, spec=ModelSpec(kind="logistic_regression", seed=3), raw_groups={"x1": "first", "x2": "first"})
    direct = run_fragility_audit(ws, options=SMALL)
    pd.testing.assert_frame_equal(report.audit.certificates, direct.certificates)
    assert report.audit.batch.protocol.n_groups == 2  # {x1, x2} and k
    assert report.depth == 2 and len(report.certificate_table()) == 40
    assert report.findings


# ---------------------------------------------------------------------------------------------- display
def test_repr_html_escapes_every_data_string():
    df = binary_frame(key="<script>alert(1)</script>")
    df["y"] = df["y"].map({"yes": "<b>yes</b>", "no": "no"})
    df = df.rename(columns={"k": "<i>k</i>"})
    s = spec(positive="<b>yes</b>", features=("x1", "x2", "<i>k</i>"), name="<img src=x onerror=alert(1)>")
    frag = fragility_audit(df, s, options=SMALL)._repr_html_()
    assert "<script>" not in frag and "&lt;script&gt;alert(1)&lt;/script&gt;" in frag  # the keys
    assert "<img" not in frag and "&lt;img src=x onerror=alert(1)&gt;" in frag
    tr = transport_audit(df, s, n_refits=1, n_bootstrap=10, options=FAST)
    html = tr._repr_html_()
    assert "<b>yes</b>" not in html and "&lt;b&gt;yes&lt;/b&gt;" in html  # the positive class, in the findings
    assert "<img" not in html and "<table>" in html and "reliability_figure" in html


# ---------------------------------------------------------------------------------------------- polars
def test_polars_copy_gives_identical_tables():
    pl = pytest.importorskip("polars")
    df = binary_frame()
    df.loc[::7, "x2"], df.loc[::11, "k"] = np.nan, None  # missing values: polars nulls, NaN / NA again in pandas
    copy = pl.from_pandas(df)
    assert copy["x2"].null_count() == 86 and copy["k"].null_count() == 55
    a = transport_audit(df, spec(), n_refits=1, n_bootstrap=20, options=FAST)
    b = transport_audit(copy, spec(), n_refits=1, n_bootstrap=20, options=FAST)
    for name in ("table", "verdicts", "refit_summary"):
        pd.testing.assert_frame_equal(getattr(a.result, name), getattr(b.result, name))
    fa, fb = fragility_audit(df, spec(), options=SMALL), fragility_audit(copy, spec(), options=SMALL)
    for name, table in fa.tables().items():
        pd.testing.assert_frame_equal(table, fb.tables()[name])
    assert build_dataset(copy, spec().dataset_config(df)).fingerprint == build_dataset(df, spec().dataset_config(df)).fingerprint


def test_as_pandas_refuses_what_is_not_a_table():
    pl = pytest.importorskip("polars")
    with pytest.raises(AuditInputError) as e:
        as_pandas(pl.DataFrame({"a": [1]}).lazy(), where="fragility_audit")
    assert message(e) == "fragility_audit takes a polars DataFrame, got a polars LazyFrame: call .collect() on it first."
    with pytest.raises(AuditInputError) as e:
        transport_audit(np.zeros((3, 2)), spec())
    assert message(e) == "transport_audit takes a table (a pandas or polars DataFrame), got ndarray."


def test_polars_is_recognised_by_module_name_and_never_imported_for_pandas():
    fake = type("DataFrame", (), {"__module__": "polars.dataframe.frame"})()
    assert is_polars_frame(fake) and not is_polars_frame(pd.DataFrame())
    code = ("import sys, pandas as pd; from audit_core import as_pandas, build_dataset, DatasetConfig; "
            "df = pd.DataFrame({'x': [1.0, 2.0, 3.0, 4.0], 'y': ['a', 'b', 'a', 'b']}); as_pandas(df); "
            "build_dataset(df, DatasetConfig(name='t', targets=({'kind': 'class', 'name': 'y', 'column': 'y', "
            "'positive': 'a'},))); print('polars' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"


def test_groups_must_name_features():
    with pytest.raises(AuditInputError) as e:  # no features declared: 'dom' is the domain, never a feature
        fragility_audit(binary_frame(), spec(features=(), groups={"dom": "where"}), options=SMALL)
    assert message(e) == ("fragility_audit: spec.groups names the column 'dom', which is not a feature (features: "
                          "'x1', 'x2', 'k').")


def test_repr_is_one_line_per_finding_with_no_escape_sequences():
    df = binary_frame()
    report = fragility_audit(df, spec(name="toy\x1b[2J\nforged"), options=SMALL)
    lines = repr(report).splitlines()
    assert lines[0].startswith("Fragility audit of logistic_regression on toy\\x1b[2J\\nforged (40 held-out cases")
    assert len(lines) == 1 + len(report.findings) + 1 and lines[-1].startswith("Figures: ")
    assert "\x1b" not in repr(report)


def test_library_entry_points_take_polars_and_leave_other_objects_to_their_own_checks():
    pl = pytest.importorskip("polars")
    from audit_core import apply_targets, infer_roles
    from audit_core.data.frames import from_polars

    df = binary_frame(n=300)
    copy = pl.from_pandas(df)
    assert infer_roles(copy) == infer_roles(df)
    definition = ({"kind": "class", "name": "y", "column": "y", "positive": "yes"},)
    assert apply_targets(definition, copy)["y"].y.tolist() == apply_targets(definition, df)["y"].y.tolist()
    cfg = TransportConfig(targets=definition, numeric=("x1", "x2"), categorical=("k",), domain_column="dom",
                          source_value="s", target_value="t", n_refits=1, n_bootstrap=10, **FAST)
    pd.testing.assert_frame_equal(run_transport(copy, config=cfg).table, run_transport(df, config=cfg).table)
    marker = object()
    assert from_polars(marker) is marker and from_polars(None) is None


def test_weight_subgroups_and_extra_targets_reach_the_transport_declaration():
    df = binary_frame().assign(w=np.linspace(0.5, 1.5, 600))
    extra = ({"kind": "threshold", "name": "x2_high", "column": "x2", "threshold": 0.0, "op": ">"},)
    s = spec(features=("x1", "k"), groups={}, weight="w", subgroups=("k",), extra_targets=extra)
    assert [t["name"] for t in s.dataset_config(df).targets] == ["y", "x2_high"]
    with pytest.raises(AuditInputError) as e:  # x2 is read by a target definition: as a feature it would leak
        spec(features=("x1", "x2"), extra_targets=extra, groups={})
    assert message(e) == ("TableSpec declares the column 'x2' as read by the target definition 'x2_high' and as a "
                          "feature; give each column one role.")
    report = transport_audit(df, s, n_refits=1, n_bootstrap=10, options=FAST)
    c = report.config
    assert (c.weight_column, c.subgroup_columns, c.numeric, c.categorical) == ("w", ("k",), ("x1",), ("k",))
    assert report.headline.weighting == "weighted"  # the rule: weighted when a weight column is declared
    het = report.result.table.query("analysis == 'heterogeneity'")["condition"].astype(str)
    assert {"k=u", "k=v", "k=w"} <= set(het)


def test_fragility_takes_a_multiclass_target_as_it_is():
    report = fragility_audit(multiclass_frame(), spec(positive=None), options=SMALL)
    assert report.workspace.dataset.primary.class_names == ("distinction", "fail", "pass", "withdrawn")
    assert report.audit.batch.p0.shape == (40, 4)  # 40 cases, one probability per class
    assert report.findings and "Certificates (first rows)" in report._repr_html_()
