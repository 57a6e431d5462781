"""Sentences about a Transport result, all on its headline slice: the operating rule, conformal class coverage,
the calibration and ranking changes, the verdict tally and the feature shift.

Every number is a :class:`~audit_core.findings.finding.Fact` read through a
:class:`~audit_core.runs.keys.TableKey` of the run's tables (``results``,
``verdicts``, ``feature_shift``, ``domain_classifier``) on the headline slice
(:mod:`audit_core.transport.headline`): the same key the release gate reads,
so the report's sentences and the gate quote one value. Every sentence names
the slice in words.
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from audit_core.runs.keys import TableKey, headline_key, read_key
from audit_core.transport.headline import HeadlineSlice, recorded_headline
from audit_core.transport.results import TransportResult

from .cases import class_words
from .contract import printed_value
from .finding import Fact, Finding, Word, all_read, and_list
from .shift import shift_finding

__all__ = ["transport_findings", "result_tables", "ChangeWords"]

#: Words for a verdict of a paired change (the verdict column's values).
VERDICT_WORDS = {"transport-stable": "within", "transport-sensitive": "beyond", "indeterminate": "undecided against"}


def result_tables(result: TransportResult) -> dict[str, pd.DataFrame]:
    """The result's tables under the names a saved run stores them (``results``, ``verdicts``, ``refit_summary``, extras)."""
    out = {"results": result.table, "verdicts": result.verdicts, "refit_summary": result.refit_summary}
    out.update({k: v for k, v in result.extras.items() if isinstance(v, pd.DataFrame)})
    return out


class _Reader:
    """Facts of one headline slice: values of the result tables, each with its key."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], headline: HeadlineSlice) -> None:
        self.tables, self.h = tables, headline

    def read(self, name: str, key: TableKey, form: str) -> Fact | None:
        v, _ = read_key(self.tables, key)
        return None if v is None else Fact(name, v, key, form)

    def value(self, name: str, form: str, *, analysis: str, metric: str, domain: str, alpha=None,
              selection_rate=None) -> Fact | None:
        """Mean over refits of one clean value of the slice (the release gate's key for the OOD ECE)."""
        return self.read(name, headline_key(self.h, analysis=analysis, metric=metric, domain=domain, alpha=alpha,
                                            selection_rate=selection_rate), form)

    def threshold(self, rate: float) -> Fact | None:
        """Mean over refits of the confidence threshold fitted on the source selection partition for ``rate``."""
        f = self.h.filters()
        return self.read("threshold", TableKey.of(
            "results", "value", how="refit_mean", analysis="selective", target_definition=f["target_definition"],
            domain="source", model=f["model"], mapping=f["mapping"], metric="threshold", selection_rate=rate), "num3")

    def verdict(self, analysis: str, metric: str, *, digits: int = 2, alpha=None, selection_rate=None
                ) -> dict[str, Fact] | None:
        """The paired change's row of ``verdicts``: change, interval ends, tolerance and verdict."""
        f = self.h.filters()
        base = TableKey.of("verdicts", "delta", model=f["model"], mapping=f["mapping"], weighting=f["weighting"],
                           analysis=analysis, metric=metric, alpha=alpha, selection_rate=selection_rate)
        out = {}
        for col, name, form in (("delta", "change", f"signed{digits}"), ("ci_low", "lo", f"num{digits}"),
                                ("ci_high", "hi", f"num{digits}"), ("tolerance", "tolerance", f"num{digits}"),
                                ("verdict", "verdict", "text"), ("direction", "direction", "text")):
            fact = self.read(name, TableKey(base.table, col, base.where, "one"), form)
            if fact is None:
                return None
            out[name] = fact
        return out


class ChangeWords:
    """The words of a paired change: its direction (by its interval) and its verdict against the tolerance."""

    @staticmethod
    def direction(rises: str = "rises", falls: str = "falls") -> tuple[Word, Word, Word]:
        return (Word(rises, "above_zero", ("lo",)), Word(falls, "below_zero", ("hi",)),
                Word("does not change detectably", "spans_zero", ("lo", "hi")))

    @classmethod
    def pick(cls, v: Mapping[str, Fact], *, rises: str = "rises", falls: str = "falls") -> Word:
        up, down, flat = cls.direction(rises, falls)
        return up if float(v["lo"].value) > 0 else down if float(v["hi"].value) < 0 else flat

    @staticmethod
    def verdict(v: Mapping[str, Fact]) -> Word:
        label = str(v["verdict"].value)
        return Word(VERDICT_WORDS.get(label, label), f"verdict:{label}", ("verdict",))


def _where(result_cfg: Mapping) -> str:
    tv = result_cfg.get("target_value")
    return f"On {tv}" if tv is not None and not result_cfg.get("single_domain") else "On the target domain"


def _selective(r: _Reader, where: str, rate: float) -> Finding | None:
    kw = dict(selection_rate=rate)
    facts = all_read([r.value(f"{q}_{d}", "pct", analysis="selective", metric=q, domain=d, **kw)
                      for q in ("rate", "risk") for d in ("id", "ood")])
    v = r.verdict("selective", "risk", selection_rate=rate)
    thr = r.threshold(rate)
    if facts is None or v is None or thr is None:
        return None
    rate_id, rate_ood = facts[0], facts[1]
    same = rate_id.printed == rate_ood.printed
    answers = (Word("as on the source test", "same_printed", ("rate_ood", "rate_id")) if same
               else Word("instead of", "differ_printed", ("rate_ood", "rate_id")))
    risk = ChangeWords.pick({"lo": v["lo"], "hi": v["hi"]})
    words = (Word("threshold", "reads_threshold", ("threshold",)), answers, risk)
    answered = ("answers {rate_ood} of cases, {w1} ({rate_id})" if same
                else "answers {rate_ood} of cases {w1} {rate_id} on the source test")
    move = ("{w2} from {risk_id} to {risk_ood} (" if risk.condition != "spans_zero"
            else "{w2} ({risk_id} → {risk_ood}; ")
    template = ("{where} ({slice}), the threshold that answers {rate} of source cases (confidence ≥ {threshold}) "
                + answered + ", and the error rate among the answered cases " + move
                + "change {change}, 95% interval {lo} to {hi}).")
    facts = [thr, Fact("rate", float(rate), None, "pct"), *facts, *v.values()]
    sensitive = v["verdict"].value == "transport-sensitive"
    return Finding.of(kind="selective_threshold", severity="warning" if sensitive else "info", template=template,
                      facts=facts, words=words, labels={"where": where, "slice": r.h.describe()},
                      detail=f"selective rate and risk at s = {rate:g}, τ fitted on the source selection partition")


def _conformal(r: _Reader, where: str, alpha: float, classes: tuple[str, ...], multiclass: bool) -> Finding | None:
    prefix = "lac:" if multiclass else ""
    cov = {(m, c): r.value(f"{m}{c}", "num2", analysis=f"conformal_{meth}", metric=f"{prefix}coverage_class{c}",
                            domain="ood", alpha=alpha)
           for m, meth in (("m", "marginal"), ("l", "label_conditional")) for c in range(len(classes))}
    size = {m: r.value(f"size_{m}", "num2", analysis=f"conformal_{meth}", metric=f"{prefix}mean_set_size",
                       domain="ood", alpha=alpha) for m, meth in (("m", "marginal"), ("l", "label_conditional"))}
    read = all_read([*cov.values(), *size.values()])
    if read is None:
        return None
    cov_read = dict(zip(cov, read[:len(cov)], strict=True))
    n = len(classes)
    c = min(range(n), key=lambda k: float(cov_read[("m", k)].value))  # the worst class under marginal sets
    w = min(range(n), key=lambda k: float(cov_read[("l", k)].value))  # the worst class under label-conditional sets
    m_c, l_c, l_w = (Fact(name, f.value, f.key, "num2") for name, f in
                     (("m_c", cov_read[("m", c)]), ("l_c", cov_read[("l", c)]), ("l_w", cov_read[("l", w)])))
    target = Fact("target", 1 - alpha, None, "pct")
    facts = [m_c, l_c, l_w, target, *read[len(cov):]]
    labels = {"where": where, "slice": r.h.describe(), "cls": classes[c], "cls_w": classes[w]}
    sizes = " Mean set size goes from {size_m} to {size_l}."
    if float(m_c.value) >= 1 - alpha:
        words = (Word("reach", "reaches", ("m_c", "target")),)
        template = ("{where} ({slice}), marginal conformal sets {w0} the {target} coverage target for every class "
                    "(the lowest, {cls}, at {m_c}).")
        return Finding.of(kind="conformal_class_coverage", severity="good", template=template,
                          facts=[m_c, target], words=words, labels=labels)
    if float(l_c.value) >= 1 - alpha and printed_value(l_w) > printed_value(m_c):
        words = (Word("restore", "restores", ("l_c", "l_w", "target", "m_c")),)
        template = ("{where} ({slice}), label-conditional sets {w0} the coverage of {cls} from {m_c} to {l_c} "
                    "(target {target}); the worst class is now {cls_w} at {l_w}." + sizes)
        all_reach = float(l_w.value) >= 1 - alpha  # else the worst class is better, yet still short of the target
        return Finding.of(kind="conformal_class_coverage", severity="good" if all_reach else "info",
                          template=template, facts=facts, words=words, labels=labels)
    head = "{where} ({slice}), marginal conformal sets cover {cls} at {m_c}, below the {target} target; "
    if w == c:  # the same class stays the worst: say so, not "a class … {cls}" as if it were another
        words = (Word("still below", "below", ("l_c", "target")),)
        template = head + "label-conditional sets give it {l_c}, {w0} the target." + sizes
    else:
        words = (Word("leave a class below", "below", ("l_w", "target")),)
        template = head + "label-conditional sets give it {l_c}, and still {w0} the target: {cls_w} at {l_w}." + sizes
    return Finding.of(kind="conformal_class_coverage", severity="warning", template=template, facts=facts,
                      words=words, labels=labels)


def _change(r: _Reader, where: str, metric: str) -> Finding | None:
    """The calibration (ECE) or ranking (AUROC; accuracy for a multi-class run) change, in plain words first."""
    mc, calibration = r.h.multiclass, metric == "calibration"
    name = r.h.estimator if calibration else ("accuracy" if mc else "auroc")
    ood = r.value("ood", "num3", analysis="metrics", metric=name, domain="ood")
    idv = r.value("id", "num3", analysis="metrics", metric=name, domain="id")
    v = r.verdict("metrics", name, digits=3)
    if ood is None or idv is None or v is None:
        return None
    move = ChangeWords.pick(v)
    flat = move.condition == "spans_zero"
    change = " (change {change}, 95% interval {lo} to {hi}, {w1} the tolerance of ±{tolerance})."
    if calibration:
        est = f"{'top-label ECE' if mc else 'ECE'} {{ood}}, {r.h.n_bins} equal-width bins"
        template = ("{where} ({slice}), the model's stated probabilities are off by {ood_pts} points on average ("
                    + est + ("), against {id} on the source test: the calibration error {w0}" if flat
                             else "): the calibration error {w0} from {id} on the source test") + change)
    else:
        what = "accuracy (the share whose most probable class is right)" if mc else "the ranking quality (AUROC)"
        template = ("{where} ({slice}), " + what + (" is {ood}, against {id} on the source test: it {w0}" if flat
                                                     else " {w0} from {id} on the source test to {ood}") + change)
    facts = [ood, idv, *v.values()]
    if calibration:
        facts.append(Fact("ood_pts", ood.value, ood.key, "points"))
    worse = v["verdict"].value == "transport-sensitive" and v["direction"].value == "worse"
    better = v["verdict"].value == "transport-sensitive" and v["direction"].value == "better"
    return Finding.of(kind=f"change_{'ece' if calibration else 'auroc'}",
                      severity="warning" if worse else "good" if better else "info", template=template, facts=facts,
                      words=(move, ChangeWords.verdict(v)), labels={"where": where, "slice": r.h.describe()},
                      detail=f"{name}: OOD − ID paired over refits"
                             + (f"; {r.h.estimator_words}" if calibration else ""))


def _tally(r: _Reader) -> Finding | None:
    f = r.h.filters()
    base = TableKey.of("verdicts", "verdict", how="count", model=f["model"], mapping=f["mapping"],
                       weighting=f["weighting"])
    facts = [r.read("checked", base, "int")] + [
        r.read(name, base.and_("verdict", "=", label), "int")
        for name, label in (("sensitive", "transport-sensitive"), ("stable", "transport-stable"),
                            ("undecided", "indeterminate"))]
    read = all_read(facts)
    if read is None or not read[0].value:
        return None
    template = ("Of {checked} checked quantities ({slice}): {sensitive} changed by more than their tolerance, "
                "{stable} stayed within it, {undecided} undecided (the interval crosses the tolerance).")
    return Finding.of(kind="verdict_tally", severity="warning" if read[1].value else "good", template=template,
                      facts=read, labels={"slice": r.h.describe()})


def _scores_used(manifest: Mapping) -> Finding | None:
    """A run on the user's scores says so, and lists in words the stages it could not run (they need a model)."""
    info = manifest.get("model") or {}
    if info.get("kind") != "scores":
        return None
    stages = [str(s) for s in manifest.get("needs_a_model") or ()]
    listed = and_list(stages) if stages else ""
    template = "This run used your {label}, not a model." + (" {stages}: not run: needs a model." if stages else "")
    return Finding.of(kind="scores_used", severity="info", template=template,
                      labels={"label": str(info.get("label", "")), "stages": listed[:1].upper() + listed[1:]})


def transport_findings(result: TransportResult, *, headline: HeadlineSlice | None = None,
                       selection_rate: float = 0.8, alpha: float = 0.1) -> list[Finding]:
    """Plain-language findings of a Transport result on its headline slice.

    Parameters
    ----------
    result : TransportResult
        A result just computed, or one rebuilt from a saved run's tables.
    headline : HeadlineSlice, optional
        Default: the slice the manifest records, else the rule on its config
        (:func:`~audit_core.transport.headline.recorded_headline`).
    selection_rate : float, default 0.8
        The operating selection rate (its threshold is fitted on the source).
    alpha : float, default 0.1
        Conformal miscoverage level.

    Returns
    -------
    list of Finding
        Up to 7 sentences: on a run on the user's scores, that it used them and what was not run (needs a
        model); the operating threshold, class coverage of
        conformal sets, the calibration and ranking changes, the verdict tally
        and the feature shift (when the result holds a ``feature_shift`` table).
    """
    cfg = result.manifest.get("config") or {}
    h = headline or recorded_headline(result.manifest)
    if isinstance(h, str):
        return []
    tables = result_tables(result)
    r, where = _Reader(tables, h), _where(cfg)
    classes = class_words(cfg, h.target_definition, result.manifest.get("classes"))
    parts = [_scores_used(result.manifest), _selective(r, where, selection_rate), _conformal(r, where, alpha, classes, h.multiclass),
             _change(r, where, "calibration"), _change(r, where, "ranking"), _tally(r),
             shift_finding(tables.get("feature_shift"), tables.get("domain_classifier"))]
    return [f for f in parts if f is not None]
