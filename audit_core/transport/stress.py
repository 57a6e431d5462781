"""Stresses (stage 6) and heterogeneity (stage 7) of the transport protocol.

Target-definition sensitivity
-----------------------------
For the primary definition ``U`` and each other definition ``C`` a second
pipeline is fitted on label ``C`` (same partitions, same model kind, seed
and mapping kind). On identical records, ``M_LP`` is a metric with labels
``L`` and pipeline ``P``:

``D_Y = ½[(M_UU − M_CU) + (M_UC − M_CC)]`` (label effect),
``D_P = ½[(M_UU − M_UC) + (M_CU − M_CC)]`` (pipeline effect).

Intercept-only prevalence alignment shifts each pipeline's logits by a
constant so that its weighted mean prediction equals the prevalence of the
label it is scored against; the residual ``D_Y`` and ``D_P`` after alignment
get bootstrap intervals (record resamples stratified by the joint labels,
refit-averaged). The shift uses evaluation labels: it is a diagnostic, not
an operating rule.

Evidence degradation (raw feature space, budget ``m`` features)
---------------------------------------------------------------
* ``mcar`` — exactly ``m`` random features set missing in every record;
* ``random_set:j`` — the same ``m`` features missing for all records,
  ``J`` sets per refit (the whole distribution is kept);
* ``targeted`` — the top ``m`` features by mutual information with the label
  on (a seeded sample of) the train partition;
* ``corruption`` — in every feature, 20 % of the values: numeric noise with
  SD 0.2 × train SD, clipped to the train range and rounded for integer
  columns; categorical values replaced by a different category drawn from
  the train distribution (categories compared as the preprocessor's text,
  the drawn value keeps the column's type);
* ``oracle`` — the targeted features of 30 % of records replaced by those of
  a random opposite-class train donor (uses the evaluation label, so it is a
  bound, reported under its own condition name).

A missing value stays missing under every stress: corruption leaves it
alone, the mutual-information ranking counts it as a level of its own, and
a donor's missing value is copied as missing. No step sorts or compares raw
values of different types (text against a float NaN). Missing values are
then handled by the pipeline's own imputers. The
percentile of targeted deletion within the random-set distribution is read
in one direction for every metric: **more harmful than X % of random sets**,
``100 · (#{random less harmful} + ½ #{random as harmful}) / J``, where harm
follows the metric's good direction (lower AUROC, higher Brier, coverage
farther from ``1 − α``; :func:`harm_percentile`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from audit_core.data.preprocess import category_text
from audit_core.errors import AuditInputError, fail
from audit_core.logistic import logit
from audit_core.metrics import metric_values


from .bootstrap import BatchedMetrics, stratified_counts
from .blas import serial_blas
from .cautions import no_imputer_warning, stress_warnings
from .evaluation import evaluate_pipeline
from .fitting import fit_pipeline, predict, stress_features
from .intervals import change_interval
from .state import Tick, TransportState, no_tick, result_rows
from .verdicts import good_direction

__all__ = [
    "decomposition",
    "align_intercept",
    "mcar_fixed_count",
    "delete_features",
    "corrupt",
    "oracle_replace",
    "mutual_information_ranking",
    "percentile_within",
    "harm_percentile",
    "target_definition_stress",
    "degradation_stress",
    "stress",
]

#: a metric value, or an array of them (bootstrap replicates)
_Num = TypeVar("_Num", float, np.ndarray)
_DECOMP_METRICS = ("auroc", "brier_score", "log_loss", "ece", "calibration_intercept", "calibration_slope")


def decomposition(m_uu: _Num, m_uc: _Num, m_cu: _Num, m_cc: _Num) -> tuple[_Num, _Num]:
    """``(D_Y, D_P)`` from the 2×2 grid (first index label, second pipeline): numbers, or arrays elementwise.

    Examples
    --------
    M_UU = 0.10, M_UC = 0.14, M_CU = 0.20, M_CC = 0.16:
    D_Y = ½[(0.10 − 0.20) + (0.14 − 0.16)] = −0.06,
    D_P = ½[(0.10 − 0.14) + (0.20 − 0.16)] = 0.

    >>> [round(v, 10) for v in decomposition(0.10, 0.14, 0.20, 0.16)]
    [-0.06, 0.0]
    """
    d_y = 0.5 * ((m_uu - m_cu) + (m_uc - m_cc))
    d_p = 0.5 * ((m_uu - m_uc) + (m_cu - m_cc))
    return d_y, d_p


def align_intercept(p: np.ndarray, prevalence: float, *, sample_weight=None) -> np.ndarray:
    """Shift logits by one constant so the weighted mean prediction equals ``prevalence``."""
    z = logit(p)
    w = np.ones(len(z)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    target = float(np.clip(prevalence, 1e-6, 1 - 1e-6))

    def gap(d):
        return float(np.dot(w, 1 / (1 + np.exp(-(z + d)))) / w.sum()) - target

    d = brentq(gap, -50, 50, xtol=1e-12)
    return 1 / (1 + np.exp(-(z + d)))


# ------------------------------------------------------------ degradations
def mcar_fixed_count(X: pd.DataFrame, features, m: int, rng: np.random.Generator) -> pd.DataFrame:
    """Exactly ``m`` random features (of ``features``) missing in each record."""
    feats = list(features)
    k = min(m, len(feats))
    keys = rng.random((len(X), len(feats)))
    chosen = np.argsort(keys, axis=1)[:, :k]
    mask = np.zeros((len(X), len(feats)), dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    out = X.copy()
    for j, f in enumerate(feats):
        out[f] = out[f].mask(mask[:, j])
    return out


def delete_features(X: pd.DataFrame, columns) -> pd.DataFrame:
    """The same features missing in every record."""
    out = X.copy()
    for f in columns:
        out[f] = out[f].mask(np.ones(len(out), dtype=bool))
    return out


def corrupt(X: pd.DataFrame, train: pd.DataFrame, numeric, categorical, *, rate: float, sd: float,
            rng: np.random.Generator) -> pd.DataFrame:
    """Measurement corruption of ``rate`` of the values of each feature (see module docstring)."""
    out = X.copy()
    n = len(X)
    for f in numeric:
        tr = pd.to_numeric(train[f], errors="coerce").dropna()
        hit = rng.random(n) < rate
        if tr.empty or not hit.any():
            continue
        x = pd.to_numeric(out[f], errors="coerce").to_numpy(dtype=float, na_value=np.nan).copy()
        noisy = np.clip(x + rng.normal(0, sd * float(tr.std(ddof=0)), n), tr.min(), tr.max())
        is_int = pd.api.types.is_integer_dtype(train[f].dtype) or bool(np.all(tr == np.round(tr)))
        if is_int:
            noisy = np.round(noisy)
        x[hit] = noisy[hit]
        out[f] = x if not pd.api.types.is_integer_dtype(out[f].dtype) or np.isnan(x).any() else x.astype(out[f].dtype)
    for f in categorical:
        tr_text = category_text(train[f])
        dist = tr_text.dropna().value_counts(normalize=True)
        hit = rng.random(n) < rate
        if len(dist) < 2 or not hit.any():
            continue
        # one train value per text level: the drawn replacement keeps the column's own type
        observed = tr_text.notna().to_numpy()
        value_of = pd.Series(train[f].to_numpy(dtype=object)[observed], index=tr_text.to_numpy()[observed])
        value_of = value_of[~value_of.index.duplicated()]
        cur = category_text(out[f]).to_numpy()
        rows_hit = hit & pd.notna(cur)  # missing stays missing
        new = out[f].to_numpy(dtype=object).copy()
        levels, probs = dist.index.to_numpy(dtype=object), dist.to_numpy()
        for v in sorted(set(cur[rows_hit])):  # text levels only: no missing value is sorted
            rows = np.flatnonzero(rows_hit & (cur == v))
            keep = levels != v
            pr = probs[keep] / probs[keep].sum()
            new[rows] = value_of.loc[rng.choice(levels[keep], size=len(rows), p=pr)].to_numpy()
        out[f] = _same_dtype(new, out[f])
    return out


def _same_dtype(values: np.ndarray, like: pd.Series) -> pd.Series:
    """``values`` as a Series with the index and, where the values allow it, the dtype of ``like``."""
    col = pd.Series(values, index=like.index, name=like.name)
    try:
        return col.astype(like.dtype)
    except (TypeError, ValueError):
        return col


def oracle_replace(X: pd.DataFrame, y: np.ndarray, train: pd.DataFrame, y_train: np.ndarray, columns, *,
                   rate: float, rng: np.random.Generator) -> pd.DataFrame:
    """Label-informed oracle: ``columns`` of ``rate`` of records from an opposite-class train donor."""
    out = X.copy()
    hit = np.flatnonzero(rng.random(len(X)) < rate)
    donors = np.empty(len(hit), dtype=int)
    for c in (0, 1):
        pool = np.flatnonzero(y_train != c)
        sel = y[hit] == c
        donors[sel] = pool[rng.integers(0, len(pool), sel.sum())]
    for f in columns:
        numeric = pd.api.types.is_numeric_dtype(out[f]) and not pd.api.types.is_bool_dtype(out[f])
        col = out[f].to_numpy(dtype=float, na_value=np.nan).copy() if numeric else out[f].to_numpy(dtype=object).copy()
        src = train[f].to_numpy(dtype=float, na_value=np.nan) if numeric else train[f].to_numpy(dtype=object)
        col[hit] = src[donors]  # a donor's missing value is copied as missing
        out[f] = col if numeric else _same_dtype(col, out[f])
    return out


def mutual_information_ranking(train: pd.DataFrame, y: np.ndarray, numeric, categorical, *, max_rows: int,
                               seed: int) -> list[str]:
    """Raw features by decreasing mutual information with ``y`` on (a sample of) the train rows."""
    from sklearn.feature_selection import mutual_info_classif

    rng = np.random.default_rng(seed)
    idx = np.arange(len(train))
    if len(idx) > max_rows:
        idx = np.sort(rng.choice(idx, max_rows, replace=False))
    cols, discrete = [], []
    for f in numeric:
        x = pd.to_numeric(train[f].iloc[idx], errors="coerce")
        cols.append(x.fillna(x.median() if x.notna().any() else 0.0).to_numpy(dtype=float))
        discrete.append(False)
    for f in categorical:
        codes = pd.factorize(category_text(train[f].iloc[idx]))[0]
        codes[codes < 0] = codes.max() + 1  # missing is a level of its own
        cols.append(codes.astype(float))
        discrete.append(True)
    M = np.column_stack(cols)
    mi = mutual_info_classif(M, y[idx], discrete_features=np.array(discrete), random_state=seed)
    names = list(numeric) + list(categorical)
    order = sorted(range(len(names)), key=lambda j: (-mi[j], j))
    return [names[j] for j in order]


def harm_percentile(value: float, distribution: np.ndarray, metric: str, *, alpha: float | None = None,
                    selection_rate: float | None = None) -> float:
    """Share (in %) of ``distribution`` that ``value`` is *more harmful than*, ties counted half.

    Harm follows the metric's good direction
    (:func:`~audit_core.transport.verdicts.good_direction`): a lower AUROC, a
    higher Brier score, a coverage farther from ``1 − α`` are more harmful.
    ``NaN`` for a metric without a good direction (prevalence).

    Examples
    --------
    Targeted deletion leaves AUROC 0.70 where random sets leave 0.72, 0.75, 0.71, 0.69:
    it is more harmful than 3 of the 4, and the same reading holds for a Brier score.

    >>> harm_percentile(0.70, np.array([0.72, 0.75, 0.71, 0.69]), "auroc")
    75.0
    >>> harm_percentile(0.21, np.array([0.18, 0.19, 0.20, 0.22]), "brier_score")
    75.0
    """
    kind, target, _ = good_direction(metric, alpha=alpha, selection_rate=selection_rate)
    d = np.asarray(distribution, dtype=float)
    if kind == "higher":
        return percentile_within(-value, -d)
    if kind == "lower":
        return percentile_within(value, d)
    if kind == "target":
        return percentile_within(abs(value - target), np.abs(d - target))
    return float("nan")


def percentile_within(value: float, distribution: np.ndarray) -> float:
    """Mid-rank percentile of ``value`` within ``distribution``.

    >>> percentile_within(0.5, np.array([0.1, 0.5, 0.9, 1.0]))
    37.5
    """
    d = np.asarray(distribution, dtype=float)
    d = d[np.isfinite(d)]
    if len(d) == 0 or not np.isfinite(value):
        return float("nan")
    return float(100 * ((d < value).sum() + 0.5 * (d == value).sum()) / len(d))


# ------------------------------------------------------------ protocol steps
def _primary_mapping(c) -> str:
    return "platt" if "platt" in c.mappings else c.mappings[0]


def _decomposition_replicates(c, r: int, dom: str, labels: dict, cells: dict, w, U: str, C: str) -> dict:
    """Bootstrap replicates of ``D_Y`` and ``D_P`` (raw and aligned) for one refit and test set.

    Records are resampled stratified by the joint (U, C) label, ``bootstrap_chunk``
    replicates at a time (memory ``chunk × n``). A test set larger than
    ``stress_max_rows`` is bootstrapped on a seeded subsample of that many
    records: the interval is then wider than the full set's (conservative);
    the point estimates always use every record.

    Returns
    -------
    dict
        ``(dom, aligned, metric, "D_Y" | "D_P")`` -> replicates of shape (B,).
    """
    n = len(labels[U])
    idx = np.arange(n)
    if n > c.stress_max_rows:
        idx = np.sort(np.random.default_rng([c.seed + 7919, r, 98, int(dom == "ood")]).choice(
            n, c.stress_max_rows, replace=False))
    joint = labels[U][idx] * 2 + labels[C][idx]
    ww = w[idx] if w is not None else None
    batched = {(aligned, L, P): BatchedMetrics(labels[L][idx], cells[(aligned, L, P)][idx], n_bins=c.n_bins)
               for aligned in (False, True) for L in (U, C) for P in (U, C)}
    B = c.n_bootstrap
    out = {(dom, aligned, k, nm): np.full(B, np.nan) for aligned in (False, True) for k in _DECOMP_METRICS
           for nm in ("D_Y", "D_P")}
    rng = np.random.default_rng([c.seed + 7919, r, 99])
    for start in range(0, B, c.bootstrap_chunk):
        b = min(c.bootstrap_chunk, B - start)
        counts = stratified_counts(joint, b, rng)
        W = counts * ww if ww is not None else counts
        for aligned in (False, True):
            vals = {(L, P): batched[(aligned, L, P)].compute(W) for L in (U, C) for P in (U, C)}
            for k in _DECOMP_METRICS:
                dy, dp = decomposition(vals[(U, U)][k], vals[(U, C)][k], vals[(C, U)][k], vals[(C, C)][k])
                out[(dom, aligned, k, "D_Y")][start:start + b] = dy
                out[(dom, aligned, k, "D_P")][start:start + b] = dp
    return out


def stress(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Stage 6: target-definition sensitivity and evidence degradation (as declared).

    A run on scores runs neither (they score changed records: they need a model; the manifest's ``not_run``).
    """
    c = state.config
    if c.on_scores:
        return state
    with serial_blas():
        if "target_definition" in c.stresses and len(c.targets) > 1:
            state = state.with_rows(target_definition_stress(state, tick=tick))
        warnings = [*state.manifest.get("warnings", []),
                    *stress_warnings(stresses=c.stresses, targets=c.targets, primary=c.primary_target)]
        state = replace(state, manifest={**state.manifest, "warnings": warnings})
        if "degradation" in c.stresses:
            state = degradation_stress(state, tick=tick)
    return state


def target_definition_stress(state: TransportState, *, tick: Tick = no_tick) -> list[dict]:
    """Result rows of the 2×2 grid, the decomposition and the aligned residuals for each alternative definition."""
    c = state.config
    out: list[dict] = []
    U = c.primary_target
    m0, mp = c.models[0], _primary_mapping(c)
    for C in [str(t["name"]) for t in c.targets[1:]]:
        reps: dict = {}
        points: dict = {}  # (dom, aligned, metric, D_Y | D_P) -> the per-refit full-sample values
        for r in range(c.n_refits):
            tick(0.5 * r / c.n_refits, f"Target definition {C}, refit {r + 1}")
            pipe_c = fit_pipeline(state, r, m0, C)
            pipe_u = state.pipes[(r, m0)]
            for dom in state.domains():
                part = "id_test" if dom == "id" else "ood"
                rows_ = state.source_rows(r, "id_test") if dom == "id" else slice(None)
                ys = state.y_source if dom == "id" else state.y_target
                wsrc = state.w_source
                w = (wsrc[rows_] if wsrc is not None else None) if dom == "id" else state.w_target
                labels = {U: ys[U][rows_], C: ys[C][rows_]}
                preds = {U: pipe_u["maps"][mp](pipe_u["raw"][part]), C: pipe_c["maps"][mp](pipe_c["raw"][part])}
                cells = {}
                for aligned in (False, True):
                    for L in (U, C):
                        for P in (U, C):
                            p = preds[P]
                            if aligned:
                                prev = float(np.average(labels[L], weights=w))
                                p = align_intercept(p, prev, sample_weight=w)
                            cells[(aligned, L, P)] = p
                            if not aligned:
                                vals = metric_values(labels[L], p, _DECOMP_METRICS, sample_weight=w)
                                out += result_rows(c, [dict(analysis="target_grid", metric=k, value=v)
                                                       for k, v in vals.items()],
                                                   target_definition=L, condition=f"pipeline={P}", domain=dom,
                                                   model=m0, mapping=mp, refit=r)
                    grid = [metric_values(labels[L], cells[(aligned, L, P)], _DECOMP_METRICS, sample_weight=w)
                            for L, P in ((U, U), (U, C), (C, U), (C, C))]
                    pt = {k: decomposition(*[g[k] for g in grid]) for k in _DECOMP_METRICS}
                    for k, v in pt.items():
                        for i, nm in enumerate(("D_Y", "D_P")):
                            points.setdefault((dom, aligned, k, nm), []).append(v[i])
                    cond = f"{U} vs {C}" + (" (aligned)" if aligned else "")
                    out += result_rows(c, [dict(analysis="target_decomposition", metric=f"{k}:{nm}", value=v[i])
                                           for k, v in pt.items() for i, nm in enumerate(("D_Y", "D_P"))],
                                       condition=cond, domain=dom, model=m0, mapping=mp, refit=r,
                                       target_definition=f"{U}|{C}")
                for key, arr in _decomposition_replicates(c, r, dom, labels, cells, w, U, C).items():
                    reps.setdefault(key, []).append(arr)
        for (dom, aligned, k, nm), arrs in reps.items():
            pts = np.asarray(points[(dom, aligned, k, nm)], dtype=float)
            estimate = float(np.nanmean(pts)) if np.isfinite(pts).any() else np.nan
            lo, hi = change_interval(np.nanmean(np.stack(arrs), axis=0), estimate, c.level)
            cond = f"{U} vs {C}" + (" (aligned)" if aligned else "")
            out += result_rows(c, [dict(metric=f"{k}:{nm}:ci_low", value=lo),
                                   dict(metric=f"{k}:{nm}:ci_high", value=hi)],
                               analysis="target_decomposition", condition=cond, domain=dom, model=m0, mapping=mp,
                               refit=-1, target_definition=f"{U}|{C}")
    return out


def degradation_stress(state: TransportState, *, tick: Tick = no_tick) -> TransportState:
    """Equal-budget evidence degradation on ID test and OOD (capped rows).

    Returns
    -------
    TransportState
        With the degradation rows and the ``degradation_percentiles`` table; or, for a given model that
        cannot score missing values, only a warning in the manifest.
    """
    c = state.config
    numeric, categorical = stress_features(state)
    feats = list(numeric + categorical)
    if not feats:
        raise fail("TRANSPORT_BAD_OPTION", name="stresses",
                   problem="the evidence-degradation stress needs a declared feature that the model reads")
    if c.fixed_model is not None:  # a model used as given may have no imputer: find out before any row is emitted
        missing = _cannot_score_missing(state, feats)
        if missing is not None:
            warnings = [*state.manifest.get("warnings", []), no_imputer_warning(label=c.fixed_model, detail=missing)]
            return replace(state, manifest={**state.manifest, "warnings": warnings})
    m = min(c.degradation_m, len(feats))
    U = c.primary_target
    pct_rows, out = [], []
    src, wsrc = state.source, state.w_source
    for r in range(c.n_refits):
        tick(0.5 + 0.5 * r / c.n_refits, f"Evidence degradation, refit {r + 1}")
        rng = np.random.default_rng([c.seed, r, 17])
        tr = state.source_rows(r, "train")
        train, ytr = src.iloc[tr], state.y_source[U][tr]
        ranking = mutual_information_ranking(train, ytr, numeric, categorical, max_rows=c.mi_max_rows,
                                             seed=state.split.seeds[r])
        targeted = ranking[:m]
        sets = [list(rng.choice(feats, m, replace=False)) for _ in range(c.n_random_sets)]
        out += result_rows(c, [dict(analysis="fitted", metric="targeted_features", value=np.nan,
                                    condition="targeted:" + ",".join(targeted))], domain="source", refit=r)
        for dom in state.domains():
            if dom == "id":
                idx = state.source_rows(r, "id_test")
                X, y = src.iloc[idx], state.y_source[U][idx]
                w = wsrc[idx] if wsrc is not None else None
            else:
                assert state.target is not None  # domains() holds "ood" only with a target
                X, y, w = state.target, state.y_target[U], state.w_target
            capped = len(X) > c.stress_max_rows
            if capped:
                keep = np.sort(rng.choice(len(X), c.stress_max_rows, replace=False))
                X, y, w = X.iloc[keep], y[keep], (w[keep] if w is not None else None)
            conds = {"mcar": mcar_fixed_count(X, feats, m, rng), "targeted": delete_features(X, targeted),
                     "corruption": corrupt(X, train, numeric, categorical, rate=c.corruption_rate,
                                           sd=c.corruption_sd, rng=rng),
                     "oracle": oracle_replace(X, y, train, ytr, targeted, rate=c.oracle_rate, rng=rng)}
            for j, s in enumerate(sets):
                conds[f"random_set:{j}"] = delete_features(X, s)
            if capped:
                conds["clean_subsample"] = X
            for mk in c.models:
                fm = state.pipes[(r, mk)]["model"]
                raws = {k: predict(state, fm, v, f"{dom} records under the {k.split(':')[0]} stress")
                        for k, v in conds.items()}
                for mp in c.mappings:
                    f = state.pipes[(r, mk)]["maps"][mp]
                    rules = state.rules[(r, mk, mp)]
                    per = {}
                    for k, raw in raws.items():
                        rows = evaluate_pipeline(y, f(raw), rules, weights=w, n_bins=c.n_bins)
                        out += result_rows(c, rows, condition=k, domain=dom, model=mk, mapping=mp, refit=r)
                        per[k] = rows
                    # percentile of targeted within the random-set distribution
                    for i, row in enumerate(per["targeted"]):
                        dist = np.array([per[f"random_set:{j}"][i]["value"] for j in range(len(sets))], dtype=float)
                        harm = harm_percentile(row["value"], dist, row["metric"], alpha=row.get("alpha"),
                                               selection_rate=row.get("selection_rate"))
                        pct_rows.append(dict(row, value=harm, domain=dom, model=mk,
                                             mapping=mp, refit=r, condition="targeted_vs_random",
                                             analysis=f"degradation_percentile:{row['analysis']}"))
    out += result_rows(c, pct_rows)
    tables = dict(state.tables)
    if pct_rows:
        t = pd.DataFrame(pct_rows)
        keys = ["analysis", "metric", "domain", "model", "mapping", "weighting"]
        t = t.fillna({"weighting": "unweighted"})
        t["alpha"] = t.get("alpha", np.nan)
        t["selection_rate"] = t.get("selection_rate", np.nan)
        pooled = t.groupby(keys + ["alpha", "selection_rate"], dropna=False)["value"].mean().reset_index()
        tables["degradation_percentiles"] = pooled
        out += result_rows(c, [{**r_, "refit": -1, "condition": "targeted_vs_random"} for r_ in pooled.to_dict("records")])
    return replace(state.with_rows(out), tables=tables)


def _cannot_score_missing(state: TransportState, feats: list[str]) -> str | None:
    """The model's own reason it cannot score ID-test records whose stress features are all missing, or None."""
    idx = state.source_rows(0, "id_test")[:2]
    probe = state.source.iloc[idx].copy()
    assert state.model is not None  # asked only for a fixed model
    for col in feats:
        probe[col] = np.nan if pd.api.types.is_numeric_dtype(probe[col]) else None
    try:
        state.model.predict_proba(probe)
    except (ValueError, TypeError, KeyError) as exc:  # AuditInputError is a ValueError
        text = " ".join((exc.message if isinstance(exc, AuditInputError) else str(exc)).split()).rstrip(".")
        return text if len(text) <= 300 else text[:299] + "…"
    return None
