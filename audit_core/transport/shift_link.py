"""Feature shift of a Transport run: every declared raw feature, ranked, and linked to the run's results.

:func:`feature_shift` computes the statistics of :mod:`.shift` and the
domain-classifier AUROCs of :mod:`.domain` for each feature and ranks the
features by PSI; :func:`link_shift` joins the ranking to the run's
evidence-degradation and heterogeneity results; :func:`shift_tables` does
both for a run (stage 7, :mod:`.heterogeneity`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit_core.errors import fail

from .domain import domain_aurocs
from .shift import categorical_shift, check_weights, numeric_shift
from .state import TransportState

__all__ = ["SHIFT_COLUMNS", "LINK_COLUMNS", "HARM_FLAG", "CLASSIFIER_FOLDS", "CLASSIFIER_TREES", "FeatureShiftResult",
           "feature_shift", "link_shift", "shift_tables"]

#: Columns of :attr:`FeatureShiftResult.table`, one row per feature.
SHIFT_COLUMNS = ("rank", "feature", "kind", "psi", "test", "statistic", "p_value", "wasserstein", "wasserstein_sd",
                 "domain_auroc", "n_bins", "missing_source", "missing_target")



@dataclass(frozen=True, eq=False)
class FeatureShiftResult:
    """Per-feature shift between two domains, ranked.

    Attributes
    ----------
    table : pandas.DataFrame, shape (F, 13)
        One row per feature, columns :data:`SHIFT_COLUMNS`, sorted by ``rank``
        (1 = most shifted: largest PSI, ties broken by the per-feature domain
        AUROC, then the name). ``test`` is ``"ks"`` (numeric) or ``"chi2"``
        (categorical) with its ``statistic`` and ``p_value``; ``wasserstein``
        and ``wasserstein_sd`` are NaN for categoricals; ``missing_*`` are the
        weighted shares of missing values.
    domain_auroc : float
        Cross-fitted AUROC of a classifier telling target from source records
        on all the features together (0.5: the domains cannot be told apart).
    fold_auroc : tuple of float, length K
        The same per fold.
    n_classifier_rows : int
        Records the domain classifier used (capped per domain).
    options : dict
        ``n_bins``, ``floor``, ``n_folds``, ``seed``, ``max_rows``, ``n_trees``, ``stat_max_rows`` and
        ``n_stat_rows`` (records per domain the statistics read).
    """

    table: pd.DataFrame
    domain_auroc: float
    fold_auroc: tuple[float, ...]
    n_classifier_rows: int
    options: dict

    def top(self, k: int = 5) -> list[str]:
        """The ``k`` most shifted feature names."""
        return self.table["feature"].head(k).tolist()


def _feature_row(name, kind, s, t, ws, wt, *, n_bins, floor) -> dict:
    if kind == "numeric":
        st = numeric_shift(s, t, ws, wt, n_bins=n_bins, floor=floor)
        sd = st.pop("sd")
        w1 = st["wasserstein"]
        return {"feature": name, "kind": kind, **st, "test": "ks",
                "wasserstein_sd": w1 / sd if sd > 0 else np.nan}
    st = categorical_shift(s, t, ws, wt, floor=floor)
    return {"feature": name, "kind": kind, **st, "test": "chi2", "wasserstein": np.nan, "wasserstein_sd": np.nan}


def feature_shift(source: pd.DataFrame, target: pd.DataFrame, *, numeric=(), categorical=(), source_weight=None,
                  target_weight=None, n_bins: int = 10, floor: float = 1e-4, n_folds: int = 5, seed: int = 0,
                  max_rows: int = 10000, classifier: bool = True, n_trees: int = 50,
                  stat_max_rows: int | None = None) -> FeatureShiftResult:
    """Shift of every declared raw feature between ``source`` and ``target``, ranked by PSI.

    Parameters
    ----------
    source, target : pandas.DataFrame, shapes (n, ·) and (m, ·)
        Raw tables holding the declared columns.
    numeric, categorical : sequence of str
    source_weight, target_weight : array-like, shapes (n,) and (m,), optional
        Record weights (all statistics and the domain classifier use them).
    n_bins : int, default 10
        Source-quantile bins of a numeric feature.
    floor : float, default 1e-4
        Smallest bin share in PSI.
    n_folds : int, default 5
        Cross-fitting folds of the domain classifiers (stratified by domain).
    seed : int, default 0
        Seeds the fold assignment, the row cap and the classifier.
    max_rows : int, default 10000
        Records per domain the domain classifiers use (a seeded sample above it).
    classifier : bool, default True
        False skips the domain classifiers (AUROCs are NaN).
    n_trees : int, default 50
        Trees of the joint domain classifier.
    stat_max_rows : int, optional
        Records per domain the statistics of a numeric feature (PSI, KS,
        Wasserstein, which sort its values) use: one seeded sample above it,
        shared by the numeric features (the classifiers draw their own
        sample, ``max_rows``). Categorical features are counted on every
        record (a count is cheap, and the PSI of a many-level feature grows
        on a small sample). None: every record.

    Returns
    -------
    FeatureShiftResult
    """
    feats = [(f, "numeric") for f in numeric] + [(f, "categorical") for f in categorical]
    for which, frame in (("source", source), ("target", target)):
        for f, _ in feats:
            if f not in frame.columns:
                raise fail("TRANSPORT_UNKNOWN_COLUMN", what="feature", column=f, which=which)
    if n_bins < 2 or not 0 < floor < 0.5 or n_folds < 2 or max_rows < n_folds:
        raise fail("TRANSPORT_BAD_OPTION", name="feature shift",
                   problem="needs n_bins ≥ 2, 0 < floor < 0.5 and max_rows ≥ n_folds ≥ 2")
    ws, wt = check_weights(source_weight, len(source)), check_weights(target_weight, len(target))
    if stat_max_rows is not None and stat_max_rows < 2:
        raise fail("TRANSPORT_BAD_OPTION", name="feature shift", problem="needs stat_max_rows ≥ 2")
    take = _stat_rows(len(source), len(target), stat_max_rows, seed)
    rows = [_feature_row(f, k, source[f].to_numpy()[take[0]], target[f].to_numpy()[take[1]], ws[take[0]],
                         wt[take[1]], n_bins=n_bins, floor=floor) if k == "numeric" else
            _feature_row(f, k, source[f].to_numpy(), target[f].to_numpy(), ws, wt, n_bins=n_bins, floor=floor)
            for f, k in feats]
    if classifier and feats:
        joint, folds, per, n_rows = domain_aurocs(source, target, feats, ws, wt, n_bins=n_bins, n_folds=n_folds,
                                                  seed=seed, max_rows=max_rows, n_trees=n_trees)
    else:
        joint, folds, per, n_rows = float("nan"), (), {f: float("nan") for f, _ in feats}, 0
    for r in rows:
        r["domain_auroc"] = per[r["feature"]]
    table = pd.DataFrame(rows, columns=[c for c in SHIFT_COLUMNS if c != "rank"])
    if len(table):
        key = table["domain_auroc"].fillna(0.5)
        order = np.lexsort((table["feature"].to_numpy(dtype=str), -key.to_numpy(), -table["psi"].to_numpy()))
        table = table.iloc[order].reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    return FeatureShiftResult(table=table, domain_auroc=joint, fold_auroc=tuple(folds), n_classifier_rows=n_rows,
                              options={"n_bins": n_bins, "floor": floor, "n_folds": n_folds, "seed": seed,
                                       "max_rows": max_rows, "n_trees": n_trees, "stat_max_rows": stat_max_rows,
                                       "n_stat_rows": (int(take[0].size), int(take[1].size))})


def _stat_rows(n: int, m: int, cap: int | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Row positions (sorted) the statistics read per domain: all, or a seeded sample of ``cap``."""
    rng = np.random.default_rng([seed, 37])
    return tuple(np.sort(rng.choice(k, cap, replace=False)) if cap is not None and k > cap else np.arange(k)
                 for k in (n, m))  # type: ignore[return-value]


#: Cross-fitting folds and trees of a run's joint domain classifier, sized by what its AUROC needs: on the
#: real shifts of ``benchmarks/feature_shift_sizing.py`` the pooled AUROC moves by at most 0.008 from
#: 5 folds × 50 trees (3 × 20 moves it by 0.011), at about half the CPU.
CLASSIFIER_FOLDS, CLASSIFIER_TREES = 3, 30

#: Columns :func:`link_shift` adds to the shift table.
LINK_COLUMNS = ("model", "mapping", "targeted_share", "targeted_harm_ood", "targeted_flagged", "subgroup_auroc_spread",
                "heterogeneity_flagged", "link")

#: A targeted deletion more harmful than this share of random deletions (percent) is flagged.
HARM_FLAG = 90.0


def _targeted_sets(results: pd.DataFrame) -> list[set[str]]:
    t = results[(results["analysis"] == "fitted") & (results["metric"] == "targeted_features")]
    return [set(c.split(":", 1)[1].split(",")) for c in t["condition"].astype(str) if c.startswith("targeted:")]


def _harm(results: pd.DataFrame, model: str, mapping: str) -> float:
    t = results[(results["analysis"] == "degradation_percentile:metrics") & (results["metric"] == "auroc")
                & (results["domain"] == "ood") & (results["model"] == model) & (results["mapping"] == mapping)
                & (results["refit"] == -1) & (results["weighting"] == "unweighted")]
    return float(t["value"].mean()) if len(t) else float("nan")


def _spread(results: pd.DataFrame, column: str, model: str, mapping: str) -> float:
    """Max − min over the levels of ``column`` of the refit-mean OOD − ID AUROC change."""
    t = results[(results["analysis"] == "heterogeneity") & (results["metric"] == "auroc")
                & (results["model"] == model) & (results["mapping"] == mapping)
                & results["condition"].astype(str).str.startswith(f"{column}=")]
    if t.empty:
        return float("nan")
    wide = t.pivot_table(index=["condition", "refit"], columns="domain", values="value", aggfunc="first")
    if "id" not in wide or "ood" not in wide:
        return float("nan")
    change = (wide["ood"] - wide["id"]).groupby(level="condition").mean().dropna()
    return float(change.max() - change.min()) if len(change) >= 2 else float("nan")


def link_shift(shift: pd.DataFrame, results: pd.DataFrame, *, model: str, mapping: str, subgroup_columns=(),
               auroc_tolerance: float = 0.02) -> pd.DataFrame:
    """Join the shift ranking to a Transport run's degradation and heterogeneity results.

    Parameters
    ----------
    shift : pandas.DataFrame, shape (F, 13)
        :attr:`FeatureShiftResult.table`.
    results : pandas.DataFrame
        The run's long-form result table (stored or fresh).
    model, mapping : str
        Whose degradation and heterogeneity rows are read.
    subgroup_columns : sequence of str
        The run's declared subgroup columns.
    auroc_tolerance : float
        The run's AUROC tolerance.

    Returns
    -------
    pandas.DataFrame, shape (F, 13 + 8)
        ``shift`` with :data:`LINK_COLUMNS`: ``targeted_share`` (share of
        refits whose targeted deletion removed the feature),
        ``targeted_harm_ood`` (percent of random deletions the targeted one is
        more harmful than, OOD AUROC, refit mean; NaN when the feature was
        never targeted), ``targeted_flagged`` (targeted and at least
        :data:`HARM_FLAG`), ``subgroup_auroc_spread`` (for a declared
        subgroup column: max − min over its levels of the OOD − ID AUROC
        change), ``heterogeneity_flagged`` (spread above the tolerance) and a
        sentence ``link``.
    """
    sets = _targeted_sets(results)
    harm = _harm(results, model, mapping)
    out = shift.copy()
    out["model"], out["mapping"] = model, mapping
    share = [sum(f in s for s in sets) / len(sets) if sets else 0.0 for f in out["feature"]]
    out["targeted_share"] = np.asarray(share, dtype=float)
    out["targeted_harm_ood"] = np.where(out["targeted_share"] > 0, harm, np.nan)
    out["targeted_flagged"] = (out["targeted_share"] > 0) & (out["targeted_harm_ood"] >= HARM_FLAG)
    groups = set(subgroup_columns)
    out["subgroup_auroc_spread"] = [(_spread(results, f, model, mapping) if f in groups else np.nan) for f in out["feature"]]
    out["heterogeneity_flagged"] = out["subgroup_auroc_spread"] > auroc_tolerance
    words = []
    for share, harm_ood, spread in zip(*(out[c].to_numpy(dtype=float) for c in
                                         ("targeted_share", "targeted_harm_ood", "subgroup_auroc_spread")), strict=True):
        bits = []
        if share > 0:
            bits.append(f"removed by the targeted deletion in {share:.0%} of refits, which is more harmful "
                        f"than {harm_ood:.0f}% of random deletions (OOD AUROC)")
        if np.isfinite(spread):
            bits.append(f"as a subgroup column its levels' AUROC changes differ by {spread:.3f} "
                        f"(tolerance {auroc_tolerance:g})")
        words.append("; ".join(bits) if bits else "not among the targeted features nor a subgroup column")
    out["link"] = words
    return out


def shift_tables(state: TransportState) -> tuple[dict[str, pd.DataFrame], dict]:
    """The ``feature_shift`` and ``domain_classifier`` tables of a Transport run with two domains (:class:`~.state.TransportState`).

    Computed on the eligible records of both domains with the run's weights
    and seed: the statistics on at most ``shift_max_rows`` records per
    domain, the domain classifier on at most ``min(10000, stress_max_rows)``
    (:data:`CLASSIFIER_FOLDS` folds, :data:`CLASSIFIER_TREES` trees); linked
    by :func:`link_shift` for the first model and Platt scaling (else the
    first mapping).

    Returns
    -------
    tables : dict of str to DataFrame
    options : dict
        :attr:`FeatureShiftResult.options`, for the manifest's ``feature_shift``.
    """
    c = state.config
    assert state.target is not None  # called with two domains only
    res = feature_shift(state.source, state.target, numeric=c.numeric, categorical=c.categorical,
                        source_weight=state.w_source, target_weight=state.w_target, seed=int(c.seed),
                        max_rows=max(CLASSIFIER_FOLDS, min(10000, c.stress_max_rows)), n_folds=CLASSIFIER_FOLDS,
                        n_trees=CLASSIFIER_TREES, stat_max_rows=c.shift_max_rows)
    mapping = "platt" if "platt" in c.mappings else c.mappings[0]
    table = link_shift(res.table, pd.DataFrame(list(state.rows)), model=c.models[0], mapping=mapping,
                       subgroup_columns=c.subgroup_columns, auroc_tolerance=float(c.tolerances.get("auroc", 0.02)))
    folds = pd.DataFrame({"part": ["pooled"] + [f"fold {k}" for k in range(len(res.fold_auroc))],
                          "auroc": [res.domain_auroc, *res.fold_auroc], "n_rows": res.n_classifier_rows})
    options = {**res.options, "n_stat_rows": list(res.options["n_stat_rows"]),
               "n_classifier_rows": res.n_classifier_rows}
    return {"feature_shift": table, "domain_classifier": folds}, options
