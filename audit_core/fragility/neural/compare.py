"""FR-ResMLP on a workspace: train it through the workspace's preprocessing, and compare it with a plain ResMLP."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from audit_core.errors import fail
from audit_core.limits import Limits
from audit_core.models.probs import confidence_scores
from audit_core.models.training import Workspace, holdout_metrics
from audit_core.models.zoo import FittedModel

from ..engine import FragilityConfig, certify, column_scale
from audit_core.metrics import auroc_by_row
from ..stressors import donor_replacement
from .estimator import FRResMLPClassifier
from .network import DEFAULTS, import_torch

__all__ = ["fitted_fr_resmlp", "NeuralComparison", "compare_fr_resmlp"]


def fitted_fr_resmlp(
    ws: Workspace, *, params: Mapping[str, Any] | None = None, progress: Callable[[float, str], None] | None = None,
) -> FittedModel:
    """Train FR-ResMLP on the workspace's training partition, reusing its fitted preprocessing.

    Returns a :class:`~audit_core.models.zoo.FittedModel` with the workspace model's
    preprocessor, input columns and origins, so ``ws.grouping`` and
    ``ws.baseline`` apply unchanged and the result can be certified.
    """
    p = dict(DEFAULTS)
    p.update(params or {})
    unknown = set(p) - set(DEFAULTS)
    if unknown:
        raise fail("NEURAL_BAD_PARAM", param=", ".join(sorted(unknown)), value=None, detail="not an FR-ResMLP parameter")
    base = ws.model
    Xtr = base.transform(ws.dataset.frame.iloc[ws.train_index])
    y = np.asarray(ws.dataset.primary.y)[ws.train_index]
    est = FRResMLPClassifier(**p, grouping_index=ws.grouping.index, baseline=np.asarray(ws.baseline, dtype=float))
    est.fit(Xtr, y, progress=progress)
    spec = {"kind": "fr_resmlp", "seed": int(p["seed"]), "params": {k: v for k, v in p.items() if k != "seed"}}
    return FittedModel(spec=spec, input_columns=base.input_columns, preprocessor=base.preprocessor, estimator=est,
                       classes=tuple(est.classes_.tolist()), origins=base.origins)


@dataclass(frozen=True, kw_only=True, eq=False)
class NeuralComparison:
    """Result of :func:`compare_fr_resmlp`.

    Attributes
    ----------
    rows : tuple of dict
        One per network (``FR-ResMLP`` with the chosen α, γ, then ``plain ResMLP``
        with α = γ = 0): ``model, alpha, gamma, heldout_auroc, heldout_accuracy,
        heldout_log_loss, mean_rcma, mean_fds, mean_k_star, share_flip_within_K,
        donor_any_share, auroc_fds_donor_any, auroc_confidence_donor_any, train_seconds``.
    params : dict
        Shared hyper-parameters (``alpha``/``gamma`` differ per row).
    n_train, n_heldout, n_cases : int
    config : dict
        The certificate configuration (``FragilityConfig.to_dict()``).
    grouping_hash, baseline_kind : str
    """

    rows: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    n_train: int
    n_heldout: int
    n_cases: int
    config: Mapping[str, Any]
    grouping_hash: str
    baseline_kind: str
    models: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(r) for r in self.rows])


def compare_fr_resmlp(
    ws: Workspace,
    *,
    alpha: float = DEFAULTS["alpha"],
    gamma: float = DEFAULTS["gamma"],
    seed: int = 0,
    max_cases: int = 200,
    case_seed: int = 0,
    params: Mapping[str, Any] | None = None,
    config: FragilityConfig | None = None,
    brittle: bool = True,
    stress_draws: int = 20,
    progress: Callable[[float, str], None] | None = None,
) -> NeuralComparison:
    """Train FR-ResMLP with ``(α, γ)`` and the same network with ``α = γ = 0``; compare on held-out cases.

    Both networks share every other hyper-parameter and the seed, are trained
    on ``ws.train_index`` through the workspace's fitted preprocessing, and are
    evaluated on ``ws.test_index``:

    * ``heldout_auroc`` (one-vs-rest for multi-class), accuracy, log loss on all held-out rows;
    * certificates (:func:`~audit_core.fragility.engine.certify`, the same
      protocol for both: ``ws.grouping``, ``ws.baseline``, training column
      scales, ``config``) on a seeded sample of at most ``max_cases``
      held-out rows (the same sample rule as ``run_fragility_audit``):
      ``mean_rcma``, ``mean_fds``, ``mean_k_star``, ``share_flip_within_K``;
    * when ``brittle``: donor replacement (3 groups max, ``stress_draws``
      draws, seed ``case_seed``) on the same cases, the share flipped at
      least once, and the AUROC of FDS and of negative energy for that label
      (NaN when only one class occurs).

    Returns
    -------
    NeuralComparison
    """
    Limits.from_env().check_fields("FRResMLP", {**DEFAULTS, **(params or {})}, where="FR-ResMLP")
    import_torch()
    cfg = config if config is not None else FragilityConfig(seed=seed)
    report = progress or (lambda f, m: None)
    shared = dict(DEFAULTS)
    shared.update(params or {})
    shared["seed"] = int(seed)
    ds = ws.dataset
    y_all = np.asarray(ds.primary.y)
    rng = np.random.default_rng(np.random.SeedSequence([int(case_seed), 2]))
    rows_idx = np.asarray(ws.test_index)
    if len(rows_idx) > max_cases:
        rows_idx = np.sort(rng.choice(rows_idx, size=int(max_cases), replace=False))
    X = ws.model.transform(ds.frame.iloc[rows_idx])
    Xtr = ws.model.transform(ds.frame.iloc[ws.train_index])
    scale = column_scale(Xtr)
    keys = np.asarray(ds.keys)[rows_idx]
    variants = [("FR-ResMLP", float(alpha), float(gamma)), ("plain ResMLP", 0.0, 0.0)]
    out, models = [], {}
    for i, (name, a, g) in enumerate(variants):
        lo, hi = i / len(variants), (i + 1) / len(variants)
        t0 = time.perf_counter()

        def fit_progress(f: float, msg: str, lo: float = lo, hi: float = hi, name: str = name) -> None:
            report(lo + 0.7 * (hi - lo) * f, f"{name}: {msg}")

        m = fitted_fr_resmlp(ws, params={**shared, "alpha": a, "gamma": g}, progress=fit_progress)
        secs = time.perf_counter() - t0
        report(lo + 0.7 * (hi - lo), f"{name}: certifying {len(X)} held-out cases")
        held = holdout_metrics(m, ds.frame.iloc[ws.test_index], y_all[ws.test_index], split="test").set_index("metric")["value"]
        b = certify(m, X, grouping=ws.grouping, baseline=ws.baseline, scale=scale, baseline_kind=ws.baseline_kind,
                    config=cfg, keys=keys)
        row = dict(model=name, alpha=a, gamma=g, heldout_auroc=float(held["auroc"]),
                   heldout_accuracy=float(held["accuracy"]), heldout_log_loss=float(held["log_loss"]),
                   mean_rcma=float(b.rcma.mean()), mean_fds=float(b.fds.mean()), mean_k_star=float(b.k_star.mean()),
                   share_flip_within_K=float((b.k_star <= b.protocol.k).mean()))
        if brittle:
            report(lo + 0.9 * (hi - lo), f"{name}: donor-replacement stressor")
            donor = donor_replacement(m, X, Xtr, group_columns=ws.grouping.index, max_groups=3,
                                      n_draws=int(stress_draws), seed=int(case_seed))
            lab = donor.flip_rate > 0
            row.update(donor_any_share=float(lab.mean()),
                       auroc_fds_donor_any=float(auroc_by_row(lab[None], b.fds[None])[0]),
                       auroc_confidence_donor_any=float(auroc_by_row(lab[None], -confidence_scores(b.p0)["neg_energy"][None])[0]))
        row["train_seconds"] = round(secs, 2)
        out.append(row)
        models[name] = (m, b)
        report(hi, f"{name}: done")
    return NeuralComparison(
        rows=tuple(out), params={k: v for k, v in shared.items() if k not in ("alpha", "gamma")},
        n_train=len(ws.train_index), n_heldout=len(ws.test_index), n_cases=len(X), config=cfg.to_dict(),
        grouping_hash=ws.grouping.hash, baseline_kind=str(ws.baseline_kind), models=models,
    )
