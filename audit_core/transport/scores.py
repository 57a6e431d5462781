"""Bring your own scores: Transport on a table of predictions instead of a model.

A table holding one probability column per class (or one column for the
positive class of a binary target), the label, the domain and optional
weight, key, group and subgroup columns is audited by declaring
``TransportConfig(score_columns=...)`` and calling
:func:`~audit_core.transport.scores_run.run_transport_on_scores`. The run's model is
:func:`~audit_core.models.scores.scored_model`, whose ``predict_proba``
reads the score columns of the rows it is given; so the protocol's stages
run unchanged:

* **split** — the same four source partitions per refit (a refit of a
  scores run only re-partitions the records: the scores do not change);
* **fit** — the probability mappings on calibration, the thresholds and the
  conformal quantiles on selection (the train partition fits nothing);
* **evaluate, transport, classify** — metrics, the transported rules, the
  paired changes, the bootstrap and the verdicts;
* **heterogeneity** — by class and declared subgroup, and the feature shift
  on the declared raw feature columns (none declared: no feature shift).

Not run, because they need a model (recorded in the manifest's ``not_run``
and ``needs_a_model``, and said in the findings): :data:`NEEDS_A_MODEL`.
Fragility refuses a scored model (``SCORES_NEED_A_MODEL``).
"""
from __future__ import annotations

from typing import Any

__all__ = ["NEEDS_A_MODEL", "NOT_RUN_WORDS", "scores_manifest", "scores_model_manifest"]

#: Stages a scores run cannot run: each scores changed records or refits a model.
NEEDS_A_MODEL = ("target-definition stress", "evidence-degradation stress", "model-family sensitivity")
#: How each is listed: in words, never as an error.
NOT_RUN_WORDS = "not run: needs a model"


def scores_model_manifest(config, fitted: dict) -> dict[str, Any]:
    """The manifest's ``model`` entry of a scores run: what the probabilities are and what was fitted.

    Parameters
    ----------
    config : TransportConfig
        With ``score_columns``.
    fitted : dict
        Partition → what the protocol fits on it.
    """
    return {"refit": False, "kind": "scores", "label": config.fixed_model,
            "score_columns": list(config.score_columns), "model": config.fixed_model,
            "spec": {"kind": "scores", "columns": list(config.score_columns)},
            "fitted_on_source": {k: v for k, v in fitted.items() if k != "train"},
            "not_fitted": "no model: the probabilities are the user's scores, read record by record",
            "refits": "each refit re-partitions the records; the scores do not change",
            "note": "The scores were computed outside the audit. The records their model was trained on are "
                    "unknown, so the ID test may hold records it was trained on."}


def scores_manifest(config) -> dict[str, Any]:
    """Manifest entries of a scores run: ``scores`` (the columns) and the stages ``not_run`` (needs a model)."""
    return {"scores": {"columns": list(config.score_columns), "label": config.fixed_model},
            "needs_a_model": list(NEEDS_A_MODEL),
            "not_run": [f"{stage}: {NOT_RUN_WORDS}" for stage in NEEDS_A_MODEL]}
