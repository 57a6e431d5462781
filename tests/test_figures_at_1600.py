"""Figure defects seen at 1600 px, checked on the figure objects (no browser); each fails on the figures of the
start of this branch:

* the coverage frontier's α labels were clipped at the plot edge, and its per-class lines differed only by dash
  style in one colour (the method's);
* the multi-class report's risk–selection y-axis title was cut ("ective risk (arg-max wrong among the answe");
* a table without missing values got an empty "Missing values" chart on a −1…6 axis;
* st.metric drew an up arrow beside a row count and beside "no change";
* the risk–selection and frontier legends, on the right, squeezed each plot to about half of its 760 px;
* the receipt matrix's legend, below the plot, ran into its rotated cell labels.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd

from components.figures.data import missingness_figure
from components.figures.transport import frontier_figure

ROOT = Path(__file__).resolve().parents[1]


def _frontier_rows():
    rows = []
    for method, shift in (("marginal", 0.0), ("label_conditional", 0.01)):
        for alpha in (0.05, 0.1, 0.2):
            for metric, v in (("coverage", 1 - alpha + shift), ("mean_set_size", 1.5 - alpha + shift),
                              ("coverage_class0", 0.97), ("coverage_class1", 0.74 + shift)):
                rows.append(dict(analysis=f"conformal_{method}", domain="ood", model="lr", mapping="platt",
                                 condition="clean", weighting="unweighted", refit=0, alpha=alpha, metric=metric,
                                 value=v))
    return pd.DataFrame(rows)


def test_frontier_alpha_labels_are_never_clipped_and_the_axis_leaves_room_for_them():
    fig = frontier_figure(_frontier_rows(), model="lr", mapping="platt")
    labelled = [tr for tr in fig.data if tr.text is not None and "text" in tr.mode]
    assert len(labelled) == 2 and all(tr.cliponaxis is False for tr in labelled)
    xs = [x for tr in labelled for x in tr.x]
    lo, hi = fig.layout.xaxis.range
    assert lo < min(xs) - 0.05 and hi > max(xs) + 0.05  # room for a label beside the outermost points


def test_frontier_class_lines_have_one_colour_per_class_and_never_the_methods_colour():
    fig = frontier_figure(_frontier_rows(), model="lr", mapping="platt", class_names=("no", "yes"))
    methods = {tr.name: tr.line.color for tr in fig.data if tr.name in ("marginal", "label-conditional")}
    by_class: dict[str, set] = {}
    for tr in fig.data:
        if "coverage of class" in (tr.name or ""):
            cls = tr.name.split("coverage of class ", 1)[1]
            by_class.setdefault(cls, set()).add(tr.line.color)
    assert set(by_class) == {"'no'", "'yes'"}
    assert all(len(c) == 1 for c in by_class.values())  # one colour per class, in both methods
    colours = [next(iter(c)) for c in by_class.values()]
    assert len(set(colours)) == 2 and not set(colours) & set(methods.values())


def test_multiclass_risk_axis_title_is_short_enough_to_fit():
    from components.figures.transport_mc import mc_risk_selection_figure

    curves = pd.DataFrame([dict(model="lr", mapping="temperature", refits=2, domain=d, coverage=s, risk=r)
                           for d in ("id", "ood") for s, r in ((0.5, 0.2), (1.0, 0.4))])
    table = pd.DataFrame(columns=["analysis", "domain", "model", "mapping", "refit", "condition", "weighting",
                                  "metric", "value", "selection_rate"])
    fig = mc_risk_selection_figure(curves, table, model="lr", mapping="temperature", selection_rate=0.8)
    assert len(fig.layout.yaxis.title.text) <= 20 and len(fig.layout.xaxis.title.text) <= 40
    assert "the most probable class is wrong" in fig.layout.title.text  # what the risk counts, in the subtitle


def test_no_missing_values_says_so_instead_of_an_empty_chart():
    cols = pd.DataFrame({"column": ["a", "b", "c"], "missing_share": [0.0, 0.0, 0.0]})
    fig = missingness_figure(cols)
    assert fig.layout.title.text == "Missing values by column: none" and not fig.data
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False
    assert [a.text for a in fig.layout.annotations] == ["No missing values in any of the 3 columns."]
    some = missingness_figure(pd.DataFrame({"column": ["a", "b"], "missing_share": [0.0, 0.25]}))
    assert list(some.data[0].x) == ["b"] and tuple(some.layout.yaxis.range) == (0, 1)


def test_no_metric_draws_an_arrow_beside_a_count_or_a_note():
    """A metric's delta in this app is a count, a rate or a note, never a signed change: its arrow is off."""
    offences = []
    for path in [*(ROOT / "components").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "metric"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            if len(node.args) < 3 and "delta" not in kw:
                continue
            off = kw.get("delta_arrow")
            if not (isinstance(off, ast.Constant) and off.value == "off"):
                offences.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offences, offences


def test_frontier_and_risk_legends_sit_below_the_plot_so_half_a_page_keeps_the_plot_wide():
    # the demo draws the two side by side; a legend on the right took about half of each plot's 760 px
    from components.figures.transport import risk_selection_figure

    curves = pd.DataFrame([dict(model="lr", mapping="platt", refits=1, domain=d, coverage=s, risk=r)
                           for d in ("id", "ood") for s, r in ((0.5, 0.2), (1.0, 0.4))])
    table = pd.DataFrame(columns=["analysis", "domain", "model", "mapping", "refit", "condition", "weighting",
                                  "metric", "value", "selection_rate"])
    for fig in (frontier_figure(_frontier_rows(), model="lr", mapping="platt"),
                risk_selection_figure(curves, table, model="lr", mapping="platt", selection_rate=0.8)):
        assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0


def test_receipt_matrix_legend_sits_above_so_the_rotated_cell_labels_never_run_into_it():
    # the demo's step 4 at 1600 px: "receipt 1: {G:…}" ran into the legend placed at y = −0.45
    from audit_core.receipts.cube import execute_cube
    from components.figures.cube import cube_view

    src = tuple("abcd")
    cube = execute_cube(src, lambda s: "no" if {"a", "b"} <= s else "ok", mode="full")
    fig = cube_view(cube, title="Release decision")
    assert fig.layout.legend.y > 1 and fig.layout.legend.yanchor == "bottom"


def test_receipt_matrix_names_sources_and_verdicts_in_words_first_when_given():
    """The demo's step 4 reads as a manager would: each row's plain name, its symbol after it; verdicts in words."""
    from audit_core.receipts.cube import execute_cube
    from components.figures.cube import cube_view

    src = ("G:ood_ece", "G:test_auroc", "G:mean_fds", "G:brittle_share_confident")
    cube = execute_cube(src, lambda s: "block" if "G:ood_ece" in s else "refer", mode="full")
    plain = {"G:ood_ece": "how far the stated probabilities are off (ECE)", "G:test_auroc": "held-out AUROC"}
    fig = cube_view(cube, source_names=plain, verdict_words={"block": "blocked", "refer": "undecided"})
    rows = list(fig.data[0].y)
    assert rows == ["how far the stated probabilities are off (ECE) · G:ood_ece", "held-out AUROC · G:test_auroc",
                    "G:mean_fds", "G:brittle_share_confident"]  # a source without a plain name keeps its symbol
    assert {t.name for t in fig.data[1:]} == {"verdict: blocked", "verdict: undecided"}
    assert {a.text for a in fig.layout.annotations} == {"blocked", "undecided"}
    bare = cube_view(cube)  # the Receipts page: symbols as before
    assert list(bare.data[0].y) == list(src) and {t.name for t in bare.data[1:]} == {"verdict: block", "verdict: refer"}
