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


def test_trajectory_speaks_plain_words_not_symbols():
    # the demo's step 2 and the case inspector: a manager met "margin m_ŷ (pseudo-logits)" and "flip at k*=3"
    from types import SimpleNamespace

    import numpy as np

    from components.figures.fragility import trajectory_figure

    cert = SimpleNamespace(path_margins=np.array([2.0, 1.0, -0.5, -1.0]), k_star=2, key="c1", rcma=0.5, fds=0.3,
                           protocol=SimpleNamespace(k=3), removal_order_names=lambda: ["bureau", "loan", "income"])
    fig = trajectory_figure(cert, title="Case c1")
    words = [fig.layout.yaxis.title.text, *(t.name for t in fig.data)]
    assert words == ["margin: how far from a flip (log-odds)", "margin of the predicted class",
                     "flips after 2 groups removed (k*)"]
    assert not any(s in w for w in words for s in ("ŷ", "pseudo-logit", "k*="))


def test_degradation_axis_title_fits_beside_the_plot():
    # at 320 px high, one 47-character line ran past the plot into the figure's title (seen at 1600 px)
    from types import SimpleNamespace

    from components.figures.fragility import degradation_figure

    cert = SimpleNamespace(protocol=SimpleNamespace(grid=(0.5, 1.0)), curves={"dropout": [1.0, -0.5]},
                           lambda_star={"dropout": 1.0}, d=0.2)
    fig = degradation_figure(cert)
    lines = fig.layout.yaxis.title.text.split("<br>")
    assert lines == ["margin of the predicted class", "(mean over draws)"]
    assert max(map(len, lines)) * 7 < fig.layout.height - 40  # about 7 px per character at the axis font
