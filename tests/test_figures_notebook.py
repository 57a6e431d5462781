"""The notebook examples of ``components/figures/__init__.py`` run, and every figure builder is documented there.

Each ``>>>`` line (with its ``...`` continuations) of the package docstring is
executed in order on the results of ``docs/notebook_example.py`` (``fr``, ``tr``)
and a small multi-class Transport run (``mc``); every ``fig`` it assigns must
be a Plotly figure.
"""
from __future__ import annotations

import ast
import runpy
from pathlib import Path

import plotly.graph_objects as go
import pytest

from audit_core import TableSpec, transport_audit
from components import figures
from tests.api_data import FAST, multiclass_frame

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("fragility", "transport", "transport_mc", "shift", "data", "receipts", "cube")


def statements(doc: str) -> list[str]:
    """The ``>>>`` statements of ``doc``, each joined with its ``...`` continuation lines."""
    out: list[str] = []
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith(">>> "):
            out.append(s[4:])
        elif s.startswith("... ") and out:
            out[-1] += "\n" + s[4:]
    return out


@pytest.fixture(scope="module")
def results() -> dict:
    example = runpy.run_path(str(ROOT / "docs" / "notebook_example.py"), run_name="__main__")
    spec = TableSpec(target="y", features=("x1", "x2", "k"), key="id", domain="dom", source_domain="s",
                     target_domain="t")
    mc = transport_audit(multiclass_frame(), spec, n_refits=1, n_bootstrap=10, options=FAST)
    return {"fr": example["fragility"], "tr": example["transport"], "mc": mc}


def test_the_docstring_has_examples_for_each_audit():
    code = statements(figures.__doc__ or "")
    assert len(code) >= 20
    for name in ("fr.", "tr.", "mc."):
        assert any(name in c for c in code), name


def test_every_example_line_builds_a_figure(results):
    namespace = dict(results)
    built = 0
    for code in statements(figures.__doc__ or ""):
        namespace.pop("fig", None)
        exec(compile(code, "<components.figures docstring>", "exec"), namespace)  # noqa: S102 - our own docstring
        if code.startswith("fig ="):
            assert isinstance(namespace["fig"], go.Figure), code
            built += 1
    assert built >= 15


def test_every_builder_is_documented():
    doc = figures.__doc__ or ""
    missing = []
    for module in MODULES:
        tree = ast.parse((ROOT / "components" / "figures" / f"{module}.py").read_text(encoding="utf-8"))
        names = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                     and any(getattr(t, "id", None) == "__all__" for t in n.targets))
        missing += [f"{module}.{n}" for n in names if (n.endswith(("_figure", "_figures")) or n == "cube_view")
                    and n not in doc]
    assert not missing, missing
