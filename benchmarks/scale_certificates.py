"""Cost growth of certificates with cases (rows) and evidence groups, and of refits by seed (docs/scaling.md).

Usage: ``python benchmarks/scale_certificates.py`` (serial, CPU time, best of 2). Synthetic data: 60 standardised
features split evenly into G groups, logistic regression, default protocol (K = min(5, G), 3 families,
10 severities, R = 10 draws).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit_core.data.groups import Grouping  # noqa: E402
from audit_core.fragility.engine import certify  # noqa: E402


def _setup(n: int, groups: int, features: int = 60):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(max(n, 2000), features))
    y = (X @ rng.normal(size=features) + rng.normal(size=len(X)) > 0).astype(int)
    model = LogisticRegression(max_iter=500).fit(X, y)
    names = [f"c{i}" for i in range(features)]
    grouping = Grouping(features=tuple(names), raw_columns=tuple(names),
                        group_of=tuple(f"g{i * groups // features}" for i in range(features)),
                        names=tuple(f"g{j}" for j in range(groups)))
    return model, X[:n], grouping, X.mean(0), X.std(0)


def _time(n: int, groups: int) -> float:
    model, X, grouping, base, scale = _setup(n, groups)
    best = float("inf")
    for _ in range(2):
        t = time.process_time()
        certify(model, X, grouping=grouping, baseline=base, scale=scale)
        best = min(best, time.process_time() - t)
    return best


def main() -> int:
    print("certificates vs cases (G = 10)")
    for n in (250, 500, 1000, 2000):
        t = _time(n, 10)
        print(f"  n={n:5d}  {t:6.2f} s  {1000 * t / n:6.2f} ms/case")
    print("certificates vs groups (n = 500)")
    for g in (5, 10, 20, 30, 60):
        t = _time(500, g)
        print(f"  G={g:3d}    {t:6.2f} s  {1000 * t / 500:6.2f} ms/case")
    return 0


if __name__ == "__main__":
    sys.exit(main())
