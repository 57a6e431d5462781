"""The report's executive summary, capped collapsible tables, size (partial plotly.js), print sheet and PDF.

Regression tests that fail on the previous report (checked by running this
file against the commit before the summary): the summary section, the
50-row cap in ``<details>``, the partial bundle (the report was 4.8–5.2 MB
with the full plotly.js) and the PDF.
"""
from __future__ import annotations

import re
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from audit_core.runs.gate import compare_runs
from audit_core.runs.registry import RunRegistry
from components.report import MAX_TABLE_ROWS, chromium_executable, render_report, write_pdf, write_report
from components.report.plotlyjs import CARTESIAN_TRACES, PARTIAL_BUNDLE, bundle_version, plotlyjs_for
from tests.browser import browser_page, chromium_path
from tests.runs_data import ROOT, odd_tables, save_model_run
from tests.test_cli import cli

MB2 = 2 * 1024 * 1024


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory) -> RunRegistry:
    return RunRegistry(tmp_path_factory.mktemp("summary") / "r.sqlite3")


@pytest.fixture(scope="module")
def model_id(reg: RunRegistry) -> str:
    return save_model_run(reg, bootstrap=20, refit_seeds=(1,))


def _long_run(reg: RunRegistry, n: int = 120) -> str:
    import pandas as pd

    tables = odd_tables()
    tables["long"] = pd.DataFrame({"case": [f"c{i}" for i in range(n)], "score": [i / n for i in range(n)]})
    return reg.save(audit_kind="custom_audit", dataset_name="toy", dataset_fingerprint="f" * 64, grouping_hash=None,
                    model_spec={"kind": "lightgbm"}, config={}, tables=tables, manifest={"key_numbers": {"rows": n}})


def test_partial_bundle_is_plotly_pys_version_and_used_when_it_draws_every_figure() -> None:
    js = PARTIAL_BUNDLE.read_text(encoding="utf-8")
    assert bundle_version(js) == bundle_version(get_plotlyjs()) is not None
    assert len(js) < 1.6e6 < 4e6 < len(get_plotlyjs())
    assert plotlyjs_for([go.Figure(go.Bar(y=[1])), go.Figure(go.Box(y=[1]))]) == (js, "cartesian")
    # a trace the partial bundle lacks: the full bundle, so the report never loses a figure
    assert plotlyjs_for([go.Figure(go.Scatter3d(x=[1], y=[1], z=[1]))])[1] == "full"


def test_every_trace_type_the_figure_modules_build_is_in_the_partial_bundle() -> None:
    used = set()
    for path in (ROOT / "components").rglob("*.py"):
        used |= {m.lower() for m in re.findall(r"\bgo\.([A-Z][A-Za-z0-9]*)\(", path.read_text(encoding="utf-8"))}
    used -= {"figure"}
    assert used and used <= CARTESIAN_TRACES, used - CARTESIAN_TRACES


def test_report_opens_with_the_executive_summary_then_the_detail(reg: RunRegistry, model_id: str) -> None:
    doc = render_report(reg.load(model_id), generated_at="t")
    summary = doc.index("<section id='executive-summary'>")
    end = doc.index("</section>")
    assert summary < doc.index("id='gate-verdict'") < end  # the gate's verdict on this run, in the summary
    assert "Release gate (this run alone, production scope): release undecided" in doc
    assert summary < doc.index('id="fig-0"') < doc.index('id="fig-2"') < end  # the three key figures
    assert end < doc.index("<div class='detail'>") < doc.index('id="key-numbers-table"')
    # the gate's findings, in plain words: what cannot be decided and why (the production rules need the transport
    # and fragility runs, which a model run does not provide)
    assert ("Release cannot be decided yet: how far the stated probabilities are off on the target domain (ECE) and the "
            "share of confident predictions that change class under the donor test are unknown, because no saved run "
            "provides them.") in doc[summary:end]
    assert "refer" not in doc[summary:end].split("id='findings'")[1]
    # print sheet: the detail is hidden, so printing gives the summary
    assert re.search(r"@media print\{[^@]*\.detail[^{]*\{display:none", doc)
    assert len(doc.encode("utf-8")) <= MB2 and "content='cartesian'" in doc


def test_a_baseline_gate_opens_the_summary_with_its_verdict_and_receipt(reg: RunRegistry, model_id: str) -> None:
    good = reg.load(model_id)
    metrics = good.tables["metrics"].copy()
    metrics.loc[(metrics["split"] == "test") & (metrics["metric"] == "auroc"), "value"] = 0.6
    bad = reg.load(reg.save(audit_kind="model", dataset_name=good.dataset_name,
                            dataset_fingerprint=good.dataset_fingerprint, grouping_hash=good.grouping_hash,
                            model_spec=good.model_spec, config=good.config,
                            tables={**good.tables, "metrics": metrics}, manifest=good.manifest))
    gate = compare_runs(good, bad, scope="internal")
    doc = render_report(bad, generated_at="t", gate=gate)
    line = re.search(r"id='gate-verdict'>([^<]*)<", doc).group(1)
    assert line == (f"Release gate ({good.run_id} → {bad.run_id}, internal scope): release blocked · allowed → "
                    "blocked")
    summary = doc[:doc.index("</section>")]
    assert "Release is blocked: the model ranks held-out cases with an AUROC of 0.60, below the 0.70 minimum." in summary
    assert ("Against the baseline runs the verdict goes from allowed to blocked; the model&#39;s ranking quality on "
            "held-out rows (AUROC) alone accounts for the change.") in summary  # HTML-escaped
    # the symbols are in the detail, each with its plain name
    detail = doc[doc.index("<div class='detail'>"):]
    assert "receipt {G:test_auroc}" in detail and "rule discrimination: test_auroc &lt; 0.70" in detail
    assert "{G:" not in summary


def test_tables_are_capped_and_collapsed_and_say_where_the_rest_is(reg: RunRegistry) -> None:
    doc = render_report(reg.load(_long_run(reg, 120)), generated_at="t")
    assert MAX_TABLE_ROWS == 50
    assert f"First 50 of 120 rows; the Parquet export" in doc
    for table in re.findall(r"<table.*?</table>", doc, flags=re.S):
        assert table.count("<tr") <= MAX_TABLE_ROWS + 1  # header + at most 50 rows
    detail = doc[doc.index("<h2>Result tables</h2>"):]
    assert detail.count("<details>") == len(odd_tables()) + 1 + 3  # every table, then manifest/config/model spec
    assert "<details open" not in doc and "Parquet export" in detail


@pytest.mark.browser
def test_pdf_is_the_one_page_summary(reg: RunRegistry, model_id: str, tmp_path: Path) -> None:
    chromium_path()  # skips (or fails under CI) without Chromium
    html = write_report(reg.load(model_id), tmp_path / "r.html")
    pdf = write_pdf(html, tmp_path / "r.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == 1


def test_pdf_without_chromium_is_a_message_and_the_cli_keeps_the_html(reg: RunRegistry, model_id: str,
                                                                      tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AUDIT_CHROMIUM", str(tmp_path / "no-chromium"))
    assert chromium_executable() is None
    html = write_report(reg.load(model_id), tmp_path / "r.html")
    with pytest.raises(Exception) as err:
        write_pdf(html, tmp_path / "r.pdf")
    assert err.value.code == "REPORT_PDF_NO_CHROMIUM"
    assert err.value.message.startswith("No PDF written: Chromium was not found (looked for $AUDIT_CHROMIUM, then")
    done = cli("report", model_id, "--html", str(tmp_path / "c.html"), "--pdf", str(tmp_path / "c.pdf"),
               "--registry", str(reg.path), env={"AUDIT_CHROMIUM": str(tmp_path / "no-chromium")})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.html").is_file() and not (tmp_path / "c.pdf").exists()
    assert done.stderr.startswith("warning: No PDF written: Chromium was not found")


@pytest.mark.browser
def test_the_partial_bundle_draws_every_trace_type_offline(tmp_path: Path) -> None:
    sub = make_subplots(rows=1, cols=2)
    sub.add_trace(go.Histogram(x=[1, 2, 2, 3]), row=1, col=1)
    sub.add_trace(go.Bar(x=["a", "b"], y=[1, 2]), row=1, col=2)
    figs = [sub, go.Figure(go.Box(y=[1, 2, 3, 8])), go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])),
            go.Figure(go.Scatter(x=[1, 2], y=[2, 1], mode="lines+markers+text", text=["a", "b"]))]
    js, name = plotlyjs_for(figs)
    assert name == "cartesian"
    divs = "".join(f.to_html(full_html=False, include_plotlyjs=False, div_id=f"g{i}") for i, f in enumerate(figs))
    page_file = tmp_path / "traces.html"
    page_file.write_text(f"<html><head><script>{js}</script></head><body>{divs}</body></html>", encoding="utf-8")
    with browser_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda r: r.abort() if not r.request.url.startswith("file://") else r.continue_())
        page.goto(page_file.resolve().as_uri())
        for i in range(len(figs)):
            page.wait_for_selector(f"#g{i} .main-svg", timeout=30_000)
        assert page.locator("#g0 .bars path").count() >= 2 and page.locator("#g1 .boxlayer path").count() >= 1
        assert page.locator("#g2 .hm image").count() == 1 and page.locator("#g3 .scatterlayer .point").count() == 2
        assert not errors


def test_the_symbol_list_explains_symbols_not_english_words_that_share_a_glossary_entry() -> None:
    """"the source selection partition" is English: "source" must not get the column help of the gate's table."""
    from components.report.document import _symbols

    named = dict(_symbols(["selective rate and risk at s = 0.8, τ fitted on the source selection partition",
                           "ece_top: OOD − ID paired over refits; model lr, mapping platt"]))
    assert {"rate", "risk", "ece_top", "OOD"} <= set(named)
    assert not {"source", "model", "mapping"} & set(named)
