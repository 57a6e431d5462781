"""Which plotly.js the HTML report embeds: the partial ``cartesian`` bundle when it can draw every figure.

The full ``plotly.min.js`` shipped with plotly.py is 4.8 MB (3D, maps, WebGL
traces...). The report's figures only use 2D cartesian traces, so the report
embeds ``vendor/plotly-cartesian.min.js`` (1.5 MB), the official partial
bundle of the **same plotly.js version** (npm package
``plotly.js-cartesian-dist-min``, MIT licence in ``vendor/LICENSE-plotly.js``;
how to refresh it is in the README, "Dependencies and why"). A figure holding
any other trace type makes the report fall back to the full bundle, so a
report never loses a figure.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

__all__ = ["CARTESIAN_TRACES", "PARTIAL_BUNDLE", "bundle_version", "plotlyjs_for"]

#: The vendored partial bundle (plotly.js ``cartesian`` dist, minified).
PARTIAL_BUNDLE = Path(__file__).with_name("vendor") / "plotly-cartesian.min.js"

#: Trace types the partial bundle registers (its package README lists them).
CARTESIAN_TRACES = frozenset({
    "bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image", "pie",
    "scatter", "scatterternary", "violin",
})

_VERSION = re.compile(r"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+)")


def bundle_version(js: str) -> str | None:
    """The ``vX.Y.Z`` in a plotly.js bundle's licence header (``None`` if absent)."""
    m = _VERSION.search(js[:400])
    return m.group(1) if m else None


@lru_cache(maxsize=1)
def _partial() -> str | None:
    """The partial bundle's text, or ``None`` when it is missing or not the version plotly.py expects."""
    try:
        js = PARTIAL_BUNDLE.read_text(encoding="utf-8")
    except OSError:
        return None
    return js if bundle_version(js) == bundle_version(get_plotlyjs()) else None


def plotlyjs_for(figures: Iterable[go.Figure]) -> tuple[str, str]:
    """The plotly.js to embed for these figures and its name.

    Returns
    -------
    (str, str)
        The bundle's text and ``"cartesian"`` (the partial bundle: every trace
        is one it holds) or ``"full"`` (some trace needs the full bundle, or
        the partial one is missing or of another version).
    """
    used = {trace.type for fig in figures for trace in fig.data}
    partial = _partial()
    if partial is not None and used <= CARTESIAN_TRACES:
        return partial, "cartesian"
    return get_plotlyjs(), "full"
