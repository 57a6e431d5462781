"""Small generated tables and settings for the notebook library's tests (:mod:`audit_core.api`).

Seeded; each audit on them runs in a few seconds with :data:`SMALL` (Fragility) and :data:`FAST`
(Transport options: no stresses, Platt only).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit_core import TableSpec
from audit_core.fragility.audit import AuditOptions
from audit_core.fragility.engine import FragilityConfig

SMALL = AuditOptions(max_cases=40, n_boot=20, stress_draws=3, perm_repeats=1, shap_max_cases=0, search_max_cases=10,
                     temperature=False, config=FragilityConfig(n_draws=2, grid=(0.5, 1.0)))
FAST = {"stresses": (), "mappings": ("platt",)}


def binary_frame(seed: int = 0, n: int = 600, key: str = "r") -> pd.DataFrame:
    """Two domains ``s`` / ``t`` (x1 shifted by 0.5 in ``t``), target ``y`` in {"yes", "no"} from a logistic model."""
    rng = np.random.default_rng(seed)
    dom = np.where(rng.uniform(size=n) < 0.5, "s", "t")
    x1 = rng.normal(size=n) + 0.5 * (dom == "t")
    x2 = rng.normal(size=n)
    k = rng.choice(["u", "v", "w"], n)
    logit = 1.5 * x1 - x2 + (k == "u")
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return pd.DataFrame({"id": [f"{key}{i}" for i in range(n)], "x1": x1, "x2": x2, "k": k, "dom": dom, "y": y})


def multiclass_frame(seed: int = 0, n: int = 1200) -> pd.DataFrame:
    """The binary frame's features with a four-class target drawn from a softmax of them."""
    df = binary_frame(seed, n).drop(columns="y")
    rng = np.random.default_rng(seed + 1)
    z = np.column_stack([df["x1"], df["x2"], -df["x1"] - df["x2"], np.zeros(n)])
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    draw = np.minimum((p.cumsum(1) < rng.uniform(size=(n, 1))).sum(1), 3)
    return df.assign(y=np.array(["pass", "fail", "withdrawn", "distinction"])[draw])


def spec(**kw) -> TableSpec:
    base = dict(target="y", positive="yes", features=("x1", "x2", "k"), groups={"x1": "first", "x2": "first"},
                key="id", domain="dom", source_domain="s", target_domain="t", name="toy")
    return TableSpec(**{**base, **kw})
