"""The entry point of a Transport run on a table of predictions (:mod:`.scores`): binary or multi-class."""
from __future__ import annotations

import pandas as pd

from .config import TransportConfig, _bad
from .multiclass.classes import is_multiclass_target
from .multiclass.run import MulticlassTransportAudit
from .runner import TransportAudit

__all__ = ["run_transport_on_scores"]


def run_transport_on_scores(source: pd.DataFrame, target: pd.DataFrame | None = None, *, config,
                            progress=None, should_stop=None):
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
    progress, should_stop : optional
        As for :class:`~audit_core.transport.runner.TransportAudit`.

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
    if not isinstance(config, TransportConfig) or not config.on_scores:
        raise _bad("score_columns", "name the probability column(s) of the table to run Transport on scores")
    runner = MulticlassTransportAudit if is_multiclass_target(config) else TransportAudit
    return runner(config, progress=progress, should_stop=should_stop).run(source, target)
