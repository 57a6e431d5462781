"""Per-feature shift between the source and the target domain, on raw columns (weighted).

For one feature and the two domains' values (and optional record weights):

* **bins** (:func:`shift_bins`) — numeric: the weighted source quantiles at
  ``k / n_bins`` (``k = 1 … n_bins − 1``, duplicates dropped) cut the line
  into right-closed bins ``(−∞, e₁], (e₁, e₂], …, (e_last, ∞)``; categorical:
  one bin per level seen in either domain (compared as the preprocessor's
  text, :func:`~audit_core.data.preprocess.category_text`). A missing value is
  a bin of its own in both kinds.
* **PSI** (:func:`psi`) — ``Σ_b (t_b − s_b) · ln(t_b / s_b)`` over the bins,
  with the weighted shares ``s_b`` (source) and ``t_b`` (target) floored at
  ``floor`` (default 1e-4, not renormalised) so an empty bin stays finite.
* **KS** (numeric, :func:`ks_test`) — the largest gap between the two weighted
  empirical CDFs of the non-missing values; p-value from the two-sided
  Kolmogorov–Smirnov distribution at the effective sizes
  ``n_eff = (Σw)² / Σw²`` (``kstwo.sf(D, round(n·m / (n + m)))``, scipy's
  ``method="asymp"``; equal weights give scipy's value).
* **χ²** (categorical, :func:`chi2_test`) — Pearson's test of homogeneity on
  the 2 × bins table of weighted shares scaled to the effective sizes (no
  continuity correction; empty bins dropped; ``dof = bins − 1``).
* **Wasserstein-1** (numeric, :func:`wasserstein`) — ``∫ |F_s − F_t| dx`` of
  the weighted CDFs of the non-missing values, in the column's units, and
  divided by the weighted source SD (``wasserstein_sd``) so features compare.

:func:`~audit_core.transport.shift_link.feature_shift` runs all of them over the
declared features, adds the domain-classifier AUROCs (:mod:`.domain`) and ranks
the features by PSI.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from audit_core.data.preprocess import category_text
from audit_core.errors import fail


__all__ = ["shift_bins", "psi", "ks_test", "chi2_test", "wasserstein", "weighted_quantile_edges", "n_effective",
           "numeric_values", "check_weights", "numeric_shift", "categorical_shift"]

def check_weights(w, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    w = np.asarray(w, dtype=float)
    if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise fail("TRANSPORT_BAD_OPTION", name="weights", problem=f"expected {n} finite non-negative weights "
                                                                   "with a positive sum")
    return w


def numeric_values(x) -> np.ndarray:
    """Float values of ``x`` (n,); text that is not a number becomes NaN."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "fiu":  # already numbers: the same values, no parsing
        return x.astype(float)
    return pd.to_numeric(pd.Series(np.asarray(x, dtype=object)), errors="coerce").to_numpy(dtype=float)


def _text(x) -> np.ndarray:
    return category_text(pd.Series(np.asarray(x, dtype=object))).to_numpy(dtype=object)


def n_effective(w: np.ndarray) -> float:
    """Kish's effective sample size ``(Σw)² / Σw²`` (``n`` for equal weights)."""
    return float(w.sum() ** 2 / np.dot(w, w)) if w.size and w.sum() > 0 else 0.0


def weighted_quantile_edges(x: np.ndarray, w: np.ndarray, n_bins: int) -> np.ndarray:
    """Inner bin edges: the smallest ``x`` whose weighted CDF reaches ``k / n_bins``, duplicates dropped.

    Equal weights give ``numpy.quantile(x, k / n_bins, method="inverted_cdf")``.
    """
    ok = ~np.isnan(x)
    x, w = x[ok], w[ok]
    if x.size == 0 or w.sum() <= 0:
        return np.empty(0)
    order = np.argsort(x, kind="stable")
    return _edges_sorted(x[order], w[order], w.sum(), n_bins)


def _edges_sorted(xs: np.ndarray, ws: np.ndarray, total: float, n_bins: int) -> np.ndarray:
    """:func:`weighted_quantile_edges` of non-missing values already sorted (stably) with their weights."""
    if xs.size == 0 or total <= 0:
        return np.empty(0)
    cdf = np.cumsum(ws) / total
    qs = np.arange(1, n_bins) / n_bins
    idx = np.minimum(np.searchsorted(cdf, qs - 1e-12, side="left"), xs.size - 1)
    return np.unique(xs[idx])


def shift_bins(source, target, *, kind: str, n_bins: int = 10, source_weight=None):
    """Bin codes of both domains' values.

    Parameters
    ----------
    source, target : array-like, shapes (n,) and (m,)
    kind : {"numeric", "categorical"}
    n_bins : int, default 10
        Numeric only: the number of source-quantile bins asked for (fewer when
        quantiles coincide).
    source_weight : array-like (n,), optional
        Weights of the source records for the quantiles.

    Returns
    -------
    codes_source : ndarray of int, shape (n,)
    codes_target : ndarray of int, shape (m,)
    labels : list of str, length B
        ``"(a, b]"`` intervals or level texts; the last is ``"<missing>"``.
    """
    if kind == "numeric":
        xs, xt = numeric_values(source), numeric_values(target)
        edges = weighted_quantile_edges(xs, check_weights(source_weight, xs.size), n_bins)
        nb = edges.size + 1

        def code(x):
            return np.where(np.isnan(x), nb, np.searchsorted(edges, x, side="left"))

        bounds = np.r_[-np.inf, edges, np.inf]
        labels = [f"({bounds[i]:.6g}, {bounds[i + 1]:.6g}]" for i in range(nb)]
        return code(xs), code(xt), labels + ["<missing>"]
    if kind != "categorical":
        raise fail("TRANSPORT_BAD_OPTION", name="kind", problem=f"expected 'numeric' or 'categorical', got {kind!r}")
    ts, tt = _text(source), _text(target)
    seen = pd.unique(np.concatenate([ts, tt]))
    levels = sorted(str(v) for v in seen if isinstance(v, str))
    index = pd.Index(levels, dtype=object)

    def code_(t):  # a level's position; anything not text (missing) is the last bin
        k = index.get_indexer(t).astype(int)
        return np.where(k < 0, len(levels), k)

    return code_(ts), code_(tt), levels + ["<missing>"]


def _shares(codes: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes, weights=w, minlength=n) / w.sum()


def _psi_codes(cs: np.ndarray, ct: np.ndarray, ws: np.ndarray, wt: np.ndarray, n: int, floor: float) -> float:
    s = np.maximum(_shares(cs, ws, n), floor)
    t = np.maximum(_shares(ct, wt, n), floor)
    return float(np.sum((t - s) * np.log(t / s)))


def _chi2_codes(cs: np.ndarray, ct: np.ndarray, ws: np.ndarray, wt: np.ndarray, n: int) -> tuple[float, float, int]:
    obs = np.vstack([_shares(cs, ws, n) * n_effective(ws), _shares(ct, wt, n) * n_effective(wt)])
    obs = obs[:, obs.sum(axis=0) > 0]
    if obs.shape[1] < 2:
        return 0.0, 1.0, 0
    expected = obs.sum(axis=1, keepdims=True) * obs.sum(axis=0, keepdims=True) / obs.sum()
    stat = float(np.sum((obs - expected) ** 2 / expected))
    dof = obs.shape[1] - 1
    return stat, float(stats.chi2.sf(stat, dof)), dof


def psi(source, target, *, kind: str, n_bins: int = 10, floor: float = 1e-4, source_weight=None,
        target_weight=None) -> float:
    """Population stability index of one feature (see the module docstring for the bins and the floor).

    Examples
    --------
    Source levels a, a, b, b and target a, b, b, b: shares (½, ½, 0) and
    (¼, ¾, 0) over (a, b, <missing>), so PSI = (¼ − ½) ln(½) + (¾ − ½) ln(3/2)
    + 0 ≈ 0.2747:

    >>> round(psi(["a", "a", "b", "b"], ["a", "b", "b", "b"], kind="categorical"), 4)
    0.2747
    """
    cs, ct, labels = shift_bins(source, target, kind=kind, n_bins=n_bins, source_weight=source_weight)
    return _psi_codes(cs, ct, check_weights(source_weight, cs.size), check_weights(target_weight, ct.size),
                      len(labels), floor)


def _cdf_pair(xs, xt, ws, wt):
    ok_s, ok_t = ~np.isnan(xs), ~np.isnan(xt)
    xs, ws, xt, wt = xs[ok_s], ws[ok_s], xt[ok_t], wt[ok_t]
    if xs.size == 0 or xt.size == 0 or ws.sum() <= 0 or wt.sum() <= 0:
        return None
    grid = np.unique(np.concatenate([xs, xt]))

    def cdf(x, w):
        o = np.argsort(x, kind="stable")
        cum = np.cumsum(w[o]) / w.sum()
        return np.r_[0.0, cum][np.searchsorted(x[o], grid, side="right")]

    return grid, cdf(xs, ws), cdf(xt, wt), n_effective(ws), n_effective(wt)


def ks_test(source, target, *, source_weight=None, target_weight=None) -> tuple[float, float]:
    """Weighted two-sample KS statistic ``D`` and its two-sided p-value; ``(nan, nan)`` without values.

    Missing values are left out (PSI counts them).
    """
    xs, xt = numeric_values(source), numeric_values(target)
    pair = _cdf_pair(xs, xt, check_weights(source_weight, xs.size), check_weights(target_weight, xt.size))
    if pair is None:
        return float("nan"), float("nan")
    _, fs, ft, ns, nt = pair
    d = float(np.max(np.abs(fs - ft)))
    return d, _ks_p(d, ns, nt)


def wasserstein(source, target, *, source_weight=None, target_weight=None) -> float:
    """Weighted Wasserstein-1 distance ``∫ |F_s − F_t| dx`` of the non-missing values (column units)."""
    xs, xt = numeric_values(source), numeric_values(target)
    pair = _cdf_pair(xs, xt, check_weights(source_weight, xs.size), check_weights(target_weight, xt.size))
    if pair is None:
        return float("nan")
    grid, fs, ft, _, _ = pair
    return float(np.sum(np.abs(fs - ft)[:-1] * np.diff(grid)))


def chi2_test(source, target, *, source_weight=None, target_weight=None) -> tuple[float, float, int]:
    """Pearson χ² of homogeneity over the categorical bins (missing a bin): ``(statistic, p_value, dof)``."""
    cs, ct, labels = shift_bins(source, target, kind="categorical")
    return _chi2_codes(cs, ct, check_weights(source_weight, cs.size), check_weights(target_weight, ct.size),
                       len(labels))


def _ks_p(d: float, ns: float, nt: float) -> float:
    en = ns * nt / (ns + nt)
    return float(np.clip(stats.distributions.kstwo.sf(d, max(1, round(en))), 0.0, 1.0))


def numeric_shift(source, target, ws: np.ndarray, wt: np.ndarray, *, n_bins: int = 10,
                  floor: float = 1e-4) -> dict:
    """Every statistic of one numeric feature from one stable sort of each domain's values.

    The same values as :func:`shift_bins`, :func:`psi`, :func:`ks_test` and
    :func:`wasserstein` (each of which sorts again), computed together.

    Parameters
    ----------
    source, target : array-like, shapes (n,) and (m,)
    ws, wt : ndarray, shapes (n,) and (m,)
        Checked record weights (:func:`check_weights`).
    n_bins : int, default 10
    floor : float, default 1e-4

    Returns
    -------
    dict
        ``n_bins`` (bins with the missing one), ``psi``, ``missing_source``,
        ``missing_target``, ``statistic`` and ``p_value`` (KS), ``wasserstein``
        and ``sd`` (the weighted source SD of the non-missing values).

    Examples
    --------
    >>> r = numeric_shift([1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0], np.ones(4), np.ones(4), n_bins=2)
    >>> r["statistic"], r["wasserstein"], r["wasserstein"] == wasserstein([1, 2, 3, 4], [3, 4, 5, 6])
    (0.5, 2.0, True)
    """
    xs, xt = numeric_values(source), numeric_values(target)
    ok_s, ok_t = ~np.isnan(xs), ~np.isnan(xt)
    vs, vws, vt, vwt = xs[ok_s], ws[ok_s], xt[ok_t], wt[ok_t]
    os_, ot = np.argsort(vs, kind="stable"), np.argsort(vt, kind="stable")
    ss, sws, st, swt = vs[os_], vws[os_], vt[ot], vwt[ot]
    edges = _edges_sorted(ss, sws, vws.sum(), n_bins) if vs.size else np.empty(0)
    nb = edges.size + 1
    cs = np.where(~ok_s, nb, np.searchsorted(edges, xs, side="left"))
    ct = np.where(~ok_t, nb, np.searchsorted(edges, xt, side="left"))
    out = {"n_bins": nb + 1, "psi": _psi_codes(cs, ct, ws, wt, nb + 1, floor),
           "missing_source": float(np.dot(~ok_s, ws) / ws.sum()), "missing_target": float(np.dot(~ok_t, wt) / wt.sum())}
    if vs.size == 0 or vt.size == 0 or vws.sum() <= 0 or vwt.sum() <= 0:
        out.update(statistic=float("nan"), p_value=float("nan"), wasserstein=float("nan"))
    else:
        both = np.sort(np.concatenate([ss, st]), kind="stable")  # two sorted runs: a merge
        grid = both[np.r_[True, both[1:] != both[:-1]]]
        fs = np.r_[0.0, np.cumsum(sws) / vws.sum()][np.searchsorted(ss, grid, side="right")]
        ft = np.r_[0.0, np.cumsum(swt) / vwt.sum()][np.searchsorted(st, grid, side="right")]
        d = float(np.max(np.abs(fs - ft)))
        out.update(statistic=d, p_value=_ks_p(d, n_effective(vws), n_effective(vwt)),
                   wasserstein=float(np.sum(np.abs(fs - ft)[:-1] * np.diff(grid))))
    ok = ok_s.sum() > 1 and vws.sum() > 0
    out["sd"] = float(np.sqrt(np.cov(vs, aweights=vws, ddof=0))) if ok else np.nan
    return out


def categorical_shift(source, target, ws: np.ndarray, wt: np.ndarray, *, floor: float = 1e-4) -> dict:
    """PSI, χ² and the missing shares of one categorical feature from one coding of its levels.

    The same values as :func:`psi` and :func:`chi2_test` (each of which codes the levels again).

    Returns
    -------
    dict
        ``n_bins``, ``psi``, ``missing_source``, ``missing_target``, ``statistic`` and ``p_value`` (χ²).
    """
    cs, ct, labels = shift_bins(source, target, kind="categorical")
    nb = len(labels)
    stat, p, _ = _chi2_codes(cs, ct, ws, wt, nb)
    return {"n_bins": nb, "psi": _psi_codes(cs, ct, ws, wt, nb, floor), "statistic": stat, "p_value": p,
            "missing_source": float(np.dot(cs == nb - 1, ws) / ws.sum()),
            "missing_target": float(np.dot(ct == nb - 1, wt) / wt.sum())}
