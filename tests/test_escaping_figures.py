"""Names from data are text in every figure: no Plotly label markup survives, whatever builder draws it.

Every public function of ``components.figures`` (found by walking the
package, so a new builder cannot be missed) must be a
:func:`~components.figures.labels.figure_builder` or one of the few declared
helpers that draw nothing; every builder must then be reached with the
hostile names of :mod:`tests.hostile_names` (column, category, class, group,
file, target and run names that carry ``<a href>``, ``<span style=url()>``,
``<b>``, ``<br>``, entities and invisible characters), either through the
report figures of the saved hostile runs or by a direct call below, and the
figure JSON must hold no tag but the builders' own ``<br>``/``<extra>``.
"""
from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import sys

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import components.figures
from audit_core.receipts.cube import execute_cube
from components.figures.labels import BR, NO_EXTRA, escape_figure, figure_builder
from tests.hostile_names import INVISIBLE, hostile_registry, payloads

#: Public functions of components.figures that return no figure.
NOT_BUILDERS = {"verdict_colours", "cell_label", "pooled_domain_auroc",
                "not_run",  # annotates a figure a builder made; it runs inside that builder
                "slice_subtitle"}  # a title's second line (placeholders, escaped with the builder's figure)
OWN_TAGS = re.compile(r"<br>|<extra>|</extra>|<sup>|</sup>")
ENTITY = re.compile(r"&(?!amp;|lt;|gt;)")


def _modules():
    for info in pkgutil.iter_modules(components.figures.__path__):
        if info.name != "labels":
            yield importlib.import_module(f"components.figures.{info.name}")


def _builders() -> dict[str, object]:
    out = {}
    for mod in _modules():
        for name, fn in vars(mod).items():
            if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == mod.__name__:
                out[f"{mod.__name__}.{name}"] = fn
    return out


def _strings(value, path=""):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "template":
                yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


def markup_left(fig: go.Figure) -> list[str]:
    """Every string of ``fig``'s JSON that still holds a tag (other than the builders' own), an entity a payload
    brought, or an invisible character."""
    bad = []
    for path, s in _strings(json.loads(fig.to_json())):
        rest = OWN_TAGS.sub("", s)
        if "<" in rest or ">" in rest or ENTITY.search(s) or any(c in s for c in INVISIBLE) \
                or "line<br>break" in s:
            bad.append(f"{path}: {s[:120]!r}")
    return bad


# ---------------------------------------------------------------------------------------------------------------
# The mechanism
# ---------------------------------------------------------------------------------------------------------------

def test_every_public_function_of_the_figures_package_is_a_builder_or_declared_not_one():
    builders = _builders()
    assert len(builders) > 25
    for qual, fn in builders.items():
        name = qual.rsplit(".", 1)[1]
        if name in NOT_BUILDERS:
            assert "Figure" not in str(inspect.signature(fn).return_annotation) or \
                "Figure" in str(next(iter(inspect.signature(fn).parameters.values())).annotation), qual
        else:
            assert getattr(fn, "figure_builder", False), f"{qual} is not a @figure_builder"


def test_escape_figure_shows_markup_as_text_and_keeps_the_builders_own_tags():
    p = payloads()
    fig = go.Figure(go.Bar(x=[p["link"], p["br"]], y=[1, 2], name=p["span"],
                           hovertemplate="%{x}" + BR + "n %{y}" + NO_EXTRA))
    fig.update_layout(title=f"Target {p['bold']}", xaxis_title=p["rtl"],
                      annotations=[dict(text=p["entity"], x=0, y=0)])
    assert len(markup_left(fig)) == 5
    out = escape_figure(fig)
    assert out is fig and not markup_left(out)
    assert out.data[0].x[0] == '&lt;a href="http://127.0.0.1:9/phish"&gt;Session expired: sign in&lt;/a&gt;'
    assert out.data[0].hovertemplate == "%{x}<br>n %{y}<extra></extra>"
    assert out.layout.title.text == "Target &lt;b&gt;bold&lt;/b&gt;"
    assert out.layout.xaxis.title.text == "abc<U+202E>dcba".replace("<", "&lt;").replace(">", "&gt;")
    assert out.layout.annotations[0].text == "&amp;lt;b&amp;gt;entity&amp;amp;"
    # only the three placeholders become tags; other control characters are shown
    assert escape_figure(go.Figure(layout=dict(title="<b>" + BR + "\x01b\x02"))).layout.title.text == \
        "&lt;b&gt;<br>\\x01b\\x02"
    assert list(out.data[0].y) == [1, 2]


def test_a_builder_calling_a_builder_escapes_once():
    @figure_builder
    def inner(name):
        return go.Figure(layout=dict(title=name))

    @figure_builder
    def outer(name):
        return [("t", inner(name))]

    ((title, fig),) = outer("a & b")
    assert title == "t" and fig.layout.title.text == "a &amp; b"


# ---------------------------------------------------------------------------------------------------------------
# Every builder, with hostile names
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_registry(tmp_path_factory.mktemp("hostile"))


@pytest.fixture
def calls(monkeypatch):
    """Record which builders run (patched wherever a module holds them, so calls between builders count)."""
    seen: set[str] = set()
    builders = _builders()
    for qual, fn in builders.items():
        if qual.rsplit(".", 1)[1] in NOT_BUILDERS:
            continue

        def spy(*a, _fn=fn, _qual=qual, **k):
            seen.add(_qual)
            return _fn(*a, **k)

        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith(("components.", "tests.")) and \
                    any(v is fn for v in vars(mod).values()):
                for attr, v in list(vars(mod).items()):
                    if v is fn:
                        monkeypatch.setattr(mod, attr, spy)
    return seen


def _direct_figures(p: dict[str, str]) -> list[go.Figure]:
    """The builders the reports do not draw, called as the pages call them, with hostile names in every text."""
    from components.figures import cube as cf
    from components.figures import data as df
    from components.figures import fragility as ff
    from components.figures import receipts as rf

    names = [p["link"], p["span"], p["br"], p["entity"], p["rtl"], p["isolates"]]
    n = len(names)
    figs = [
        df.group_sizes_figure(pd.DataFrame({"group": names, "n_features": range(1, n + 1),
                                            "raw_columns": names[::-1]})),
        df.class_balance_figure(pd.Series(range(1, n + 1), index=names), title=p["bold"]),
        df.missingness_figure(pd.DataFrame({"column": names, "missing_share": np.linspace(0, 0.5, n)})),
        ff.auroc_figure(pd.DataFrame({"score": names, "auroc": 0.7, "lo": 0.6, "hi": 0.8, "label": p["sup"],
                                      "stratum": p["italic"], "same_ranking": False, "n": 10, "n_brittle": 2}),
                        label=p["sup"], stratum=p["italic"]),
        ff.runs_heatmap_figure(pd.DataFrame({"dataset": names[:2] * 2, "model": [p["bold"]] * 2 + [p["sup"]] * 2,
                                             "mean_fds": [0.1, 0.2, 0.3, 0.4]})),
        ff.delta_heatmap_figure(pd.DataFrame(np.arange(4.0).reshape(2, 2), index=names[:2], columns=names[2:4])),
        ff.temperature_figure(pd.DataFrame({"method": names[:2], "subset": names[2:4], "ece": 0.1, "nll": 0.5,
                                            "brier": 0.2})),
        ff.neural_comparison_figure(pd.DataFrame({"model": names[:2], "heldout_auroc": [0.7, 0.8],
                                                  "mean_rcma": 0.1, "mean_fds": 0.2})),
        cf.cube_view(execute_cube(tuple(names[:3]), lambda s: p["link"] if names[0] in s else p["span"],
                                  mode="full"), title=p["bold"]),
        cf.receipt_matrix_figure(execute_cube(tuple(names[:3]), lambda s: p["link"] if names[0] in s else p["br"],
                                              mode="full"), title=p["sup"]),
        rf.baseline_figure(pd.DataFrame({"model": names[:2], "evaluation": names[2:4], "receipt_acc_changed": 0.5,
                                         "receipt_acc_changed_lo": 0.4, "receipt_acc_changed_hi": 0.6})),
        rf.reason_debt_figure(pd.DataFrame({"threshold": [0.5, 0.9], "reason_debt": 0.1, "accepted_coverage": 0.5,
                                           "gold_change_recall": 0.7})),
        rf.benchmark_figure(pd.DataFrame({"stratum": names[:2], "mutation": names[2:4], "share_changed": 0.5,
                                          "cases": 3})),
    ]
    return figs


def test_every_builder_shows_hostile_names_as_text(hostile, calls):
    from components.report.builders import figures_for

    reg, ids = hostile
    figures = []
    for kind, run_id in ids.items():
        got = figures_for(reg.load(run_id))
        assert got, kind
        figures += [f for _, f in got]
    figures += _direct_figures(payloads())
    missing = {q for q in _builders() if q.rsplit(".", 1)[1] not in NOT_BUILDERS} - calls
    assert not missing, f"builders never fed hostile names: {sorted(missing)}"
    bad = [b for f in figures for b in markup_left(f)]
    assert not bad, "\n".join(bad[:20])
    text = json.dumps([json.loads(f.to_json()) for f in figures])
    for raw in ("<span", "<a href", "<b>bold", "<sup>2", "<i>italic", "line<br>break", "&lt;b&gt;entity"):
        assert raw not in text
