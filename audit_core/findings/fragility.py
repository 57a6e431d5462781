"""Sentences about a Fragility audit: confident flips, certificate vs confidence, winner vs most stable.

The sentences read :class:`FragilityTables`: the tables and options they need, taken from a
:class:`~audit_core.fragility.audit.FragilityAudit` just computed (the page) or from a saved run's tables
(the report, the CLI), so both say the same thing about the same run.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit_core.fragility.audit import AuditOptions, FragilityAudit
from audit_core.fragility.evaluation import CONFIDENCE, auroc

from .finding import Finding, interval, num, pct, signed

__all__ = ["FragilityTables", "fragility_findings", "stored_fragility_findings", "certificate_vs_confidence"]

#: The brittle label the sentences use: a flip in any donor-replacement draw.
LABEL = "donor_any"
#: Above this share of flipping confident cases the sentence is a warning (the gate's default rule).
BRITTLE_SHARE = 0.10


@dataclass(frozen=True, kw_only=True)
class FragilityTables:
    """What the Fragility sentences read.

    Attributes
    ----------
    summary : DataFrame, shape (n_cases, ...)
        Per case: ``p_hat`` and the brittle labels (``donor_any``, ...).
    k_star : ndarray of int, shape (n_cases,)
        Groups removed up to the flip (above ``k`` when none within the depth).
    scores : DataFrame, shape (n_cases, n_scores)
        Per-case scores (``fds`` and the confidence scores), row-aligned with ``summary``; may be empty.
    auroc, incremental : DataFrame
        The audit's AUROC and incremental-value tables.
    k, donor_groups, n_boot, stress_seed : int
        Audit depth K and the options the sentences quote or resample with.
    complete : bool
        False for a run stopped before its evaluation.
    """

    summary: pd.DataFrame
    k_star: np.ndarray
    scores: pd.DataFrame
    auroc: pd.DataFrame
    incremental: pd.DataFrame
    k: int
    donor_groups: int
    n_boot: int
    stress_seed: int
    complete: bool = True

    @classmethod
    def of_audit(cls, audit: FragilityAudit) -> "FragilityTables":
        """The tables of an audit just computed."""
        o = audit.options
        return cls(summary=audit.summary, k_star=np.asarray(audit.batch.k_star), scores=audit.scores,
                   auroc=audit.auroc, incremental=audit.incremental, k=int(audit.batch.protocol.k),
                   donor_groups=int(o.donor_groups), n_boot=int(o.n_boot), stress_seed=int(o.stress_seed),
                   complete=bool(audit.complete))

    @classmethod
    def of_run(cls, tables: Mapping[str, pd.DataFrame], config: Mapping[str, Any]) -> "FragilityTables | None":
        """The tables of a saved ``fragility`` run (``config``: its ``options``, ``protocol`` and ``complete``).

        ``None`` when the run lacks them (saved by another version, or edited). A run saved without its
        ``scores`` table gives no certificate-versus-confidence sentence (its paired interval needs them).
        """
        s = tables.get("summary")
        options, protocol = config.get("options") or {}, config.get("protocol") or {}
        if s is None or "k_star" not in s or "p_hat" not in s or "k" not in protocol:
            return None

        def usable(name: str) -> pd.DataFrame:  # a table missing a column its sentence reads gives no sentence
            t = tables.get(name)
            return t if t is not None and _STORED_COLUMNS[name] <= set(t.columns) else pd.DataFrame()

        return cls(summary=s, k_star=s["k_star"].to_numpy(), scores=usable("scores"),
                   auroc=usable("auroc"), incremental=usable("incremental"),
                   k=int(protocol["k"]), donor_groups=int(options.get("donor_groups", AuditOptions.donor_groups)),
                   n_boot=int(options.get("n_boot", AuditOptions.n_boot)),
                   stress_seed=int(options.get("stress_seed", AuditOptions.stress_seed)),
                   complete=bool(config.get("complete", True)))


#: Columns of a saved run's tables that the sentences read (:meth:`FragilityTables.of_run`).
_STORED_COLUMNS = {"scores": {"fds"}, "auroc": {"label", "stratum", "score", "auroc"},
                   "incremental": {"label", "difference", "lo", "hi", "auroc_confidence", "auroc_with_certificate"}}


def _confident_flips(audit: FragilityTables, confident: float) -> Finding | None:
    s = audit.summary
    if LABEL not in s:
        return None
    conf = s["p_hat"].to_numpy() >= confident
    n_conf = int(conf.sum())
    n_flip = int(s.loc[conf, LABEL].astype(bool).sum())
    share = n_flip / n_conf if n_conf else float("nan")
    groups = audit.donor_groups
    text = (f"{n_flip} of {n_conf} confident predictions (p̂ ≥ {confident:g}) flip when up to {groups} evidence "
            f"group{'s' if groups != 1 else ''} take another case's values.")
    sev = "warning" if n_conf and share > BRITTLE_SHARE else "info"
    return Finding(text=text, numbers={"flipped": n_flip, "confident": n_conf, "share": share, "groups": groups},
                   severity=sev, kind="confident_flips")


def _certificate_flips(audit: FragilityTables) -> Finding:
    k = audit.k
    ks = np.asarray(audit.k_star)
    n_within = int((ks <= k).sum())
    share = n_within / len(ks) if len(ks) else float("nan")
    text = (f"{n_within} of {len(ks)} audited predictions ({pct(share)}) flip when at most {k} evidence groups "
            f"are set to the reference values, one group at a time in the most damaging order.")
    return Finding(text=text, numbers={"flipped": n_within, "cases": len(ks), "share": share, "k": k},
                   severity="info", kind="certificate_flips")


def certificate_vs_confidence(audit: FragilityAudit | FragilityTables, *, label: str = LABEL) -> dict[str, float | str]:
    """AUROC of FDS and of the best confidence score for brittle cases, and their paired bootstrap difference.

    The confidence score is the best-ranking one of the confidence scores (so
    the certificate must beat the strongest plain alternative). The difference
    interval is a percentile bootstrap over cases, both scores on the same
    resamples (``options.n_boot`` draws, seed ``options.stress_seed``).

    Returns
    -------
    dict with ``fds, fds_lo, fds_hi, confidence, confidence_lo, confidence_hi, confidence_score,
    difference, lo, hi``.
    """
    if not isinstance(audit, FragilityTables):
        audit = FragilityTables.of_audit(audit)
    t = audit.auroc
    t = t[(t["label"] == label) & (t["stratum"] == "all")].set_index("score")
    conf_names = [c for c in CONFIDENCE if c in t.index and c in audit.scores and np.isfinite(t.loc[c, "auroc"])]
    best = max(conf_names, key=lambda c: t.loc[c, "auroc"])
    y = audit.summary[label].to_numpy(dtype=bool)
    S = audit.scores[["fds", best]].to_numpy(dtype=float).T
    rng = np.random.default_rng(np.random.SeedSequence([int(audit.stress_seed), 7331]))
    boot = rng.integers(0, len(y), size=(max(int(audit.n_boot), 1), len(y)))
    vals = auroc(y[boot][None], S[:, boot])
    diff = vals[0] - vals[1]
    lo, hi = (np.nanquantile(diff, [0.025, 0.975]) if np.isfinite(diff).any() else (np.nan, np.nan))
    return dict(fds=float(t.loc["fds", "auroc"]), fds_lo=float(t.loc["fds", "lo"]), fds_hi=float(t.loc["fds", "hi"]),
                confidence=float(t.loc[best, "auroc"]), confidence_lo=float(t.loc[best, "lo"]),
                confidence_hi=float(t.loc[best, "hi"]), confidence_score=best,
                difference=float(t.loc["fds", "auroc"] - t.loc[best, "auroc"]), lo=float(lo), hi=float(hi))


def _ranking(audit: FragilityTables) -> Finding | None:
    if audit.auroc.empty or LABEL not in audit.summary or not audit.summary[LABEL].any() \
            or audit.summary[LABEL].all() or "fds" not in audit.scores \
            or not any(c in audit.scores for c in CONFIDENCE):
        return None
    c = certificate_vs_confidence(audit)
    nums = f"AUROC {num(c['fds'])} vs {num(c['confidence'])}, difference {signed(c['difference'])}" \
           f"{interval(c['lo'], c['hi'])}"
    if c["difference"] <= 0:
        text = f"On this model the certificate does not rank brittle cases better than plain confidence ({nums})."
        sev = "warning"
    elif c["lo"] > 0:
        text = f"On this model the certificate ranks brittle cases better than plain confidence ({nums})."
        sev = "good"
    else:
        text = (f"On this model the certificate ranks brittle cases slightly better than plain confidence, "
                f"but the interval includes no difference ({nums}).")
        sev = "info"
    numbers = {k: v for k, v in c.items() if not isinstance(v, str)}
    return Finding(text=text, numbers=numbers, severity=sev, kind="certificate_vs_confidence")


def _incremental(audit: FragilityTables) -> Finding | None:
    inc = audit.incremental
    if inc.empty or "label" not in inc or LABEL not in set(inc["label"]):
        return None
    r = inc.set_index("label").loc[LABEL]
    if not np.isfinite(r["difference"]):
        return None
    helps = r["lo"] > 0
    text = (f"Adding the certificate to confidence {'improves' if helps else 'changes'} the cross-validated "
            f"AUROC for brittle cases from {num(r['auroc_confidence'])} to {num(r['auroc_with_certificate'])} "
            f"(difference {signed(r['difference'])}{interval(r['lo'], r['hi'])}).")
    return Finding(text=text, severity="good" if helps else "info", kind="incremental_value",
                   numbers={k: float(r[k]) for k in ("auroc_confidence", "auroc_with_certificate", "difference",
                                                     "lo", "hi")})


def _models(models: pd.DataFrame | None) -> Finding | None:
    if models is None or len(models) < 2:
        return None
    win = models.loc[models["heldout_auroc"].idxmax()]
    stable = models.loc[models["mean_rcma"].idxmin()]
    numbers = {"winner_auroc": float(win["heldout_auroc"]), "winner_rcma": float(win["mean_rcma"]),
               "stable_rcma": float(stable["mean_rcma"]), "stable_auroc": float(stable["heldout_auroc"])}
    if win["model"] == stable["model"]:
        text = (f"The model with the best AUROC ({win['model']}, {num(win['heldout_auroc'], 3)}) is also the most "
                f"stable (mean RCMA {num(win['mean_rcma'])}).")
        return Finding(text=text, numbers=numbers, severity="good", kind="winner_vs_stable")
    text = (f"The model with the best AUROC ({win['model']}, {num(win['heldout_auroc'], 3)}) is not the most stable "
            f"({stable['model']}, mean RCMA {num(stable['mean_rcma'])} vs {num(win['mean_rcma'])}).")
    return Finding(text=text, numbers=numbers, severity="warning", kind="winner_vs_stable")


def fragility_findings(audit: FragilityAudit, *, models: pd.DataFrame | None = None,
                       confident: float = 0.8) -> list[Finding]:
    """Plain-language findings of a Fragility audit.

    Parameters
    ----------
    audit : FragilityAudit
    models : DataFrame, optional
        The table of :func:`audit_core.fragility.audit.compare_models`
        (``model, heldout_auroc, mean_rcma, ...``); with two or more models a
        sentence compares the nominal winner with the most stable model.
    confident : float, default 0.8
        p̂ at or above which a prediction counts as confident.

    Returns
    -------
    list of Finding
        3–5 sentences (fewer for a run stopped before its evaluation).
    """
    return _findings(FragilityTables.of_audit(audit), models=models, confident=confident)


def stored_fragility_findings(tables: Mapping[str, pd.DataFrame], config: Mapping[str, Any], *,
                              confident: float = 0.8) -> list[Finding]:
    """The findings of a saved ``fragility`` run (:meth:`FragilityTables.of_run`): the page's sentences but the
    model comparison, which is not saved; ``[]`` when the run lacks the tables."""
    view = FragilityTables.of_run(tables, config)
    return [] if view is None else _findings(view, models=None, confident=confident)


def _findings(audit: FragilityTables, *, models: pd.DataFrame | None, confident: float) -> list[Finding]:
    parts = [_confident_flips(audit, confident), _certificate_flips(audit)]
    if audit.complete:
        parts += [_ranking(audit), _incremental(audit), _models(models)]
    return [f for f in parts if f is not None]
