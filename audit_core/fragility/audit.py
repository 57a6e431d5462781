"""The whole Fragility audit of a workspace in one call, and the tables a run of it stores.

:func:`run_fragility_audit` certifies a seeded sample of held-out cases and
runs the brittle-case evaluation, search comparison, temperature and
(optionally) baseline sensitivity. :func:`compare_models` trains other zoo
models on the same split for the nominal-winner / most-stable comparison.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from audit_core.data.baseline import BASELINE_KINDS, BaselineKind, compute_baseline
from audit_core.data.groups import Grouping, grouping_from_raw_map
from audit_core.limits import Limits
from audit_core.models.manifest import workspace_manifest
from audit_core.metrics import auroc_by_row
from audit_core.models.probs import confidence_scores
from audit_core.models.training import Workspace, holdout_metrics
from audit_core.models.scores import refuse_scores
from audit_core.models.zoo import FittedModel, ModelSpec, train_model

from .certificate import CertificateBatch
from .engine import FragilityConfig, certify, column_scale, protocol_for, resolve_engine
from .evaluation import (
    auroc_table,
    brittleness_scores,
    group_shap_scores,
    incremental_value,
    permutation_scores,
)
from .plan import plan_audit
from .search import beam_min_flip, compare_search, exact_min_flip
from .stressors import donor_replacement, natural_unavailability, unavailable_fields
from .temperature import TemperatureResult, brittleness_temperature
from .work import FragilityStopped, check_stop

__all__ = [
    "AuditOptions",
    "FragilityAudit",
    "run_fragility_audit",
    "fragility_run_parts",
    "STABILITY_MEASURES",
    "stability_leaders",
    "stability_roles",
    "compare_models",
    "baseline_sensitivity",
]


@dataclass(frozen=True, kw_only=True)
class AuditOptions:
    """Options of :func:`run_fragility_audit` (all seeds explicit).

    ``exact_max_groups``, ``max_quadratic_groups`` and ``max_cells`` are the
    caps of :mod:`audit_core.limits` (``AUDIT_MAX_EXACT_GROUPS``,
    ``AUDIT_MAX_QUADRATIC_GROUPS``, ``AUDIT_MAX_FRAGILITY_CELLS``); the app and
    the CLI set them from :meth:`Limits.from_env` (see :mod:`.plan`).
    """

    config: FragilityConfig = FragilityConfig()
    max_cases: int = 300
    case_seed: int = 0
    donor_groups: int = 3
    stress_draws: int = 20
    stress_seed: int = 0
    missing_codes: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    thresholds: tuple[float, ...] = (0.7, 0.8, 0.9)
    n_boot: int = 200
    perm_repeats: int = 5
    shap_max_cases: int = 300
    search_max_cases: int = 200
    exact_budget: int = 2_000
    exact_max_groups: int = 20
    max_quadratic_groups: int = Limits().max_quadratic_groups
    max_cells: int = Limits().max_fragility_cells
    beam_width: int = 4
    temperature: bool = True
    baseline_sensitivity: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "config"}
        d["config"] = self.config.to_dict()
        d["missing_codes"] = {k: [str(x) for x in v] for k, v in self.missing_codes.items()}
        d["thresholds"] = list(self.thresholds)
        return d


@dataclass(frozen=True, kw_only=True, eq=False)
class FragilityAudit:
    """Result of :func:`run_fragility_audit`.

    Attributes
    ----------
    batch : CertificateBatch
    certificates : DataFrame
        One row per audited case: its certificate (``key, p_hat, k_star, rcma, fds``, ...), true label,
        brittle flags, flip rates; stored as the run table ``certificates``.
    scores : DataFrame
        Brittleness scores per case.
    auroc : DataFrame
        ``label, stratum, score, n, n_brittle, auroc, lo, hi, same_ranking``.
    incremental : DataFrame
    search : DataFrame
        Greedy vs exact and beam.
    temperature : TemperatureResult or None
    baseline : DataFrame or None
    notes : tuple of str
    complete : bool
    """

    batch: CertificateBatch
    certificates: pd.DataFrame
    scores: pd.DataFrame
    auroc: pd.DataFrame
    incremental: pd.DataFrame
    search: pd.DataFrame
    temperature: TemperatureResult | None
    baseline: pd.DataFrame | None
    options: AuditOptions
    notes: tuple[str, ...] = ()
    complete: bool = True

    def tables(self) -> dict[str, pd.DataFrame]:
        out = {
            "certificates": self.certificates, "auroc": self.auroc, "incremental": self.incremental,
            "search": self.search, "delta": self.batch.delta_frame().reset_index().astype({"key": str}),
        }
        if self.temperature is not None:
            out["temperature"] = self.temperature.table
        if self.baseline is not None:
            out["baseline_sensitivity"] = self.baseline
        return out


def _stage(progress, lo: float, hi: float):
    return (lambda f, m: progress(lo + (hi - lo) * f, m)) if progress else None


class _Stages:
    """Progress of the audit's stages, each over its own share of the bar; remembers the current stage."""

    def __init__(self, report: Callable[[float, str], None]) -> None:
        self.report, self.current = report, "the certificates"

    def enter(self, lo: float, hi: float, name: str) -> Callable[[float, str], None]:
        self.current = name
        self.report(lo, name)
        return lambda f, m: self.report(lo + (hi - lo) * min(1.0, max(0.0, f)), m)


def baseline_sensitivity(
    model: Any, X: np.ndarray, X_train: np.ndarray, *, grouping: Grouping, config: FragilityConfig,
    brittle: np.ndarray | None = None, kinds: Sequence[BaselineKind] = BASELINE_KINDS,
    progress: Callable[[float, str], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> pd.DataFrame:
    """The same certificates under each baseline kind.

    Returns
    -------
    DataFrame with ``baseline_kind, mean_k_star, mean_rcma, mean_fds, share_flip_within_K,
    spearman_fds_vs_mean`` and, when ``brittle`` is given, ``auroc_fds``.
    """
    from scipy.stats import spearmanr

    scale = column_scale(X_train)
    fds = {}
    rows = []
    for j, kind in enumerate(kinds):
        b = certify(model, X, grouping=grouping, baseline=compute_baseline(X_train, grouping, kind=kind),
                    scale=scale, baseline_kind=kind, config=config, should_stop=should_stop,
                    progress=None if progress is None else _stage(progress, j / len(kinds), (j + 1) / len(kinds)))
        if not b.complete:
            raise FragilityStopped
        fds[kind] = b.fds
        row: dict[str, Any] = dict(baseline_kind=kind, mean_k_star=float(b.k_star.mean()), mean_rcma=float(b.rcma.mean()),
                   mean_fds=float(b.fds.mean()), share_flip_within_K=float((b.k_star <= b.protocol.k).mean()))
        if brittle is not None:
            row["auroc_fds"] = float(auroc_by_row(np.asarray(brittle)[None], b.fds[None])[0])
        rows.append(row)
    ref = fds.get("mean", next(iter(fds.values())))
    for row in rows:
        rho = spearmanr(ref, fds[row["baseline_kind"]]).statistic if len(ref) > 2 else np.nan
        row["spearman_fds_vs_mean"] = float(rho)
    return pd.DataFrame(rows)


def run_fragility_audit(
    ws: Workspace,
    *,
    options: AuditOptions = AuditOptions(),
    progress: Callable[[float, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    map_chunks: Callable[..., list] | None = None,
    chunk_cases: int | None = None,
) -> FragilityAudit:
    """Certify held-out cases of a workspace and evaluate the certificate.

    Parameters
    ----------
    ws : Workspace
    options : AuditOptions
    map_chunks : callable(func, items, *, progress) -> list, optional
        Runs the certificate chunks (the audit's and the random-order
        ablation's) as batch work, e.g. ``context.execution.map`` in the CLI;
        see :func:`audit_core.fragility.engine.certify`. ``should_stop`` is
        then polled by the other stages only.
    chunk_cases : int, optional
        Cases per certificate chunk (default: bounded by ``config.chunk_mb``).
    progress : callable(fraction, message), optional
        Reported inside every long stage (chunks of certificates, stressor
        blocks, permutation and SHAP blocks, search depths), so the app's Stop
        button takes effect within a block.
    should_stop : callable() -> bool, optional
        Polled between certificate chunks and between the blocks of every
        later stage; a stop returns the certificates computed so far with
        ``complete=False`` and a note naming the stage.

    Raises
    ------
    AuditInputError
        ``FR_TOO_MUCH_WORK`` (before any work) when the audit would build more
        values than ``options.max_cells``; see :func:`.plan.plan_audit`.

    Returns
    -------
    FragilityAudit
    """
    Limits.from_env().check_fields("AuditOptions", options, where="AuditOptions")
    Limits.from_env().check_fields("FragilityConfig", options.config, where="FragilityConfig")
    refuse_scores(getattr(ws, "model", None), "Fragility")  # certificates score changed records: scores cannot
    report = progress or (lambda f, m: None)
    stop = should_stop or (lambda: False)
    rng = np.random.default_rng(np.random.SeedSequence([int(options.case_seed), 2]))
    rows = np.asarray(ws.test_index)
    if len(rows) > options.max_cases:
        rows = np.sort(rng.choice(rows, size=options.max_cases, replace=False))
    frame = ws.dataset.frame.iloc[rows]
    model: FittedModel = ws.model
    X = model.transform(frame)
    train_frame = ws.dataset.frame.iloc[ws.train_index]
    Xtr = model.transform(train_frame)
    scale = column_scale(Xtr)
    y_true = np.asarray(ws.dataset.primary.y)[rows]
    keys = np.asarray(ws.dataset.keys)[rows]
    cfg = options.config
    proto = protocol_for(ws.grouping, baseline=ws.baseline, scale=scale, baseline_kind=ws.baseline_kind, config=cfg)
    engine, _ = resolve_engine(cfg.engine, model, X, proto)
    n_search = min(len(X), options.search_max_cases)
    plan = plan_audit(proto, n_cases=len(X), n_features=X.shape[1], engine=engine, options=options, n_search=n_search)
    stages = _Stages(report)
    notes: list[str] = list(plan.notes)
    cert_kw = dict(grouping=ws.grouping, baseline=ws.baseline, scale=scale, baseline_kind=ws.baseline_kind, keys=keys,
                   chunk_cases=chunk_cases, map_chunks=map_chunks)
    batch = certify(model, X, config=cfg, progress=stages.enter(0.0, 0.35, "Certificates"), should_stop=stop, **cert_kw)
    certificates = batch.to_frame()
    certificates.insert(1, "y_true", y_true[: len(batch)])
    empty = pd.DataFrame()

    def partial(note: str) -> FragilityAudit:
        return FragilityAudit(batch=batch, certificates=certificates, scores=empty, auroc=empty, incremental=empty,
                              search=empty, temperature=None, baseline=None, options=options,
                              notes=tuple(notes + [note]), complete=False)

    if not batch.complete:
        return partial(f"Stopped by the user after {len(batch)} of {len(rows)} cases; the evaluation was skipped.")
    try:
        return _evaluate(ws, options, plan, stages, stop, model, X, Xtr, frame, y_true, batch, certificates, notes,
                         cert_kw, n_search)
    except FragilityStopped:
        return partial(f"Stopped by the user during {stages.current.lower()}; the evaluation was not finished.")


def _evaluate(ws, options, plan, stages, stop, model, X, Xtr, frame, y_true, batch, certificates, notes, cert_kw,
              n_search) -> FragilityAudit:
    """Every stage after the certificates; raises :class:`FragilityStopped` when Stop is pressed."""
    cfg, mb = options.config, options.config.chunk_mb
    rand = certify(model, X, config=replace(cfg, path="random"), should_stop=stop,
                   progress=stages.enter(0.35, 0.45, "Random-order ablation"), **cert_kw)
    if not rand.complete:
        raise FragilityStopped
    cols = ws.grouping.index
    donor = donor_replacement(model, X, Xtr, group_columns=cols, max_groups=options.donor_groups,
                              n_draws=options.stress_draws, seed=options.stress_seed, chunk_mb=mb,
                              progress=stages.enter(0.45, 0.5, "Held-out stressors"), should_stop=stop)
    labels = donor.labels()
    certificates["donor_flip_rate"] = donor.flip_rate
    fields = unavailable_fields(ws.dataset.frame.loc[:, list(model.input_columns)], options.missing_codes)
    if fields:
        check_stop(stop)
        unav = natural_unavailability(model, frame, fields=fields, n_draws=options.stress_draws, seed=options.stress_seed)
        labels = pd.concat([labels, unav.labels()], axis=1)
        certificates["unavailable_flip_rate"] = unav.flip_rate
        notes.append("Natural unavailability uses fields: " + ", ".join(fields) + ".")
    else:
        notes.append("No missing, unknown or special-coded fields: natural unavailability was not run.")
    for c in labels.columns:
        certificates[c] = labels[c].to_numpy()
    perm = None
    if plan.permutation:
        perm = permutation_scores(model, X, group_columns=cols, n_repeats=options.perm_repeats, seed=options.stress_seed,
                                  chunk_mb=mb, progress=stages.enter(0.55, 0.65, "Permutation importance"),
                                  should_stop=stop)
    shap_score = None
    if plan.shap:
        shap_score, _ = group_shap_scores(model, X, Xtr, group_columns=cols, seed=options.stress_seed, chunk_mb=mb,
                                          progress=stages.enter(0.65, 0.75, "Group-SHAP"), should_stop=stop)
    elif plan.permutation and len(X) > options.shap_max_cases:
        notes.append(f"group-SHAP skipped: {len(X)} cases exceed its cap of {options.shap_max_cases}.")
    scores = brittleness_scores(batch, random_order=rand, perm=perm, shap_score=shap_score)
    stages.enter(0.75, 0.8, "AUROC with bootstrap intervals")
    check_stop(stop)
    table = auroc_table(scores, labels, batch.p_hat, thresholds=options.thresholds,
                        n_classes=batch.p0.shape[1], n_boot=options.n_boot, seed=options.stress_seed)
    conf = confidence_scores(batch.p0)
    conf_cols = np.column_stack([conf["margin"]] if batch.p0.shape[1] == 2 else [conf[k] for k in conf])
    cert_cols = np.column_stack([batch.k_star, batch.rcma, batch.d])
    inc = []
    step = stages.enter(0.8, 0.83, "Incremental value over confidence")
    for j, c in enumerate(labels.columns):
        check_stop(stop)
        iv = incremental_value(labels[c].to_numpy(), conf_cols, cert_cols, seed=options.stress_seed)
        inc.append(dict(label=c, **iv.to_dict()))
        step((j + 1) / len(labels.columns), f"Incremental value: {j + 1} of {len(labels.columns)} labels")
    search = _search(model, X, batch, certificates, options, plan, stages, stop, n_search, notes)
    temp = None
    if options.temperature and len(X) >= 20:
        stages.enter(0.92, 0.94, "Brittleness-aware temperature")
        check_stop(stop)
        temp = brittleness_temperature(batch.p0, y_true, batch.fds, seed=options.stress_seed)
    base = None
    if options.baseline_sensitivity:
        base = baseline_sensitivity(model, X, Xtr, grouping=ws.grouping, config=cfg, brittle=labels.iloc[:, 0].to_numpy(),
                                    progress=stages.enter(0.94, 1.0, "Baseline sensitivity"), should_stop=stop)
    stages.report(1.0, "Done")
    return FragilityAudit(batch=batch, certificates=certificates, scores=scores, auroc=table, incremental=pd.DataFrame(inc),
                          search=search, temperature=temp, baseline=base, options=options, notes=tuple(notes))


def _search(model, X, batch, certificates, options, plan, stages, stop, n_search, notes) -> pd.DataFrame:
    """Greedy vs exact and beam search on the first ``n_search`` cases (the skipped ones get a note)."""
    certificates["exact_min"] = np.nan
    certificates["beam_min"] = np.nan
    if n_search == 0:
        return pd.DataFrame()
    sub = slice(0, n_search)
    n_groups = batch.protocol.n_groups
    mb = options.config.chunk_mb
    rows_search = []
    if plan.exact:
        ex = exact_min_flip(model, X[sub], batch.protocol, budget=options.exact_budget, chunk_mb=mb,
                            progress=stages.enter(0.83, 0.87, "Exact search"), should_stop=stop)
        rows_search.append(compare_search(batch.k_star[sub], ex).to_dict())
        certificates.loc[certificates.index[sub], "exact_min"] = np.where(ex.complete, ex.min_size, np.nan)
    else:
        notes.append(f"exact search skipped: {n_groups} evidence groups exceed its cap of "
                     f"{options.exact_max_groups}; raise it with the environment variable AUDIT_MAX_EXACT_GROUPS.")
    if plan.beam:
        bm = beam_min_flip(model, X[sub], batch.protocol, width=options.beam_width, chunk_mb=mb,
                           progress=stages.enter(0.87, 0.92, "Beam search"), should_stop=stop)
        rows_search.append(compare_search(batch.k_star[sub], bm).to_dict())
        certificates.loc[certificates.index[sub], "beam_min"] = bm.min_size
    return pd.DataFrame(rows_search)


def fragility_run_parts(ws: Workspace, audit: FragilityAudit, *, models: pd.DataFrame | None = None) -> dict[str, Any]:
    """The run config, tables and manifest of a fragility audit, as stored in the registry.

    Shared by :func:`audit_core.runs.save.save_fragility_run` (the app) and the CLI runner
    (:mod:`audit_core.runs.plugins.fragility`), so both write the same tables:
    ``certificates``, ``auroc``, ``incremental``, ``search``, ``delta``, the
    workspace's held-out ``metrics`` (a gate ground) and, when computed,
    ``temperature`` and ``baseline_sensitivity``; with ``models`` (the
    :func:`compare_models` table) also ``models``, so the sentence comparing
    the nominal winner with the most stable model can be checked from the run.

    Returns
    -------
    dict with keys ``config``, ``tables``, ``manifest``.
    """
    proto = audit.batch.protocol
    config = {
        "options": audit.options.to_dict(),
        "protocol": {k: v for k, v in proto.to_dict().items() if k not in ("baseline", "scale")},
        "complete": audit.complete,
        "notes": list(audit.notes),
    }
    manifest = dict(workspace_manifest(ws))
    manifest.update(
        seeds={"certificate": proto.seed, "cases": audit.options.case_seed, "stressors": audit.options.stress_seed},
        grouping_hash=proto.grouping_hash, n_cases=len(audit.batch), baseline_kind=proto.baseline_kind,
    )
    tables = {k: v.reset_index(drop=True) for k, v in audit.tables().items()}
    tables["certificates"] = tables["certificates"].astype({"key": str})
    if len(audit.scores) == len(tables["certificates"]):  # per-case scores: the report's certificate-vs-confidence finding
        tables["scores"] = audit.scores.reset_index(drop=True).assign(key=tables["certificates"]["key"])
    tables["metrics"] = ws.metrics.reset_index(drop=True)
    if models is not None and len(models):
        tables["models"] = models.reset_index(drop=True)
    return {"config": config, "tables": tables, "manifest": manifest}


def compare_models(
    ws: Workspace, kinds: Sequence[str], *, audit: FragilityAudit, seed: int = 0,
) -> tuple[pd.DataFrame, dict[str, tuple[FittedModel, CertificateBatch]]]:
    """Train zoo models on the workspace's split and certify the audited cases under each.

    Returns
    -------
    table : DataFrame
        ``model, heldout_auroc, mean_rcma, mean_fds, mean_k_star, role`` where
        role marks the ``nominal winner`` (best held-out AUROC) and the
        ``most stable`` model when every stability measure ranks it first,
        else the measure each model leads (:func:`stability_roles`).
    batches : dict model kind -> (FittedModel, CertificateBatch)
    """
    ds = ws.dataset
    keys = audit.batch.keys
    pos = pd.Index(np.asarray(ds.keys)).get_indexer(keys)
    frame = ds.frame.iloc[pos]
    y = np.asarray(ds.primary.y)
    out: dict[str, tuple[FittedModel, CertificateBatch]] = {}
    rows = []
    models: dict[str, FittedModel] = {str(ws.model.spec.get("kind", "current")): ws.model}
    for kind in kinds:
        if kind in models:
            continue
        models[kind] = train_model(ds.frame.iloc[ws.train_index], y[ws.train_index], spec=ModelSpec(kind=kind, seed=seed),
                                   numeric=ds.numeric, categorical=ds.categorical,
                                   missing_indicators=ds.config.missing_indicators)
    for kind, m in models.items():
        grouping = grouping_from_raw_map(m.origins, {c: g for c, g in ws.grouping.raw_map().items()
                                                     if c in set(m.origins["raw_column"])})
        Xtr = m.transform(ds.frame.iloc[ws.train_index])
        b = certify(m, m.transform(frame), grouping=grouping,
                    baseline=compute_baseline(Xtr, grouping, kind=ws.baseline_kind), scale=column_scale(Xtr),
                    baseline_kind=ws.baseline_kind, config=audit.options.config, keys=keys)
        held = holdout_metrics(m, ds.frame.iloc[ws.test_index], y[ws.test_index], split="test")
        rows.append(dict(model=kind, heldout_auroc=float(held.query("metric == 'auroc'")["value"].iloc[0]),
                         mean_rcma=float(b.rcma.mean()), mean_fds=float(b.fds.mean()),
                         mean_k_star=float(b.k_star.mean())))
        out[kind] = (m, b)
    table = pd.DataFrame(rows)
    return table.assign(role=stability_roles(table)), out


#: The stability measures of a model comparison: column -> ``"lower"`` or ``"higher"`` is more stable.
STABILITY_MEASURES = {"mean_rcma": "lower", "mean_fds": "lower", "mean_k_star": "higher"}


def stability_leaders(table: pd.DataFrame) -> dict[str, str]:
    """The most stable model by each measure of :data:`STABILITY_MEASURES` (first row wins a tie)."""
    return {m: str(table.at[table[m].idxmin() if how == "lower" else table[m].idxmax(), "model"])
            for m, how in STABILITY_MEASURES.items() if m in table}


def stability_roles(table: pd.DataFrame) -> list[str]:
    """Each model's role: ``nominal winner`` (best held-out AUROC), ``most stable`` only when every stability
    measure ranks it first, else the measures it leads (``lowest mean RCMA``)."""
    leaders = stability_leaders(table)
    agree = len(set(leaders.values())) == 1 and len(leaders) == len(STABILITY_MEASURES)
    winner = str(table.at[table["heldout_auroc"].idxmax(), "model"])
    words = {"mean_rcma": "lowest mean RCMA", "mean_fds": "lowest mean FDS", "mean_k_star": "highest mean k*"}
    roles = []
    for m in table["model"].astype(str):
        led = [words[k] for k, v in leaders.items() if v == m]
        parts = (["nominal winner"] if m == winner else []) + (["most stable"] if agree and led else led)
        roles.append(" & ".join(parts))
    return roles
