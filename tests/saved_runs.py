"""Saved runs of many datasets and configurations, small enough for CI: the corpus the findings checker reads.

Each builder reads a file as the app reads it (``read_table``), declares a target and a domain, runs one audit
with small settings (2 refits, 10 bootstrap draws, a few hundred rows for the stresses) and saves it to the given
registry. :data:`BUILDERS` names them; :func:`build_runs` saves all of them and returns ``{name: run id}``.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.data.intake import read_table
from audit_core.data.intake.options import ReadOptions
from audit_core.data.samples import load_sample
from audit_core.limits import Limits
from audit_core.models.training import train_workspace
from audit_core.models.zoo import ModelSpec
from audit_core.runs.registry import RunRegistry
from audit_core.transport import TransportConfig, model_options, run_transport
from real_data import DATASETS

GERMAN = DATASETS / "statlog_german_credit" / "german.data"
GERMAN_COLUMNS = ("checking", "duration", "history", "purpose", "amount", "savings", "employment", "rate",
                  "personal", "debtors", "residence", "property", "age", "plans", "housing", "credits", "job",
                  "liable", "telephone", "foreign", "kredit")
OULAD = DATASETS / "oulad" / "studentInfo.csv"
HEART = DATASETS / "uci_heart_disease"
HEART_COLUMNS = ("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope",
                 "ca", "thal", "num")
ACS_WY = DATASETS / "acs_income_2018_folktables" / "wy_data.csv"
SOUTH_GERMAN = DATASETS / "south_german_credit" / "SouthGermanCredit.asc"

#: The settings every run here uses: small, seeded.
SMALL = dict(n_refits=2, n_bootstrap=10, n_random_sets=3, stress_max_rows=400, seed=0)


def read(path: Path, *, column_names: tuple[str, ...] = (), na: tuple = ()) -> pd.DataFrame:
    """The file as the app reads it (column names typed for a file without a header)."""
    opts = ReadOptions.from_limits(Limits.from_env(), na_values=na, column_names=column_names)
    return read_table(path.read_bytes(), name=path.name, options=opts).frame


def _save_transport(reg: RunRegistry, name: str, frame: pd.DataFrame, cfg: DatasetConfig, *,
                    kind: str = "logistic_regression", imported=None, **options) -> str:
    ds = build_dataset(frame, cfg)
    if imported is not None:
        ws = imported(ds)
        opts, fixed = model_options(ws)
    else:
        opts, fixed = {"models": (kind,)}, None
    options = {**SMALL, "mappings": ("raw", "platt"), "stresses": (), **options}
    config = TransportConfig.from_dataset(ds, **opts, **options)
    return run_transport(ds.frame, config=config, model=fixed).save_to_registry(reg, dataset_name=name)


def _save_multiclass(reg: RunRegistry, name: str, frame: pd.DataFrame, cfg: DatasetConfig, **options) -> str:
    from audit_core.transport.multiclass.run import run_multiclass_transport

    ds = build_dataset(frame, cfg)
    config = TransportConfig.from_dataset(ds, **{**SMALL, "mappings": ("raw", "platt"), "stresses": (), **options})
    return run_multiclass_transport(ds.frame, config=config).save_to_registry(reg, dataset_name=name)


def _save_fragility(reg: RunRegistry, frame: pd.DataFrame, cfg: DatasetConfig, groups: dict, kind: str) -> str:
    from audit_core.fragility.audit import AuditOptions, run_fragility_audit
    from audit_core.runs.save import save_fragility_run

    ws = train_workspace(build_dataset(frame, cfg), spec=ModelSpec(kind=kind, seed=0), raw_groups=groups)
    audit = run_fragility_audit(ws, options=AuditOptions(max_cases=30, n_boot=30))
    return save_fragility_run(reg, ws, audit)


def _loan(n: int | None = None):
    frame, info = load_sample("loan_synthetic")
    if n is not None:
        frame = frame.groupby("year", group_keys=False).head(n).reset_index(drop=True)
    return frame, info


def _loan_cfg(info, targets=1, **kw) -> DatasetConfig:
    return DatasetConfig(name="loan", targets=info.target_definitions[:targets], domain_column="year",
                         source_domain=2019, target_domain=2023, roles={c: "ignore" for c in info.exclude_columns},
                         **kw)


def loan_lr(reg):
    frame, info = _loan()
    return _save_transport(reg, "loan_synthetic", frame, _loan_cfg(info, group_column="branch_id"),
                           mappings=("platt",))


def loan_lightgbm_two_targets(reg):
    frame, info = _loan(1500)
    return _save_transport(reg, "loan_synthetic", frame, _loan_cfg(info, targets=2), kind="lightgbm",
                           stresses=("target_definition",))


def _imported_lightgbm(ds):
    """A LightGBM pipeline trained elsewhere on the source, imported as the user's model (never refitted)."""
    import skops.io as sio
    from lightgbm import LGBMClassifier
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from audit_core.models.importing import import_model
    from audit_core.models.training import attach_model

    num, cat = list(ds.numeric), list(ds.categorical)
    pipe = make_pipeline(ColumnTransformer([("num", StandardScaler(), num),
                                            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)]),
                         LGBMClassifier(n_estimators=30, random_state=0, verbose=-1))
    src = ds.domain_mask(ds.config.source_domain)
    X = ds.frame[src][num + cat].astype({c: object for c in cat})
    X[num] = X[num].fillna(X[num].median())
    pipe.fit(X, ds.primary.y[src])
    return attach_model(ds, import_model(sio.dumps(pipe), name="mine.skops", table=ds.frame))


def loan_imported(reg):
    frame, info = _loan(1500)
    return _save_transport(reg, "loan_synthetic", frame, _loan_cfg(info), imported=_imported_lightgbm)


def loan_fragility(reg):
    frame, info = _loan(400)
    frame = frame[frame["year"] == 2019]
    cfg = DatasetConfig(name="loan_synthetic", targets=info.target_definitions[:1], key_column=info.key_column,
                        roles={c: "ignore" for c in info.exclude_columns})
    return _save_fragility(reg, frame, cfg, info.evidence_groups, "logistic_regression")


def _breast():
    frame, info = load_sample("breast_cancer")
    # no domains shipped: the coarser-textured tumours (mean texture above its median) stand in for a new population
    frame = frame.assign(texture=np.where(frame["mean texture"] > frame["mean texture"].median(), "coarse", "fine"))
    return frame, info


def breast_fragility_lightgbm(reg):
    frame, info = load_sample("breast_cancer")
    cfg = DatasetConfig(name="breast_cancer", targets=info.target_definitions, key_column=info.key_column,
                        roles={c: "ignore" for c in info.exclude_columns})
    return _save_fragility(reg, frame, cfg, info.evidence_groups, "lightgbm")


def breast_transport(reg):
    frame, info = _breast()
    cfg = DatasetConfig(name="breast_cancer", targets=info.target_definitions, domain_column="texture",
                        source_domain="fine", target_domain="coarse",
                        roles={**{c: "ignore" for c in info.exclude_columns}, "mean texture": "ignore"})
    return _save_transport(reg, "breast_cancer", frame, cfg)


def _german_cfg(**kw) -> DatasetConfig:
    return DatasetConfig(name="german.data", targets=({"kind": "class", "name": "good", "column": "kredit",
                                                       "positive": 1},),
                         domain_column="housing", source_domain="A152", target_domain="A151", **kw)


def german_lr(reg):
    return _save_transport(reg, "german.data", read(GERMAN, column_names=GERMAN_COLUMNS), _german_cfg())


def german_lightgbm(reg):
    return _save_transport(reg, "german.data", read(GERMAN, column_names=GERMAN_COLUMNS), _german_cfg(),
                           kind="lightgbm", mappings=("raw", "platt", "isotonic"))


def _oulad() -> pd.DataFrame:
    frame = read(OULAD)
    return frame[frame["code_module"].isin(["AAA", "BBB", "GGG"])].reset_index(drop=True)


def oulad_binary(reg):
    cfg = DatasetConfig(name="studentInfo.csv", targets=({"kind": "class", "name": "fail", "column": "final_result",
                                                          "positive": "Fail"},),
                        domain_column="code_presentation", source_domain="2013J", target_domain="2014J",
                        roles={"id_student": "ignore"}, group_column="id_student")
    return _save_transport(reg, "studentInfo.csv", _oulad(), cfg)


def oulad_multiclass(reg):
    cfg = DatasetConfig(name="studentInfo.csv", targets=({"kind": "class", "name": "final_result",
                                                          "column": "final_result"},),
                        domain_column="code_presentation", source_domain="2013J", target_domain="2014J",
                        roles={"id_student": "ignore"}, group_column="id_student")
    return _save_multiclass(reg, "studentInfo.csv", _oulad(), cfg)


def heart_sites(reg):
    frames = [read(HEART / f"processed.{s}.data", column_names=HEART_COLUMNS, na=("?",)).assign(site=s)
              for s in ("cleveland", "hungarian")]
    cfg = DatasetConfig(name="uci_heart", targets=({"kind": "threshold", "name": "disease", "column": "num",
                                                    "op": ">", "threshold": 0.0},),
                        domain_column="site", source_domain="cleveland", target_domain="hungarian")
    return _save_transport(reg, "uci_heart", pd.concat(frames, ignore_index=True), cfg)


def acs_wy(reg):
    cfg = DatasetConfig(name="wy_data.csv", targets=({"kind": "class", "name": "income_over_50k", "column": "PINCP",
                                                      "positive": True},),
                        domain_column="SEX", source_domain=1.0, target_domain=2.0)
    return _save_transport(reg, "wy_data.csv", read(ACS_WY), cfg, kind="lightgbm")


def south_german(reg):
    cfg = DatasetConfig(name="SouthGermanCredit.asc", targets=({"kind": "class", "name": "good_credit",
                                                                "column": "kredit", "positive": 1},),
                        domain_column="telef", source_domain=1, target_domain=2)
    return _save_transport(reg, "SouthGermanCredit.asc", read(SOUTH_GERMAN), cfg)


#: Name -> builder (each saves one run to the registry it is given and returns the run id).
BUILDERS: dict[str, Callable[[RunRegistry], str]] = {f.__name__: f for f in (
    loan_lr, loan_lightgbm_two_targets, loan_imported, loan_fragility, breast_fragility_lightgbm, breast_transport,
    german_lr, german_lightgbm, oulad_binary, oulad_multiclass, heart_sites, acs_wy, south_german)}


def build_runs(reg: RunRegistry, names=None) -> dict[str, str]:
    """Save the named runs (default: all of :data:`BUILDERS`) and return ``{name: run id}``."""
    return {n: BUILDERS[n](reg) for n in (names or BUILDERS)}
