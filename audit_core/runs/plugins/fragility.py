"""The ``fragility`` audit for ``reliability-audit run``: options, validation and the runner.

Config entry (every key optional; defaults are those of the Fragility page)::

    - kind: fragility
      max_cases: 300          # held-out cases certified (seeded sample when there are more)
      case_seed: 0
      chunk_size: 50          # cases per certificate chunk = one batch work item
      k: null                 # audit depth K (null: min(5, G))
      path: static            # static | adaptive
      families: [interpolate, dropout, noise]
      grid: [0.1, 0.2, ..., 1.0]
      n_draws: 10             # R draws of the stochastic families
      seed: 0                 # certificate seed (stochastic operators)
      weights: [0.3333, 0.3333, 0.3334]
      donor_groups: 3
      stress_draws: 20
      stress_seed: 0
      missing_codes: {}       # column -> special codes treated as unavailable
      thresholds: [0.7, 0.8, 0.9]
      n_boot: 200
      perm_repeats: 5
      shap_max_cases: 300
      search_max_cases: 200
      exact_budget: 2000
      beam_width: 4
      temperature: true
      baseline_sensitivity: false
      store_case_data: false  # true: the run stores record keys and true labels of the certified cases

By default the run is private: record keys are replaced by case numbers and
true labels are not stored (:mod:`audit_core.runs.privacy`); anyone who can
open the registry reads what it stores, so set ``store_case_data: true`` only
for a registry that is yours.

The certificate chunks (of the audit and of its random-order ablation) go
through ``context.execution.map``: each :class:`~audit_core.fragility.engine.CertificateChunk`
carries the frozen protocol and its seed, so the tables are identical on the
serial, process and Dask backends. The stored tables are exactly those of
:func:`~audit_core.runs.save.save_fragility_run` (the app), so the Runs
page, the report and the release gate read CLI and app runs alike.
"""
from __future__ import annotations

import difflib
import itertools
from typing import Any

import numpy as np

from audit_core.errors import excerpt, excerpts, fail
from audit_core.fragility.audit import AuditOptions, fragility_run_parts, run_fragility_audit
from audit_core.fragility.engine import FragilityConfig
from audit_core.fragility.operators import FAMILIES
from audit_core.limits import Limits

from ..config import check_keys, expect_type
from ..context import AuditContext
from ..plugin import AuditResult, AuditRunner, Progress, register_audit
from ..privacy import store_case_data_choice

__all__ = ["FRAGILITY_AUDIT", "OPTION_KEYS", "validate_config", "check_data", "run", "audit_options"]

_DEFAULTS = AuditOptions()
_CFG = FragilityConfig()

#: The accepted option keys of a ``fragility`` config entry.
OPTION_KEYS: tuple[str, ...] = (
    "max_cases", "case_seed", "chunk_size", "k", "path", "families", "grid", "n_draws", "seed", "weights",
    "donor_groups", "stress_draws", "stress_seed", "missing_codes", "thresholds", "n_boot", "perm_repeats",
    "shap_max_cases", "search_max_cases", "exact_budget", "beam_width", "temperature", "baseline_sensitivity",
    "store_case_data",
)

# option -> (default, minimum) for the whole-number options
_INTS: dict[str, tuple[int, int]] = {
    "max_cases": (_DEFAULTS.max_cases, 1),
    "case_seed": (_DEFAULTS.case_seed, 0),
    "chunk_size": (50, 1),
    "n_draws": (_CFG.n_draws, 1),
    "seed": (_CFG.seed, 0),
    "donor_groups": (_DEFAULTS.donor_groups, 1),
    "stress_draws": (_DEFAULTS.stress_draws, 1),
    "stress_seed": (_DEFAULTS.stress_seed, 0),
    "n_boot": (_DEFAULTS.n_boot, 0),
    "perm_repeats": (_DEFAULTS.perm_repeats, 1),
    "shap_max_cases": (_DEFAULTS.shap_max_cases, 0),
    "search_max_cases": (_DEFAULTS.search_max_cases, 0),
    "exact_budget": (_DEFAULTS.exact_budget, 1),
    "beam_width": (_DEFAULTS.beam_width, 1),
}


def _numbers(value: Any, *, where: str) -> list[float]:
    expect_type(value, list, where=where)
    return [float(expect_type(v, float, where=f"{where}[{i}]")) for i, v in enumerate(value)]


def validate_config(options: dict, *, where: str = "audits[0]") -> dict[str, Any]:
    """Check a ``fragility`` config entry (without ``kind``) and fill in defaults.

    Parameters
    ----------
    options : dict
        See the module docstring for the keys and defaults.
    where : str
        Key path for messages, e.g. ``"audits[1]"``.

    Returns
    -------
    dict
        JSON-compatible options with every key present.

    Raises
    ------
    AuditInputError
        ``CONFIG_UNKNOWN_KEY`` (with the closest key), ``CONFIG_WRONG_TYPE``,
        ``CONFIG_BAD_VALUE``, each naming the key path.

    Examples
    --------
    >>> validate_config({"max_cases": 40})["chunk_size"]
    50
    >>> validate_config({"max_case": 40})
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: Unknown key 'max_case' in audits[0]. Did you mean 'max_cases'? Allowed keys: \
baseline_sensitivity, beam_width, case_seed, chunk_size, donor_groups, exact_budget, families, grid, k, max_cases, \
missing_codes, n_boot, n_draws, path, perm_repeats, search_max_cases, seed, shap_max_cases, store_case_data, \
stress_draws, stress_seed, temperature, thresholds, weights.
    """
    o = check_keys(options, where=where, allowed=OPTION_KEYS)
    out: dict[str, Any] = {}
    for key, (default, low) in _INTS.items():
        v = expect_type(o.get(key, default), int, where=f"{where}.{key}")
        if v < low:
            raise fail("CONFIG_BAD_VALUE", where=f"{where}.{key}", expected=f"at least {low}", got=v)
        out[key] = int(v)
    k = expect_type(o.get("k"), int, where=f"{where}.k", optional=True)
    if k is not None and k < 1:
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.k", expected="at least 1 (or null for min(5, G))", got=k)
    out["k"] = k
    path = expect_type(o.get("path", _CFG.path), str, where=f"{where}.path")
    if path not in ("static", "adaptive"):
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.path", expected="'static' or 'adaptive'", got=path)
    out["path"] = path
    fams = expect_type(o.get("families", list(_CFG.families)), list, where=f"{where}.families")
    for i, f in enumerate(fams):
        if expect_type(f, str, where=f"{where}.families[{i}]") not in FAMILIES:
            raise fail("CONFIG_BAD_VALUE", where=f"{where}.families[{i}]", expected="one of " + ", ".join(FAMILIES), got=f)
    out["families"] = list(fams)
    grid = _numbers(o.get("grid", list(_CFG.grid)), where=f"{where}.grid")
    if not grid or any(not 0 < v <= 1 for v in grid) or any(b <= a for a, b in itertools.pairwise(grid)):
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.grid", expected="increasing severities in (0, 1]", got=grid)
    out["grid"] = grid
    weights = _numbers(o.get("weights", list(_CFG.weights)), where=f"{where}.weights")
    if len(weights) != 3 or min(weights) < 0 or abs(sum(weights) - 1) > 1e-6:
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.weights", expected="three non-negative numbers summing to 1",
                   got=weights)
    out["weights"] = weights
    thresholds = _numbers(o.get("thresholds", list(_DEFAULTS.thresholds)), where=f"{where}.thresholds")
    if any(not 0 < t < 1 for t in thresholds):
        raise fail("CONFIG_BAD_VALUE", where=f"{where}.thresholds", expected="confidence thresholds in (0, 1)",
                   got=thresholds)
    out["thresholds"] = thresholds
    codes = expect_type(o.get("missing_codes", {}), dict, where=f"{where}.missing_codes")
    for col, vals in codes.items():
        expect_type(vals, list, where=f"{where}.missing_codes.{col}")
    out["missing_codes"] = {str(c): list(v) for c, v in codes.items()}
    out["store_case_data"] = expect_type(o.get("store_case_data", False), bool, where=f"{where}.store_case_data")
    for key in ("temperature", "baseline_sensitivity"):
        out[key] = expect_type(o.get(key, getattr(_DEFAULTS, key)), bool, where=f"{where}.{key}")
    Limits.from_env().check_fields("fragility", out, where=where)
    return out


#: Columns the Runs page, the report and the gate read from each stored table (when present).
TABLES: dict[str, tuple[str, ...]] = {
    "certificates": ("key", "p_hat", "k_star", "rcma", "fds"),
    "auroc": ("label", "stratum", "score", "n", "n_brittle", "auroc", "lo", "hi", "same_ranking"),
    "delta": ("key",),
    "temperature": ("method", "subset"),
    "metrics": ("split", "metric", "value"),
}
#: Of those, the columns that must hold numbers.
NUMBERS: dict[str, tuple[str, ...]] = {
    "certificates": ("p_hat", "k_star", "rcma", "fds"),
    "auroc": ("n", "n_brittle", "auroc", "lo", "hi"),
    "metrics": ("value",),
}


def check_data(options: dict[str, Any], data: Any, *, where: str) -> None:
    """Refuse ``missing_codes`` naming a column the loaded data does not have (before any run is created)."""
    columns = [str(c) for c in data.dataset.frame.columns]
    for col in options["missing_codes"]:
        if col not in columns:
            close = difflib.get_close_matches(col, columns, n=1)
            raise fail("CONFIG_UNKNOWN_COLUMN", where=f"{where}.missing_codes", column=excerpt(col),
                       hint=f" Did you mean {close[0]!r}?" if close else "", columns=excerpts(columns, items=8))


def audit_options(options: dict[str, Any]) -> AuditOptions:
    """The :class:`AuditOptions` of validated options."""
    cfg = FragilityConfig(
        k=options["k"], path=options["path"], families=tuple(options["families"]), grid=tuple(options["grid"]),
        n_draws=options["n_draws"], seed=options["seed"], weights=tuple(options["weights"]),
    )
    plain = {k: options[k] for k in (
        "max_cases", "case_seed", "donor_groups", "stress_draws", "stress_seed", "n_boot", "perm_repeats",
        "shap_max_cases", "search_max_cases", "exact_budget", "beam_width", "temperature", "baseline_sensitivity")}
    lim = Limits.from_env()
    return AuditOptions(config=cfg, missing_codes=dict(options["missing_codes"]),
                        thresholds=tuple(options["thresholds"]), exact_max_groups=lim.max_exact_groups,
                        max_quadratic_groups=lim.max_quadratic_groups, max_cells=lim.max_fragility_cells, **plain)


def _finite(v: Any) -> float | None:
    v = float(v)
    return v if np.isfinite(v) else None


def run(options: dict[str, Any], *, context: AuditContext, progress: Progress) -> AuditResult:
    """Certify the workspace's held-out cases and evaluate the certificates (see the module docstring)."""
    ws = context.workspace()

    def map_chunks(func, items, *, progress=None):  # noqa: ARG001 - chunk progress goes to the runner's bar
        return context.execution.map(func, items, progress=lambda d, t: report(d, t, "certificates"))

    report = progress
    audit = run_fragility_audit(
        ws, options=audit_options(options),
        progress=lambda f, msg: report(int(round(100 * min(max(f, 0.0), 1.0))), 100, "fragility"),
        map_chunks=map_chunks,
        chunk_cases=options["chunk_size"],
    )

    parts = fragility_run_parts(ws, audit)
    s = parts["tables"]["certificates"]
    conf = s[s["p_hat"] >= 0.8]
    key_numbers: dict[str, Any] = {
        "n_cases": int(len(s)),
        "n_groups": int(audit.batch.protocol.n_groups),
        "depth_K": int(audit.batch.protocol.k),
        "mean_fds": _finite(s["fds"].mean()),
        "mean_rcma": _finite(s["rcma"].mean()),
        "share_flip_within_K": _finite((s["k_star"] <= audit.batch.protocol.k).mean()),
        "n_confident_0.8": int(len(conf)),
        "brittle_share_confident_0.8": _finite(conf["donor_any"].mean()) if len(conf) and "donor_any" in s else None,
    }
    auroc = parts["tables"]["auroc"]
    if len(auroc):
        head = auroc[(auroc["label"] == "donor_any") & (auroc["stratum"] == auroc["stratum"].iloc[0])].set_index("score")
        for name in ("fds", "rcma", "margin"):
            if name in head.index:
                key_numbers[f"auroc_{name}_donor_any"] = _finite(head.loc[name, "auroc"])
    if audit.notes:
        key_numbers["notes"] = " ".join(audit.notes)
    manifest = {**parts["manifest"], "audit_options": dict(options), "fragility_config": parts["config"]}
    manifest.pop("versions", None)  # run_config records them once
    tables, manifest = store_case_data_choice(parts["tables"], manifest, store=options["store_case_data"])
    return AuditResult(tables=tables, key_numbers=key_numbers, manifest=manifest)


#: The registered ``fragility`` runner.
FRAGILITY_AUDIT = register_audit(
    AuditRunner(kind="fragility", title="Fragility (certificates)", validate_config=validate_config, run=run,
                needs_workspace=True, check_data=check_data, tables=TABLES, numbers=NUMBERS)
)
