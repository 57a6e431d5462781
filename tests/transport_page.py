"""An AppTest opened on the Transport page with a given table declared (class target ``y``, domain ``dom`` s → t)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def transport_page(frame: pd.DataFrame, *, name: str, timeout: int = 300) -> AppTest:
    """The app with ``frame`` adopted on Data & groups (``y`` a class target without a positive class), on Transport.

    Parameters
    ----------
    frame : DataFrame, shape (n_rows, n_columns)
        Has the columns ``y`` (the target) and ``dom`` (domain, values ``"s"`` and ``"t"``); both get the
        ignore role, so neither is a feature. Read back through the uploader's reader as ``name``.
    """
    from audit_core.data.intake import read_table
    from components.state import Keys
    from components.widgets.adoption import _column_table

    table = read_table(frame.to_csv(index=False).encode(), name=name)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    cols = _column_table(table.frame, None)
    cols.loc[cols["column"].isin(["y", "dom"]), "role"] = "ignore"
    at.session_state[Keys.TABLE], at.session_state[Keys.SAMPLE], at.session_state[Keys.COLUMNS] = table, None, cols
    at.session_state[Keys.TARGETS] = [{"kind": "class", "name": "y", "column": "y"}]
    at.session_state["dg_domain"], at.session_state["dg_source_value"], at.session_state["dg_target_value"] = "dom", "s", "t"
    at.run()
    return at.switch_page("pages/transport.py").run()
