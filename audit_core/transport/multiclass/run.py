"""The multi-class Transport run: the binary protocol's stages for a class target with C > 2 classes.

:class:`MulticlassTransportAudit` is :class:`~audit_core.transport.protocol.TransportAudit`
with the binary-only steps replaced; what it keeps unchanged:

* **declare** — domains, eligibility, weights (normalised to mean 1) and
  locked tolerances; the primary target must be a class target without a
  positive class, and a class the source domain does not hold is refused
  (``TRANSPORT_NOT_BINARY``: it could not be fitted);
* **split** — the same four source partitions per refit (stratified by the
  class, grouped, seeded ``seed · 1000 + refit``), every class at least
  twice in every partition, and the manifest;
* **fit** — preprocessing and model on train; the mappings
  (:mod:`.mappings`: raw, temperature, vector) on calibration; the
  max-probability thresholds (:mod:`.selective`) and the conformal quantiles
  (:mod:`.conformal`: LAC, APS, RAPS; marginal and by class) on selection;
* **evaluate / transport** — :mod:`.metrics` and the rules, unchanged, on
  the ID test and the target, unweighted and weighted;
* **classify** — paired OOD − ID changes per refit, a stratified record
  bootstrap (:mod:`.bootstrap`) and the binary verdict rule against locked
  tolerances (:data:`MC_TOLERANCES` for the multi-class metric names, the
  config's for the rule names shared with the binary run).

Not run for multi-class (recorded in the manifest): the target-definition
and evidence-degradation stresses, subgroup heterogeneity and the feature
shift. Per-class coverage and set size are the class heterogeneity.

Result rows use the binary table's columns. Conformal metric names carry the
score, ``"<score>:<metric>"`` (``aps:coverage``); the RAPS ``k_reg`` and
``λ`` are in the manifest.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.models.scores import scored_model
from audit_core.models.zoo import ModelSpec, train_model

from ..blas import serial_blas as _serial_blas
from ..changes import classify_changes
from ..protocol import STAGES, TransportAudit
from ..results import TransportResult, _finalise, refit_summary
from . import conformal as mcf
from .bootstrap import multiclass_bootstrap
from .conformal import ScoreSpec
from .figure_tables import multiclass_figure_tables
from .mappings import MC_MAPPINGS, fit_multiclass_mapping
from .metrics import multiclass_metric_values
from .selective import fit_thresholds, selective_rows

__all__ = ["MC_TOLERANCES", "MulticlassRules", "MulticlassTransportAudit", "MulticlassTransportResult",
           "is_multiclass_definition", "is_multiclass_target", "multiclass_mappings", "run_multiclass_transport"]

#: δ per multi-class metric (absolute units). Brier sums over classes, so its δ is twice the binary one.
MC_TOLERANCES: dict[str, float] = {"accuracy": 0.02, "auroc_macro": 0.02, "brier_multiclass": 0.02,
                                   "log_loss_multiclass": 0.03, "ece_top": 0.02, "ece_classwise": 0.02}

#: the multi-class counterpart of each binary mapping a config may name (Platt's one slope becomes a temperature;
#: the flexible maps become vector scaling).
_COUNTERPART = {"raw": "raw", "platt": "temperature", "temperature": "temperature", "isotonic": "vector",
                "beta": "vector", "vector": "vector"}

DEFAULT_SCORES = (ScoreSpec("lac"), ScoreSpec("aps"), ScoreSpec("raps", k_reg=1, lam=0.01))


def multiclass_mappings(names) -> tuple[str, ...]:
    """The multi-class mappings for a list of mapping names (binary names map to their counterparts), in order."""
    out = []
    for n in names:
        if n not in _COUNTERPART:
            raise fail("MULTICLASS_MAPPING", name=n, names=", ".join(MC_MAPPINGS))
        if _COUNTERPART[n] not in out:
            out.append(_COUNTERPART[n])
    return tuple(out)


def is_multiclass_target(config) -> bool:
    """Whether the config's primary target is a class target without a positive class (every value a class)."""
    return is_multiclass_definition(config.targets[0])


def is_multiclass_definition(target) -> bool:
    """Whether one target definition (a mapping) is a class target without a positive class."""
    t = dict(target)
    return t.get("kind") == "class" and t.get("positive") is None


@dataclass(frozen=True)
class MulticlassRules:
    """Operating rules fitted on the source selection partition.

    Attributes
    ----------
    thresholds : dict of float to float
        Selection rate ``s`` → max-probability threshold ``τ_s``.
    qhat : dict
        Score name → ``α`` → ``{"marginal": float, "label_conditional": ndarray (C,)}``.
    hcep_thresholds : tuple of float
    scores : tuple of ScoreSpec
    """

    thresholds: dict
    qhat: dict
    hcep_thresholds: tuple
    scores: tuple

    def rows(self) -> list[dict]:
        out = [dict(analysis="selective", metric="threshold", value=t, selection_rate=s) for s, t in self.thresholds.items()]
        for spec in self.scores:
            for a, q in self.qhat[spec.name].items():
                out.append(dict(analysis="conformal_marginal", metric=f"{spec.name}:qhat", value=q["marginal"], alpha=a))
                out.append(dict(analysis="conformal_marginal", metric=f"{spec.name}:qhat_unbounded",
                                value=float(np.isinf(q["marginal"])), alpha=a))
                for c, v in enumerate(q["label_conditional"]):
                    out.append(dict(analysis="conformal_label_conditional", metric=f"{spec.name}:qhat_class{c}",
                                    value=float(v), alpha=a))
                    out.append(dict(analysis="conformal_label_conditional", metric=f"{spec.name}:qhat_class{c}_unbounded",
                                    value=float(np.isinf(v)), alpha=a))
        return out


def _clip(P: np.ndarray) -> np.ndarray:
    """SPEC §0: clip to [1e-8, 1] and renormalise; shape (n, C)."""
    Q = np.clip(np.asarray(P, dtype=float), 1e-8, 1.0)
    return Q / Q.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class MulticlassTransportResult(TransportResult):
    """A multi-class transport run: the binary result's tables, plus the class names in code order.

    ``extras`` holds ``partitions`` and, for the figures, ``reliability`` (top-label bins) and ``curves``
    (max-probability risk–selection) of refit 0 (:mod:`.figure_tables`).
    """

    classes: tuple = field(default=())


class MulticlassTransportAudit(TransportAudit):
    """The staged transport runner for a class target with C > 2 classes (module docstring).

    Parameters
    ----------
    config : TransportConfig
        Its ``mappings`` are read as their multi-class counterparts
        (:func:`multiclass_mappings`); its rule tolerances apply.
    scores : tuple of ScoreSpec, optional
        Conformal scores (names unique); default LAC, APS and RAPS
        (``k_reg = 1``, ``λ = 0.01``).
    tolerances : mapping, optional
        δ for the multi-class metrics, replacing :data:`MC_TOLERANCES` entries.
    progress, should_stop : as for :class:`TransportAudit`
    """

    _multiclass = True

    def __init__(self, config, *, scores=None, tolerances=None, progress=None, should_stop=None) -> None:
        if getattr(config, "fixed_model", None) is not None and not config.on_scores:
            raise fail("TRANSPORT_BAD_OPTION", name="fixed_model", problem=(
                f"the multi-class run refits zoo models; it cannot audit the model {config.fixed_model!r} as it is"))
        super().__init__(config, progress=progress, should_stop=should_stop)
        self.mc_mappings = multiclass_mappings(config.mappings)
        self.scores = tuple(DEFAULT_SCORES if scores is None else scores)
        names = [s.name for s in self.scores]
        if not self.scores or len(set(names)) != len(names) or not all(isinstance(s, ScoreSpec) for s in self.scores):
            raise fail("TRANSPORT_BAD_OPTION", name="scores", problem=f"give distinct ScoreSpec scores, got {names}")
        self.mc_tolerances = self._tolerances(tolerances)

    def _tolerances(self, extra) -> dict[str, float]:
        tol = {k: v for k, v in self.config.tolerances.items()}
        for k, v in {**MC_TOLERANCES, **dict(extra or {})}.items():
            if k not in MC_TOLERANCES or not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise fail("TRANSPORT_BAD_OPTION", name=f"tolerances[{k!r}]",
                           problem=f"a multi-class metric ({', '.join(MC_TOLERANCES)}) with a finite δ ≥ 0, got {v!r}")
            tol[k] = float(v)
        for spec in self.scores:  # conformal metric names carry their score
            for m in ("coverage", "mean_set_size"):
                if m in tol:
                    tol[f"{spec.name}:{m}"] = tol[m]
        return tol

    # ------------------------------------------------------------ declare / split
    def declare(self, source, target=None):
        c = self.config
        if not is_multiclass_target(c):
            raise fail("TRANSPORT_BAD_OPTION", name="targets",
                       problem=f"the primary target {c.primary_target!r} must be a class target without a positive class")
        super().declare(source, target)
        src = list(self._label_classes["source"][c.primary_target])
        tgt = list(self._label_classes.get("target", {}).get(c.primary_target, src))
        if tgt != src and self._ytgt is not None:  # the target lacks a class (a class only the target holds is refused in declare)
            code = np.array([src.index(name) for name in tgt])
            self._ytgt[c.primary_target] = code[self._ytgt[c.primary_target]]  # the source's codes
        self.classes = tuple(src)
        if len(self.classes) < 3:
            raise fail("TRANSPORT_BAD_OPTION", name="targets", problem=(
                f"target {c.primary_target!r} has {len(self.classes)} classes ({', '.join(map(repr, self.classes))}): "
                "declare a positive class to run the binary protocol"))
        if c.on_scores:  # one score column per class, in the sorted class order
            self._model = scored_model(c.score_columns, n_classes=len(self.classes), classes=self.classes)
        return self

    def _class_codes(self) -> tuple[int, ...]:
        return tuple(range(len(self.classes)))

    def split(self):
        super().split()
        self.manifest.update({
            "binary_only": False, "multiclass": True, "classes": [str(x) for x in self.classes],
            "multiclass_mappings": list(self.mc_mappings),
            "conformal_scores": [{"name": s.name, "k_reg": s.k_reg, "lambda": s.lam} for s in self.scores],
            "tolerances": dict(self.mc_tolerances),
            "not_run": ["stress", "heterogeneity (subgroups)", "feature shift"] + self.manifest.get("not_run", [])})
        self.manifest["config"] = {**self.manifest["config"], "mappings": list(self.mc_mappings)}
        self.manifest["model"]["fitted_on_source"]["calibration"] = "probability mappings (" + ", ".join(self.mc_mappings) + ")"
        self._record_headline()  # on the multi-class mapping names
        return self

    # ------------------------------------------------------------ fit
    def fit(self):
        self._begin("fit")
        c = self.config
        t = c.primary_target
        y = self._ysrc[t]
        self._pipes, self._rules = {}, {}
        units = [(r, m) for r in range(c.n_refits) for m in c.models]
        for i, (r, m) in enumerate(units):
            self._tick(i / len(units), f"Fitting {m}, refit {r + 1} of {c.n_refits}")
            tr, cal, sel = (self._source_rows(r, p) for p in ("train", "calibration", "selection"))

            def w(idx):
                return None if self._wsrc is None else self._wsrc[idx]

            spec = ModelSpec(kind=m, seed=self._split_seeds[r], params=c.model_params.get(m, {}))
            if c.on_scores:
                assert self._model is not None  # the scored model, made from the score columns in declare()
                fm = self._model
            else:
                fm = train_model(self._src.iloc[tr], y[tr], spec=spec, numeric=c.numeric, categorical=c.categorical,
                                 missing_indicators=c.missing_indicators, sample_weight=w(tr),
                                 classes=[str(x) for x in self.classes])
            raw = {"calibration": _clip(fm.predict_proba(self._src.iloc[cal])),
                   "selection": _clip(fm.predict_proba(self._src.iloc[sel])),
                   "id_test": _clip(fm.predict_proba(self._src.iloc[self._source_rows(r, "id_test")]))}
            if self._tgt is not None:
                raw["ood"] = _clip(fm.predict_proba(self._tgt))
            with _serial_blas():
                maps = {mp: fit_multiclass_mapping(mp, raw["calibration"], y[cal], sample_weight=w(cal))
                        for mp in self.mc_mappings}
            self._pipes[(r, m)] = {"model": fm, "raw": raw, "maps": maps}
            for mp, f in maps.items():
                Psel = f(raw["selection"])
                rules = MulticlassRules(
                    thresholds=fit_thresholds(Psel, c.selection_rates, sample_weight=w(sel)),
                    qhat={s.name: {float(a): mcf.calibrate(y[sel], Psel, a, s) for a in c.alphas} for s in self.scores},
                    hcep_thresholds=tuple(float(x) for x in c.hcep_thresholds), scores=self.scores)
                self._rules[(r, m, mp)] = rules
                ids = dict(domain="source", model=m, mapping=mp, refit=r)
                self._emit(rules.rows(), **ids)
                self._emit([dict(analysis="fitted", metric=f"mapping_{k}", value=v)
                            for k, v in {**f.flat_params(), **({"fallback": float(f.params["fallback"])}
                                                                if "fallback" in f.params else {})}.items()], **ids)
        self._done.append("fit")
        return self

    # ------------------------------------------------------------ evaluate / transport
    def _evaluate(self, c) -> None:
        for i, (r, m) in enumerate(self._pipes):
            self._tick(i / len(self._pipes), f"Evaluating refit {r + 1}")
            for mp in self.mc_mappings:
                for dom, y, w, _ in self._test_sets(r):
                    P = self._mapped(r, m, mp, dom)
                    for weighting, ww in [("unweighted", None)] + ([("weighted", w)] if w is not None else []):
                        vals = multiclass_metric_values(y, P, sample_weight=ww, n_bins=c.n_bins)
                        self._emit([dict(analysis="metrics", metric=k, value=v, weighting=weighting)
                                    for k, v in vals.items()], domain=dom, model=m, mapping=mp, refit=r)

    def _transport(self, c) -> None:
        for i, (r, m) in enumerate(self._pipes):
            self._tick(i / len(self._pipes), f"Transporting rules, refit {r + 1}")
            for mp in self.mc_mappings:
                rules = self._rules[(r, m, mp)]
                for dom, y, w, _ in self._test_sets(r):
                    P = self._mapped(r, m, mp, dom)
                    rows = []
                    for weighting, ww in [("unweighted", None)] + ([("weighted", w)] if w is not None else []):
                        rows += selective_rows(y, P, rules.thresholds, rules.hcep_thresholds, sample_weight=ww,
                                               weighting=weighting)
                    rows += self._conformal_rows(y, P, w, rules)
                    self._emit(rows, domain=dom, model=m, mapping=mp, refit=r)

    def _conformal_rows(self, y, P, w, rules) -> list[dict]:
        rows = []
        for spec in self.scores:
            stats = mcf.class_scores(P, spec)[0]
            for a, q in rules.qhat[spec.name].items():
                for method in ("marginal", "label_conditional"):
                    rep = mcf.set_report(y, mcf.prediction_sets(P, q[method], spec, stats=stats), sample_weight=w)
                    for k, v in rep.items():
                        if k == "coverage_weighted":
                            if w is not None:
                                rows.append(dict(analysis=f"conformal_{method}", metric=f"{spec.name}:coverage", value=v,
                                                 weighting="weighted", alpha=a))
                            continue
                        rows.append(dict(analysis=f"conformal_{method}", metric=f"{spec.name}:{k}", value=v, alpha=a))
        return rows

    # ------------------------------------------------------------ classify and the rest
    def classify(self):
        self._begin("classify")
        with _serial_blas():
            rows, verdicts = classify_changes(self, tolerances=self.mc_tolerances)
        self._emit(rows)
        self.tables["verdicts"] = verdicts
        self._done.append("classify")
        return self

    def _bootstrap(self) -> dict:
        return multiclass_bootstrap(self)

    def _mapped(self, r, m, mp, domain) -> np.ndarray:
        pipe = self._pipes[(r, m)]
        return pipe["maps"][mp](pipe["raw"]["id_test" if domain == "id" else "ood"])

    def stress(self):
        """Not run for multi-class targets (recorded in the manifest's ``not_run``)."""
        self._begin("stress")
        self._done.append("stress")
        return self

    def heterogeneity(self):
        """Not run for multi-class targets beyond the per-class coverage rows."""
        self._begin("heterogeneity")
        self._done.append("heterogeneity")
        return self

    def run(self, source: pd.DataFrame, target: pd.DataFrame | None = None) -> MulticlassTransportResult:
        result = super().run(source, target)  # ends with self.result()
        assert isinstance(result, MulticlassTransportResult)
        return result

    def result(self) -> MulticlassTransportResult:
        if len(self._done) != len(STAGES):
            super().result()  # raises the stage-order refusal
        table = _finalise(pd.DataFrame(self._rows))
        extras = {**{k: v for k, v in self.tables.items() if k != "verdicts"}, **multiclass_figure_tables(self)}
        return MulticlassTransportResult(table=table, verdicts=self.tables.get("verdicts", pd.DataFrame()),
                                         refit_summary=refit_summary(table), extras=extras, manifest=self.manifest,
                                         classes=tuple(str(x) for x in self.classes))


def run_multiclass_transport(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config, scores=None,
                             tolerances=None, progress=None, should_stop=None) -> MulticlassTransportResult:
    """Run the multi-class protocol; see :class:`MulticlassTransportAudit`.

    Parameters
    ----------
    source : pandas.DataFrame
        The source table, or one table with both domains (``config.domain_column``).
    target : pandas.DataFrame, optional
    config : TransportConfig
        Primary target: a class target without a positive class, C > 2.
    scores : tuple of ScoreSpec, optional
    tolerances : mapping, optional
        δ for the multi-class metric names (:data:`MC_TOLERANCES`).

    Returns
    -------
    MulticlassTransportResult
    """
    return MulticlassTransportAudit(config, scores=scores, tolerances=tolerances, progress=progress,
                                    should_stop=should_stop).run(source, target)
