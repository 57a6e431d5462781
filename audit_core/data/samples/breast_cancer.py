"""The Wisconsin diagnostic breast cancer data shipped with scikit-learn, as a sample table."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["load_breast_cancer_sample"]




def load_breast_cancer_sample() -> pd.DataFrame:
    """The scikit-learn breast cancer data with ``record_id`` and ``diagnosis``.

    Columns: ``record_id`` ("BC0001" ...), the 30 measurement columns with
    scikit-learn's names (e.g. ``"mean radius"``, ``"radius error"``,
    ``"worst radius"``) and ``diagnosis`` ("malignant" / "benign").
    """
    from sklearn.datasets import load_breast_cancer  # lazy: heavy import

    bunch = load_breast_cancer(as_frame=True)
    features = bunch.data.copy()
    features.columns = [str(c) for c in features.columns]
    names = np.asarray([str(t) for t in bunch.target_names], dtype=object)
    n = len(features)
    frame = pd.concat(
        [
            pd.DataFrame({"record_id": [f"BC{i:04d}" for i in range(1, n + 1)]}),
            features.reset_index(drop=True),
            pd.DataFrame({"diagnosis": names[np.asarray(bunch.target)]}),
        ],
        axis=1,
    )
    for c in ("record_id", "diagnosis"):
        frame[c] = frame[c].astype("str")
    return frame
