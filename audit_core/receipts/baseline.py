"""A learned baseline, to show that prediction is not certification.

Character TF-IDF (``char`` n-grams 2-4, sublinear tf) feeding three
multinomial logistic regressions (scikit-learn): one for ``v_old``, one for
``v_new`` and one for the receipt family (its canonical text, e.g.
``"{G} | {N}"`` or ``"none"``, as one class). The confidence of a
prediction is the probability of the predicted receipt class.

Trained on the *train* split's single-source and no-op cases only; scored on
the locked test (test split, single-source and no-op), on the test split's
multi-source cases (a cardinality shift: families such as ``{G,N}`` are rare
or absent in training) and under each paired control. A majority-class
predictor fitted on the same training cases is reported alongside as a
diagnostic.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .accounting import Prediction, account, control_consistency, gold_from_benchmark, reason_debt
from .cube import parse_family
from .generator import Benchmark, BenchCase

__all__ = ["BaselineReport", "TfidfReceiptModel", "MajorityReceiptModel", "evaluate_baseline"]


class TfidfReceiptModel:
    """Character TF-IDF + logistic regression for verdicts and receipt family.

    Parameters
    ----------
    C : float, default 4.0
    max_features : int, default 50000
    seed : int, default 0
    """

    name = "tfidf-char + logistic regression"

    def __init__(self, *, C: float = 4.0, max_features: int = 50000, seed: int = 0) -> None:
        self.C = C
        self.max_features = max_features
        self.seed = seed

    def fit(self, cases: list[BenchCase]) -> "TfidfReceiptModel":
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        texts = [c.text for c in cases]
        self.vec_ = TfidfVectorizer(analyzer="char", ngram_range=(2, 4), sublinear_tf=True, min_df=2,
                                    max_features=self.max_features, dtype=np.float32)
        X = self.vec_.fit_transform(texts)
        self.models_ = {}
        for target, ys in (("v_old", [c.cube.v_old for c in cases]), ("v_new", [c.cube.v_new for c in cases]),
                           ("receipt", [c.cube.receipt_text for c in cases])):
            if len(set(ys)) == 1:
                self.models_[target] = ys[0]
                continue
            m = LogisticRegression(C=self.C, max_iter=300, random_state=self.seed)
            self.models_[target] = m.fit(X, ys)
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
            proba = m.predict_proba(X)
            idx = proba.argmax(axis=1)
            out[target] = list(m.classes_[idx])
            if target == "receipt":
                conf = proba[np.arange(len(cases)), idx]
        return [Prediction(c.case_id, frozenset(parse_family(out["receipt"][i])), out["v_old"][i],
                           out["v_new"][i], None, float(conf[i])) for i, c in enumerate(cases)]


class MajorityReceiptModel:
    """Predicts the most frequent training value of each target (diagnostic)."""

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
    """The learned-baseline table and what it was computed on."""

    table: pd.DataFrame = field(repr=False)
    n_train: int
    config: dict

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        return {"n_train": self.n_train, "config": self.config, "table": self.table.to_dict(orient="records")}

    def to_markdown(self) -> str:
        df = self.table.copy()
        cols = list(df.columns)
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for _, r in df.iterrows():
            cells = [f"{v:.3f}" if isinstance(v, float) and not np.isnan(v) else ("–" if isinstance(v, float) else str(v))
                     for v in r]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def evaluate_baseline(bench: Benchmark, *, seed: int = 0, C: float = 4.0, max_features: int = 50000,
                      threshold: float = 0.8) -> BaselineReport:
    """Train on single-source and no-op train cases; score on locked test, multi-source and controls.

    Parameters
    ----------
    bench : Benchmark
    seed, C, max_features
        Passed to :class:`TfidfReceiptModel`.
    threshold : float, default 0.8
        Confidence threshold of the reported reason debt.

    Returns
    -------
    BaselineReport
        Rows: ``evaluation`` (locked test, multi-source, each control) x
        ``model``; columns ``n``, ``verdict_acc``, ``receipt_acc``,
        ``drift``, ``inertia``, ``misattribution`` (rates), ``consistency``
        (control rows), ``reason_debt``, ``accepted_coverage``,
        ``gold_change_recall`` at ``threshold``.
    """
    train = bench.select(split="train", mutation=("single", "noop"))
    locked = bench.select(split="test", mutation=("single", "noop"))
    multi = bench.select(split="test", mutation=("multi",))
    controls = {k: bench.select(split="test", control=k) for k in ("permutation", "distractor", "inverse")}
    gold = gold_from_benchmark([c for c in bench.cases if c.split == "test"])
    rows = []
    for model in (TfidfReceiptModel(C=C, max_features=max_features, seed=seed), MajorityReceiptModel()):
        model.fit(train)
        p_locked = model.predict(locked)
        sets = [("locked test (single + no-op)", locked, p_locked, None),
                ("multi-source (cardinality shift)", multi, model.predict(multi), None)]
        for k, cs in controls.items():
            sets.append((f"control: {k}", cs, model.predict(cs), k))
        for label, cs, preds, ctl in sets:
            g = {c.case_id: gold[c.case_id] for c in cs}
            a = account(g, preds)
            rd = reason_debt(g, preds, threshold=threshold)
            cons = float("nan")
            if ctl is not None:
                pair_gold = {**g, **{c.base_id: gold[c.base_id] for c in cs}}
                cc = control_consistency(pair_gold, list(p_locked) + list(preds))
                cons = cc.rates.get(ctl, float("nan"))
            rows.append({"evaluation": label, "model": model.name, "n": a.n,
                         "verdict_acc": a.verdict_accuracy, "receipt_acc": a.receipt_accuracy,
                         "drift": a.drift_rate, "inertia": a.inertia_rate, "misattribution": a.misattribution_rate,
                         "consistency": cons, "reason_debt": rd.reason_debt,
                         "accepted_coverage": rd.accepted_coverage, "gold_change_recall": rd.gold_change_recall})
    return BaselineReport(pd.DataFrame(rows), len(train),
                          {"seed": seed, "C": C, "max_features": max_features, "threshold": threshold,
                           "benchmark": bench.config.to_dict()})
