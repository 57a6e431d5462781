"""Model cards of saved runs (``skops.card``): the produced Markdown is parsed back section by section."""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from audit_core.findings.card import CARD_SECTIONS, md_text, model_card, write_model_card
from audit_core.runs.registry import RunRegistry
from tests.shift_data import saved_loan_transport


def parse_card(text: str) -> dict[str, str]:
    """Markdown -> {heading path: body}: '# A' then '## B' gives 'A' and 'A/B' (an independent reader).

    skops writes some subsection headings with their full path ('## A/B'): the last part is the name.
    """
    out, path, body = {}, [], []
    for line in text.splitlines():
        m = re.match(r"^(#+) (.*)$", line)
        if m and not line.startswith("#" * 7):
            if path:
                out["/".join(path)] = "\n".join(body).strip()
            level = len(m.group(1))
            path = path[: level - 1] + [m.group(2).strip().split("/")[-1]]
            body = []
        else:
            body.append(line)
    if path:
        out["/".join(path)] = "\n".join(body).strip()
    return out


def table_rows(body: str) -> list[list[str]]:
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])] for line in body.splitlines()
            if line.strip().startswith("|")]  # cells split on unescaped pipes only
    return [r for r in rows if not all(set(c) <= set(":-") for c in r)]


@pytest.fixture(scope="module")
def transport_record(tmp_path_factory, loan_transport_result):
    return saved_loan_transport(tmp_path_factory.mktemp("reg"), dataset_name="loan | *2019*", result=loan_transport_result)


@pytest.mark.xdist_group("loan_transport_result")  # on the worker that has the session fixture
def test_transport_card_sections_and_numbers(transport_record, tmp_path):
    path = write_model_card(transport_record, tmp_path / "card.md")
    text = path.read_text(encoding="utf-8")
    sec = parse_card(text)
    assert [s for s in sec if "/" not in s] == list(CARD_SECTIONS)
    assert transport_record.run_id in sec["Model description"] and "logistic\\_regression" in sec["Model description"]
    # the data fingerprint row and the escaped dataset name (its | and * would break the table)
    data = dict(r for r in table_rows(sec["Model description/Training and evaluation data"])[1:])
    assert data["fingerprint"] == transport_record.dataset_fingerprint
    assert data["dataset"] == md_text("loan | *2019*") == "loan \\| \\*2019\\*"
    # metrics: the headline slice's ID and OOD means over refits (Platt, the only mapping; 2 refits), named with it
    metrics = {r[0]: float(r[1]) for r in table_rows(sec["Model description/Evaluation Results"])[1:]}
    s = transport_record.tables["refit_summary"]
    want = s[(s["analysis"] == "metrics") & (s["metric"] == "auroc") & (s["domain"] == "ood")
             & (s["condition"] == "clean") & (s["weighting"] == "unweighted")]["mean"].iloc[0]
    named = "(OOD 2023; Platt-calibrated logistic regression, mean of 2 refits)"
    assert metrics[f"auroc {named}"] == pytest.approx(want, abs=1e-6)
    t = transport_record.tables["results"]
    ece = t[(t["analysis"] == "metrics") & (t["metric"] == "ece") & (t["domain"] == "ood") & (t["condition"] == "clean")
            & (t["weighting"] == "unweighted") & (t["refit"] >= 0)]["value"]
    assert len(ece) == 2 and metrics[f"ece {named}"] == pytest.approx(ece.mean(), abs=1e-6)
    # findings: one bullet per finding, the shift finding among them
    bullets = [line for line in sec["Findings"].splitlines() if line.startswith("- **")]
    assert len(bullets) >= 3 and any("most shifted features are interest\\_rate" in b for b in bullets)
    # grounds: one transport run provides OOD ECE but no held-out AUROC, which stays unknown (never guessed)
    grounds = {r[0]: r for r in table_rows(sec["Release verdict/Grounds"])[1:]}
    assert grounds["test\\_auroc"][1:] == ["—", "absent → UNKNOWN"] and grounds["ood\\_ece"][2] == "present"
    # production rules in order: ood_ece > 0.05 blocks; otherwise brittle_confident needs an unknown ground: refer
    expected = "block" if float(grounds["ood\\_ece"][1]) > 0.05 else "refer"
    assert sec["Release verdict"].startswith(f"**{expected}** under the production scope (default release rules): ")
    assert table_rows(sec["Feature shift"])[1][1] == "interest\\_rate"
    config = json.loads(sec["How to reproduce"].split("```json", 1)[1].split("```", 1)[0])
    assert config == json.loads(json.dumps(transport_record.config, default=str))


def test_model_run_card_metrics_and_release(tmp_path):
    reg = RunRegistry(tmp_path / "r.sqlite3")
    metrics = pd.DataFrame({"split": ["test", "test", "test"], "metric": ["auroc", "brier_score", "n_rows"],
                            "value": [0.81, 0.15, 400.0]})
    run_id = reg.save(audit_kind="model", dataset_name="d", dataset_fingerprint="abc123", grouping_hash="g1",
                      model_spec={"kind": "logistic_regression", "params": {"C": 0.5}}, config={"seed": 0},
                      tables={"metrics": metrics})
    sec = parse_card(model_card(reg.load(run_id), scope="internal").render())
    assert {r[0]: r[1] for r in table_rows(sec["Model description/Evaluation Results"])[1:]} == {
        "auroc (test)": "0.81", "brier\\_score (test)": "0.15"}
    assert table_rows(sec["Model description/Model parameters"])[1] == ["C", "0.5"]
    # internal scope: only the discrimination rule applies and 0.81 ≥ 0.70 passes, so the default applies
    assert sec["Release verdict"].startswith("**release** under the internal scope")
    assert "Feature shift" not in sec
    assert sec["Findings"] == "No findings are generated from this run's stored tables."


def _model_run(reg: RunRegistry) -> str:
    metrics = pd.DataFrame({"split": ["test"], "metric": ["auroc"], "value": [0.64]})
    return reg.save(audit_kind="model", dataset_name="d", dataset_fingerprint="fp9", grouping_hash=None,
                    model_spec={"kind": "lightgbm"}, config={"seed": 1}, tables={"metrics": metrics})


def test_cli_export_model_card(tmp_path):
    from tests.test_cli import cli

    path = tmp_path / "reg.sqlite3"
    run_id = _model_run(RunRegistry(path))
    out = tmp_path / "card.md"
    done = cli("export", run_id, "--model-card", str(out), "--scope", "internal", "--registry", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    sec = parse_card(out.read_text(encoding="utf-8"))
    # internal scope: the discrimination rule applies and 0.64 < 0.70 blocks
    assert sec["Release verdict"].startswith("**block** under the internal scope")
    assert dict(table_rows(sec["Model description/Training and evaluation data"])[1:])["fingerprint"] == "fp9"
    bad = cli("export", run_id, "--registry", str(path))
    assert bad.returncode == 2 and "export needs --bundle OUT.json, --parquet DIR and/or --model-card OUT.md" in bad.stderr


def test_runs_page_makes_the_model_card_on_request(tmp_path, monkeypatch):
    """Building a card takes seconds: the Runs page builds none until "Make model card" is clicked, then offers
    the download for the selected run and does not rebuild it on the next rerun."""
    from streamlit.testing.v1 import AppTest

    import audit_core.findings.card as card_module
    from tests.test_runs_page import ROOT

    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    reg = RunRegistry(path)
    older, newer = _model_run(reg), _model_run(reg)
    built = []
    real = card_module.model_card

    def counting(record, *args, **kwargs):
        card = real(record, *args, **kwargs)
        built.append((record.run_id, card))
        return card

    monkeypatch.setattr(card_module, "model_card", counting)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    at.selectbox(key="ru_open").set_value(older).run()
    assert built == [], "a card was built before it was asked for"
    assert not [e for e in at.get("download_button") if "Model card" in str(e.proto.label)]
    assert at.button(key="act_ru_card").proto.help.startswith("A skops model card")
    at.button(key="act_ru_card").click().run()
    assert not at.exception, at.exception
    assert [rid for rid, _ in built] == [older]
    (download,) = [e for e in at.get("download_button") if "Model card" in str(e.proto.label)]
    assert older[-8:] in download.proto.label and older in download.proto.help and newer not in download.proto.help
    assert older in built[0][1].render()
    at.run()  # a rerun serves the card from the cache
    assert [rid for rid, _ in built] == [older]
    at.selectbox(key="ru_open").set_value(newer).run()  # another run: asked for again, not built meanwhile
    assert [rid for rid, _ in built] == [older]
    assert not [e for e in at.get("download_button") if "Model card" in str(e.proto.label)]
    assert at.button(key="act_ru_card").proto.label == "Make model card"
