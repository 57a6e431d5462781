"""Latin-1 files whose only accented letter is 'ü', read back: how many are decoded with the wrong code page.

30 random files per size (100, 500, 2,000 rows), built by ``tests/test_intake_decoding.py``. Pass another
checkout's root to measure its code (the files come from this checkout)::

    .venv/bin/python benchmarks/encoding_decisions.py [ROOT]
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # the test helpers come from this checkout, the code from ROOT
ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else HERE).resolve()
sys.path[:0] = [str(ROOT), str(HERE / "tests")]

from audit_core.data.intake import read_table  # noqa: E402
from test_intake_decoding import latin1_file  # noqa: E402

for n in (100, 500, 2000):
    wrong: collections.Counter = collections.Counter()
    for seed in range(30):
        data, cities = latin1_file(n, seed=1000 * n + seed)
        table = read_table(data, name="f.csv")
        if table.frame["city"].astype(str).tolist() != cities:
            wrong[table.encoding] += 1
    print(f"{n} rows: {sum(wrong.values())} of 30 decoded wrongly {dict(wrong)}")
