"""The report's Jinja2 environment and the plain-text cells of its tables.

The HTML report is rendered from the templates in ``templates/``
(``*.html.j2``) by one :class:`jinja2.Environment` with autoescape on and
:class:`jinja2.StrictUndefined`: every value a template prints is escaped for
HTML by Jinja, after :func:`audit_core.safe_text.reveal` has made its invisible
and text-moving characters visible (the environment's ``finalize``). Data
is passed to the templates as plain strings and is never template source, so
``{{ 7*7 }}`` in a run name is printed as those characters. The only values
marked :class:`markupsafe.Markup` are HTML the project itself produced (the
Plotly figure divs, the vendored plotly.js, the stylesheet and the print script
of :mod:`.style`); each place that marks one says why it is safe.

Tables are passed as :class:`Table` (header and cells as text, formatted the
way :meth:`pandas.DataFrame.to_html` formats them), so their cells are escaped
by the same environment.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import jinja2
import pandas as pd
from markupsafe import Markup
# pandas' own cell formatter (what DataFrame.to_html uses); tests/test_report_templates.py checks the cells against
# to_html's, so a pandas upgrade that moves it fails there
from pandas.io.formats.format import DataFrameFormatter  # type: ignore[attr-defined]  # in pandas, not in its stubs

from audit_core.safe_text import map_text, reveal

__all__ = ["Table", "environment", "render", "table_of"]


def _shown(value: object) -> object:
    """Every printed value, before Jinja escapes it: text with its invisible characters shown, Markup unchanged."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return reveal(value)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The report's environment: templates of this package, autoescape on, undefined names an error.

    Returns
    -------
    jinja2.Environment
        Loads ``components/report/templates/*.html.j2``; escapes every
        printed value that is not :class:`~markupsafe.Markup` (any template,
        whatever its extension); shows invisible characters as ``<U+XXXX>``
        (:func:`audit_core.safe_text.reveal`) before escaping.

    Examples
    --------
    >>> environment().from_string("<b>{{ name }}</b>").render(name="{{ 7*7 }}<script>")
    '<b>{{ 7*7 }}&lt;script&gt;</b>'
    """
    return jinja2.Environment(
        loader=jinja2.PackageLoader("components.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True,
                                            default=True),
        undefined=jinja2.StrictUndefined,
        finalize=_shown,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(name: str, /, **context: object) -> str:
    """Render the template ``name`` (e.g. ``"report.html.j2"``) with ``context``."""
    return environment().get_template(name).render(**context)


@dataclass(frozen=True)
class Table:
    """A table as the report shows it: its id, column labels and cells as text, and the frame's full size.

    Attributes
    ----------
    table_id : str
        The ``id`` of the ``<table>``.
    header : tuple of str
        Column labels.
    rows : tuple of tuple of str
        The shown rows' cells (at most the ``max_rows`` asked for), formatted
        as :meth:`pandas.DataFrame.to_html` formats them (one number format per
        column, missing values as ``—``).
    n_rows, n_columns : int
        The frame's full shape (before capping).
    """

    table_id: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    n_rows: int
    n_columns: int


def _cell(text: str) -> str:
    # as pandas' HTML writer: trimmed, runs of two spaces kept visible (no-break spaces, as its ``&nbsp;&nbsp;``)
    return text.strip().replace("  ", "\u00a0\u00a0")


def table_of(df: pd.DataFrame, *, table_id: str, max_rows: int) -> Table:
    """The first ``max_rows`` rows of ``df`` as a :class:`Table` of text, invisible characters shown.

    Parameters
    ----------
    df : pandas.DataFrame of shape (n_rows, n_columns)
        Any result table (its index is not shown).
    table_id : str
        The ``id`` the table gets.
    max_rows : int
        Rows shown at most.

    Returns
    -------
    Table
        Cells as :meth:`pandas.DataFrame.to_html` (``index=False``,
        ``na_rep="—"``) would write them, unescaped: escaping is the template's.

    Examples
    --------
    >>> t = table_of(pd.DataFrame({"a": [0.5, 0.25], "b": ["<i>", None]}), table_id="t", max_rows=50)
    >>> t.header, t.rows
    (('a', 'b'), (('0.50', '<i>'), ('0.25', '—')))
    """
    shown = map_text(df.head(max_rows), reveal)
    formatter = DataFrameFormatter(shown, na_rep="—", index=False)
    with pd.option_context("display.max_colwidth", None):
        columns = [formatter.format_col(i) for i in range(shown.shape[1])]
    rows = tuple(tuple(_cell(col[r]) for col in columns) for r in range(len(shown)))
    return Table(table_id=table_id, header=tuple(_cell(str(c)) for c in shown.columns), rows=rows,
                 n_rows=int(df.shape[0]), n_columns=int(df.shape[1]))
