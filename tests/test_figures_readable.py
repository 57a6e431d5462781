"""Figures that looked broken (unreadable labels, overlapping marks), checked on the figure objects (no browser).

Each test fails on the figure code before the fix (checked by running this
file against the previous commit's ``components/figures``):

* the Receipts cube was a 3D scatter (``{}`` projected behind ``{G,N,A}``,
  receipt diamonds a second trace drawn over the labels, no axis padding);
* the k > 3 view was a 256-marker lattice;
* the temperature figure let plotly colour each panel's bars by trace index;
* the dataset × model heatmap coloured raw values on one scale;
* stress charts were empty axes when the stress was not run;
* the frontier's α labels sat at "top left" on both curves and its title
  read "(OOD (target))".
"""
from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest

from audit_core.receipts.cube import execute_cube
from components.figures.fragility import runs_heatmap_figure, temperature_figure
from components.figures.receipts import cube_view
from components.figures.transport import frontier_figure, stress_figure, target_definition_figure


def _cube3():
    # new verdict when A is replaced, or G and N together: receipt {A} | {G,N}
    return execute_cube(("G", "N", "A"), lambda s: "new" if "A" in s or {"G", "N"} <= s else "old", mode="full")


def _cube8():
    src = tuple("abcdefgh")
    return execute_cube(src, lambda s: "no" if {"a", "b"} <= s or {"c", "d", "e"} <= s else "ok", mode="full")


def _marker_points(fig):
    """(trace index, x, y, label) of every drawn marker."""
    out = []
    for i, tr in enumerate(fig.data):
        if "markers" not in (tr.mode or "") or tr.x is None:
            continue
        texts = tr.text if isinstance(tr.text, (list, tuple)) else [tr.text] * len(tr.x)
        out += [(i, x, y, t) for x, y, t in zip(tr.x, tr.y, texts) if x is not None]
    return out


def test_the_k3_cube_is_flat_every_cell_apart_labelled_once_and_inside_the_axes() -> None:
    cube = _cube3()
    fig = cube_view(cube)
    assert all(tr.type == "scatter" for tr in fig.data)  # no 3D projection that stacks {} behind {G,N,A}
    pts = _marker_points(fig)
    labels = [t for _, _, _, t in pts]
    assert sorted(labels) == sorted(["{}", "{G}", "{N}", "{A}", "{G,N}", "{G,A}", "{N,A}", "{G,N,A}"])
    xy = [(x, y) for _, x, y, _ in pts]
    assert len(set(xy)) == 8  # no cell drawn on another, no receipt marker drawn over a cell's label
    assert {(x, y): t for _, x, y, t in pts}[(0.0, 0.0)] == "{}" and dict(zip(labels, xy))["{G,N,A}"] == (0.0, 3.0)
    # receipt cells are the outlined diamonds of their own trace
    for i, x, y, t in pts:
        tr = fig.data[i]
        j = list(tr.x).index(x) if list(tr.y).count(y) == 1 else [k for k in range(len(tr.x)) if (tr.x[k], tr.y[k]) == (x, y)][0]
        assert (tr.marker.symbol[j] == "diamond") == (t in ("{A}", "{G,N}"))
    # labels sit right of their markers; the x range leaves room for the longest, the y range pads both ends
    assert all(fig.data[i].textposition == "middle right" for i, *_ in pts)
    lo, hi = fig.layout.xaxis.range
    assert lo <= min(x for x, _ in xy) - 0.5 and hi >= max(x for x, _ in xy) + 0.9
    assert tuple(fig.layout.yaxis.range) == (-0.5, 3.5) and fig.layout.yaxis.title.text


def test_the_k8_gate_cube_is_a_receipt_matrix_not_a_256_cell_hairball() -> None:
    cube = _cube8()
    assert len(cube.cells) == 256 and cube.receipt_text == "{a,b} | {c,d,e}"
    fig = cube_view(cube)
    assert max(len(tr.x) for tr in fig.data if tr.x is not None) < 20
    (heat,) = [tr for tr in fig.data if tr.type == "heatmap"]
    cols = list(heat.x)
    # endpoints, receipt {a,b} with {b} and {a}, receipt {c,d,e} with its three 2-subsets: 2 + 3 + 4 columns
    assert cols == ["old state {}", "receipt 1: {a,b}", "{b} (receipt 1 − a)", "{a} (receipt 1 − b)",
                    "receipt 2: {c,d,e}", "{d,e} (receipt 2 − c)", "{c,e} (receipt 2 − d)", "{c,d} (receipt 2 − e)",
                    "new state (all)"]
    assert list(heat.y) == list("abcdefgh")
    z = np.asarray(heat.z, dtype=float)
    # a filled square = the source is replaced in that cell
    assert not math.isnan(z[0, 1]) and not math.isnan(z[1, 1]) and np.isnan(z[2:, 1]).all()
    assert np.isnan(z[:, 0]).all() and not np.isnan(z[:, -1]).any()
    verdict_of = {a.x: a.text for a in fig.layout.annotations}
    assert [verdict_of[c] for c in cols] == ["ok", "no", "ok", "ok", "no", "ok", "ok", "ok", "no"]
    # the receipt columns and their one-smaller cells differ in colour (verdict)
    assert z[0, 1] != z[1, 2]
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_temperature_bars_have_one_colour_per_method_in_every_panel() -> None:
    rows = [dict(method=m, subset=s, ece=0.1, nll=0.5, brier=0.2)
            for m in ("uncalibrated", "global T", "brittleness T") for s in ("all", "fragile quartile")]
    fig = temperature_figure(pd.DataFrame(rows))
    colours = {}
    for tr in fig.data:
        assert tr.marker.color is not None, "panel colours left to plotly's trace cycle"
        colours.setdefault(tr.name, set()).add(tr.marker.color)
    assert all(len(c) == 1 for c in colours.values())  # the legend (panel 1) colour holds in panels 2 and 3
    assert len({next(iter(c)) for c in colours.values()}) == 3
    assert all(fig.layout[f"yaxis{k}"].title.text for k in ("", "2", "3"))


def test_dataset_model_heatmap_scales_colour_within_each_dataset() -> None:
    overview = pd.DataFrame({
        "dataset": ["loan", "loan", "loan", "adult", "adult"],
        "model": ["lr", "lgbm", "rf", "lr", "lgbm"],
        "mean_fds": [0.356, 0.400, 0.378, 0.417, 0.900],
    })
    fig = runs_heatmap_figure(overview)
    (heat,) = fig.data
    rows = {d: dict(zip(heat.x, z)) for d, z in zip(heat.y, np.asarray(heat.z, dtype=float))}
    # by hand: loan (0.356, 0.378, 0.400) -> 0, 0.5, 1; adult (0.417, 0.900) -> 0, 1; rf has no adult run
    assert rows["loan"]["lr"] == pytest.approx(0.0) and rows["loan"]["rf"] == pytest.approx(0.5)
    assert rows["loan"]["lgbm"] == pytest.approx(1.0)
    assert rows["adult"]["lr"] == pytest.approx(0.0) and rows["adult"]["lgbm"] == pytest.approx(1.0)
    text = {d: dict(zip(heat.x, t)) for d, t in zip(heat.y, heat.text)}
    assert text["loan"]["lr"] == pytest.approx(0.356) and text["adult"]["lr"] == pytest.approx(0.417)  # raw values shown
    assert "per dataset" in fig.layout.title.text
    assert fig.layout.xaxis.title.text == "model" and fig.layout.yaxis.title.text == "dataset"


def _metrics_table(conditions) -> pd.DataFrame:
    rows = [dict(analysis="metrics", model="lr", mapping="platt", metric="auroc", weighting="unweighted",
                 domain=d, condition=c, refit=0, value=0.8) for d in ("id", "ood") for c in conditions]
    return pd.DataFrame(rows)


def test_stress_charts_say_not_run_instead_of_empty_axes() -> None:
    fig = stress_figure(_metrics_table(["clean"]), model="lr", mapping="platt")
    assert not fig.data
    (note,) = fig.layout.annotations
    assert "not run" in note.text and "degradation" in note.text
    empty = pd.DataFrame(columns=["analysis", "domain", "condition", "metric", "refit", "value"])
    note = target_definition_figure(empty).layout.annotations[0]
    assert "not run" in note.text
    # a run with the stress still draws it
    ran = stress_figure(_metrics_table(["clean", "random_set:1", "random_set:2", "targeted"]), model="lr", mapping="platt")
    assert ran.data and not ran.layout.annotations and ran.layout.xaxis.title.text and ran.layout.yaxis.title.text


def test_frontier_alpha_labels_sit_on_opposite_sides_and_the_title_has_no_nested_brackets() -> None:
    rows = []
    for method, shift in (("marginal", 0.0), ("label_conditional", 0.01)):
        for alpha in (0.05, 0.1, 0.2):
            for metric, v in (("coverage", 1 - alpha + shift), ("mean_set_size", 1.5 - alpha + shift),
                              ("coverage_class0", 0.9), ("coverage_class1", 0.8)):
                rows.append(dict(analysis=f"conformal_{method}", domain="ood", model="lr", mapping="platt",
                                 condition="clean", weighting="unweighted", refit=0, alpha=alpha, metric=metric, value=v))
    fig = frontier_figure(pd.DataFrame(rows), model="lr", mapping="platt")
    labelled = [tr for tr in fig.data if tr.text is not None and "text" in tr.mode]
    assert len(labelled) == 2
    positions = [tr.textposition for tr in labelled]
    assert positions[0] != positions[1]
    # the two curves nearly coincide: each pair of same-α points gets labels on opposite sides (vertically)
    vertical = [p.split()[0] for p in positions]
    assert set(vertical) == {"top", "bottom"}
    assert not re.search(r"\([^()]*\(", fig.layout.title.text)
    assert "OOD (target)" in fig.layout.title.text


@pytest.mark.parametrize("k", [1, 2, 3])
def test_small_cubes_draw_every_edge_between_cells_one_source_apart(k: int) -> None:
    src = ("G", "N", "A")[:k]
    cube = execute_cube(src, lambda s: "new" if src[0] in s else "old", mode="full")
    fig = cube_view(cube)
    edges = fig.data[0]
    n_edges = sum(1 for a, b in itertools.combinations(cube.cells, 2) if len(a ^ b) == 1)
    assert list(edges.x).count(None) == n_edges == k * 2 ** (k - 1)
