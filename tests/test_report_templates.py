"""The HTML report is rendered from Jinja2 templates with autoescape on: data is text, never markup or template.

A run whose name, dataset, model, column names, cells, verdicts and findings
hold ``<script>``, an attribute break-out (``"onmouseover=``), ``</textarea>``
and template syntax (``{{ 7*7 }}``, ``{% ... %}``) gives a report in which each
of them is text: escaped in the source, read back verbatim by an HTML parser,
and never evaluated. The environment escapes by construction (autoescape,
``StrictUndefined``); the only ``Markup`` values are the project's own HTML,
each marked where a comment says why it is safe; the templates ship as
package data; the tables' cells are the ones ``DataFrame.to_html`` writes.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pandas as pd
import pytest
from markupsafe import Markup, escape

from audit_core.findings import Finding
from audit_core.runs.registry import RunRegistry
from components.report import render_report
from components.report import document
from components.report.templating import environment, render, table_of
from tests.runs_data import odd_tables

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "components" / "report"

#: Hostile text: a script, an attribute break-out, a textarea break-out and template syntax (expression,
#: statement, comment), with markers around the expression so an evaluation would show as ``T49T``.
HOSTILE = ("<script>alert(1)</script> \"onmouseover=alert(2) x=\" '</textarea><textarea>' "
           "T{{ 7*7 }}T S{% if 1 %}yes{% endif %}S {# c #} {{ record.run_id }}")
#: What must never be in the report's source: each payload unescaped, and each template evaluated.
RAW = ("<script>alert(1)", '"onmouseover=', "</textarea>", "<textarea>", "T49T", "SyesS")


class _Text(HTMLParser):
    """Text of every element (by tag), the start tags with their attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[tuple[str, str]] = []
        self.starts: list[tuple[str, dict]] = []
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.starts.append((tag, dict(attrs)))
        self._open.append(tag)

    def handle_endtag(self, tag):
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag):]

    def handle_data(self, data):
        self.text.append((self._open[-1] if self._open else "", data))


@pytest.fixture(scope="module")
def hostile_record(tmp_path_factory):
    reg = RunRegistry(tmp_path_factory.mktemp("tpl") / "r.sqlite3")
    tables = odd_tables()
    tables["verdicts"] = tables["verdicts"].assign(verdict=["pass", HOSTILE, "pass"])
    tables["mixed"] = tables["mixed"].rename(columns={"s": HOSTILE})
    tables[HOSTILE] = pd.DataFrame({HOSTILE: [HOSTILE, "ok"], "n": [1, 2]})
    run_id = reg.save(audit_kind="custom_audit", dataset_name=HOSTILE, dataset_fingerprint="f" * 64,
                      grouping_hash=HOSTILE, model_spec={"kind": HOSTILE}, config={"name": HOSTILE}, tables=tables,
                      manifest={"key_numbers": {"note": HOSTILE}})
    # a kind and an error text the registry would not store, set on the loaded record
    return dataclasses.replace(reg.load(run_id), audit_kind=HOSTILE, error=HOSTILE)


@pytest.fixture(scope="module")
def hostile_report(hostile_record):
    finding = Finding(text=HOSTILE, severity="alert", kind="hostile", detail=HOSTILE)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(document, "report_findings", lambda record: [finding])
        return render_report(hostile_record, generated_at=HOSTILE)


def test_hostile_text_is_escaped_text_and_never_a_template(hostile_report):
    doc = hostile_report
    for raw in RAW:
        assert raw not in doc, raw
    assert str(escape(HOSTILE)) in doc
    assert "T{{ 7*7 }}T" in doc and "S{% if 1 %}yes{% endif %}S" in doc and "{# c #}" in doc
    assert "{{ record.run_id }}" in doc  # a name of the template's context, printed, not looked up
    parsed = _Text()
    parsed.feed(doc)
    # read back by a browser's rules, the payload is text in each place it was put
    where = {tag for tag, data in parsed.text if HOSTILE in data}
    assert {"title", "h1", "b", "code", "p", "li", "th", "td", "summary"} <= where, where
    assert [a["content"] for tag, a in parsed.starts if tag == "meta" and a.get("name") == "generated-at"] == [HOSTILE]
    # and it made no element or attribute: two scripts (plotly.js, the print script; no figures for this kind)
    assert [tag for tag, _ in parsed.starts].count("script") == 2
    assert not any(tag == "textarea" or any(k.startswith("on") for k in a) for tag, a in parsed.starts)
    pre = "".join(data for tag, data in parsed.text if tag == "pre")
    assert "<script>alert(1)</script>" in pre and "</textarea>" in pre and "T{{ 7*7 }}T" in pre  # the JSON, as text


def test_the_environment_escapes_by_construction():
    env = environment()
    assert env.autoescape("report.html.j2") and env.autoescape("_tables.html.j2") and env.autoescape(None)
    assert isinstance(env.undefined, type) and issubclass(env.undefined, jinja2.StrictUndefined)
    out = env.from_string("<p title='{{ t }}'>{{ t }}</p>").render(t="' onmouseover='x' {{ 7*7 }} <b>")
    assert out == ("<p title='&#39; onmouseover=&#39;x&#39; {{ 7*7 }} &lt;b&gt;'>&#39; onmouseover=&#39;x&#39; "
                   "{{ 7*7 }} &lt;b&gt;</p>")
    assert env.from_string("{{ t }}").render(t="a\u202eb") == "a&lt;U+202E&gt;b"  # invisible characters shown
    assert env.from_string("{{ t }}").render(t=Markup("<i>ours</i>")) == "<i>ours</i>"  # only Markup passes
    with pytest.raises(jinja2.UndefinedError):
        render("report.html.j2")  # a missing value is an error, never an empty string


def test_only_the_projects_own_html_is_marked_safe():
    """Every ``Markup(...)`` in the report package follows a comment saying why it is safe; no template says
    ``|safe`` or turns autoescape off."""
    for path in REPORT.glob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if "Markup(" in line and not line.lstrip().startswith(("#", '"', ">>>")):
                above = "\n".join(lines[max(0, i - 3):i])
                assert "# Safe:" in above, f"{path.name}:{i + 1} marks HTML safe without saying why"
    for path in (REPORT / "templates").glob("*"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false", text), path.name
    assert "html_text" not in (REPORT / "document.py").read_text(encoding="utf-8")  # no hand escaping left


def test_the_templates_ship_as_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    patterns = data["components.report"]
    templates = sorted(p.relative_to(REPORT).as_posix() for p in (REPORT / "templates").iterdir())
    assert templates and all(t.endswith(".html.j2") for t in templates)
    assert all(any(fnmatch.fnmatch(t, pat) for pat in patterns) for t in templates), (templates, patterns)
    assert "Jinja2==3.1.6" in (ROOT / "requirements.txt").read_text(encoding="utf-8").split()


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


@pytest.mark.parametrize("name", [*odd_tables(), "long", "hostile"])
def test_table_cells_are_the_ones_pandas_to_html_writes(name):
    frames = {**odd_tables(), "long": pd.DataFrame({"x": [i / 7 for i in range(60)], "s": ["a  b"] * 60}),
              "hostile": pd.DataFrame({HOSTILE: [HOSTILE, " pad ", None], 3: [1.5, float("nan"), 1e9]})}
    df = frames[name]
    t = table_of(df, table_id="t", max_rows=50)
    theirs = _Cells()
    theirs.feed(df.head(50).to_html(index=False, escape=True, na_rep="—"))
    assert [list(t.header), *map(list, t.rows)] == theirs.rows
    ours = _Cells()
    ours.feed(environment().get_template("_tables.html.j2").module.table(t, 50))
    assert ours.rows == theirs.rows and (t.n_rows, t.n_columns) == df.shape
