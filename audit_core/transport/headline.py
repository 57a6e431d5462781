"""The headline slice of a Transport run: the one reading that every headline number, sentence and first figure uses.

A Transport run holds many readings of one quantity: R refits, several
models, several probability mappings, a primary and other target
definitions, unweighted and weighted rows. A reader must meet **one** of
them, and be told which. The headline slice is declared before any result
is seen (``TransportConfig.headline``: model, mapping, weighting) or, when
not declared, chosen by this rule:

* **model**: the first declared model;
* **mapping**: Platt scaling where it was fitted (in a multi-class run its
  counterpart, temperature scaling), else the first declared mapping;
* **target definition**: the primary (first) one;
* **weighting**: ``weighted`` when a weight column is declared (the
  population estimate), else ``unweighted``;
* **calibration estimator**: ECE on ``n_bins`` (15) equal-width bins
  (top-label ECE in a multi-class run); any other estimator shown beside it
  (smooth ECE) is labelled as another estimator;
* **aggregation**: the mean over the R refits, one value per refit.

The run manifest records the slice (``manifest["headline"]``); a run saved
without it falls back to the rule applied to its config
(:func:`recorded_headline`). The findings, the release gate's grounds, the
model card, the report's first page, the demo and the first figure of each
Transport tab read it, and say which slice it is
(:meth:`HeadlineSlice.describe`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["HeadlineSlice", "HEADLINE_KEYS", "headline_slice", "recorded_headline", "check_headline",
           "model_words", "mapping_words", "pipeline_words", "HEADLINE_RULE"]

#: What a config may declare (``headline: {model: …, mapping: …, weighting: …}``); each is optional.
HEADLINE_KEYS = ("model", "mapping", "weighting")
#: The rule in one sentence (the page and the docs say it).
HEADLINE_RULE = ("the first declared model; Platt scaling where it was fitted (temperature scaling for a multi-class "
                 "target), else the first declared mapping; the primary target definition; weighted when a weight "
                 "column is declared; ECE on 15 equal-width bins; the mean over the refits")

#: The multi-class counterpart of each binary mapping name (Platt's slope becomes a temperature).
_MC_COUNTERPART = {"raw": "raw", "platt": "temperature", "temperature": "temperature", "isotonic": "vector",
                   "beta": "vector", "vector": "vector"}
_MODEL_WORDS = {"logistic_regression": "logistic regression", "lightgbm": "LightGBM", "random_forest": "random forest",
                "hist_gradient_boosting": "histogram gradient boosting", "mlp": "MLP"}
_MAPPING_WORDS = {"raw": "uncalibrated", "platt": "Platt-calibrated", "isotonic": "isotonic-calibrated",
                  "temperature": "temperature-scaled", "beta": "beta-calibrated", "venn_abers": "Venn-Abers-calibrated",
                  "vector": "vector-scaled"}


def model_words(model: str) -> str:
    """A model's name as a sentence says it: ``logistic regression``, ``the imported model model.skops``."""
    model = str(model)
    if model.startswith("imported:"):
        return f"the imported model {model.split(':', 1)[1]}"
    if model.endswith(" (as trained)"):
        kind = model[: -len(" (as trained)")]
        return f"{_MODEL_WORDS.get(kind, kind)} as trained"
    return _MODEL_WORDS.get(model, model)


def mapping_words(mapping: str) -> str:
    """A mapping as an adjective: ``Platt-calibrated``, ``uncalibrated`` (raw)."""
    return _MAPPING_WORDS.get(str(mapping), f"{mapping}-mapped")


def pipeline_words(mapping: str, model: str) -> str:
    """A mapping and a model as one noun phrase: ``Platt-calibrated logistic regression``.

    An imported model loses its article after the adjective: ``Platt-calibrated imported model m.onnx``.

    >>> pipeline_words("platt", "imported:m.onnx")
    'Platt-calibrated imported model m.onnx'
    """
    return f"{mapping_words(mapping)} {model_words(model).removeprefix('the ')}"


@dataclass(frozen=True, kw_only=True)
class HeadlineSlice:
    """One reading of a Transport run.

    Attributes
    ----------
    model, mapping, target_definition, weighting : str
        The result-table key values of the slice.
    n_refits : int
        R, the refits the headline mean is taken over.
    n_bins : int
        Equal-width bins of the ECE.
    multiclass : bool
        A multi-class run (top-label ECE, multi-class mapping names).
    declared : bool
        Declared in the config (else chosen by the rule of the module docstring).
    """

    model: str
    mapping: str
    target_definition: str
    weighting: str
    n_refits: int
    n_bins: int = 15
    multiclass: bool = False
    declared: bool = False

    @property
    def estimator(self) -> str:
        """The calibration metric of the slice: ``ece`` (binary) or ``ece_top`` (multi-class)."""
        return "ece_top" if self.multiclass else "ece"

    @property
    def estimator_words(self) -> str:
        """``ECE, 15 equal-width bins`` (``top-label ECE, …`` for a multi-class run)."""
        return f"{'top-label ECE' if self.multiclass else 'ECE'}, {self.n_bins} equal-width bins"

    def filters(self) -> dict[str, str]:
        """The key columns of the result table (and of ``verdicts``, without the target) that select the slice."""
        return {"target_definition": self.target_definition, "model": self.model, "mapping": self.mapping,
                "weighting": self.weighting}

    def pipeline_words(self) -> str:
        """``Platt-calibrated logistic regression``."""
        return pipeline_words(self.mapping, self.model)

    def describe(self) -> str:
        """The slice in words: ``Platt-calibrated logistic regression, mean of 10 refits`` (``, weighted``)."""
        refits = f"mean of {self.n_refits} refits" if self.n_refits != 1 else "one refit"
        weighted = ", weighted to the population" if self.weighting == "weighted" else ""
        return f"{self.pipeline_words()}, {refits}{weighted}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "HeadlineSlice":
        return cls(model=str(d["model"]), mapping=str(d["mapping"]), target_definition=str(d["target_definition"]),
                   weighting=str(d["weighting"]), n_refits=int(d["n_refits"]), n_bins=int(d.get("n_bins", 15)),
                   multiclass=bool(d.get("multiclass", False)), declared=bool(d.get("declared", False)))


def check_headline(declared: Mapping[str, Any] | None, *, models, mappings, weight_column) -> str | None:
    """Why a declared headline cannot be read from a run with these models, mappings and weights (None: it can)."""
    if declared is None:
        return None
    if not isinstance(declared, Mapping):
        return f"must be a mapping with keys {', '.join(HEADLINE_KEYS)}, got {type(declared).__name__}"
    unknown = sorted(set(map(str, declared)) - set(HEADLINE_KEYS))
    if unknown:
        return f"unknown key(s) {unknown}; allowed: {', '.join(HEADLINE_KEYS)}"
    model, mapping, weighting = (declared.get(k) for k in HEADLINE_KEYS)
    if model is not None and model not in models:
        return f"model {model!r} is not among the run's models {list(models)}"
    if mapping is not None and mapping not in mappings:
        return f"mapping {mapping!r} is not among the run's mappings {list(mappings)}"
    if weighting is not None and weighting not in ("weighted", "unweighted"):
        return f"weighting must be 'weighted' or 'unweighted', got {weighting!r}"
    if weighting == "weighted" and not weight_column:
        return "weighting 'weighted' needs a declared weight column"
    return None


def headline_slice(config: Mapping[str, Any], *, multiclass: bool = False) -> HeadlineSlice | str:
    """The headline slice of a Transport config dict (``TransportConfig.to_dict()``): declared, else the rule.

    Parameters
    ----------
    config : Mapping
        With ``models``, ``mappings`` (a multi-class run's multi-class names), ``targets``, ``weight_column``,
        ``n_refits``, ``n_bins`` and, optionally, ``headline``.
    multiclass : bool, default False

    Returns
    -------
    HeadlineSlice, or the reason (str) the config does not name one.
    """
    models, mappings, targets = config.get("models"), config.get("mappings"), config.get("targets")
    if not (isinstance(models, (list, tuple)) and models and isinstance(mappings, (list, tuple)) and mappings
            and isinstance(targets, (list, tuple)) and targets and isinstance(targets[0], Mapping)):
        return "the run's config does not declare its models, mappings and targets"
    recorded = config.get("headline")
    declared = recorded if isinstance(recorded, Mapping) else {}
    mappings = [str(m) for m in mappings]
    platt = "temperature" if multiclass else "platt"
    mapping = declared.get("mapping")
    if mapping is not None and multiclass:
        mapping = _MC_COUNTERPART.get(str(mapping), str(mapping))
    if mapping is None or mapping not in mappings:
        mapping = platt if platt in mappings else mappings[0]
    model = declared.get("model")
    model = str(model) if model is not None and model in models else str(models[0])
    weighting = declared.get("weighting") or ("weighted" if config.get("weight_column") else "unweighted")
    return HeadlineSlice(model=model, mapping=str(mapping), target_definition=str(targets[0].get("name")),
                         weighting=str(weighting), n_refits=int(config.get("n_refits") or 1),
                         n_bins=int(config.get("n_bins") or 15), multiclass=bool(multiclass), declared=bool(declared))


def recorded_headline(manifest: Mapping[str, Any] | None, config: Mapping[str, Any] | None = None
                      ) -> HeadlineSlice | str:
    """The headline slice a saved run records (``manifest["headline"]``), else the rule on its config.

    ``config`` is the fallback when the manifest holds no ``config`` (a run saved by an older version).
    """
    manifest = manifest if isinstance(manifest, Mapping) else {}
    recorded = manifest.get("headline")
    if isinstance(recorded, Mapping):
        try:
            return HeadlineSlice.from_dict(recorded)
        except (KeyError, TypeError, ValueError):
            pass  # an edited or foreign manifest: the rule below
    cfg = manifest.get("config")
    if not (isinstance(cfg, Mapping) and cfg.get("models")):
        cfg = config
    if not isinstance(cfg, Mapping):
        return "the run records no transport config"
    return headline_slice(cfg, multiclass=bool(manifest.get("multiclass")))
