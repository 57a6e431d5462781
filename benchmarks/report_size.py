"""HTML report size: a Fragility, a Transport and a gate report, against the 2 MB budget.

Run from the project root::

    python benchmarks/report_size.py [--registry PATH] [--out DIR]

It runs, on the bundled loan sample (seeded), a model audit, a Fragility
audit (300 cases), a Transport audit (2019 → 2023, 5 refits, 200
bootstraps, raw + Platt, target-definition and degradation stresses) and a
Receipts cube of 8 changed grounds (256 cells), saves them in a scratch
registry (or reuses the newest runs of each kind in ``--registry``), writes
each report to ``--out`` and prints one line per report: bytes, MB, the
plotly.js bundle embedded, and the same report's size with the full
plotly.js for comparison. The **gate report** is the Transport run's report
opened by the release gate from the model + Fragility runs (A) to the model
+ Fragility + Transport runs (B).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plotly.offline import get_plotlyjs  # noqa: E402

from audit_core.receipts import CubeResult  # noqa: E402
from audit_core.runs.config import load_config  # noqa: E402
from audit_core.runs.execute import run_config  # noqa: E402
from audit_core.runs.gate import compare_runs  # noqa: E402
from audit_core.runs.registry import RunRegistry  # noqa: E402
from components.report import render_report  # noqa: E402

BUDGET = 2 * 1024 * 1024
STATE = "grounds: {{{g}}}\nnorms: {{default: ok, rules: [{{id: r1, when: 'a + b > 3', then: 'no'}}, " \
        "{{id: r2, when: 'c + d + e > 5', then: 'no'}}]}}\nauthority: {{r1: 'true', r2: 'true'}}\n"
CONFIG = """\
name: report-size
data: {sample: loan_synthetic}
model: {kind: logistic_regression, seed: 0}
audits:
  - {kind: model, bootstrap: 200}
  - {kind: fragility, max_cases: 300, chunk_size: 50, seed: 0}
  - {kind: transport, n_refits: 5, n_bootstrap: 200, mappings: [raw, platt], stresses: [target_definition, degradation], n_random_sets: 20, seed: 0}
  - {kind: receipts, mode: cube, old: "WORK/old.yaml", new: "WORK/new.yaml", granularity: items}
"""


def _make_runs(registry: RunRegistry, work: Path) -> None:
    names = "abcdefgh"
    (work / "old.yaml").write_text(STATE.format(g=", ".join(f"{n}: 1" for n in names)))
    (work / "new.yaml").write_text(STATE.format(g=", ".join(f"{n}: 2" for n in names)))
    (work / "cfg.yaml").write_text(textwrap.dedent(CONFIG).replace("WORK", str(work)))
    for o in run_config(load_config(work / "cfg.yaml"), registry=registry, base_dir=work):
        assert o.status == "done", o.error


def _newest(registry: RunRegistry, kind: str):
    runs = registry.list_runs(audit_kind=kind)
    runs = runs[runs["status"] == "done"]
    return registry.load(runs["run_id"].iloc[0]) if len(runs) else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--registry", help="reuse the newest runs of each kind in this registry")
    p.add_argument("--out", default=None, help="folder for the reports (default: a temporary folder)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="report-size-") as tmp:
        work = Path(tmp)
        registry = RunRegistry(args.registry or work / "registry.sqlite3")
        if not args.registry:
            _make_runs(registry, work)
        runs = {k: _newest(registry, k) for k in ("model", "fragility", "transport", "receipts")}
        missing = [k for k, r in runs.items() if r is None]
        if missing:
            print(f"no done run of kind(s) {', '.join(missing)} in {registry.path}", file=sys.stderr)
            return 2
        k = len(CubeResult.from_frame(runs["receipts"].tables["cells"]).sources)
        gate = compare_runs([runs["model"], runs["fragility"]], [runs["model"], runs["fragility"], runs["transport"]])
        reports = {
            "fragility": render_report(runs["fragility"], generated_at="t"),
            "transport": render_report(runs["transport"], generated_at="t"),
            "gate (transport run, A = model + fragility)": render_report(runs["transport"], generated_at="t", gate=gate),
            f"receipts cube, k = {k} ({2 ** k} cells)": render_report(runs["receipts"], generated_at="t"),
        }
        out = Path(args.out) if args.out else work
        out.mkdir(parents=True, exist_ok=True)
        full = len(get_plotlyjs().encode("utf-8"))
        worst = 0
        print(f"{'report':<46} {'bytes':>10} {'MB':>6}  bundle     with full plotly.js")
        for i, (name, doc) in enumerate(reports.items()):
            (out / f"report-{i}.html").write_text(doc, encoding="utf-8")
            size = len(doc.encode("utf-8"))
            bundle = "cartesian" if "content='cartesian'" in doc else "full"
            js_len = len(doc.split("<script type='text/javascript'>", 1)[1].split("</script>", 1)[0].encode("utf-8"))
            with_full = size - js_len + full  # the same report with plotly.py's full plotly.min.js
            worst = max(worst, size)
            print(f"{name:<46} {size:>10,} {size / 2**20:>6.2f}  {bundle:<10} {with_full:>10,} ({with_full / 2**20:.2f} MB)")
        print(f"budget {BUDGET:,} bytes (2 MB): {'within' if worst <= BUDGET else 'OVER'}; largest {worst / 2**20:.2f} MB")
        return 0 if worst <= BUDGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
