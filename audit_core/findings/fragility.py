"""Sentences about a Fragility audit: brittle and fragile predictions, certificate vs confidence, winner vs stability.

The sentences read :class:`FragilityTables`: the tables and options they need, taken from a
:class:`~audit_core.fragility.audit.FragilityAudit` just computed (the page) or from a saved run's tables
(the report, the CLI), so both say the same thing about the same run. Every number is a fact keyed into those
tables (``certificates``, ``auroc``, ``incremental``, ``models``).

Two words, two meanings, on every page:

* **brittle** — a prediction that changes class under the *donor test* (up to ``donor_groups`` evidence groups
  take another case's values; the label ``donor_any``, the release gate's ``brittle_share_confident``);
* **fragile** — a prediction whose *certificate* flips within the audit depth K (``k* ≤ K``: groups set to
  reference values, most damaging first); the case inspector's "confident and fragile" list holds the confident
  ones.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from audit_core.fragility.audit import AuditOptions, FragilityAudit, stability_leaders
from audit_core.fragility.evaluation import CONFIDENCE
from audit_core.metrics import auroc_by_row
from audit_core.runs.keys import TableKey, read_key
from audit_core.runs.registry import RunRecord
from audit_core.transport.headline import model_words

from .finding import Fact, Finding, Severity, Word, all_read

__all__ = ["FragilityTables", "fragility_findings", "stored_fragility_findings", "certificate_vs_confidence",
           "computed_facts", "LABEL"]

#: The brittle label the sentences use: a flip in any donor-replacement draw.
LABEL = "donor_any"
#: Above this share of flipping confident cases the sentence is a warning (the gate's default rule).
BRITTLE_SHARE = 0.10


@dataclass(frozen=True, kw_only=True)
class FragilityTables:
    """What the Fragility sentences read.

    Attributes
    ----------
    certificates : DataFrame, shape (n_cases, ...)
        Per case: ``p_hat`` and the brittle labels (``donor_any``, ...).
    k_star : ndarray of int, shape (n_cases,)
        Groups removed up to the flip (above ``k`` when none within the depth).
    scores : DataFrame, shape (n_cases, n_scores)
        Per-case scores (``fds`` and the confidence scores), row-aligned with ``certificates``; may be empty.
    auroc, incremental : DataFrame
        The audit's AUROC and incremental-value tables.
    k, donor_groups, n_boot, stress_seed : int
        Audit depth K and the options the sentences quote or resample with.
    complete : bool
        False for a run stopped before its evaluation.
    models : DataFrame
        The model comparison (:func:`~audit_core.fragility.audit.compare_models`); may be empty.
    """

    certificates: pd.DataFrame
    k_star: np.ndarray
    scores: pd.DataFrame
    auroc: pd.DataFrame
    incremental: pd.DataFrame
    k: int
    donor_groups: int
    n_boot: int
    stress_seed: int
    complete: bool = True
    models: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables under the names a saved run stores them (the keys of the sentences' facts)."""
        return {"certificates": self.certificates, "scores": self.scores, "auroc": self.auroc,
                "incremental": self.incremental, "models": self.models}

    @classmethod
    def of_audit(cls, audit: FragilityAudit, models: pd.DataFrame | None = None) -> "FragilityTables":
        """The tables of an audit just computed (and of its model comparison, when given)."""
        o = audit.options
        return cls(certificates=audit.certificates, k_star=np.asarray(audit.batch.k_star), scores=audit.scores,
                   auroc=audit.auroc, incremental=audit.incremental, k=int(audit.batch.protocol.k),
                   donor_groups=int(o.donor_groups), n_boot=int(o.n_boot), stress_seed=int(o.stress_seed),
                   complete=bool(audit.complete), models=models if models is not None else pd.DataFrame())

    @classmethod
    def of_run(cls, tables: Mapping[str, pd.DataFrame], config: Mapping[str, Any]) -> "FragilityTables | None":
        """The tables of a saved ``fragility`` run (``config``: its ``options``, ``protocol`` and ``complete``).

        ``None`` when the run lacks them (saved by another version, or edited). A run saved without its
        ``scores`` table gives no certificate-versus-confidence sentence (its paired interval needs them).
        """
        s = tables.get("certificates")
        options, protocol = config.get("options") or {}, config.get("protocol") or {}
        if s is None or "k_star" not in s or "p_hat" not in s or "k" not in protocol:
            return None

        def usable(name: str) -> pd.DataFrame:  # a table missing a column its sentence reads gives no sentence
            t = tables.get(name)
            return t if t is not None and _STORED_COLUMNS[name] <= set(t.columns) else pd.DataFrame()

        return cls(certificates=s, k_star=s["k_star"].to_numpy(), scores=usable("scores"),
                   auroc=usable("auroc"), incremental=usable("incremental"),
                   k=int(protocol["k"]), donor_groups=int(options.get("donor_groups", AuditOptions.donor_groups)),
                   n_boot=int(options.get("n_boot", AuditOptions.n_boot)),
                   stress_seed=int(options.get("stress_seed", AuditOptions.stress_seed)),
                   complete=bool(config.get("complete", True)), models=usable("models"))


#: Columns of a saved run's tables that the sentences read (:meth:`FragilityTables.of_run`).
_STORED_COLUMNS = {"scores": {"fds"}, "auroc": {"label", "stratum", "score", "auroc"},
                   "models": {"model", "heldout_auroc", "mean_rcma", "mean_fds", "mean_k_star"},
                   "incremental": {"label", "difference", "lo", "hi", "auroc_confidence", "auroc_with_certificate"}}


def _read(t: FragilityTables, name: str, key: TableKey, form: str) -> Fact | None:
    v, _ = read_key(t.tables, key)
    return None if v is None else Fact(name, v, key, form)


def _confident_flips(audit: FragilityTables, confident: float) -> Finding | None:
    """How many confident predictions are *brittle*: they flip under the donor-replacement test."""
    if LABEL not in audit.certificates:
        return None
    conf = TableKey("certificates", "p_hat", (("p_hat", ">=", confident),), "count")
    facts = [_read(audit, "flipped", conf.and_(LABEL, "=", True), "int"), _read(audit, "confident", conf, "int"),
             _read(audit, "share", TableKey("certificates", LABEL, (("p_hat", ">=", confident),), "share"), "pct")]
    if facts[1] is None or not facts[1].value or facts[2] is None:
        return None
    share = facts[2]
    groups = audit.donor_groups
    facts += [Fact("cut", confident, None, "g"), Fact("groups", groups, None, "int")]
    template = ("{flipped} of {confident} confident predictions (probability ≥ {cut}; {share}) are {w0}: they "
                "change class when up to {groups} evidence group" + ("s take" if groups != 1 else " takes")
                + " another case's values (the donor test).")
    sev: Severity = "warning" if float(share.value) > BRITTLE_SHARE else "info"
    return Finding.of(kind="confident_flips", severity=sev, template=template, facts=facts,
                      words=(Word("brittle", "donor_count", ("flipped",)),),
                      detail=f"{LABEL}: any donor draw flips the case; confident: p̂ ≥ {confident:g}")


def _certificate_flips(audit: FragilityTables, confident: float) -> Finding | None:
    """How many predictions are *fragile*: their certificate flips within the audit depth K (k* ≤ K)."""
    k = audit.k
    within = TableKey("certificates", "k_star", (("k_star", "<=", k),), "count")
    facts = [_read(audit, "fragile", within, "int"), _read(audit, "cases", TableKey("certificates", "k_star", (), "count"),
                                                           "int"),
             _read(audit, "confident_fragile", within.and_("p_hat", ">=", confident), "int")]
    if any(f is None for f in facts):
        return None
    facts += [Fact("k", k, None, "int"), Fact("cut", confident, None, "g")]
    template = ("{fragile} of {cases} audited predictions are {w0}: they flip when at most {k} evidence groups are "
                "set to reference values, one group at a time in the most damaging order; {confident_fragile} of "
                "them are confident (probability ≥ {cut}), the case inspector's 'confident and fragile' list.")
    return Finding.of(kind="certificate_flips", severity="info", template=template, facts=facts,
                      words=(Word("fragile", "certificate_count", ("fragile",)),), detail="k* ≤ K (certificate)")


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
    auroc, lo_col, hi_col = (t[c].astype(float) for c in ("auroc", "lo", "hi"))
    conf_names = [c for c in CONFIDENCE if c in t.index and c in audit.scores and np.isfinite(auroc[c])]
    best = max(conf_names, key=lambda c: auroc[c])
    y = audit.certificates[label].to_numpy(dtype=bool)
    S = audit.scores[["fds", best]].to_numpy(dtype=float).T
    rng = np.random.default_rng(np.random.SeedSequence([int(audit.stress_seed), 7331]))
    boot = rng.integers(0, len(y), size=(max(int(audit.n_boot), 1), len(y)))
    vals = auroc_by_row(y[boot][None], S[:, boot])
    diff = vals[0] - vals[1]
    lo, hi = (np.nanquantile(diff, [0.025, 0.975]) if np.isfinite(diff).any() else (np.nan, np.nan))
    return dict(fds=float(auroc["fds"]), fds_lo=float(lo_col["fds"]), fds_hi=float(hi_col["fds"]),
                confidence=float(auroc[best]), confidence_lo=float(lo_col[best]),
                confidence_hi=float(hi_col[best]), confidence_score=best,
                difference=float(auroc["fds"] - auroc[best]), lo=float(lo), hi=float(hi))


def _interval_words(lo: str = "lo", hi: str = "hi", *, up: str, down: str, flat: str, lo_v: float,
                    hi_v: float) -> Word:
    """The word a paired difference licenses: ``up`` above zero, ``down`` below, ``flat`` when it spans zero."""
    if lo_v > 0:
        return Word(up, "above_zero", (lo,))
    if hi_v < 0:
        return Word(down, "below_zero", (hi,))
    return Word(flat, "spans_zero", (lo, hi))


def _ranking(audit: FragilityTables) -> Finding | None:
    if audit.auroc.empty or LABEL not in audit.certificates or not audit.certificates[LABEL].any() \
            or audit.certificates[LABEL].all() or "fds" not in audit.scores \
            or not any(c in audit.scores for c in CONFIDENCE):
        return None
    c = certificate_vs_confidence(audit)
    auc = TableKey.of("auroc", "auroc", label=LABEL, stratum="all")
    comp = "computed:certificate_vs_confidence"
    facts = [_read(audit, "fds", auc.and_("score", "=", "fds"), "num2"),
             _read(audit, "conf", auc.and_("score", "=", c["confidence_score"]), "num2")]
    if any(f is None for f in facts):
        return None
    facts += [Fact(n, c[col], TableKey(comp, col), form) for n, col, form in
              (("diff", "difference", "signed2"), ("lo", "lo", "num2"), ("hi", "hi", "num2"))]
    how = _interval_words(up="better", down="worse", flat="detectably better or worse", lo_v=float(c["lo"]),
                          hi_v=float(c["hi"]))
    verb = "does not rank {w1} cases {w0}" if how.condition == "spans_zero" else "ranks {w1} cases {w0}"
    template = ("On this model the fragility certificate " + verb + " than plain confidence (AUROC {fds} vs {conf}, "
                "difference {diff}, 95% interval {lo} to {hi}).")
    sev: Severity = "good" if how.condition == "above_zero" else "warning" if how.condition == "below_zero" else "info"
    return Finding.of(kind="certificate_vs_confidence", severity=sev, template=template, facts=facts,
                      words=(how, Word("brittle", "donor_count", ("fds",))),
                      detail=f"AUROC of FDS vs {c['confidence_score']} for {LABEL}; paired bootstrap over cases")


def _incremental(audit: FragilityTables) -> Finding | None:
    inc = audit.incremental
    if inc.empty or "label" not in inc or LABEL not in set(inc["label"]):
        return None
    key = TableKey.of("incremental", "difference", label=LABEL)
    facts = all_read([_read(audit, n, TableKey(key.table, col, key.where), form) for n, col, form in
                      (("a", "auroc_confidence", "num2"), ("b", "auroc_with_certificate", "num2"),
                       ("diff", "difference", "signed2"), ("lo", "lo", "num2"), ("hi", "hi", "num2"))])
    if facts is None:
        return None
    how = _interval_words(up="improves", down="lowers", flat="is not detectable", lo_v=float(facts[3].value),
                          hi_v=float(facts[4].value))
    if how.condition == "spans_zero":
        template = ("Adding the certificate to confidence gives a cross-validated AUROC for {w1} cases of {b}, "
                    "against {a} with confidence alone: the difference {diff} (95% interval {lo} to {hi}) {w0}.")
    else:
        template = ("Adding the certificate to confidence {w0} the cross-validated AUROC for {w1} cases from {a} to "
                    "{b} (difference {diff}, 95% interval {lo} to {hi}).")
    return Finding.of(kind="incremental_value", severity="good" if how.condition == "above_zero" else "info",
                      template=template, facts=facts, words=(how, Word("brittle", "donor_count", ("a",))))


#: A stability measure in plain words (what its lead means) and its symbol.
_MEASURES = {"mean_rcma": ("has the margins that collapse most slowly as evidence is removed", "mean RCMA", "lowest"),
             "mean_fds": ("has the lowest fragility score", "mean FDS", "lowest"),
             "mean_k_star": ("needs the most evidence groups removed to flip a prediction", "mean k*", "highest")}


def _models(audit: FragilityTables) -> Finding | None:
    """The nominal winner (best held-out AUROC) against the stability measures; "most stable" only when all agree."""
    m = audit.models
    if m.empty or len(m) < 2:
        return None
    names = [str(x) for x in m["model"]]
    facts: dict[str, Fact] = {}
    for i, name in enumerate(names):  # slots by position: model names may hold ':' or '.'
        for col, short in (("heldout_auroc", "auroc"), ("mean_rcma", "rcma"), ("mean_fds", "fds"),
                           ("mean_k_star", "k")):
            f = _read(audit, f"{short}{i}", TableKey.of("models", col, model=name), "num3" if short == "auroc"
                      else "num2")
            if f is None:
                return None
            facts[f.name] = f
    w = max(range(len(names)), key=lambda i: float(facts[f"auroc{i}"].value))
    leaders = {col: names.index(model) for col, model in stability_leaders(m).items()}
    labels = {f"name{i}": model_words(n) for i, n in enumerate(names)}
    if len(set(leaders.values())) == 1 and len(leaders) == len(_MEASURES):
        b = next(iter(leaders.values()))
        o = w if b != w else next(i for i in range(len(names)) if i != w)
        order = [b] + [i for i in range(len(names)) if i != b]
        word = Word("most stable", "most_stable", tuple(f"{s}{i}" for i in order for s in ("rcma", "fds", "k")))
        measures = (f"its margins collapse most slowly as evidence is removed ({{rcma{b}}} vs {{rcma{o}}}), it has "
                    f"the lowest fragility score ({{fds{b}}} vs {{fds{o}}}) and it needs the most evidence groups "
                    f"removed to flip a prediction ({{k{b}}} vs {{k{o}}} on average)")
        if b == w:
            template = (f"The model that ranks cases best ({{name{w}}}, held-out AUROC {{auroc{w}}}) is also the "
                        f"{{w0}}, against {{name{o}}}: {measures}.")
        else:
            template = (f"The model that ranks cases best ({{name{w}}}, held-out AUROC {{auroc{w}}}) is not the "
                        f"{{w0}}; {{name{b}}} is: {measures}.")
        return Finding.of(kind="winner_vs_stable", severity="good" if b == w else "warning", template=template,
                          facts=facts.values(), words=(word,), labels=labels, detail=_stability_detail(m))
    parts = []
    for col, (plain, _symbol, _) in _MEASURES.items():
        lead = leaders[col]
        vs = w if lead != w else next(i for i in range(len(names)) if i != w)
        short = {"mean_rcma": "rcma", "mean_fds": "fds", "mean_k_star": "k"}[col]
        parts.append(f"{{name{lead}}} {plain} ({{{short}{lead}}} vs {{{short}{vs}}} for {{name{vs}}})")
    template = (f"The model that ranks cases best is {{name{w}}} (held-out AUROC {{auroc{w}}}), and the stability "
                "measures disagree: " + "; ".join(parts) + ".")
    return Finding.of(kind="winner_vs_stable", severity="warning", template=template, facts=facts.values(),
                      labels=labels, detail=_stability_detail(m))


def _stability_detail(models: pd.DataFrame) -> str:
    """The stability measures by their symbols: which model leads each (``lowest mean RCMA: lightgbm``)."""
    leaders = stability_leaders(models)
    return "; ".join(f"{_MEASURES[c][2]} {_MEASURES[c][1]}: {m}" for c, m in leaders.items())


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
    return _findings(FragilityTables.of_audit(audit, models), confident=confident)


def stored_fragility_findings(tables: Mapping[str, pd.DataFrame], config: Mapping[str, Any], *,
                              confident: float = 0.8) -> list[Finding]:
    """The findings of a saved ``fragility`` run (:meth:`FragilityTables.of_run`): the page's sentences, with the
    model comparison when the run stores its ``models`` table; ``[]`` when the run lacks the tables."""
    view = FragilityTables.of_run(tables, config)
    return [] if view is None else _findings(view, confident=confident)


def fragility_config(record: RunRecord) -> Mapping[str, Any]:
    """The options a saved fragility run's sentences read (``manifest["fragility_config"]``, else its config)."""
    return (record.manifest or {}).get("fragility_config") or record.config or {}


def computed_facts(record: RunRecord) -> dict[str, float]:
    """The certificate-versus-confidence numbers of a saved fragility run, recomputed from its stored tables with
    its stored seed (the checker's ``computed:certificate_vs_confidence`` facts); ``{}`` when it lacks them."""
    view = FragilityTables.of_run(record.tables, fragility_config(record))
    if view is None or view.auroc.empty or view.scores.empty:
        return {}
    return {k: v for k, v in certificate_vs_confidence(view).items() if not isinstance(v, str)}


def _findings(audit: FragilityTables, *, confident: float) -> list[Finding]:
    parts = [_confident_flips(audit, confident), _certificate_flips(audit, confident)]
    if audit.complete:
        parts += [_ranking(audit), _incremental(audit), _models(audit)]
    return [f for f in parts if f is not None]
