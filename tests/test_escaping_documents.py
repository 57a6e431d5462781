"""Names with bidirectional and zero-width characters are shown visibly in the model card, the report and the app.

A right-to-left override (U+202E) makes ``abc\\u202edcba`` read ``abcabcd``;
zero-width spaces and isolates hide a difference between two names. The
hostile runs of :mod:`tests.hostile_names` carry them in column, category,
key and target names: neither the Markdown model card nor the HTML report
holds one raw, and both show them as ``<U+XXXX>``. The app's Markdown escape
and its tables (``components.glossary.display``) do the same.
"""
from __future__ import annotations

import pandas as pd
import pytest

from audit_core.findings.card import md_text, write_model_card
from components.feedback import md_escape
from components.glossary import display
from components.report import render_report
from tests.hostile_names import INVISIBLE, hostile_registry

BIDI_AND_ZERO_WIDTH = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u200e\u200f\ufeff"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_registry(tmp_path_factory.mktemp("hostile"))


def test_the_escapes_of_every_medium_show_bidirectional_and_zero_width_characters():
    for c in BIDI_AND_ZERO_WIDTH:
        code = f"U+{ord(c):04X}"
        assert md_text(f"a{c}b") == "a\\<" + code.replace("+", "\\+") + "\\>b"
        assert c not in md_escape(f"a{c}b") and code in md_escape(f"a{c}b")
    shown = display(pd.DataFrame({"col\u202e": ["x\u200by", "ok"], "n": [1, 2]}))
    assert list(shown.columns) == ["col<U+202E>", "n"] and shown["col<U+202E>"].tolist() == ["x<U+200B>y", "ok"]


def test_model_card_and_report_show_invisible_characters(hostile, tmp_path):
    reg, ids = hostile
    cards, reports = "", ""
    for kind, run_id in ids.items():
        record = reg.load(run_id)
        card = write_model_card(record, tmp_path / f"{kind}.md").read_text(encoding="utf-8")
        report = render_report(record)
        for c in INVISIBLE:
            assert c not in card, (kind, "card", f"U+{ord(c):04X}")
            assert c not in report, (kind, "report", f"U+{ord(c):04X}")
        cards, reports = cards + card, reports + report
    assert "abc\\<U\\+202E\\>dcba" in cards and "zero\\<U\\+200B\\>width" in cards
    assert "abc&lt;U+202E&gt;dcba" in reports and "zero&lt;U+200B&gt;width" in reports
