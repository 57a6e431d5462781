"""The transport protocol: frozen declaration and a staged runner (SPEC §2).

The runner :class:`TransportAudit` audits a binary target (a class target
with more than two classes runs :class:`~audit_core.transport.multiclass.run.MulticlassTransportAudit`,
which replaces the binary-only steps). It has explicit steps
that must run in this order; each refuses to run early or twice:

1. :meth:`~TransportAudit.declare` — check the declaration against the data,
   build labels for every target definition, lock the tolerances;
2. :meth:`~TransportAudit.split` — four disjoint source partitions per refit
   and the manifest;
3. :meth:`~TransportAudit.fit` — preprocessing + models on train, mappings on
   the probability-calibration partition, rules on the selection partition;
4. :meth:`~TransportAudit.evaluate` — the metric registry on ID test and OOD;
5. :meth:`~TransportAudit.transport` — selective and conformal rules applied
   unchanged; then :meth:`~TransportAudit.classify` — paired changes, the
   vectorised bootstrap and tolerance verdicts;
6. :meth:`~TransportAudit.stress` — target-definition sensitivity and
   evidence degradation;
7. :meth:`~TransportAudit.heterogeneity` — by class and declared subgroup,
   then the per-feature shift between the domains, linked to stages 6–7;

then :meth:`~TransportAudit.result`. Target-domain records are only ever
passed to ``predict_proba`` and to metric functions; every fitted quantity
(model, mapping, threshold, quantile, mutual-information ranking, donor pool)
comes from a source partition, which :meth:`TransportAudit._source_rows`
checks.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from audit_core.data.dataset import frame_fingerprint, mean_one_weights
from audit_core.data.eligibility import EligibilityFilter
from audit_core.data.frames import from_polars
from audit_core.data.preprocess import category_text
from audit_core.data.targets import apply_targets
from audit_core.errors import AuditInputError, fail
from audit_core.models.scores import check_scores, scored_model
from audit_core.models.zoo import FittedModel, ModelSpec, train_model

from . import stress as st
from .blas import serial_blas as _serial_blas
from .cautions import partition_warnings, stress_warnings
from .changes import classify_changes, exact_bootstrap
from .config import TransportConfig, _bad, _plain, _sha256_file, class_names_of, versions
from .evaluation import evaluate_pipeline, fit_rules
from .headline import HeadlineSlice, headline_slice
from .mappings import fit_mapping
from .results import TransportResult, build_result
from .scores import scores_manifest, scores_model_manifest
from .shift_audit import shift_tables
from .splits import PARTITIONS, four_way_split
from .verdicts import check_tolerances

__all__ = ["TransportAudit", "STAGES", "run_transport"]


STAGES = ("declare", "split", "fit", "evaluate", "transport", "classify", "stress", "heterogeneity")


def _refuse_multiclass(c: TransportConfig, source: pd.DataFrame, target: pd.DataFrame | None, *,
                       source_lacking_only: bool = False) -> None:
    """``TRANSPORT_NOT_BINARY`` for a class target without a positive class, before any label is built.

    Such a target makes every value a class. Refusing it from the declaration
    (not from the classes one domain happens to hold) means a three-class
    target whose middle class is absent from the source is refused as
    multi-class, with the classes of both domains named. The multi-class run
    (``source_lacking_only``) refuses only that case: a class the source
    does not hold cannot be fitted.
    """
    for t in c.targets:
        if t.get("kind") != "class" or t.get("positive") is not None:
            continue
        col = t.get("column")
        if col not in source.columns:
            continue  # apply_targets names the unknown column
        seen = [f for f in (source, target) if f is not None and col in f.columns]
        values = pd.unique(pd.concat([f[col].dropna().astype(object) for f in seen], ignore_index=True))
        src = pd.unique(source[col].dropna().astype(object))
        text = sorted(map(str, values))
        if source_lacking_only and len(src) == len(text):
            continue
        raise fail("TRANSPORT_NOT_BINARY", name=str(t.get("name")), column=col, k=len(text),
                   classes=", ".join(repr(v) for v in text[:10]) + (" …" if len(text) > 10 else ""),
                   source=f"{len(src)} of them" if len(src) != len(text) else "all of them")


class TransportAudit:
    """Staged transport runner (MAPIE-style): each step refuses to run out of order.

    Parameters
    ----------
    config : TransportConfig
    model : FittedModel, optional
        The model to audit as it is, required exactly when
        ``config.fixed_model`` is set. Its probability column 1 must be the
        positive class of the primary target definition. A run on scores
        (``config.score_columns``) takes none: its model is
        :func:`~audit_core.models.scores.scored_model`, which reads the score
        columns record by record (:mod:`.scores`).
    progress : callable(fraction, message), optional
    should_stop : callable() -> bool, optional
        Polled between units of work; a true value stops the run with the
        declared error ``TRANSPORT_CANCELLED``.

    Examples
    --------
    The steps run in order (``declare → split → fit → evaluate → transport →
    classify → stress → heterogeneity``, then ``result()``); a step asked for
    out of order is refused:

    >>> config = TransportConfig(targets=({"kind": "threshold", "name": "t", "column": "y", "threshold": 0.5},),
    ...                          numeric=("x",))
    >>> TransportAudit(config).split()
    Traceback (most recent call last):
    ...
    audit_core.errors.AuditInputError: Step 'split' cannot run yet: run 'declare' first. ...
    """

    # set by declare() and split(); the stage order (_begin) refuses any later step before them
    _src: pd.DataFrame
    _ysrc: dict[str, np.ndarray]
    _wsrc: np.ndarray | None
    _tgt: pd.DataFrame | None
    _ytgt: dict[str, np.ndarray] | None
    _wtgt: np.ndarray | None
    _keys: np.ndarray
    _parts: np.ndarray
    _split_seeds: list[int]
    manifest: dict[str, Any]
    # set by fit(): per (refit, model, mapping), Rules (MulticlassRules in the multi-class run)
    _rules: dict[tuple[int, str, str], Any]

    def __init__(self, config: TransportConfig, *, progress: Callable[[float, str], None] | None = None,
                 should_stop: Callable[[], bool] | None = None, model: FittedModel | None = None) -> None:
        if not isinstance(config, TransportConfig):
            raise _bad("config", "expected a TransportConfig")
        if config.on_scores:  # bring your own scores: the model reads them by row (:mod:`.scores`)
            if model is not None:
                raise _bad("model", "a run on scores reads its probabilities from the score columns; pass no model")
            model = None if self._multiclass else scored_model(config.score_columns)
        if config.fixed_model is not None and model is None and not (config.on_scores and self._multiclass):
            raise fail("TRANSPORT_FIXED_MODEL_MISSING", label=config.fixed_model)
        if config.fixed_model is None and model is not None:
            raise fail("TRANSPORT_FIXED_MODEL_UNUSED")
        if model is not None and model.n_classes != 2:
            raise fail("TRANSPORT_FIXED_MODEL_NOT_BINARY", label=config.fixed_model, k=model.n_classes)
        self._model = model
        self._config = config
        self._done: list[str] = []
        self._progress = progress or (lambda f, m: None)
        self._cancel = should_stop or (lambda: False)
        self._rows: list[dict] = []
        self.tables: dict[str, pd.DataFrame] = {}
        self._label_classes: dict[str, dict] = {}

    # ------------------------------------------------------------ plumbing
    @property
    def config(self) -> TransportConfig:
        return self._config

    @property
    def stages_done(self) -> tuple[str, ...]:
        return tuple(self._done)

    def set_tolerances(self, tolerances: Mapping[str, float]) -> "TransportAudit":
        """Replace the tolerances; only allowed before :meth:`declare`."""
        if self._done:
            raise fail("TRANSPORT_TOLERANCES_LOCKED")
        self._config = replace(self._config, tolerances=check_tolerances(tolerances))
        return self

    def _begin(self, stage: str) -> None:
        i = STAGES.index(stage)
        if stage in self._done:
            raise fail("TRANSPORT_STAGE_DONE", stage=stage)
        if len(self._done) != i:
            raise fail("TRANSPORT_STAGE_ORDER", stage=stage, needed=STAGES[len(self._done)], order=" → ".join(STAGES))
        self._stage = stage

    def _tick(self, frac: float, msg: str) -> None:
        if self._cancel():
            raise fail("TRANSPORT_CANCELLED", stage=self._stage)
        base = STAGES.index(self._stage) / len(STAGES)
        self._progress(min(1.0, base + frac / len(STAGES)), msg)

    def _emit(self, rows, **ids) -> None:
        c = self._config
        for r in rows:
            row = {
                "analysis": "metrics", "condition": "clean", "target_definition": c.primary_target,
                "domain": "id", "model": "", "mapping": "", "refit": -1, "metric": "", "value": np.nan,
                "weighting": "unweighted", "alpha": np.nan, "selection_rate": np.nan,
            }
            row.update(ids)
            row.update({k: v for k, v in r.items() if v is not None})
            self._rows.append(row)

    def _source_rows(self, refit: int, partition: str) -> np.ndarray:
        """Source row positions of one partition (never target rows)."""
        idx = np.flatnonzero(self._parts[refit] == PARTITIONS.index(partition))
        if idx.size and idx.max() >= len(self._src):  # pragma: no cover - invariant
            raise fail("TRANSPORT_TARGET_TUNING", what=partition)
        return idx

    # ------------------------------------------------------------ stage 1
    def declare(self, source: pd.DataFrame, target: pd.DataFrame | None = None) -> "TransportAudit":
        """Check the declaration against the data and lock the tolerances.

        Parameters
        ----------
        source : pandas.DataFrame or polars.DataFrame
            The source table, or the one table holding both domains.
        target : pandas.DataFrame or polars.DataFrame, optional
            The target table when the domains come as two tables.
        """
        self._begin("declare")
        c = self._config
        source, target = from_polars(source, where="TransportAudit.declare"), from_polars(target, where="TransportAudit.declare")
        if target is None and c.single_domain and c.domain_column is None:
            src, tgt = source, None
            hashes = {"input": frame_fingerprint(source)}
        elif target is None:
            if c.domain_column is None or c.source_value is None or c.target_value is None:
                raise fail("TRANSPORT_NO_DOMAINS")
            if c.domain_column not in source.columns:
                raise fail("TRANSPORT_UNKNOWN_COLUMN", what="domain", column=c.domain_column, which="input")
            if str(c.source_value) == str(c.target_value):
                raise fail("TRANSPORT_SAME_DOMAIN", value=c.source_value)
            dom = source[c.domain_column].astype(str)
            src, tgt = source.loc[(dom == str(c.source_value)).to_numpy()], source.loc[(dom == str(c.target_value)).to_numpy()]
            hashes = {"input": frame_fingerprint(source)}
        else:
            src, tgt = source, target
            hashes = {"source": frame_fingerprint(source), "target": frame_fingerprint(target)}
        for f in c.input_files:
            hashes[f"file:{f}"] = _sha256_file(f)
        _refuse_multiclass(c, src, tgt, source_lacking_only=self._multiclass)
        prepared: list[tuple[pd.DataFrame | None, dict[str, np.ndarray] | None, np.ndarray | None]] = []
        for which, frame, value in (("source", src, c.source_value), ("target", tgt, c.target_value)):
            if frame is None:
                prepared.append((None, None, None))
                continue
            if len(frame) == 0:
                raise fail("TRANSPORT_EMPTY_DOMAIN", which=which, column=c.domain_column, value=value)
            cols = list(c.features) + list(c.strata_columns) + list(c.subgroup_columns or ()) + [
                x for x in (c.weight_column, c.group_column, c.key_column) if x]
            for col in cols:
                if col not in frame.columns:
                    raise fail("TRANSPORT_UNKNOWN_COLUMN", what="declared", column=col, which=which)
            for col in (self._model.input_columns if self._model is not None else c.score_columns):
                if col not in frame.columns:
                    raise fail("TRANSPORT_UNKNOWN_COLUMN", what="score" if c.on_scores else "model input",
                               column=col, which=which)
            if c.eligibility:
                frame = frame.loc[EligibilityFilter(expression=c.eligibility).mask(frame)]
            index = frame.index
            frame = frame.reset_index(drop=True)
            try:
                labels = apply_targets([dict(t) for t in c.targets], frame)
            except AuditInputError as err:  # e.g. the positive class does not occur in this domain
                raise fail("TRANSPORT_TARGET_IN_DOMAIN", which=which, message=err.message) from None
            self._label_classes[which] = {k: v.class_names for k, v in labels.items()}
            if c.on_scores:  # rows named as in the table given; one column per class of the source
                check_scores(frame.set_axis(index), c.score_columns, which=which,
                             classes=self._label_classes["source"][c.primary_target])
            for name, lab in labels.items():
                if self._multiclass:
                    continue
                if not lab.binary or len(lab.classes) != 2:  # pragma: no cover - refused by _refuse_multiclass
                    raise fail("TRANSPORT_NOT_BINARY", name=name, column="?", k=len(lab.classes),
                               classes=", ".join(map(repr, lab.classes)), source="?")
            w = None
            if c.weight_column:
                w = pd.to_numeric(frame[c.weight_column], errors="coerce").to_numpy(dtype=float)
                if not np.isfinite(w).all() or (w < 0).any() or not (w > 0).any():
                    raise _bad("weight_column", f"{c.weight_column!r} must hold finite non-negative numbers")
                w = mean_one_weights(w)
            prepared.append((frame, {k: np.asarray(v.y) for k, v in labels.items()}, w))
        (src_frame, ysrc, self._wsrc), (self._tgt, self._ytgt, self._wtgt) = prepared
        assert src_frame is not None and ysrc is not None  # the source domain is always prepared
        self._src, self._ysrc = src_frame, ysrc
        self._keys = self._src[c.key_column].to_numpy() if c.key_column else np.arange(len(self._src))
        self._hashes = hashes
        self._done.append("declare")
        return self

    # ------------------------------------------------------------ stage 2
    def split(self) -> "TransportAudit":
        """Four disjoint, stratified (and grouped) source partitions per refit."""
        self._begin("split")
        c = self._config
        y = self._ysrc[c.primary_target]
        strata = pd.Series(y.astype(str))
        for col in c.strata_columns:
            strata = strata + "|" + category_text(self._src[col]).fillna("<NA>").to_numpy()
        groups = category_text(self._src[c.group_column]).to_numpy() if c.group_column else None
        self._split_seeds = [int(c.seed) * 1000 + r for r in range(c.n_refits)]
        parts = []
        for r, s in enumerate(self._split_seeds):
            p = four_way_split(strata.to_numpy(), fractions=c.fractions, groups=groups, seed=s)
            for k, name in enumerate(PARTITIONS):
                for cls in self._class_codes():
                    cnt = int(((p == k) & (y == cls)).sum())
                    if cnt < 2:
                        raise fail("TRANSPORT_SMALL_PARTITION", refit=r, partition=name, count=cnt, cls=cls)
            parts.append(p)
        self._parts = np.stack(parts)
        self.tables["partitions"] = pd.DataFrame(
            {"key": self._keys, **{f"refit_{r}": pd.Categorical.from_codes(p, pd.Index(PARTITIONS)) for r, p in enumerate(parts)}}
        )
        self.manifest = {
            "kind": "transport",
            "binary_only": True,
            "config": c.to_dict(),
            "seeds": {"split": self._split_seeds, "model": self._split_seeds, "bootstrap": int(c.seed) + 7919,
                      "stress": [s + 17 for s in self._split_seeds]},
            "bootstrap": "exact record bootstrap" if c.exact_bootstrap else "binned-cell record bootstrap",
            "model": self._model_manifest(),
            "inputs_sha256": self._hashes,
            "versions": versions(),
            "n_source": int(len(self._src)),
            "n_target": 0 if self._tgt is None else int(len(self._tgt)),
            "partitions": {"names": list(PARTITIONS), "keys": [_plain(k) for k in self._keys.tolist()],
                           "codes": [p.astype(int).tolist() for p in parts]},
        }
        if c.on_scores:
            self.manifest.update(scores_manifest(c))
        self._record_headline()
        codes = self._class_codes()
        names = getattr(self, "classes", None) or class_names_of(self.manifest["config"]) or [f"class {k}" for k in codes]
        self.manifest["warnings"] = partition_warnings(self._parts, y, partitions=PARTITIONS, codes=codes, names=names)
        self._done.append("split")
        return self

    def _record_headline(self) -> None:
        """The manifest's ``headline``: the slice every headline number reads (:mod:`.headline`)."""
        headline = headline_slice(self.manifest["config"], multiclass=self._multiclass)
        assert isinstance(headline, HeadlineSlice), headline  # a validated config declares models, mappings, targets
        self.manifest["headline"] = headline.to_dict()

    #: False: a class target without a positive class is refused (``TRANSPORT_NOT_BINARY``);
    #: the multi-class runner (:mod:`audit_core.transport.multiclass.run`) sets it.
    _multiclass = False

    def _class_codes(self) -> tuple[int, ...]:
        """Class codes every partition must hold (at least 2 records each)."""
        return (0, 1)

    def _model_manifest(self) -> dict:
        """What was fitted on which source partition, and whether the model was refit."""
        c = self._config
        fitted = {"calibration": "probability mappings (" + ", ".join(c.mappings) + ")",
                  "selection": "selection thresholds and conformal quantiles",
                  "train": "stress quantities: mutual-information ranking, corruption distribution, oracle donors"}
        if c.on_scores:
            return scores_model_manifest(c, fitted)
        if self._model is not None:
            return {"refit": False, "label": c.fixed_model, "spec": json.loads(json.dumps(dict(self._model.spec), default=str)),
                    "input_columns": list(self._model.input_columns), "fitted_on_source": fitted,
                    "not_fitted": "the model and its own preprocessing (used as given)",
                    "note": "The model was not refit. Its training records are unknown to the audit, so the ID "
                            "test may hold records it was trained on."}
        fitted["train"] = "preprocessing and the model, then " + fitted["train"]
        return {"refit": True, "kinds": list(c.models), "params": {k: c.model_params.get(k, {}) for k in c.models},
                "seeds": "seed * 1000 + refit", "fitted_on_source": fitted}

    # ------------------------------------------------------------ stage 3
    def _fit_pipeline(self, refit: int, model: str, target: str) -> dict:
        """Fit model + mappings for one refit and label definition (source only)."""
        c = self._config
        tr = self._source_rows(refit, "train")
        cal = self._source_rows(refit, "calibration")
        y = self._ysrc[target]
        wtr = self._wsrc[tr] if self._wsrc is not None else None
        if self._model is not None:  # audited as it is: never refitted
            fm = self._model
        else:
            spec = ModelSpec(kind=model, seed=self._split_seeds[refit], params=c.model_params.get(model, {}))
            fm = train_model(self._src.iloc[tr], y[tr], spec=spec, numeric=c.numeric, categorical=c.categorical,
                             missing_indicators=c.missing_indicators, sample_weight=wtr)
        # one predict_proba call over the three held-out partitions (row-wise,
        # so identical to three separate calls), then split by partition
        held = {part: self._source_rows(refit, part) for part in ("calibration", "selection", "id_test")}
        rows = np.concatenate(list(held.values()))
        p_all = self.predict(fm, self._src.iloc[rows], "source records")
        bounds = np.cumsum([0] + [len(v) for v in held.values()])
        raw = {part: p_all[bounds[i]:bounds[i + 1]] for i, part in enumerate(held)}
        if self._tgt is not None:
            raw["ood"] = self.predict(fm, self._tgt, "target records")
        wcal = self._wsrc[cal] if self._wsrc is not None else None
        with _serial_blas():
            maps = {m: fit_mapping(m, raw["calibration"], y[cal], sample_weight=wcal) for m in c.mappings}
        return {"model": fm, "raw": raw, "maps": maps}

    def predict(self, fm: FittedModel, frame: pd.DataFrame, what: str) -> np.ndarray:
        """Positive-class probabilities of ``frame`` (n,); a fixed model that cannot score it is a declared error."""
        if self._model is None:
            return fm.predict_proba(frame)[:, 1]
        try:
            return np.asarray(fm.predict_proba(frame), dtype=float)[:, 1]
        except (ValueError, TypeError, KeyError) as exc:
            raise fail("TRANSPORT_MODEL_CANNOT_SCORE", label=self._config.fixed_model, what=what,
                       detail=" ".join(str(exc).split())[:300].rstrip(".")) from None

    def stress_features(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(numeric, categorical)`` features the stresses degrade: the declared ones the model reads."""
        c = self._config
        if self._model is None:
            return c.numeric, c.categorical
        reads = set(self._model.input_columns)
        return tuple(f for f in c.numeric if f in reads), tuple(f for f in c.categorical if f in reads)

    def fit(self) -> "TransportAudit":
        """Fit preprocessing + model on train, mappings on calibration, rules on selection."""
        self._begin("fit")
        c = self._config
        self._pipes, self._rules = {}, {}
        units = [(r, m) for r in range(c.n_refits) for m in c.models]
        for i, (r, m) in enumerate(units):
            self._tick(i / len(units), f"Fitting {m}, refit {r + 1} of {c.n_refits}")
            pipe = self._fit_pipeline(r, m, c.primary_target)
            self._pipes[(r, m)] = pipe
            sel = self._source_rows(r, "selection")
            ysel = self._ysrc[c.primary_target][sel]
            wsel = self._wsrc[sel] if self._wsrc is not None else None
            for mp, f in pipe["maps"].items():
                with _serial_blas():
                    rules = fit_rules(ysel, f(pipe["raw"]["selection"]), selection_rates=c.selection_rates,
                                      alphas=c.alphas, hcep_thresholds=c.hcep_thresholds, sample_weight=wsel)
                self._rules[(r, m, mp)] = rules
                ids = dict(domain="source", model=m, mapping=mp, refit=r)
                self._emit(rules.rows(), **ids)
                self._emit([dict(analysis="fitted", metric=f"mapping_{k}", value=float(v))
                            for k, v in f.params.items()], **ids)
        self._done.append("fit")
        return self

    # ------------------------------------------------------------ helpers
    def _test_sets(self, refit: int, target: str | None = None):
        """(domain, y, weights, row positions) for ID test and OOD."""
        t = target or self._config.primary_target
        idt = self._source_rows(refit, "id_test")
        yield "id", self._ysrc[t][idt], (self._wsrc[idt] if self._wsrc is not None else None), idt
        if self._tgt is not None and self._ytgt is not None:  # set together by declare()
            yield "ood", self._ytgt[t], self._wtgt, None

    def _domains(self) -> tuple[str, ...]:
        return ("id",) if self._tgt is None else ("id", "ood")

    def _mapped(self, r, m, mp, domain) -> np.ndarray:
        pipe = self._pipes[(r, m)]
        return pipe["maps"][mp](pipe["raw"]["id_test" if domain == "id" else "ood"])

    def _extra(self, r, m, mp, domain) -> dict:
        """Mapping-specific metric columns (the Venn-Abers width) on one test set, record order."""
        pipe = self._pipes[(r, m)]
        return pipe["maps"][mp].extra_metrics(pipe["raw"]["id_test" if domain == "id" else "ood"])

    # ------------------------------------------------------------ stage 4
    def evaluate(self) -> "TransportAudit":
        """The metric registry on the ID test and the OOD test (weighted when weights exist)."""
        self._begin("evaluate")
        c = self._config
        with _serial_blas():
            self._evaluate(c)
        self._done.append("evaluate")
        return self

    def _evaluate(self, c) -> None:
        for i, (r, m) in enumerate(self._pipes):
            self._tick(i / len(self._pipes), f"Evaluating refit {r + 1}")
            for mp in c.mappings:
                for dom, y, w, _ in self._test_sets(r):
                    rows = evaluate_pipeline(y, self._mapped(r, m, mp, dom), None, weights=w, n_bins=c.n_bins,
                                             extra=self._extra(r, m, mp, dom))
                    self._emit(rows, domain=dom, model=m, mapping=mp, refit=r)

    # ------------------------------------------------------------ stage 5
    def transport(self) -> "TransportAudit":
        """Apply the source-fitted selective and conformal rules unchanged."""
        self._begin("transport")
        c = self._config
        with _serial_blas():
            self._transport(c)
        self._done.append("transport")
        return self

    def _transport(self, c) -> None:
        for i, (r, m) in enumerate(self._pipes):
            self._tick(i / len(self._pipes), f"Transporting rules, refit {r + 1}")
            for mp in c.mappings:
                for dom, y, w, _ in self._test_sets(r):
                    rows = evaluate_pipeline(y, self._mapped(r, m, mp, dom), self._rules[(r, m, mp)],
                                             weights=w, n_bins=c.n_bins, metrics=False)
                    self._emit(rows, domain=dom, model=m, mapping=mp, refit=r)

    def classify(self) -> "TransportAudit":
        """Paired OOD − ID changes, vectorised bootstrap intervals and verdicts (:mod:`.changes`)."""
        self._begin("classify")
        with _serial_blas():
            rows, verdicts = classify_changes(self)
        self._emit(rows)
        self.tables["verdicts"] = verdicts
        self._done.append("classify")
        return self

    def _bootstrap(self) -> dict:
        """Replicate changes, shape (R, B) per statistic (record resamples, fixed pipelines)."""
        if not self._config.exact_bootstrap:  # the default: the same replicates, binned-cell arithmetic
            from .replicates import binned_bootstrap

            return binned_bootstrap(self)
        return exact_bootstrap(self)

    # ------------------------------------------------------------ stage 6
    def stress(self) -> "TransportAudit":
        """Target-definition sensitivity and evidence degradation (as declared)."""
        self._begin("stress")
        c = self._config
        if c.on_scores:  # the stresses score changed records: they need a model (the manifest's ``not_run``)
            self._done.append("stress")
            return self
        with _serial_blas():
            if "target_definition" in c.stresses and len(c.targets) > 1:
                st.target_definition_stress(self)
            self.manifest.setdefault("warnings", []).extend(
                stress_warnings(stresses=c.stresses, targets=c.targets, primary=c.primary_target))
            if "degradation" in c.stresses:
                st.degradation_stress(self)
        self._done.append("stress")
        return self

    # ------------------------------------------------------------ stage 7
    def heterogeneity(self) -> "TransportAudit":
        """Metrics by class and by declared subgroup, on ID test and OOD; then the feature shift (:mod:`.shift_audit`)."""
        self._begin("heterogeneity")
        with _serial_blas():
            st.heterogeneity_rows(self)
            if self._tgt is not None and self._config.features:
                self._tick(0.5, "Feature shift between the domains")
                self.tables.update(shift_tables(self))
        self._done.append("heterogeneity")
        return self

    # ------------------------------------------------------------ output
    def result(self) -> TransportResult:
        """The :class:`~audit_core.transport.results.TransportResult` (after all steps)."""
        if len(self._done) != len(STAGES):
            raise fail("TRANSPORT_STAGE_ORDER", stage="result", needed=STAGES[len(self._done)], order=" → ".join(STAGES))
        return build_result(self)

    def run(self, source: pd.DataFrame, target: pd.DataFrame | None = None) -> TransportResult:
        """All steps in order; returns the result."""
        self.declare(source, target).split().fit().evaluate().transport().classify().stress().heterogeneity()
        self._progress(1.0, "Done")
        return self.result()


def run_transport(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config: TransportConfig,
                  progress=None, should_stop=None, model: FittedModel | None = None) -> TransportResult:
    """Run the whole protocol; see :class:`TransportAudit` (``model``: the fixed model, if any)."""
    return TransportAudit(config, progress=progress, should_stop=should_stop, model=model).run(source, target)
