"""Bring your own scores: Transport on a table of predictions instead of a model.

A table holding one probability column per class (or one column for the
positive class of a binary target), the label, the domain and optional
weight, key, group and subgroup columns is audited by declaring
``TransportConfig(score_columns=...)``. The run's model is
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

import pandas as pd

__all__ = ["NEEDS_A_MODEL", "NOT_RUN_WORDS", "run_transport_on_scores", "scores_manifest", "scores_model_manifest"]

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


def run_transport_on_scores(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config,
                            progress=None, should_cancel=None):
    """Run Transport on a table of predictions (binary or multi-class, by the primary target).

    Parameters
    ----------
    source : pandas.DataFrame
        The source table, or one table with both domains (``config.domain_column``).
    target : pandas.DataFrame, optional
    config : TransportConfig
        With ``score_columns``: one probability column per class in class-code
        order (binary: class 0 then the positive class; multi-class: the sorted
        class values), or one column for the positive class of a binary target.
    progress, should_cancel : optional
        As for :class:`~audit_core.transport.protocol.TransportAudit`.

    Returns
    -------
    TransportResult or MulticlassTransportResult
        The manifest's ``model`` says the probabilities are ``scores from
        column(s) …``; ``not_run`` lists :data:`NEEDS_A_MODEL`.

    Examples
    --------
    >>> import numpy as np
    >>> from audit_core.transport import TransportConfig
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0, 1, 800)
    >>> table = pd.DataFrame({"p": p, "y": (rng.uniform(0, 1, 800) < p).astype(int),
    ...                       "site": np.repeat(["a", "b"], 400)})
    >>> cfg = TransportConfig(targets=({"kind": "class", "name": "y", "column": "y", "positive": 1},),
    ...                       score_columns=("p",), domain_column="site", source_value="a", target_value="b",
    ...                       n_refits=2, n_bootstrap=20, mappings=("raw", "platt"))
    >>> res = run_transport_on_scores(table, config=cfg)
    >>> res.manifest["model"]["label"], res.manifest["not_run"][0]
    ("scores from column 'p'", 'target-definition stress: not run: needs a model')
    """
    from .config import TransportConfig
    from .multiclass.run import MulticlassTransportAudit, is_multiclass_target
    from .protocol import TransportAudit

    if not isinstance(config, TransportConfig) or not config.on_scores:
        from .config import _bad

        raise _bad("score_columns", "name the probability column(s) of the table to run Transport on scores")
    runner = MulticlassTransportAudit if is_multiclass_target(config) else TransportAudit
    return runner(config, progress=progress, should_cancel=should_cancel).run(source, target)
