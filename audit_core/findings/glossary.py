"""Words for symbols: one plain-language help text per symbol, column header and tolerance box.

Every page (through :mod:`components.glossary`) and the report read the
texts here, so a symbol means the same thing everywhere. :func:`explain`
finds the entry of a column name: its exact entry, else the entry of its
pattern (``d_noise``, ``hcep_at_0.90``, ``coverage_class1``, …).
"""
from __future__ import annotations

import re

__all__ = ["GLOSSARY", "PATTERNS", "explain"]

_P = "p̂ (the probability the model gives its predicted class)"

#: Exact names -> help text.
GLOSSARY: dict[str, str] = {
    # Fragility: the certificate
    "k*": "How many evidence groups must be removed (set to reference values, most damaging first) before the "
          "prediction flips. K + 1 means it did not flip within the audit depth K.",
    "k_star": "k*: evidence groups removed (most damaging first) before the prediction flips; K + 1 = no flip "
              "within the audit depth K.",
    "mean_k_star": "Average k* over the audited cases: how many evidence groups it takes, on average, to flip a "
                   "prediction (higher = sturdier).",
    "rcma": "RCMA (relative collapse of the margin per group): how fast the margin shrinks, relative to the case's "
            "own margin, as groups are removed one by one. Higher = collapses faster.",
    "mean_rcma": "Average RCMA over the audited cases: lower means the model's margins shrink more slowly as "
                 "evidence is removed (more stable).",
    "fds": "FDS (fragility score, 0 to 1): one number combining how few groups flip the case (k*), how fast its "
           "margin collapses (RCMA) and how little degradation it withstands (d). Higher = more fragile.",
    "mean_fds": "Average FDS over the audited cases (0 to 1; higher = more fragile).",
    "d": "d: the degradation severity (0 to 1) the case withstands before it flips, averaged over the degradation "
         "families (interpolation, dropout, noise). Lower = breaks under milder damage.",
    "λ*": "λ*: the smallest degradation severity (0 to 1) at which the prediction flips for a family; empty when "
          "it never flips.",
    "Δ_g": "Δ_g: how much the margin drops when evidence group g alone is set to reference values.",
    "delta": "Δ_g: how much the margin drops when that evidence group alone is set to reference values.",
    "max_delta": "The largest one-group margin drop Δ_g of the case: the single most important evidence group.",
    "m0": "The case's margin in pseudo-logits: how far its score is from the decision boundary (0 = undecided).",
    "p_hat": f"{_P}.",
    "y_hat": "The predicted class (its code; class names are in the case inspector).",
    "y_true": "The true class (its code).",
    "key": "The case's key (its row identifier).",
    "donor_flip_rate": "Share of donor draws that flip the case: up to 3 evidence groups take another case's values.",
    "unavailable_flip_rate": "Share of draws that flip the case when up to 3 evidence groups become unavailable "
                             "(missing or special codes).",
    "exact_min": "The fewest groups that flip the case, found by exhaustive search (the greedy k* can only be "
                 "larger or equal).",
    "beam_min": "The fewest groups that flip the case, found by beam search.",
    "label": "Which definition of 'brittle case' the row scores against (e.g. donor_any: flips under any donor "
             "replacement).",
    "stratum": "Which cases the row covers: all, or only the confident ones (p̂ at or above a threshold).",
    "score": "The score used to rank cases as brittle: FDS, RCMA, or a plain confidence score.",
    "n": "Number of cases (or records) the row is computed on.",
    "n_brittle": "How many of those cases are brittle under the row's label.",
    "auroc": "AUROC (0.5 = chance, 1 = perfect): how well the score ranks one class (or brittle cases) above the "
             "other.",
    "heldout_auroc": "AUROC of the model on held-out test rows: how well it ranks defaulters above the others.",
    "lo": "Lower end of the 95% bootstrap interval.",
    "hi": "Upper end of the 95% bootstrap interval.",
    "same_ranking": "Yes when the score ranks cases exactly like the other confidence scores (binary task).",
    "auroc_confidence": "Cross-validated AUROC for brittle cases from confidence alone.",
    "auroc_with_certificate": "Cross-validated AUROC for brittle cases from confidence plus the certificate.",
    "difference": "Second minus first: the gain from adding the certificate (negative = a loss).",
    "method": "The search method compared with the greedy path.",
    "n_cases": "Cases searched.",
    "n_compared": "Cases where both searches finished within the budget.",
    "share_equal": "Share of cases where the greedy k* equals the search's minimum.",
    "mean_gap": "Average number of groups by which greedy k* exceeds the search's minimum.",
    "max_gap": "Largest such gap.",
    "model": "The model (LightGBM and the others with fixed settings).",
    "role": "Nominal winner: best held-out AUROC. Most stable: lowest mean RCMA.",
    # Transport: metrics
    "ece": "ECE (expected calibration error): the average gap between predicted probability and observed "
           "frequency, over probability bins. 0 = perfectly calibrated.",
    "brier_score": "Brier score: mean squared error of the probabilities (lower is better).",
    "accuracy": "Accuracy (multi-class): share of records whose most probable class is the true one.",
    "auroc_macro": "Macro AUROC (multi-class): the mean over classes of the one-vs-rest AUROC (0.5 = chance).",
    "brier_multiclass": "Multi-class Brier score: squared error of the probability rows, summed over classes "
                        "(range 0–2, lower is better).",
    "log_loss_multiclass": "Multi-class log loss: average −log of the true class's probability (lower is better).",
    "ece_top": "Top-label ECE (multi-class): the calibration error of the largest probability as the chance "
               "that the arg-max class is right.",
    "ece_classwise": "Class-wise ECE (multi-class): the mean over classes of each class probability's ECE.",
    "log_loss": "Log loss: average penalty for confident wrong probabilities (lower is better).",
    "prevalence": "Share of records in the positive class.",
    "average_precision": "Average precision: area under the precision–recall curve.",
    "pr_skill": "PR skill: average precision above the prevalence (what a random ranking gets), scaled so 0 = "
                "no skill and 1 = perfect.",
    "calibration_intercept": "Calibration intercept: 0 when probabilities are right on average; above 0 = the "
                             "model under-predicts the positive class, below 0 = over-predicts.",
    "calibration_slope": "Calibration slope: 1 when probabilities are as spread as they should be; below 1 = too "
                         "extreme (over-confident), above 1 = too timid.",
    "aurc": "AURC (area under the risk–coverage curve): average error rate when answering only the most "
            "confident cases, over all answer rates. Lower is better.",
    "excess_aurc": "Excess AURC: AURC minus the best AURC possible with the same errors (a perfect confidence "
                   "ordering). 0 = confidence orders errors perfectly.",
    "hcep": "HCEP (high-confidence error probability): the share of confident answers (confidence above a "
            "threshold) that are wrong.",
    "rate": "Selection rate: share of cases the rule answers (the rest are referred).",
    "risk": "Selective risk: error rate among the answered cases.",
    "threshold": "The confidence threshold, fitted on the source, that answers the chosen share of cases.",
    "coverage": "Conformal coverage: share of records whose prediction set contains the true class.",
    "mean_set_size": "Average number of classes in a conformal prediction set (1 = decisive, 2 = undecided).",
    "worst_class_coverage": "Conformal coverage of the class it covers worst.",
    "two_class_rate": "Share of conformal sets holding both classes (the model abstains).",
    "singleton_rate": "Share of conformal sets holding exactly one class.",
    "empty_rate": "Share of empty conformal sets.",
    "mean_p": "Average predicted probability of the positive class.",
    "qhat": "The conformal score quantile fitted on the calibration split.",
    "mapping_a": "First parameter of the fitted probability mapping.",
    "mapping_b": "Second parameter of the fitted probability mapping.",
    "mapping_fallback": "1 when the mapping could not be fitted and the identity was used instead.",
    "LC": "LC (label-conditional) conformal sets: one threshold per class, so each class gets its own coverage.",
    "label_conditional": "Label-conditional (LC) conformal sets: one threshold per class, so each class gets its "
                         "own coverage.",
    "D_Y/D_P": "D_Y/D_P: the change explained by the target definition (D_Y: what counts as positive) against the "
               "change explained by the population (D_P: who the records are).",
    "D_Y": "D_Y: the part of the change due to the target definition (what counts as positive).",
    "D_P": "D_P: the part of the change due to the population (who the records are).",
    # Transport: verdict tables
    "analysis": "Which part of the protocol the row belongs to (metrics, selective rule, conformal sets, …).",
    "metric": "The quantity measured (the list below the table says what each one means).",
    "condition": "clean, or the stress the row was computed under (random or targeted deletion, corruption, …).",
    "target_definition": "Which definition of the target (what counts as positive) the row uses.",
    "domain": "id: the source test split; ood: the target domain.",
    "refit": "Which refit (fresh source split) the row comes from; negative rows hold interval ends.",
    "mapping": "The probability mapping fitted on the source (none, Platt scaling, isotonic, temperature).",
    "weighting": "Unweighted, or reweighted so the source looks like the target population.",
    "alpha": "α: the conformal miscoverage level (0.1 = sets should contain the truth 90% of the time).",
    "selection_rate": "The share of cases the selective rule aims to answer (its threshold is fitted on the source).",
    "selection rate": "The share of cases the selective rule aims to answer (its threshold is fitted on the source).",
    "id_value": "Value on the source test split (ID: in distribution).",
    "ID": "Value on the source test split (ID: in distribution).",
    "ood_value": "Value on the target domain (OOD: out of distribution).",
    "OOD": "Value on the target domain (OOD: out of distribution).",
    "change OOD − ID": "Target minus source, paired over refits.",
    "ci_low": "Lower end of the interval of the change.",
    "interval low": "Lower end of the interval of the change.",
    "ci_high": "Upper end of the interval of the change.",
    "interval high": "Upper end of the interval of the change.",
    "tolerance": "δ_m, the tolerance: the largest change declared harmless, fixed before the target was seen.",
    "δ_m": "δ_m, the tolerance: the largest change declared harmless, fixed before the target was seen.",
    "verdict": "transport-stable: the whole interval is within ±tolerance; transport-sensitive: it is entirely "
               "outside; indeterminate: it crosses the tolerance.",
    "direction": "better, worse or within tolerance, judged by the metric's good direction.",
    "good_direction": "Whether higher or lower values of the metric are better.",
    "good direction": "Whether higher or lower values of the metric are better.",
    "n_refits": "How many times the model and mappings were refitted on fresh source splits.",
    "n_bootstrap": "Bootstrap draws behind each interval.",
    "quantity": "What is counted.",
    "value": "The value.",
    # Release gate
    "status": "present, or absent when no saved run provides the ground (then UNKNOWN, never guessed).",
    "source": "The saved run the ground was read from.",
    "detail": "How the ground was read, or why it is absent.",
    "description": "What the ground measures.",
    "ground": "A fact the release rules read, taken from the saved runs (unknown when no run provides it).",
    "value_a": "The ground's value in the baseline runs.",
    "value_b": "The ground's value in the candidate runs.",
    "baseline": "The ground's value in the baseline runs.",
    "candidate": "The ground's value in the candidate runs.",
    "status_b": "present, or absent (then UNKNOWN: never guessed).",
    "in_receipt": "Yes when replacing this ground alone (with the others of its set) accounts for the changed "
                  "verdict.",
    "in the receipt": "Yes when this ground is in a receipt: a minimal set of changes that accounts for the changed "
                      "verdict.",
    # demo / inspector tables
    "evidence group": "The block of columns the audit removes together.",
    "column": "The raw column of the table.",
    "removed to flip": "Yes for the groups set to reference values, in the most damaging order, until the "
                       "prediction flipped.",
    # Calibration and conformal depth
    "ace": "ACE (adaptive calibration error): like ECE, but over 15 bins holding equal shares of the records, so "
           "sparse probability ranges are not ignored. 0 = calibrated.",
    "mce": "MCE (maximum calibration error): the largest gap between predicted probability and observed frequency "
           "over the 15 ECE bins. 0 = calibrated.",
    "spiegelhalter_z": "Spiegelhalter's z: a test statistic for calibration (about ±2 is consistent with a "
                       "calibrated model); it grows with the number of records, so compare it on similar sizes.",
    "smooth_ece": "Smooth ECE: the calibration error of a kernel-smoothed reliability curve (bandwidth chosen "
                  "automatically); steadier than binned ECE.",
    "qhat_unbounded": "1 when the calibration set is too small for the requested coverage (⌈(n+1)(1−α)⌉ > n): "
                      "the conformal quantile is then infinite and every class is in every set.",
    "rank": "Order of the groups by their one-group margin drop Δ_g, largest first.",
    "group": "The evidence group.",
    # Forecast (target labels not yet available)
    "citl": "Calibration in the large: mean outcome minus mean predicted probability (0 = right on average).",
    "brier": "Brier score: mean squared error of the probabilities (lower is better).",
    "mean_confidence": "Average confidence (the largest class probability) over the records.",
    "naive": "'Unchanged from source': the value on the source ID test, the forecast that assumes nothing moved.",
    "assumption": "What the forecast assumes: covariate shift (only the mix of cases changed), label shift (only "
                  "the share of each outcome changed), or both (the span of the two).",
    "realised": "The value measured once the target's labels arrived.",
    "domain_auroc": "How well a classifier tells source from target records by their features (0.5 = "
                    "indistinguishable, 1 = separable); at 0.95 or above the importance weights are not trusted.",
    "ess": "Effective sample size (Kish) of the importance-weighted source records: how many equally weighted "
           "records they are worth.",
    "margin drop when removed alone (Δ_g)": "Δ_g: how much the margin drops when this group alone is set to "
                                            "reference values.",
}

#: (regular expression, entry name or text with ``{0}`` for the captured part) for families of names.
PATTERNS: tuple[tuple[str, str], ...] = (
    (r"d_(\w+)", "d for the {0} family: the severity (0 to 1) the case withstands before it flips."),
    (r"lambda_(\w+)", "λ* for the {0} family: the smallest severity (0 to 1) that flips the case; empty when none."),
    (r"donor_(any|[0-9.]+)", "Brittle under donor replacement: flips in {0} of the draws where up to 3 groups "
                             "take another case's values (any = at least one)."),
    (r"unavailable_(any|[0-9.]+)", "Brittle when groups become unavailable: flips in {0} of the draws (any = at "
                                   "least one)."),
    (r"hcep_at_([0-9.]+)", "HCEP at {0}: the share of answers with confidence ≥ {0} that are wrong."),
    (r"rate_at_([0-9.]+)", "Share of cases answered at confidence threshold {0}."),
    (r"risk_at_([0-9.]+)", "Error rate of the cases answered at confidence threshold {0}."),
    (r"coverage_class(\d+)", "Conformal coverage of class {0}: share of its records whose set contains it."),
    (r"qhat_class(\d+)_unbounded", "1 when class {0} has too few calibration records for the requested "
                                   "coverage: its quantile is infinite, so it is in every set."),
    (r"mondrian_(coverage|mean_set_size)@alpha=([0-9.]+)", "Per-subgroup conformal sets (a quantile per level of "
                                                           "the subgroup column): {0} at α = {1}."),
    (r"mondrian_worst_coverage@alpha=([0-9.]+)", "The lowest coverage over the levels of the subgroup column, with "
                                                 "a conformal quantile per level, at α = {0}."),
    (r"worst_subgroup_coverage_(\d+)", "Worst subgroup coverage of per-subgroup conformal sets aiming at {0}% "
                                       "coverage."),
    (r"qhat_class(\d+)", "The conformal score quantile of class {0} (label-conditional sets)."),
    (r"singleton_accuracy_class(\d+)", "Accuracy of the one-class sets that name class {0}."),
    (r"worst_class_coverage_(\d+)", "Worst class coverage of conformal sets aiming at {0}% coverage."),
    (r"marginal_coverage@alpha=([0-9.]+)", "Conformal coverage over all records at α = {0}."),
    (r"selective_(rate|risk)@s=([0-9.]+)", "Selective {0} at target selection rate {1}."),
    (r"(id|ood|ood-id) (mean|std)", "{1} over refits on the {0} split (id: source test, ood: target domain, "
                                    "ood-id: their paired change)."),
    (r"n_transport_(sensitive|worse)", "Number of transport checks that came out {0}."),
    (r"(test|train)_(\w+)", "{1} of the model on the {0} split."),
    (r"brittle_share_confident", "Share of confident cases (p̂ ≥ 0.8) that flip under donor replacement."),
    (r"ood_(\w+)", "{0} on the target domain."),
    # Forecast (docs/forecast.md): quantity names as forecast_target writes them
    (r"risk@s=([0-9.]+)", "Selective risk at selection rate {0}: the error rate among the cases the rule answers "
                          "(its confidence cut-off fitted on the source)."),
    (r"rate@s=([0-9.]+)", "Selection rate at target rate {0}: the share of cases whose confidence clears the cut-off "
                          "fitted on the source to answer {0} of source cases."),
    (r"hcep@s=([0-9.]+)", "HCEP at selection rate {0}: the share of all cases that are answered and wrong."),
    (r"hcep@tau=([0-9.]+)", "HCEP at confidence {0}: the share of all cases answered with confidence ≥ {0} and wrong."),
    (r"(?:\w+:)?coverage@a=([0-9.]+)", "Conformal coverage at α = {0}: the share of records whose prediction set "
                                       "contains the true class."),
    (r"(?:\w+:)?coverage_class(\d+)@a=([0-9.]+)", "Conformal coverage of class {0} at α = {1}."),
    (r"(?:\w+:)?worst_class_coverage@a=([0-9.]+)", "Conformal coverage of the worst-covered class at α = {0}."),
    (r"(?:\w+:)?set_size@a=([0-9.]+)", "Average number of classes in a conformal prediction set at α = {0}."),
    (r"(?:\w+:)?singleton@a=([0-9.]+)", "Share of conformal sets at α = {0} holding exactly one class."),
    (r"prevalence_class(\d+)", "Share of records in class {0}."),
)


def explain(name: str) -> str | None:
    """The help text of a symbol or column name, or None when the glossary has none.

    Examples
    --------
    >>> explain("hcep_at_0.90")
    'HCEP at 0.90: the share of answers with confidence ≥ 0.90 that are wrong.'
    """
    name = str(name)
    if name in GLOSSARY:
        return GLOSSARY[name]
    for pattern, text in PATTERNS:
        m = re.fullmatch(pattern, name)
        if m:
            return text.format(*m.groups())
    return None
