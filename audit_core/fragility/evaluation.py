"""Does the certificate predict brittleness that confidence misses? (SPEC §1)

Scores (higher = more brittle), computed per case by :func:`brittleness_scores`:

* ``max_softmax``, ``neg_entropy``, ``margin``, ``neg_energy`` — the four
  confidence scores of SPEC §0, *negated*. In a binary task they are monotone
  transforms of one another (all are increasing functions of ``|z_1 - z_0|``)
  and rank identically; :func:`auroc_table` marks them ``same_ranking=True``.
* ``rcma``, ``fds`` — the certificate.
* ablations: ``k_star`` (negated, so a smaller budget is more brittle), ``d``,
  ``fds_random_order`` (FDS with a random group order instead of ``π``),
  ``max_delta`` (largest one-step drop), ``perm_importance`` and ``group_shap``.

``perm_importance`` (our construction): for each case and group ``g``, the
group's columns are replaced by those of ``P`` other evaluation rows drawn by
a seeded permutation of the rows (the within-column shuffle of permutation
importance, done per case); ``I_g`` is the mean drop of the margin of ``ŷ``.
The case score is ``max_g I_g / (|m0| + ε)``: the share of the margin that
shuffling a single group destroys on average.

``group_shap`` (our construction): ``shap.PermutationExplainer`` over a
*group-level* input. Each case is represented by ``G`` columns holding its
row id; the masker is ``shap.maskers.Independent`` over background rows
holding the ids of ``n_background`` training rows, so masking column ``g``
swaps the whole evidence group ``g`` for a background row's values. The
explained output is the margin of class 1 over class 0 in pseudo-logits
(``z_ŷ`` for multi-class). The case score is ``max_g φ_g^ŷ / (|m0| + ε)``:
the share of the margin carried by the single most supportive group.

AUROC intervals are paired percentile bootstraps over cases (within one run)
or over units (dataset × model × seed) in :func:`unit_summary`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from audit_core.metrics import auroc_by_row
from audit_core.models.probs import clip_probs, confidence_scores, margin_of, pseudo_logits

from .certificate import CertificateBatch
from .generic import as_predict
from .operators import group_mask
from .work import Progress, StopCheck, check_stop, item_blocks, padded, rows_in_budget

__all__ = [
    "CONFIDENCE",
    "SCORES",
    "brittleness_scores",
    "permutation_scores",
    "group_shap_scores",
    "auroc_table",
    "IncrementalValue",
    "incremental_value",
    "unit_summary",
]

CONFIDENCE = ("max_softmax", "neg_entropy", "margin", "neg_energy")
SCORES = CONFIDENCE + (
    "rcma", "fds", "k_star", "d", "fds_random_order", "max_delta", "perm_importance", "group_shap",
)


def brittleness_scores(
    batch: CertificateBatch,
    *,
    random_order: CertificateBatch | None = None,
    perm: np.ndarray | None = None,
    shap_score: np.ndarray | None = None,
) -> pd.DataFrame:
    """Brittleness scores per case (higher = more brittle).

    Parameters
    ----------
    batch : CertificateBatch
    random_order : CertificateBatch, optional
        The same cases certified with ``path="random"``.
    perm, shap_score : ndarray of shape (n,), optional
        From :func:`permutation_scores` and :func:`group_shap_scores`.

    Returns
    -------
    DataFrame of shape (n, n_scores); missing optional scores are left out.
    """
    conf = confidence_scores(batch.p0)
    out = {name: -conf[name] for name in CONFIDENCE}
    out.update(
        rcma=batch.rcma, fds=batch.fds, k_star=-batch.k_star.astype(float), d=batch.d,
        max_delta=batch.delta.max(axis=1),
    )
    if random_order is not None:
        out["fds_random_order"] = random_order.fds
    if perm is not None:
        out["perm_importance"] = perm
    if shap_score is not None:
        out["group_shap"] = shap_score
    return pd.DataFrame(out)


def _progress_of(progress, total: int, what: str, unit: str):
    done = [0]

    def step(k: int) -> None:
        done[0] += k
        if progress is not None:
            progress(done[0] / max(1, total), f"{what}: {done[0]:,} of {total:,} {unit}")
    return step


def permutation_scores(
    model: Any,
    X: np.ndarray,
    *,
    group_columns: Sequence[np.ndarray],
    n_repeats: int = 5,
    seed: int = 0,
    eps: float = 1e-8,
    chunk_mb: float | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> np.ndarray:
    """Per-case group permutation importance score (see the module docstring).

    Rows are built and predicted in blocks of at most ``chunk_mb`` MiB (whole
    cases, or groups of one case when a case alone is wider);
    ``should_stop`` is polled between blocks (:class:`.work.FragilityStopped`).

    Returns
    -------
    ndarray of shape (n,)
    """
    predict = padded(as_predict(model))
    X = np.asarray(X, dtype=float)
    n, F = X.shape
    G = len(group_columns)
    p0 = clip_probs(predict(X))
    y = p0.argmax(axis=1)
    m0 = margin_of(pseudo_logits(p0), y)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 15485863]))
    donors = np.stack([rng.permutation(n) for _ in range(n_repeats)], axis=1)  # (n, P)
    member = group_mask(tuple(group_columns), np.eye(G, dtype=bool))  # (G, F)
    imp = np.empty((n, G))
    tick = _progress_of(progress, n * G, "Permutation importance", "case × group pairs")
    for cs, gs in item_blocks(n, G, n_repeats * (3 * 8 * F + 64), chunk_mb=chunk_mb):
        check_stop(should_stop)
        c = cs.stop - cs.start
        Xc, Dc = X[cs], X[donors[cs]]  # (c, F), (c, P, F)
        rows = np.where(member[None, gs, None, :], Dc[:, None, :, :], Xc[:, None, None, :])  # (c, g, P, F)
        p = clip_probs(predict(rows.reshape(-1, F))).reshape(c, -1, n_repeats, p0.shape[1])
        m = margin_of(pseudo_logits(p), y[cs, None, None])
        imp[cs, gs] = (m0[cs, None, None] - m).mean(axis=2)
        tick(c * (gs.stop - gs.start))
    return imp.max(axis=1) / (np.abs(m0) + eps)


def group_shap_scores(
    model: Any,
    X: np.ndarray,
    X_train: np.ndarray,
    *,
    group_columns: Sequence[np.ndarray],
    n_background: int = 20,
    max_evals: int | None = None,
    seed: int = 0,
    eps: float = 1e-8,
    chunk_mb: float | None = None,
    progress: Progress | None = None,
    should_stop: StopCheck | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Group-SHAP with ``shap.PermutationExplainer`` (see the module docstring).

    The explainer runs on blocks of cases (its evaluations of one block stay
    within ``chunk_mb`` MiB); one explainer serves every block, so its seeded
    permutations follow one another exactly as in a single call.
    ``should_stop`` is polled between blocks.

    Returns
    -------
    score : ndarray of shape (n,)
    phi : ndarray of shape (n, n_groups)
        SHAP values of the margin of ``ŷ`` per evidence group.
    """
    import shap

    predict = as_predict(model)
    X = np.asarray(X, dtype=float)
    Xtr = np.asarray(X_train, dtype=float)
    n, F = X.shape
    G = len(group_columns)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 32452843]))
    bg_rows = Xtr[rng.choice(len(Xtr), size=min(n_background, len(Xtr)), replace=False)]
    pool = np.vstack([X, bg_rows])
    cols = [np.asarray(c, dtype=int) for c in group_columns]
    p0 = clip_probs(predict(X))
    y = p0.argmax(axis=1)
    C = p0.shape[1]

    def f(Z: np.ndarray) -> np.ndarray:
        Z = np.asarray(Z).astype(int)
        rows = np.empty((len(Z), F))
        for g, c in enumerate(cols):
            rows[:, c] = pool[Z[:, g]][:, c]
        z = pseudo_logits(clip_probs(predict(rows)))
        return z[:, 1] - z[:, 0] if C == 2 else z

    background = np.repeat(np.arange(n, n + len(bg_rows))[:, None], G, axis=1).astype(float)
    masker = shap.maskers.Independent(background, max_samples=len(background))
    explainer = shap.PermutationExplainer(f, masker, seed=int(seed))
    evals = max_evals or 2 * (2 * G + 1)
    ids = np.repeat(np.arange(n)[:, None], G, axis=1).astype(float)
    tick = _progress_of(progress, n, "Group-SHAP", "cases")
    parts = []
    step = max(1, rows_in_budget(evals * len(bg_rows) * 8 * (F + 2 * G), chunk_mb=chunk_mb))
    for lo in range(0, n, step):
        check_stop(should_stop)
        parts.append(np.asarray(explainer(ids[lo:lo + step], max_evals=evals, silent=True).values))
        tick(len(parts[-1]))
    values = np.concatenate(parts, axis=0)
    if C == 2:
        phi = values * np.where(y == 1, 1.0, -1.0)[:, None]
    else:
        phi = values[np.arange(n), :, y]
    m0 = margin_of(pseudo_logits(p0), y)
    return phi.max(axis=1) / (np.abs(m0) + eps), phi


def auroc_table(
    scores: pd.DataFrame,
    labels: pd.DataFrame,
    p_hat: np.ndarray,
    *,
    thresholds: Sequence[float] = (0.7, 0.8, 0.9),
    n_classes: int = 2,
    n_boot: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """AUROC of every score for every brittle label, overall and among confident cases.

    Intervals are percentile bootstraps over cases, paired: every score is
    evaluated on the same resamples.

    Returns
    -------
    DataFrame with columns ``label, stratum, score, n, n_brittle, auroc, lo, hi, same_ranking``.
    """
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 49979687]))
    S = scores.to_numpy(dtype=float).T  # (n_scores, n)
    rows = []
    strata = [("all", np.ones(len(p_hat), dtype=bool))] + [
        (f"p_hat>={t:g}", np.asarray(p_hat) >= t) for t in thresholds
    ]
    a = (1 - level) / 2
    for label in labels.columns:
        yl = labels[label].to_numpy(dtype=bool)
        for stratum, keep in strata:
            idx = np.flatnonzero(keep)
            point = auroc_by_row(yl[idx][None, :], S[:, idx]) if len(idx) else np.full(len(S), np.nan)
            if len(idx) > 1 and n_boot > 0:
                boot = rng.integers(0, len(idx), size=(n_boot, len(idx)))
                bi = idx[boot]
                vals = auroc_by_row(yl[bi][None], S[:, bi])  # (n_scores, n_boot)
                lo = np.nanquantile(vals, a, axis=1) if np.isfinite(vals).any() else np.full(len(S), np.nan)
                hi = np.nanquantile(vals, 1 - a, axis=1) if np.isfinite(vals).any() else np.full(len(S), np.nan)
            else:
                lo = hi = np.full(len(S), np.nan)
            for j, name in enumerate(scores.columns):
                rows.append(
                    dict(
                        label=label, stratum=stratum, score=name, n=int(len(idx)), n_brittle=int(yl[idx].sum()),
                        auroc=float(point[j]), lo=float(lo[j]), hi=float(hi[j]),
                        same_ranking=bool(n_classes == 2 and name in CONFIDENCE),
                    )
                )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class IncrementalValue:
    """CV AUROC of brittle ~ confidence vs brittle ~ confidence + k*, RCMA, d."""

    auroc_confidence: float
    auroc_with_certificate: float
    difference: float
    lo: float
    hi: float
    n: int
    n_brittle: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.to_dict()])


def incremental_value(
    brittle: np.ndarray,
    confidence: np.ndarray,
    certificate: np.ndarray,
    *,
    folds: int = 5,
    n_boot: int = 500,
    seed: int = 0,
) -> IncrementalValue:
    """Incremental value of the certificate over confidence.

    Two logistic models (standardised inputs) are cross-validated with the
    same stratified folds; the out-of-fold scores give the two AUROCs and a
    paired bootstrap over cases gives the interval of their difference.

    Parameters
    ----------
    brittle : bool ndarray of shape (n,)
    confidence : ndarray of shape (n, a)
        e.g. the margin (binary: all confidence scores rank identically).
    certificate : ndarray of shape (n, b)
        e.g. ``k*``, RCMA, ``d``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    y = np.asarray(brittle, dtype=bool)
    n, npos = len(y), int(y.sum())
    k = min(folds, npos, n - npos)
    if k < 2:
        nan = float("nan")
        return IncrementalValue(nan, nan, nan, nan, nan, n, npos)
    A = np.asarray(confidence, dtype=float).reshape(n, -1)
    B = np.column_stack([A, np.asarray(certificate, dtype=float).reshape(n, -1)])
    oof = np.zeros((2, n))
    for tr, te in StratifiedKFold(k, shuffle=True, random_state=seed).split(A, y):
        for j, M in enumerate((A, B)):
            clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(M[tr], y[tr])
            oof[j, te] = clf.decision_function(M[te])
    base = auroc_by_row(y[None], oof)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 86028121]))
    bi = rng.integers(0, n, size=(n_boot, n))
    diff = auroc_by_row(y[bi], oof[1][bi]) - auroc_by_row(y[bi], oof[0][bi])
    lo, hi = np.nanquantile(diff, [0.025, 0.975]) if np.isfinite(diff).any() else (np.nan, np.nan)
    return IncrementalValue(float(base[0]), float(base[1]), float(base[1] - base[0]), float(lo), float(hi), n, npos)


def unit_summary(
    unit_auroc: pd.DataFrame,
    *,
    reference: str = "neg_energy",
    challenger: str = "fds",
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[pd.DataFrame, float]:
    """Mean AUROC per score with a paired bootstrap over units.

    Parameters
    ----------
    unit_auroc : DataFrame
        Columns ``unit, score, auroc`` (one label and stratum).

    Returns
    -------
    table : DataFrame
        ``score, n_units, mean_auroc, lo, hi, diff_vs_reference, diff_lo, diff_hi``.
    share_not_beating : float
        Share of units where ``challenger`` does not beat ``reference`` (ties count as not beating).
    """
    wide = unit_auroc.pivot_table(index="unit", columns="score", values="auroc")
    if wide.empty:
        return pd.DataFrame(columns=["score", "n_units", "mean_auroc", "lo", "hi"]), float("nan")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 122949829]))
    bi = rng.integers(0, len(wide), size=(n_boot, len(wide)))
    W = wide.to_numpy()
    ref = W[:, list(wide.columns).index(reference)] if reference in wide.columns else None
    rows = []
    for j, name in enumerate(wide.columns):
        col = W[:, j]
        boot = np.nanmean(col[bi], axis=1)
        row = dict(score=name, n_units=int(np.isfinite(col).sum()), mean_auroc=float(np.nanmean(col)),
                   lo=float(np.nanquantile(boot, 0.025)), hi=float(np.nanquantile(boot, 0.975)))
        if ref is not None:
            dcol = col - ref
            db = np.nanmean(dcol[bi], axis=1)
            row.update(diff_vs_reference=float(np.nanmean(dcol)), diff_lo=float(np.nanquantile(db, 0.025)),
                       diff_hi=float(np.nanquantile(db, 0.975)))
        rows.append(row)
    share = float("nan")
    if reference in wide.columns and challenger in wide.columns:
        ok = wide[[reference, challenger]].dropna()
        share = float((ok[challenger] <= ok[reference]).mean()) if len(ok) else float("nan")
    return pd.DataFrame(rows), share
