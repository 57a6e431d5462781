"""Nothing changed silently on the way in: legacy encodings and merged Excel cells.

Before: Latin-1 files whose only accented letter is "ü" were read as cp775
or cp852 in 11, 17 and 14 of 30 random files (100, 500 and 2,000 rows),
"Zürich" becoming "Z³rich", with no warning; a label merged over 29 rows of
a workbook was read as 1 value and 28 missing.
"""
from __future__ import annotations

import io
import random

import pytest
from openpyxl import Workbook

from audit_core.data.intake import read_table

#: Words whose only non-ASCII letter is "ü".
U_WORDS = ("Zürich", "Lübeck", "Düsseldorf", "Müller", "Brühl")
ASCII_WORDS = ("Bern", "Basel", "Genf", "Luzern", "Schmidt", "Meier", "Berlin", "Hamburg", "Koch", "Weber")


def latin1_file(n_rows: int, seed: int) -> tuple[bytes, list[str]]:
    """A random Latin-1 CSV (id, city, name, amount) whose only accented letter is "ü"; its city column."""
    rnd = random.Random(seed)
    cities = [rnd.choice(U_WORDS[:1] + ASCII_WORDS[:4]) for _ in range(n_rows)]
    cities[rnd.randrange(n_rows)] = "Zürich"  # at least one
    lines = ["id,city,name,amount"]
    for i, city in enumerate(cities):
        name = rnd.choice(U_WORDS[1:] + ASCII_WORDS[4:]) if rnd.random() < 0.5 else rnd.choice(ASCII_WORDS)
        lines.append(f"{i},{city},{name},{rnd.uniform(0, 1000):.2f}")
    return ("\n".join(lines) + "\n").encode("latin-1"), cities


@pytest.mark.parametrize("n_rows", [100, 500, 2000])
def test_latin1_with_only_u_umlaut_is_read_as_western(n_rows):
    wrong = []
    for seed in range(30):
        data, cities = latin1_file(n_rows, seed=1000 * n_rows + seed)
        table = read_table(data, name=f"f{seed}.csv")
        if table.frame["city"].astype(str).tolist() != cities:
            wrong.append((seed, table.encoding))
            continue
        assert table.encoding == "cp1252"
        # The decision is shown, naming the character it decoded and a word that holds it.
        codes = dict(table.report.warnings)
        assert "READ_ENCODING" in codes, table.report.warnings
        assert "read as cp1252 (Windows-1252, Western European)" in codes["READ_ENCODING"]
        assert "'ü'" in codes["READ_ENCODING"]
    assert wrong == []


def test_utf8_gets_no_encoding_warning():
    data, _ = latin1_file(100, seed=1)
    table = read_table(data.decode("latin-1").encode("utf-8"), name="u.csv")
    assert table.encoding == "utf-8" and "READ_ENCODING" not in dict(table.report.warnings)


def test_encoding_warning_counts_the_characters():
    data = "id,city\n1,Zürich\n2,Zürich\n3,Genève\n".encode("latin-1")
    message = dict(read_table(data, name="c.csv").report.warnings)["READ_ENCODING"]
    assert message.startswith("'c.csv' is not UTF-8: it was read as cp1252 (Windows-1252, Western European)")
    assert "'ü' 2× (e.g. 'Zürich'), 'è' 1× (e.g. 'Genève')" in message


def _merged_workbook() -> bytes:
    book = Workbook()
    ws = book.active
    ws.title = "Branches"
    ws.append(["region", "branch", "loans"])
    for i in range(29):
        ws.append(["North" if i == 0 else None, f"b{i}", i])
    ws.append(["South", "b29", 29])
    ws.merge_cells("A2:A30")
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def test_merged_label_is_filled_from_its_top_left_cell_with_a_warning():
    table = read_table(_merged_workbook(), name="branches.xlsx")
    assert table.frame["region"].tolist() == ["North"] * 29 + ["South"]
    assert table.frame["region"].isna().sum() == 0
    codes = dict(table.report.warnings)
    assert codes["EXCEL_MERGED"].startswith(
        "Sheet 'Branches': 1 merged range(s) were filled from their top-left value, as Excel shows them: "
        "A2:A30 ('North')."
    )
