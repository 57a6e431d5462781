"""First paint, checked from the source: every page's heading comes before anything heavy.

Each page draws its title, then calls ``components.shell.after_heading()``
(the shared set-up: library, sample, workspace bar), and imports the rest
only after that; what runs before the heading (``app.py``,
``components/routing.py``, ``components/shell.py``) imports only streamlit,
and the set-up itself imports pandas but no model library, thanks to the lazy
re-exports of the ``audit_core`` packages. Timings live in
``benchmarks/first_paint.py``, not here.
"""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# First paint: every page's heading before anything heavy
# ---------------------------------------------------------------------------
#: What may be imported before a page's heading: streamlit, and the modules that import only streamlit.
LIGHT = ("__future__", "streamlit", "components.routing", "components.shell")


def _imported(stmt: ast.stmt) -> list[str]:
    """Module names a top-level statement imports (``from a import b`` -> ``a.b``: ``b`` may be a module)."""
    if isinstance(stmt, ast.Import):
        return [a.name for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [f"{stmt.module}.{a.name}" for a in stmt.names]
    return []


def _called(stmt: ast.stmt) -> str | None:
    """``st.title`` or ``after_heading`` for a top-level call statement ``st.title(...)`` or ``after_heading()``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return ast.unparse(stmt.value.func)
    return None


def _light(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in LIGHT)


def heading_first_problems(tree: ast.Module) -> list[str]:
    """Why a page's heading could wait for heavy imports (empty when it cannot).

    The page must call ``st.title`` and then ``after_heading()`` (the shared set-up,
    :mod:`components.shell`), and import nothing but :data:`LIGHT` at module level before that call.
    """
    problems, title, after = [], False, False
    for stmt in tree.body:
        heavy = [n for n in _imported(stmt) if not _light(n)]
        if heavy and not after:
            problems.append(f"line {stmt.lineno}: imports {', '.join(heavy)} before after_heading()")
        call = _called(stmt)
        if call == "st.title":
            title = True
        elif call == "after_heading":
            if not title:
                problems.append(f"line {stmt.lineno}: after_heading() before st.title")
            after = True
    if not after:
        problems.append("no after_heading() call")
    return problems


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "pages").glob("*.py")))
def test_every_page_draws_its_heading_before_heavy_imports(page: str) -> None:
    tree = ast.parse((ROOT / "pages" / page).read_text(encoding="utf-8"))
    assert heading_first_problems(tree) == []


@pytest.mark.parametrize("module", ["app.py", "components/routing.py", "components/shell.py"])
def test_what_runs_before_a_heading_imports_only_streamlit(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    heavy = [n for stmt in tree.body for n in _imported(stmt) if not _light(n)]
    assert heavy == [], f"{module} imports at module level: {heavy}"


def test_heading_first_check_reports_late_headings_and_early_imports() -> None:
    late = ("from components.routing import require_router\nrequire_router()\nimport streamlit as st\n"
            "from components.shell import after_heading\nfrom components import jobs\nimport pandas as pd\n"
            "after_heading()\nst.title('x')\n")
    assert heading_first_problems(ast.parse(late)) == [
        "line 5: imports components.jobs before after_heading()",
        "line 6: imports pandas before after_heading()",
        "line 7: after_heading() before st.title",
    ]
    assert heading_first_problems(ast.parse("import streamlit as st\nst.title('x')\n")) == ["no after_heading() call"]
    good = "import streamlit as st\nfrom components.shell import after_heading\nst.title('x')\nafter_heading()\nimport pandas\n"
    assert heading_first_problems(ast.parse(good)) == []


LAZY_PACKAGES = ("audit_core", "audit_core.data", "audit_core.runs")
#: Libraries the shared set-up of every page (components.shell.after_heading) must not import.
MODEL_LIBRARIES = ("sklearn", "scipy", "lightgbm", "shap", "dask", "torch")


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_exports_resolve(package: str) -> None:
    mod = importlib.import_module(package)
    assert sorted(mod.__all__) == sorted(mod._EXPORTS) and set(mod.__all__) <= set(dir(mod))
    for name in mod.__all__:
        assert getattr(mod, name) is getattr(importlib.import_module(mod._EXPORTS[name], package), name), name
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        mod.not_a_name  # noqa: B018


def test_the_shared_set_up_imports_no_model_library() -> None:
    """What every page imports after its heading (the sample load needs pandas, not scikit-learn or SciPy)."""
    code = ("import sys, components.shell, components.jobs, components.widgets.adoption, components.workspaces, "
            "audit_core.native_threads\n"
            f"print([m for m in {MODEL_LIBRARIES!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
