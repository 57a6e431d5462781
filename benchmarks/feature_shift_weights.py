"""CPU time of the feature shift on the loan sample, unweighted and with random record weights, alternated.

Usage: ``python benchmarks/feature_shift_weights.py``
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import time

import numpy as np
from audit_core.data.samples import load_sample
from audit_core.data.dataset import DatasetConfig, build_dataset
from audit_core.transport import TransportConfig
from audit_core.transport.shift_link import feature_shift
frame, info = load_sample("loan_synthetic")
ds = build_dataset(frame, DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year",
    source_domain=2019, target_domain=2023, roles={c: "ignore" for c in info.exclude_columns}))
c = TransportConfig.from_dataset(ds)
src = ds.frame[ds.frame["year"].astype(str) == "2019"]; tgt = ds.frame[ds.frame["year"].astype(str) == "2023"]
rng = np.random.default_rng(0)
ws, wt = rng.uniform(0.5, 2, len(src)), rng.uniform(0.5, 2, len(tgt))
for lab, kw in (("unweighted", {}), ("weighted", dict(source_weight=ws, target_weight=wt))) * 2:
    t0 = time.process_time(); r = feature_shift(src, tgt, numeric=c.numeric, categorical=c.categorical, **kw)
    print(lab, round(time.process_time() - t0, 2), round(r.domain_auroc, 4))
