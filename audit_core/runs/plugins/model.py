"""The ``model`` audit: the trained workspace, its held-out check and its seed stability.

Tables (the first three are exactly those of
:func:`audit_core.runs.save.save_workspace`, so app-trained and CLI-trained model
runs look alike):

``metrics``
    ``split``, ``metric``, ``value``: AUROC, accuracy, log loss, row count on
    the training and held-out rows.
``grouping``
    The raw-origin table (transformed feature -> raw column -> group).
``baseline``
    ``feature``, ``baseline``: the baseline vector (training rows only).
``metric_intervals`` (if ``bootstrap > 0`` and the target is binary)
    Percentile bootstrap interval of the held-out AUROC: ``metric``,
    ``estimate``, ``lower``, ``upper``, ``level``, ``n_replicates``.
``seed_variability`` (if ``refit_seeds`` is not empty)
    One row per refit seed: ``seed``, ``auroc``, ``accuracy``, ``log_loss``.

Both optional tables are batch work through
:meth:`audit_core.runs.plugin.ExecutionOptions.map`; every item carries its seeds,
so the tables are identical on every backend.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.limits import Limits
from audit_core.models.batch_jobs import BootstrapChunk, RefitItem, bootstrap_auroc_job, chunk_seeds, refit_job

from ..config import check_keys, expect_type
from ..context import AuditContext
from ..plugin import AuditResult, AuditRunner, Progress, register_audit

__all__ = ["MODEL_AUDIT", "validate_model_options", "run_model_audit"]

_KEYS = ("bootstrap", "bootstrap_seed", "level", "chunk_size", "refit_seeds")


def validate_model_options(options: dict, *, where: str = "audits[0]") -> dict[str, Any]:
    """Check the ``model`` audit's options and fill in defaults.

    Parameters
    ----------
    options : dict
        ``bootstrap`` (int >= 0, default 200), ``bootstrap_seed`` (int, 0),
        ``level`` (float in (0.5, 1), 0.95), ``chunk_size`` (int >= 1, 50),
        ``refit_seeds`` (list of int, ``[]``).
    where : str
        Key path for messages.

    Returns
    -------
    dict

    Examples
    --------
    >>> validate_model_options({"bootstrap": 10})["chunk_size"]
    50
    """
    o = check_keys(options, where=where, allowed=_KEYS)
    n = expect_type(o.get("bootstrap", 200), int, where=f"{where}.bootstrap")
    if n < 0:
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.bootstrap", expected="0 or more replicates", got=n)
    level = float(expect_type(o.get("level", 0.95), float, where=f"{where}.level"))
    if not 0.5 < level < 1:
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.level", expected="a level between 0.5 and 1", got=level)
    chunk = expect_type(o.get("chunk_size", 50), int, where=f"{where}.chunk_size")
    if chunk < 1:
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.chunk_size", expected="at least 1", got=chunk)
    seeds = expect_type(o.get("refit_seeds", []), list, where=f"{where}.refit_seeds")
    for i, s in enumerate(seeds):
        expect_type(s, int, where=f"{where}.refit_seeds[{i}]")
    out = {
        "bootstrap": n,
        "bootstrap_seed": expect_type(o.get("bootstrap_seed", 0), int, where=f"{where}.bootstrap_seed"),
        "level": level,
        "chunk_size": chunk,
        "refit_seeds": [int(s) for s in seeds],
    }
    Limits.from_env().check_fields("model", out, where=where)
    return out


def _metric(metrics: pd.DataFrame, split: str, name: str) -> float | None:
    v = metrics.loc[(metrics["split"] == split) & (metrics["metric"] == name), "value"]
    return None if v.empty or not np.isfinite(v.iloc[0]) else float(v.iloc[0])


def run_model_audit(options: dict, *, context: AuditContext, progress: Progress) -> AuditResult:
    """Run the ``model`` audit on ``context.workspace()``; see the module docstring."""
    ws = context.workspace()
    tables: dict[str, pd.DataFrame] = {
        "metrics": ws.metrics,
        "grouping": ws.grouping.to_frame(),
        "baseline": pd.DataFrame({"feature": list(ws.grouping.features), "baseline": ws.baseline}),
    }
    key_numbers: dict[str, Any] = {
        "model": str(ws.model.spec.get("kind")),
        "held_out_auroc": _metric(ws.metrics, "test", "auroc"),
        "held_out_accuracy": _metric(ws.metrics, "test", "accuracy"),
        "held_out_log_loss": _metric(ws.metrics, "test", "log_loss"),
        "n_evidence_groups": int(ws.grouping.n_groups),
    }
    frame = ws.dataset.frame
    y = ws.dataset.primary.y
    test = frame.iloc[ws.test_index]
    p_test = ws.model.predict_proba(test)
    binary = p_test.shape[1] == 2
    if options["bootstrap"] > 0 and binary:
        chunks = chunk_seeds(options["bootstrap"], seed=options["bootstrap_seed"], chunk_size=options["chunk_size"])
        items = [BootstrapChunk(y=y[ws.test_index], score=p_test[:, 1], seeds=c) for c in chunks]
        reps = np.concatenate(context.execution.map(bootstrap_auroc_job, items, progress=lambda d, t: progress(d, t, "bootstrap")))
        reps = reps[np.isfinite(reps)]
        alpha = (1 - options["level"]) / 2
        lo, hi = (float(np.quantile(reps, alpha)), float(np.quantile(reps, 1 - alpha))) if len(reps) else (np.nan, np.nan)
        tables["metric_intervals"] = pd.DataFrame(
            {
                "metric": ["auroc"],
                "estimate": [key_numbers["held_out_auroc"]],
                "lower": [lo],
                "upper": [hi],
                "level": [options["level"]],
                "n_replicates": [int(len(reps))],
            }
        )
        key_numbers["held_out_auroc_interval"] = f"[{lo:.4f}, {hi:.4f}] ({options['level']:.0%}, {len(reps)} replicates)"
    elif options["bootstrap"] > 0:
        key_numbers["held_out_auroc_interval"] = "not computed: the bootstrap interval is binary-only"
    if options["refit_seeds"]:
        train = frame.iloc[ws.train_index]
        spec = ws.model.spec
        refits = [
            RefitItem(
                X_train=train.loc[:, list(ws.dataset.features)],
                y_train=y[ws.train_index],
                X_test=test.loc[:, list(ws.dataset.features)],
                y_test=y[ws.test_index],
                numeric=ws.dataset.numeric,
                categorical=ws.dataset.categorical,
                missing_indicators=ws.dataset.config.missing_indicators,
                kind=str(spec["kind"]),
                seed=s,
                params=dict(spec.get("params", {})),
            )
            for s in options["refit_seeds"]
        ]
        rows = context.execution.map(refit_job, refits, progress=lambda d, t: progress(d, t, "refits"))
        table = pd.DataFrame(rows, columns=["seed", "auroc", "accuracy", "log_loss"])
        table["seed"] = table["seed"].astype("int64")
        tables["seed_variability"] = table
        if table["auroc"].notna().sum() > 1:
            key_numbers["refit_auroc_sd"] = float(table["auroc"].std(ddof=1))
    seeds = {"bootstrap": options["bootstrap_seed"], "refits": options["refit_seeds"]}
    return AuditResult(tables=tables, key_numbers=key_numbers, manifest={"seeds": seeds, "audit_options": dict(options)})


#: The registered ``model`` runner.
MODEL_AUDIT = register_audit(
    AuditRunner(
        kind="model",
        title="Model (held-out check)",
        validate_config=validate_model_options,
        run=run_model_audit,
        needs_workspace=True,
        tables={"metrics": ("split", "metric", "value"), "grouping": ("feature", "raw_column", "group"),
                "baseline": ("feature", "baseline"), "metric_intervals": ("metric", "lower", "upper"),
                "seed_variability": ("seed", "auroc")},
        numbers={"metrics": ("value",), "baseline": ("baseline",), "metric_intervals": ("lower", "upper"),
                 "seed_variability": ("seed", "auroc")},
    )
)
