"""What the CLI prints reaches the terminal as text: control characters from data are shown as escapes.

Column names, a category and the run name carry an OSC 8 hyperlink, a
clear-screen, a window title, a C1 CSI and a BEL; a line break and a tab in a
name try to forge an output line and a column. Through the real console
command (``run``, ``list``, a refused config), no raw control character
reaches stdout or stderr, the escapes are visible, and every output line of
``run`` still has its four tab-separated fields.
"""
from __future__ import annotations

import pandas as pd
import yaml

from audit_core.safe_text import terminal_text
from tests.test_cli import ROOT, cli

LINK = "\x1b]8;;http://127.0.0.1:9/phish\x1b\\click me\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[Hcleared"
TITLE = "\x1b]0;pwned\x07title"
C1 = "\x9b31mred"
FORGE = "x\nmodel\tdone\tFAKE\t/tmp\ty"
RAW = ("\x1b", "\x07", "\x9b", "\r")


def _hostile_config(tmp_path, *, target_column: str = CLEAR) -> str:
    loan = pd.read_csv(ROOT / "sample_data" / "loan_synthetic.csv")
    loan = pd.concat([loan[loan["year"] == 2019].head(400), loan[loan["year"] == 2023].head(400)])
    frame = loan[["year", "credit_score", "annual_income", "utilisation", "purpose", "defaulted"]].rename(
        columns={"credit_score": LINK, "annual_income": TITLE, "utilisation": C1, "purpose": FORGE,
                 "defaulted": CLEAR})
    frame[FORGE] = frame[FORGE].where(frame[FORGE] != frame[FORGE].iloc[0], TITLE)
    data = tmp_path / f"d{TITLE}.csv"  # the file name is the dataset's name in the registry
    frame.to_csv(data, index=False)
    cfg = {"name": LINK + FORGE, "data": {"path": str(data)},
           "dataset": {"targets": [{"kind": "class", "name": "t", "column": target_column, "positive": "yes"}],
                       "domain_column": "year", "source_domain": 2019, "target_domain": 2023},
           "model": {"kind": "logistic_regression", "seed": 0},
           "audits": [{"kind": "model", "bootstrap": 20, "chunk_size": 5},
                      {"kind": "fragility", "max_cases": 25, "chunk_size": 25, "n_boot": 5, "shap_max_cases": 0,
                       "search_max_cases": 5, "perm_repeats": 1, "stress_draws": 3},
                      {"kind": "transport", "n_refits": 1, "n_bootstrap": 20, "n_random_sets": 2, "stresses": [],
                       "mappings": ["raw"]}]}
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    return str(path)


def _clean(text: str) -> None:
    for c in RAW:
        assert c not in text, (repr(c), text[:400])


def test_terminal_text_shows_every_control_character():
    assert terminal_text(LINK) == "\\x1b]8;;http://127.0.0.1:9/phish\\x1b\\click me\\x1b]8;;\\x1b\\"
    assert terminal_text(C1 + "\t\r\n\x00\x7f") == "\\x9b31mred\\t\\r\\n\\x00\\x7f"
    assert terminal_text("Zürich \u202eabc") == "Zürich <U+202E>abc"


def test_run_list_and_errors_print_control_characters_as_escapes(tmp_path):
    reg, out = str(tmp_path / "r.sqlite3"), str(tmp_path / "out")
    done = cli("run", _hostile_config(tmp_path), "--registry", reg, "--out", out)
    assert done.returncode == 0, done.stderr
    _clean(done.stdout + done.stderr)
    lines = done.stdout.splitlines()
    assert lines[0].split("\t")[:2] == ["model", "done"] and len(lines[0].split("\t")) == 4
    assert not any(line.startswith("model\tdone\tFAKE") for line in lines)

    listed = cli("list", "--registry", reg)
    _clean(listed.stdout + listed.stderr)
    assert "d\\x1b]0;pwned\\x07title.csv" in listed.stdout

    refused = cli("run", _hostile_config(tmp_path, target_column=TITLE + "missing"), "--registry", reg, "--out", out)
    assert refused.returncode == 2
    _clean(refused.stdout + refused.stderr)
    assert "\\x1b]0;pwned\\x07titlemissing" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
