"""Figure labels in words: the k* histogram's last bar, stress panels that were not run."""
from __future__ import annotations

import pandas as pd

from components.figures.fragility import distributions_figure


def test_k_star_histogram_labels_its_last_bar_no_flip_within_k():
    # K = 3: k* = 4 means no flip within 3 groups; hand counts: k*=1: 2, k*=2: 0, k*=3: 1, none: 3
    summary = pd.DataFrame({"k_star": [1, 1, 3, 4, 4, 4], "rcma": [0.1] * 6, "fds": [0.5] * 6})
    bar = distributions_figure(summary, k=3).data[0]
    assert list(bar.x) == ["1", "2", "3", "no flip within 3"]
    assert list(bar.y) == [2, 0, 1, 3]
