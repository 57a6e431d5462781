"""One function per medium for text from data (``audit_core.safe_text``): what it reveals, and who must use it.

* :func:`reveal` shows exactly the invisible and text-moving characters
  (checked against :mod:`unicodedata` over every code point);
* :func:`csv_cell` / :func:`csv_text` neutralise text cells a spreadsheet
  would run as a formula and leave numbers numeric;
* every CSV the app or the CLI writes goes through :func:`csv_text` (the
  writers are found by searching the source, so a new one cannot be missed).
"""
from __future__ import annotations

import csv
import io
import re
import sys
import unicodedata
from pathlib import Path

import pandas as pd

from audit_core.safe_text import _HIDDEN, csv_cell, csv_text, reveal

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("audit_core", "components", "audit_cli", "pages", "app.py")
#: Lines that write CSV without csv_text, each with its reason.
CSV_NOT_FOR_PEOPLE = {
    ("audit_core/runs/config.py", "frame.to_csv(buf, index=False)"):
        "hashes an in-memory frame for its fingerprint; never written or shown",
    ("audit_core/data/samples/files.py", 'frame.to_csv(fh, index=False, lineterminator="\\n")'):
        "writes the project's generated sample data, read back as data: it must round-trip unchanged",
}
WRITER = re.compile(r"\.to_csv\(|csv\.(Dict)?[wW]riter\(")


def test_hidden_characters_are_exactly_controls_format_characters_and_separators():
    expected = {chr(i) for i in range(sys.maxunicode + 1)
                if unicodedata.category(chr(i)) in ("Cc", "Cf", "Zl", "Zp")}
    found = {chr(i) for i in range(sys.maxunicode + 1) if _HIDDEN.match(chr(i))}
    assert found == expected


def test_reveal_shows_bidirectional_and_zero_width_characters():
    for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u200e\u200f\ufeff":
        assert reveal(f"a{c}b") == f"a<U+{ord(c):04X}>b"
    assert reveal("invoice_\u202egpj.exe") == "invoice_<U+202E>gpj.exe"
    assert reveal("Zürich 東京 ok") == "Zürich 東京 ok"
    assert reveal("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645") == "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert reveal("a\tb\nc") == "a\tb\nc" and reveal("\x1b[2J") == "\\x1b[2J"


def test_csv_cells_that_start_like_a_formula_are_neutralised_and_numbers_stay_numbers():
    frame = pd.DataFrame({
        "key": ['=HYPERLINK("http://127.0.0.1:9/x","click")', "+1", "-x", "@SUM(A1)", "\tcmd", "\rcmd", "ok",
                "-1.5"],
        "margin": [-1.5, 0.25, -3.0, 1e-9, -0.0, 2.0, 3.0, 4.0],
        "k": pd.array([1, -2, 3, None, 5, 6, 7, -8], dtype="Int64"),
        "=col": list("abcdefgh"),
    })
    rows = list(csv.reader(io.StringIO(csv_text(frame, index=False), newline="")))
    assert rows[0] == ["key", "margin", "k", "'=col"]
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(\"http://127.0.0.1:9/x\",\"click\")", "'+1", "'-x", "'@SUM(A1)",
                                        "'\tcmd", "'\rcmd", "ok", "'-1.5"]
    assert [float(r[1]) for r in rows[1:]] == frame["margin"].tolist()
    assert [r[2] for r in rows[1:]] == ["1", "-2", "3", "", "5", "6", "7", "-8"]
    assert csv_cell(-1.5) == -1.5 and csv_cell("a-b") == "a-b"


def test_every_csv_writer_uses_csv_text():
    hits = []
    for src in SOURCES:
        for path in sorted((ROOT / src).rglob("*.py")) if (ROOT / src).is_dir() else [ROOT / src]:
            rel = str(path.relative_to(ROOT))
            for line in path.read_text().splitlines():
                if WRITER.search(line) and "csv_text" not in line and rel != "audit_core/safe_text.py":
                    hits.append((rel, line.strip()))
    assert sorted(hits) == sorted(CSV_NOT_FOR_PEOPLE), "a CSV writer without safe_text.csv_text"
    fragility = (ROOT / "components/widgets/fragility.py").read_text()
    assert 'csv_text(audit.certificates, index=False), file_name="fragility_certificates.csv"' in fragility
