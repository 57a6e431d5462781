"""Sentences about a label-free forecast: what is computed exactly on the target, what is forecast and under which
assumption, whether the importance weights pass their check, and (once labels arrive) how the forecast fared.

The tables are those a saved Transport run stores for its ``forecast`` stage
(``docs/forecast.md``): ``forecast``, ``forecast_exact``, ``forecast_checks``,
``forecast_weights`` and ``forecast_prevalence``, one row per refit. Like the
Transport findings (:mod:`.transport`), every number is a
:class:`~audit_core.findings.finding.Fact` read through a
:class:`~audit_core.runs.keys.TableKey`: **the mean over refits** of one
(model, mapping) slice, and every sentence names that slice and the number of
refits.

The product shows the default methods (:data:`DEFAULT_METHODS`, chosen as
``docs/forecast.md`` records): ``covariate:cbpe``, ``label:em`` and
``both:span``; a covariate sentence says what its method reads
(:data:`METHOD_CLAUSES`). A forecast that is ``unknown`` in any refit is stated as not to
be trusted, with its reason and without its number: only the target's labels
can settle it. One sentence always says that a concept shift (the same
features meaning a different outcome) is invisible to every label-free method.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from audit_core.runs.forecast_grounds import DEFAULT_METHODS  # the method shown per assumption (one home)
from audit_core.runs.keys import TableKey, read_key
from audit_core.transport.headline import pipeline_words

from .finding import Fact, Finding, Severity, Word, all_read

__all__ = ["DEFAULT_METHODS", "ASSUMPTION_WORDS", "METHOD_CLAUSES", "forecast_findings", "forecast_check_finding", "quantity_words",
           "forecast_slice", "slice_words", "pooled_status", "headline_quantities", "value_text"]

#: The assumption in plain words, and its short name.
ASSUMPTION_WORDS = {"covariate": ("If only the mix of cases changed", "covariate shift"),
                    "label": ("If only the share of each outcome changed", "label shift"),
                    "both": ("Spanning both assumptions", "covariate or label shift")}

#: What a covariate method reads, said after the assumption's short name (a label method names its prevalence).
METHOD_CLAUSES = {"covariate:cbpe": ", the model's probabilities read as the target's expected outcomes",
                  "covariate:cbpe_refit": ", probabilities re-mapped with the importance weights read as the target's "
                                          "expected outcomes",
                  "covariate:weighted": ", the source ID test weighted to the target's mix"}

#: (pattern, noun phrase with ``{0}``… for the captured parts, print form) for forecast quantity names.
_WORDS: tuple[tuple[str, str, str], ...] = (
    (r"risk@s=([0-9.]+)", "the error rate among the cases the {0:pct} rule answers", "pct"),
    (r"rate@s=([0-9.]+)", "the share of cases the {0:pct} rule answers", "pct"),
    (r"hcep@s=([0-9.]+)", "the share of all cases answered wrongly by the {0:pct} rule", "pct"),
    (r"hcep@tau=([0-9.]+)", "the share of all cases answered wrongly with confidence at least {0}", "pct"),
    (r"(\w+):worst_class_coverage@a=([0-9.]+)", "the coverage of the worst-covered class ({0} sets, α = {1})", "pct"),
    (r"(\w+):coverage_class(\d+)@a=([0-9.]+)", "the coverage of class {1} ({0} sets, α = {2})", "pct"),
    (r"(\w+):coverage@a=([0-9.]+)", "the share of {0} conformal sets (α = {1}) holding the true class", "pct"),
    (r"(\w+):set_size@a=([0-9.]+)", "the mean size of {0} conformal sets (α = {1})", "num2"),
    (r"(\w+):singleton@a=([0-9.]+)", "the share of {0} conformal sets (α = {1}) holding one class", "pct"),
    (r"prevalence_class(\d+)", "the share of class {0}", "pct"),
    (r"prevalence", "the share of positive cases", "pct"),
    (r"ece", "the calibration error (ECE, 15 equal-width bins)", "num3"),
    (r"citl", "the calibration in the large (mean outcome minus mean probability)", "num3"),
    (r"brier", "the Brier score", "num3"),
    (r"auroc", "the ranking quality (AUROC)", "num3"),
    (r"mean_confidence", "the mean confidence", "pct"),
)


def _fill(part: str, spec: str) -> str:
    if spec == "pct":
        return f"{100 * float(part):g}%"
    return part.replace("_", "-") if not part.replace(".", "").isdigit() else part


def _substitute(words: str, parts: tuple) -> str:
    """``words`` with each ``{i}`` / ``{i:pct}`` slot filled by the captured part ``i``."""
    return re.sub(r"\{(\d)(?::(\w+))?\}", lambda s: _fill(parts[int(s.group(1))], s.group(2) or ""), words)


def quantity_words(quantity: str) -> tuple[str, str]:
    """A forecast quantity's name in plain words and the form it is printed in.

    Examples
    --------
    >>> quantity_words("risk@s=0.8")
    ('the error rate among the cases the 80% rule answers', 'pct')
    >>> quantity_words("marginal:coverage@a=0.1")
    ('the share of marginal conformal sets (α = 0.1) holding the true class', 'pct')
    """
    for pattern, words, form in _WORDS:
        m = re.fullmatch(pattern, quantity)
        if m:
            return _substitute(words, m.groups()), form
    return quantity, "num3"


def value_text(value: float, form: str) -> str:
    """A forecast value as the tables and hovers print it: ``pct`` as ``12.3%``, otherwise three decimals; ``—`` for
    a value that is not a number.

    Examples
    --------
    >>> value_text(0.1234, "pct"), value_text(1.41, "num2"), value_text(float("nan"), "pct")
    ('12.3%', '1.410', '—')
    """
    if value is None or not np.isfinite(value):
        return "—"
    return f"{100 * value:.1f}%" if form == "pct" else f"{value:.3f}"


def headline_quantities(selection_rate: float = 0.8, alpha: float = 0.1) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The forecast quantities the figure and the report tables show by default (at the operating rule and conformal
    level), and the exact label-free ones."""
    s, a = f"{selection_rate:g}", f"{alpha:g}"
    return ((f"risk@s={s}", f"hcep@s={s}", "ece", "citl", "brier", "auroc", "prevalence", f"marginal:coverage@a={a}",
             f"marginal:worst_class_coverage@a={a}", f"label_conditional:worst_class_coverage@a={a}"),
            (f"rate@s={s}", f"marginal:set_size@a={a}", f"marginal:singleton@a={a}", "mean_confidence"))


def forecast_slice(tables: Mapping[str, pd.DataFrame], table: str, model: str, mapping: str) -> pd.DataFrame:
    """The rows of ``table`` for one (model, mapping) slice (every refit); empty when absent."""
    df = tables.get(table)
    if not isinstance(df, pd.DataFrame) or df.empty or not {"model", "mapping"} <= set(df.columns):
        return pd.DataFrame()
    return df[(df["model"].astype(str) == str(model)) & (df["mapping"].astype(str) == str(mapping))]


def _n_refits(tables: Mapping[str, pd.DataFrame], model: str, mapping: str) -> int:
    rows = forecast_slice(tables, "forecast", model, mapping)
    return int(pd.to_numeric(rows["refit"], errors="coerce").nunique()) if "refit" in rows else 0


def slice_words(model: str, mapping: str, n_refits: int) -> str:
    """``Platt-calibrated logistic regression, mean of 5 refits``: the slice every forecast sentence reads."""
    return f"{pipeline_words(mapping, model)}, " + (f"mean of {n_refits} refits" if n_refits != 1 else "one refit")


def pooled_status(rows: pd.DataFrame) -> tuple[str, str, int]:
    """``(status, reason, n_unknown)`` of one forecast over its refits: ``unknown`` when any refit is unknown.

    The reason is the most frequent reason among the unknown refits (ties: the first in table order).
    """
    if rows.empty or "status" not in rows:
        return "unknown", "no forecast row", 0
    unknown = rows[rows["status"].astype(str) != "forecast"]
    if unknown.empty:
        return "forecast", "", 0
    reasons = unknown["reason"].fillna("").astype(str) if "reason" in unknown else pd.Series([""] * len(unknown))
    reasons = reasons[reasons != ""]
    reason = str(reasons.value_counts(sort=True).index[0]) if len(reasons) else "its assumption's check failed"
    return "unknown", reason, len(unknown)


class _Reader:
    """Facts of one (model, mapping) slice of the forecast tables: the mean over refits, each with its key."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], model: str, mapping: str) -> None:
        self.tables, self.model, self.mapping = tables, model, mapping

    def read(self, name: str, table: str, column: str, form: str, **equal) -> Fact | None:
        """Mean over refits; ``forecast_weights`` is per refit only (the weights come from the features, not a model)."""
        where = {} if table == "forecast_weights" else {"model": self.model, "mapping": self.mapping}
        key = TableKey.of(table, column, how="refit_mean", **where, **equal)
        v, _ = read_key(self.tables, key)
        return None if v is None or isinstance(v, str) else Fact(name, v, key, form)

    def rows(self, table: str, **equal) -> pd.DataFrame:
        df = (forecast_slice(self.tables, table, self.model, self.mapping) if table != "forecast_weights"
              else self.tables.get(table, pd.DataFrame()))
        for col, want in equal.items():
            if col not in df:
                return pd.DataFrame()
            df = df[df[col].astype(str) == str(want)]
        return df


def _exact(r: _Reader, where: str, rate: float, alpha: float) -> list[Finding]:
    out = []
    q = f"rate@s={rate:g}"
    got = all_read([r.read("rate", "forecast_exact", "value", "pct", quantity=q),
                    r.read("n_target", "forecast_weights", "n_target", "int")])
    s = Fact("s", float(rate), None, "pct")
    if got is not None:
        template = ("Computed on the target without labels: {rate} of its {n_target} cases clear the confidence "
                    "cut-off that answers {s} of source cases ({slice}).")
        out.append(Finding.of(kind="forecast_exact_rate", severity="info", template=template, facts=[*got, s],
                              labels={"slice": where}, detail=f"forecast_exact: {q}"))
    size = all_read([r.read("size", "forecast_exact", "value", "num2", quantity=f"marginal:set_size@a={alpha:g}"),
                     r.read("single", "forecast_exact", "value", "pct", quantity=f"marginal:singleton@a={alpha:g}")])
    if size is not None:
        template = ("Computed on the target without labels: marginal conformal sets at {target} coverage hold {size} "
                    "classes on average, {single} of them exactly one ({slice}).")
        out.append(Finding.of(kind="forecast_exact_sets", severity="info", template=template,
                              facts=[*size, Fact("target", 1 - alpha, None, "pct")], labels={"slice": where},
                              detail=f"forecast_exact: marginal set size and singleton share at α = {alpha:g}"))
    return out


def _prevalence_clause(r: _Reader) -> tuple[str, list[Fact], dict[str, str]]:
    """``, prevalence 31% on the target by EM against 22% in the source's selection partition`` for the class whose
    EM estimate moved most (binary: the positive class). The source share is EM's prior: the partition the rules
    were fitted on, not the ID test that "unchanged from source" reads, so the sentence names it."""
    rows = r.rows("forecast_prevalence")
    if rows.empty or not {"class", "source", "em"} <= set(rows.columns):
        return "", [], {}
    means = rows.groupby(rows["class"].astype(str), sort=False)[["source", "em"]].mean(numeric_only=True)
    if means.empty:
        return "", [], {}
    cls = means.index[-1] if len(means) == 2 else str((means["em"] - means["source"]).abs().idxmax())
    facts = [r.read("prev_t", "forecast_prevalence", "em", "pct", **{"class": cls}),
             r.read("prev_s", "forecast_prevalence", "source", "pct", **{"class": cls})]
    read = all_read(facts)
    if read is None:
        return "", [], {}
    named = "" if len(means) == 2 else " of {prev_class}"
    return (", prevalence" + named + " {prev_t} on the target by EM against {prev_s} in the source's selection "
            "partition"), read, {"prev_class": str(cls)}


def _forecast(r: _Reader, where: str, quantity: str, assumption: str, method: str) -> Finding | None:
    rows = r.rows("forecast", quantity=quantity, method=method)
    if rows.empty:
        return None
    what, form = quantity_words(quantity)
    lead, short = ASSUMPTION_WORDS[assumption]
    labels = {"slice": where, "what": what, "lead": lead, "short": short}
    extra, pfacts = METHOD_CLAUSES.get(method, ""), list[Fact]()
    if assumption == "label":
        extra, pfacts, plabels = _prevalence_clause(r)
        labels.update(plabels)
    head = "{lead} (" + ("{short}" + extra) + "; {slice}): "
    status, reason, n_unknown = pooled_status(rows)
    n = int(pd.to_numeric(rows["refit"], errors="coerce").nunique())
    detail = f"forecast: {quantity} by {method}"
    if status == "unknown":
        labels.update(reason=reason, k=str(n_unknown), n=str(n))
        template = (head + "the forecast of {what} cannot be trusted ({k} of {n} refits unknown: {reason}); only the "
                    "target's labels can settle it.")
        return Finding.of(kind=f"forecast_unknown_{assumption}", severity="warning", template=template,
                          facts=pfacts, labels=labels, detail=detail)
    facts = all_read([r.read(name, "forecast", col, form, quantity=quantity, method=method)
                      for name, col in (("value", "value"), ("low", "low"), ("high", "high"), ("naive", "naive"))])
    if facts is None:
        return None
    level = r.read("level", "forecast", "level", "pct", quantity=quantity, method=method)
    tail = " ({level} interval)" if level is not None else ""
    if assumption == "both":
        template = head + "{what} is forecast between {low} and {high}" + tail + ", against {naive} on the source ID test."
    else:
        template = head + "{what} is forecast at {value} [{low}, {high}]" + tail + \
            ", against {naive} on the source ID test."
    more = [level] if level is not None else []
    return Finding.of(kind=f"forecast_{assumption}", severity="info", template=template,
                      facts=[*facts, *more, *pfacts], labels=labels, detail=detail)


def _weights(r: _Reader, where: str, rate: float, method: str = "covariate:weighted") -> list[Finding]:
    out = []
    q = f"rate@s={rate:g}"
    rows = r.rows("forecast_checks", method=method, quantity=q)
    got = all_read([r.read("weighted", "forecast_checks", "source_weighted", "pct", method=method, quantity=q),
                    r.read("exact", "forecast_checks", "target_exact", "pct", method=method, quantity=q),
                    r.read("tolerance", "forecast_checks", "tolerance", "points", method=method, quantity=q)])
    if got is not None and not rows.empty:
        gap = Fact("gap", abs(float(got[0].value) - float(got[1].value)), None, "points")
        ok = rows["ok"].astype(bool)
        n_bad = int((~ok).sum())
        # every refit within its tolerance: the mean gap is too (|mean(a − b)| ≤ mean |a − b| ≤ mean tolerance)
        word = (Word("reproduces", "within_limit", ("gap", "tolerance")) if n_bad == 0
                else Word("misses", "positive", ("n_bad",)))
        tail = ("" if n_bad == 0 else " in {n_bad} of {n_rows} refits")
        counts = [Fact("n_bad", float(n_bad), None, "int"), Fact("n_rows", float(len(rows)), None, "int")]
        template = ("Weights check ({slice}): the importance-weighted source {w0} the target's exact share answered by "
                    "the {s} rule" + tail + ": {weighted} against {exact}, {gap} points apart (tolerance {tolerance} "
                    "points).")
        # a tolerance wider than the farthest a share can lie from the exact one: no weighting could have failed
        exact = float(got[1].value)
        furthest = max(exact, 1.0 - exact)
        reach = Fact("reach", furthest, None, "points")
        empty = n_bad == 0 and float(got[2].value) >= furthest
        if empty:
            word = Word("fail", "at_least_limit", ("tolerance", "reach"))
            counts.append(reach)
            template = ("Weights check ({slice}): the importance-weighted source gives {weighted} against the target's "
                        "exact {exact} for the share answered by the {s} rule, {gap} points apart; with so few "
                        "effective records its tolerance ({tolerance} points) exceeds the farthest any share can lie "
                        "from {exact} ({reach} points), so no weighting could {w0} it and it tells nothing.")
        # the rule's own quantity is not the whole check: any other label-free quantity missed is said beside it
        every = r.rows("forecast_checks", method=method)
        missed = every[~every["ok"].astype(bool) & (every["quantity"].astype(str) != q)] if "ok" in every else every[:0]
        others = list(dict.fromkeys(missed["quantity"].astype(str))) if not missed.empty else []
        words, labels = [word], {"slice": where}
        if others:
            counts.append(Fact("n_other", float(len(others)), None, "int"))
            words.append(Word("misses", "positive", ("n_other",)))
            labels["others"] = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
            template += (" It {w1} {n_other} more of the label-free checks in at least one refit ({others}), so the "
                         "covariate-shift forecasts cannot be trusted.")
        out.append(Finding.of(kind="forecast_weights_check",
                              severity="good" if n_bad == 0 and not others and not empty else "warning",
                              template=template, facts=[*got, gap, Fact("s", rate, None, "pct"), *counts],
                              words=tuple(words), labels=labels,
                              detail=f"forecast_checks: {q} by {method}"))
    diag = all_read([r.read("auroc", "forecast_weights", "domain_auroc", "num2"),
                     r.read("ess", "forecast_weights", "ess", "int"),
                     r.read("n_source", "forecast_weights", "n_source", "int")])
    if diag is not None:
        wrows = r.rows("forecast_weights")
        bad = wrows[~wrows["overlap_ok"].astype(bool)] if "overlap_ok" in wrows else wrows.iloc[0:0]
        if bad.empty:
            template = ("Overlap ({slice}): a classifier tells target from source records with AUROC {auroc}, and the "
                        "weighted source is worth {ess} of its {n_source} records: the overlap rule holds.")
            sev: Severity = "info"
        else:
            template = ("Overlap ({slice}): a classifier tells target from source records with AUROC {auroc}, and the "
                        "weighted source is worth {ess} of its {n_source} records: the overlap rule fails in {k} of "
                        "{n} refits ({reason}), so the covariate-shift forecasts cannot be trusted.")
            sev = "warning"
        reasons = bad["reason"].fillna("").astype(str) if "reason" in bad else pd.Series(dtype=str)
        reason = str(reasons[reasons != ""].value_counts().index[0]) if (reasons != "").any() else "no reason stored"
        out.append(Finding.of(kind="forecast_overlap", severity=sev, template=template, facts=diag,
                              labels={"slice": where, "k": str(len(bad)), "n": str(len(wrows)), "reason": reason},
                              detail="forecast_weights: domain AUROC, Kish ESS, overlap rule"))
    return out


CONCEPT_SHIFT = ("No label-free forecast can see a concept shift: if the same features mean a different outcome on "
                 "the target ({slice}), every forecast above is wrong in a way no check here detects; only the "
                 "target's labels can show it.")


def forecast_findings(tables: Mapping[str, pd.DataFrame], *, model: str, mapping: str, selection_rate: float = 0.8,
                      alpha: float = 0.1, quantities: tuple[str, ...] | None = None) -> list[Finding]:
    """Plain-language findings of the label-free forecast of one (model, mapping) slice.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        A run's tables; reads ``forecast``, ``forecast_exact``, ``forecast_checks``, ``forecast_weights`` and
        ``forecast_prevalence`` (rows of other slices are ignored; missing tables drop their sentences).
    model, mapping : str
        The slice.
    selection_rate : float, default 0.8
        The operating rule's selection rate.
    alpha : float, default 0.1
        The conformal level of the exact set sizes.
    quantities : tuple of str, optional
        The forecast quantities stated in words (default: the error rate of the operating rule, ``risk@s=…``).

    Returns
    -------
    list of Finding
        What is computed exactly; per quantity one sentence per assumption (default methods,
        :data:`DEFAULT_METHODS`), an ``unknown`` forecast as not to be trusted with its reason and no number;
        the weights check and the overlap diagnostics; and always the concept-shift warning.
    """
    n = _n_refits(tables, model, mapping)
    where = slice_words(model, mapping, n)
    r = _Reader(tables, model, mapping)
    out = _exact(r, where, selection_rate, alpha)
    for q in quantities or (f"risk@s={selection_rate:g}",):
        for assumption, method in DEFAULT_METHODS.items():
            f = _forecast(r, where, q, assumption, method)
            if f is not None:
                out.append(f)
    out.extend(_weights(r, where, selection_rate))
    out.append(Finding.of(kind="forecast_concept_shift", severity="warning", template=CONCEPT_SHIFT,
                          labels={"slice": where}))
    return out


def forecast_check_finding(table: pd.DataFrame, *, model: str, mapping: str) -> Finding | None:
    """Once labels arrived: how many realised values fell inside their interval, and how often the forecast beat
    "unchanged from source", on one (model, mapping) slice of a ``ForecastCheck.table``.

    Rows whose forecast was ``unknown`` are counted apart (they made no trusted claim).
    """
    rows = forecast_slice({"check": table}, "check", model, mapping)
    if rows.empty:
        return None
    trusted = rows[rows["status"].astype(str) == "forecast"] if "status" in rows else rows
    realised = pd.to_numeric(trusted["realised"], errors="coerce")
    trusted = trusted[np.isfinite(realised)]
    n_unknown = len(rows) - len(trusted) if "status" in rows else 0
    if trusted.empty:
        if "status" not in rows or not (rows["status"].astype(str) != "forecast").all():
            return None  # nothing realised: nothing to say
        # every forecast was unknown: say that none is scored, rather than nothing
        return Finding.of(kind="forecast_check", severity="info",
                          template=("Once the labels arrived ({slice}): none of the {n_unknown} forecasts was trusted "
                                    "(each was unknown), so none is scored; the table sets each realised value beside "
                                    "its forecast."),
                          facts=[Fact("n_unknown", float(len(rows)), None, "int")],
                          labels={"slice": _check_slice(rows, model, mapping)},
                          detail="forecast check: every forecast unknown")
    levels = pd.to_numeric(trusted["level"], errors="coerce").dropna().unique()
    level = Fact("level", float(levels[0]), None, "pct") if len(levels) == 1 else None
    facts = [Fact("inside", float(trusted["inside"].astype(bool).sum()), None, "int"),
             Fact("n", float(len(trusted)), None, "int"),
             Fact("closer", float(trusted["beats_naive"].astype(bool).sum()), None, "int")]
    interval_words = "their {level} interval" if level is not None else "their interval"
    template = ("Once the labels arrived ({slice}): {inside} of {n} realised values fell inside " + interval_words
                + "; the forecast was closer than 'unchanged from source' for {closer} of {n}."
                + (" {n_unknown} unknown forecast(s) made no trusted claim and are not counted." if n_unknown else ""))
    inside_all = facts[0].value == facts[1].value
    return Finding.of(kind="forecast_check", severity="good" if inside_all else "info", template=template,
                      facts=[*facts, *([level] if level is not None else [])],
                      labels={"slice": _check_slice(rows, model, mapping), "n_unknown": str(n_unknown)},
                      detail="forecast check: interval coverage and error against the naive forecast")


def _check_slice(rows: pd.DataFrame, model: str, mapping: str) -> str:
    """The slice a check sentence reads, with the number of refits both runs hold when the table says it."""
    counts = sorted(int(c) for c in pd.to_numeric(rows["n_refits"], errors="coerce").dropna().unique()) \
        if "n_refits" in rows else []
    if len(counts) == 1:
        return slice_words(model, mapping, counts[0])
    if len(counts) > 1:
        return f"{pipeline_words(mapping, model)}, means over {counts[0]}–{counts[-1]} refits"
    return pipeline_words(mapping, model)
