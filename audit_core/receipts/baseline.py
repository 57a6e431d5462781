"""A learned baseline, to show that prediction is not certification, beside the trivial baselines.

Character TF-IDF (``char`` n-grams 2-4, sublinear tf) feeding three
multinomial logistic regressions (scikit-learn): one for ``v_old``, one for
``v_new`` and one for the receipt family (its canonical text, e.g.
``"{G} | {N}"`` or ``"none"``, as one class). The confidence of a
prediction is the probability of the predicted receipt class.

Trained on the *train* split's single-source and no-op cases only
(multi-source changes are held out of training); scored on the locked test
(test split, single-source and no-op), on the test split's multi-source
cases (families such as ``{G,N}`` and ``{G} | {N}`` never occur in
training, so the learned model cannot predict them) and under each paired
control. Two trivial baselines are fitted on the same training cases and
scored in every row:

* **always no-change** - an empty receipt, with the most frequent training
  verdict at both endpoints. On a benchmark where changes are rare it wins
  on receipt accuracy by inertia alone.
* **majority family** - always the most frequent receipt family among the
  training *changes* (e.g. ``{N}``), with the most frequent verdict pair of
  those cases. (The most frequent family overall may be ``none``, which is
  the row above.)

:class:`MajorityReceiptModel` (most frequent value of each target) is kept
for callers of earlier versions; it is not part of the table.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from audit_core.native_threads import serial_blas

from .accounting import Prediction, gold_from_benchmark, reason_debt
from .bench_metrics import paper_shape, score_predictions
from .cube import format_family, parse_family
from .generator import Benchmark, BenchCase

__all__ = ["BaselineReport", "TfidfReceiptModel", "AlwaysNoChangeModel", "MajorityFamilyModel",
           "MajorityReceiptModel", "evaluate_baseline", "EVALUATIONS", "TRIVIAL_MODELS"]

#: Evaluation labels of the baseline table, by key.
EVALUATIONS: dict[str, str] = {
    "locked": "locked test (single + no-op)",
    "multi": "multi-source (held out of training)",
    "permutation": "control: permutation",
    "distractor": "control: distractor",
    "inverse": "control: inverse",
}


class TfidfReceiptModel:
    """Character TF-IDF + logistic regression for verdicts and receipt family.

    The fits are run to convergence (L-BFGS on float64 features, gradient
    tolerance ``tol``) and on one BLAS thread
    (:func:`audit_core.native_threads.serial_blas`), so the table is the same
    whatever ``AUDIT_BLAS_THREADS`` says: stopped early at the old tolerance on
    float32 features, where the solver stopped depended on the summation order
    of the thread count, and rows moved in the third decimal. A fit that still
    reaches ``max_iter`` raises ``RuntimeError`` rather than report a model
    that did not converge.

    Parameters
    ----------
    C : float, default 4.0
    max_features : int, default 50000
    seed : int, default 0
    tol : float, default 1e-6
        L-BFGS stopping tolerance.
    max_iter : int, default 5000
        Iterations allowed per fit (the fits of the shipped benchmark take a
        few hundred).
    """

    name = "tfidf-char + logistic regression"

    def __init__(self, *, C: float = 4.0, max_features: int = 50000, seed: int = 0, tol: float = 1e-6,
                 max_iter: int = 5000) -> None:
        self.C = C
        self.max_features = max_features
        self.seed = seed
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, cases: list[BenchCase]) -> "TfidfReceiptModel":
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        texts = [c.text for c in cases]
        self.vec_ = TfidfVectorizer(analyzer="char", ngram_range=(2, 4), sublinear_tf=True, min_df=2,
                                    max_features=self.max_features, dtype=np.float64)
        X = self.vec_.fit_transform(texts)
        self.models_ = {}
        self.n_iter_: dict[str, int] = {}
        for target, ys in (("v_old", [c.cube.v_old for c in cases]), ("v_new", [c.cube.v_new for c in cases]),
                           ("receipt", [c.cube.receipt_text for c in cases])):
            if len(set(ys)) == 1:
                self.models_[target] = ys[0]
                continue
            m = LogisticRegression(C=self.C, max_iter=self.max_iter, tol=self.tol, random_state=self.seed)
            with serial_blas():
                m.fit(X, ys)
            self.n_iter_[target] = int(np.max(m.n_iter_))
            if self.n_iter_[target] >= self.max_iter:
                raise RuntimeError(f"the {target} logistic regression did not converge in {self.max_iter} "
                                   f"iterations (tolerance {self.tol:g})")
            self.models_[target] = m
        return self

    def predict(self, cases: list[BenchCase]) -> list[Prediction]:
        if not hasattr(self, "models_"):
            raise RuntimeError("fit the model before predicting")
        X = self.vec_.transform([c.text for c in cases])
        out: dict[str, Any] = {}
        conf = np.ones(len(cases))
        for target, m in self.models_.items():
            if isinstance(m, str):
                out[target] = [m] * len(cases)
                continue
            with serial_blas():
                proba = m.predict_proba(X)
            idx = proba.argmax(axis=1)
            out[target] = list(m.classes_[idx])
            if target == "receipt":
                conf = proba[np.arange(len(cases)), idx]
        return [Prediction(c.case_id, frozenset(parse_family(out["receipt"][i])), out["v_old"][i],
                           out["v_new"][i], None, float(conf[i])) for i, c in enumerate(cases)]


def _most_common(values) -> Any:
    """Most frequent value; ties go to the smallest (so the choice does not depend on case order)."""
    counts = Counter(values)
    top = max(counts.values())
    return min(v for v, k in counts.items() if k == top)


class AlwaysNoChangeModel:
    """Predicts no change: an empty receipt, and the most frequent training ``v_old`` at both endpoints."""

    name = "always no-change"

    def fit(self, cases: list[BenchCase]) -> "AlwaysNoChangeModel":
        self.verdict_ = _most_common(c.cube.v_old for c in cases)
        return self

    def predict(self, cases: list[BenchCase]) -> list[Prediction]:
        return [Prediction(c.case_id, frozenset(), self.verdict_, self.verdict_, None, 1.0) for c in cases]


class MajorityFamilyModel:
    """Predicts the most frequent receipt family among the training changes, with their most frequent verdicts."""

    name = "majority family"

    def fit(self, cases: list[BenchCase]) -> "MajorityFamilyModel":
        changed = [c for c in cases if c.cube.changed]
        if not changed:  # nothing to copy: predict no change
            self.family_, self.verdicts_ = "none", (_most_common(c.cube.v_old for c in cases),) * 2
            return self
        self.family_ = _most_common(format_family(c.cube.receipt, ("G", "N", "A")) for c in changed)
        self.verdicts_ = _most_common((c.cube.v_old, c.cube.v_new) for c in changed
                                      if format_family(c.cube.receipt, ("G", "N", "A")) == self.family_)
        return self

    def predict(self, cases: list[BenchCase]) -> list[Prediction]:
        fam = frozenset(parse_family(self.family_))
        return [Prediction(c.case_id, fam, self.verdicts_[0], self.verdicts_[1], None, 1.0) for c in cases]


#: Names of the trivial baselines in the table.
TRIVIAL_MODELS: tuple[str, ...] = (AlwaysNoChangeModel.name, MajorityFamilyModel.name)


class MajorityReceiptModel:
    """Predicts the most frequent training value of each target (kept for earlier callers; not in the table)."""

    name = "majority class"

    def fit(self, cases: list[BenchCase]) -> "MajorityReceiptModel":
        self.values_ = {
            "v_old": Counter(c.cube.v_old for c in cases).most_common(1)[0][0],
            "v_new": Counter(c.cube.v_new for c in cases).most_common(1)[0][0],
            "receipt": Counter(c.cube.receipt_text for c in cases).most_common(1)[0][0],
        }
        return self

    def predict(self, cases: list[BenchCase]) -> list[Prediction]:
        v = self.values_
        fam = frozenset(parse_family(v["receipt"]))
        return [Prediction(c.case_id, fam, v["v_old"], v["v_new"], None, 1.0) for c in cases]


@dataclass(frozen=True)
class BaselineReport:
    """The baseline table, the paper-shape findings and what they were computed on.

    Parameters
    ----------
    table : DataFrame
        One row per evaluation x model (see :func:`evaluate_baseline`).
    n_train : int
    config : dict
        Options, the benchmark config and the sizes of every evaluation set.
    findings : DataFrame
        :func:`~audit_core.receipts.bench_metrics.paper_shape` of the learned model.
    """

    table: pd.DataFrame = field(repr=False)
    n_train: int
    config: dict
    findings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["claim", "holds", "evidence"]),
                                   repr=False)

    #: Columns of the compact table (:meth:`to_markdown` with ``compact=True``).
    COMPACT = ("evaluation", "model", "n", "n_changed", "verdict_acc", "verdict_acc_changed", "receipt_acc",
               "receipt_acc_changed", "receipt_acc_changed_ci", "macro_family_acc", "inertia", "consistency")

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        return {"n_train": self.n_train, "config": self.config, "table": self.table.to_dict(orient="records"),
                "findings": self.findings.to_dict(orient="records")}

    def compact_frame(self) -> pd.DataFrame:
        """The headline columns, with the changing-case interval as one text column ``[lo, hi]``."""
        df = self.table.copy()
        df["receipt_acc_changed_ci"] = [f"[{lo:.3f}, {hi:.3f}]" if np.isfinite(lo) else "–"
                                        for lo, hi in zip(df["receipt_acc_changed_lo"], df["receipt_acc_changed_hi"], strict=True)]
        return df[list(self.COMPACT)]

    def to_markdown(self, *, compact: bool = False) -> str:
        df = self.compact_frame() if compact else self.table.copy()
        cols = list(df.columns)
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for _, r in df.iterrows():
            cells = [f"{v:.3f}" if isinstance(v, float) and not np.isnan(v) else ("–" if isinstance(v, float) else str(v))
                     for v in r]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def findings_markdown(self) -> str:
        lines = ["| claim | holds | evidence |", "|---|---|---|"]
        for r in self.findings.itertuples():
            lines.append(f"| {r.claim} | {'holds' if r.holds else 'does not hold'} | {r.evidence} |")
        return "\n".join(lines)


def evaluate_baseline(bench: Benchmark, *, seed: int = 0, C: float = 4.0, max_features: int = 50000,
                      threshold: float = 0.8, n_boot: int = 1000, level: float = 0.95) -> BaselineReport:
    """Train on single-source and no-op train cases; score on locked test, multi-source and controls.

    Parameters
    ----------
    bench : Benchmark
    seed, C, max_features
        Passed to :class:`TfidfReceiptModel`; ``seed`` also seeds the bootstrap.
    threshold : float, default 0.8
        Confidence threshold of the reported reason debt.
    n_boot, level : int, float
        Percentile bootstrap over the evaluation set's changing cases, for
        ``receipt_acc_changed_lo``/``_hi``.

    Returns
    -------
    BaselineReport
        Rows: ``evaluation`` (:data:`EVALUATIONS`) x ``model`` (learned, then
        :data:`TRIVIAL_MODELS`); columns ``n``, ``n_changed``,
        ``verdict_acc``, ``verdict_acc_changed``, ``receipt_acc``,
        ``receipt_acc_changed`` (+ ``_lo``, ``_hi``), ``macro_family_acc``,
        ``verdicts_right_receipt_wrong``, ``drift``, ``inertia``,
        ``misattribution`` (rates), ``consistency`` (control rows),
        ``reason_debt``, ``accepted_coverage``, ``gold_change_recall`` at
        ``threshold`` (see :func:`~audit_core.receipts.bench_metrics.score_predictions`).
    """
    train = bench.select(split="train", mutation=("single", "noop"))
    sets = {"locked": bench.select(split="test", mutation=("single", "noop")),
            "multi": bench.select(split="test", mutation=("multi",))}
    sets.update({k: bench.select(split="test", control=k) for k in ("permutation", "distractor", "inverse")})
    gold = gold_from_benchmark([c for c in bench.cases if c.split == "test"])
    models = (TfidfReceiptModel(C=C, max_features=max_features, seed=seed), AlwaysNoChangeModel(),
              MajorityFamilyModel())
    rows = []
    for model in models:
        model.fit(train)
        p_locked = model.predict(sets["locked"])
        for key, cs in sets.items():
            preds = p_locked if key == "locked" else model.predict(cs)
            g = {c.case_id: gold[c.case_id] for c in cs}
            ctl = key if key in ("permutation", "distractor", "inverse") else ""
            if ctl:
                g.update({c.base_id: gold[c.base_id] for c in cs})
            row = score_predictions(g, preds, base_predictions=p_locked if ctl else (), control=ctl,
                                    n_boot=n_boot, level=level, seed=seed)
            rd = reason_debt({k: v for k, v in g.items() if v.control == ctl}, preds, threshold=threshold)
            rows.append({"evaluation": EVALUATIONS[key], "model": model.name, **row, "reason_debt": rd.reason_debt,
                         "accepted_coverage": rd.accepted_coverage, "gold_change_recall": rd.gold_change_recall})
    table = pd.DataFrame(rows)
    findings = paper_shape(table, model=models[0].name, trivial=TRIVIAL_MODELS, locked=EVALUATIONS["locked"],
                           multi=EVALUATIONS["multi"],
                           controls={k: EVALUATIONS[k] for k in ("permutation", "distractor", "inverse")})
    config = {"seed": seed, "C": C, "max_features": max_features, "threshold": threshold, "n_boot": n_boot,
              "level": level, "interval": "percentile bootstrap over the changing cases of each evaluation set",
              "benchmark": bench.config.to_dict(),
              "sizes": {"train": len(train), **{EVALUATIONS[k]: len(v) for k, v in sets.items()}}}
    return BaselineReport(table, len(train), config, findings)
