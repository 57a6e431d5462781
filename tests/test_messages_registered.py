"""Every message code used anywhere has a template, registered before the code that fails with it can run.

A code is *used* where the source passes it as a literal: ``fail("CODE", ...)``,
``AuditInputError("CODE", ...)`` or ``MESSAGES["CODE"]``. It is *declared* by a
module-level ``register_messages({...})`` (or ``register_messages(TABLE)`` of a
module-level dict literal). A declaration counts for a module when Python has
run the declaring module before that module's body can: the declaring module
is the module itself, one it imports (transitively), or one imported by a
package ``__init__`` on the way (Python initialises a module's parent packages
first). So a side-effect import that someone forgets cannot turn a clear
refusal into a ``KeyError``.
"""
from __future__ import annotations

import ast
import importlib
from collections import deque
from pathlib import Path

import pytest

from audit_core.errors import MESSAGES
from tests.test_architecture import ROOT, build_graph, discover

#: The library, the app side and the CLI (pages and app.py run Streamlit at import; they fail through components).
SOURCES = ("audit_core", "components", "audit_cli")


def codes_used(tree: ast.AST) -> set[str]:
    """Literal codes passed to ``fail``, ``AuditInputError`` or looked up in ``MESSAGES``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in ("fail", "AuditInputError"):
                out.add(node.args[0].value)
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "MESSAGES" \
                and isinstance(node.slice, ast.Constant):
            out.add(node.slice.value)
    return out


def codes_declared(tree: ast.Module) -> set[str]:
    """Codes of the module-level ``register_messages`` calls of ``tree``."""
    tables = {t.id: node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
              for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    out = set()
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "register_messages" and call.args):
            continue
        arg = call.args[0]
        table = tables.get(arg.id) if isinstance(arg, ast.Name) else arg
        assert isinstance(table, ast.Dict), f"register_messages of something other than a dict literal: {ast.dump(arg)}"
        out |= {k.value for k in table.keys if isinstance(k, ast.Constant)}
    return out


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def loaded_before(module: str, edges) -> set[str]:
    """Modules Python has run (or is running) once ``module``'s body runs: its parent packages and imports, transitively."""
    seen, todo = set(), deque([module])
    while todo:
        m = todo.popleft()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(p for p in _parents(m) if p in edges)
        todo.extend(edges.get(m, ()))
    return seen


@pytest.fixture(scope="module")
def scanned():
    modules = discover(ROOT, SOURCES)
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, (p, _) in modules.items()}
    used = {m: codes_used(t) for m, t in trees.items()}
    declared = {m: codes_declared(t) for m, t in trees.items()}
    return used, declared


def test_every_code_used_has_a_template(scanned) -> None:
    used, declared = scanned
    for name in used:
        if not name.endswith("__main__"):  # running a __main__ module runs its program
            importlib.import_module(name)
    every = set().union(*used.values())
    assert len(every) > 150
    missing = {m: sorted(c for c in codes if c not in MESSAGES) for m, codes in used.items()}
    assert not {m: c for m, c in missing.items() if c}, "codes used without a registered template"
    static = set().union(*declared.values())
    assert every <= static | set(MESSAGES)


def test_each_module_finds_its_templates_registered_when_it_runs(scanned) -> None:
    used, declared = scanned
    edges = build_graph(ROOT, SOURCES).edges
    where = {code: m for m, codes in declared.items() for code in codes}
    unsure = {}
    for module, codes in used.items():
        before = loaded_before(module, edges)
        late = sorted(c for c in codes if c in where and where[c] not in before)
        if late:
            unsure[module] = late
    assert not unsure, f"modules that fail with codes their imports do not register: {unsure}"


def test_no_side_effect_imports_of_message_modules() -> None:
    found = []
    for _name, (path, _pkg) in discover(ROOT, SOURCES).items():
        for line in path.read_text(encoding="utf-8").splitlines():
            if "import" in line and "messages" in line and "noqa: F401" in line:
                found.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert not found, found


def test_the_scans_see_what_they_should() -> None:
    tree = ast.parse("T = {'B': 'b'}\nregister_messages({'A': 'a'})\nregister_messages(T)\n"
                     "def f():\n    raise fail('X', n=1)\nerr = AuditInputError('Y', 'text')\nt = MESSAGES['Z']\n"
                     "register_messages({'NOT_MODULE_LEVEL': 'no'}) if False else None\n")
    assert codes_declared(tree) == {"A", "B"}
    assert codes_used(tree) == {"X", "Y", "Z"}
    edges = {"p": {"p.msg"}, "p.msg": set(), "p.a": set(), "q.b": {"p.a"}, "q": set()}
    assert loaded_before("q.b", edges) == {"q.b", "q", "p.a", "p", "p.msg"}


def test_a_package_without_its_table_first_would_be_caught(tmp_path: Path) -> None:
    """The old pattern, one leaf that forgot its side-effect import, is reported."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "messages.py").write_text("register_messages({'P_CODE': 't'})\n")
    (pkg / "good.py").write_text("from . import messages\nraise fail('P_CODE')\n")
    (pkg / "bad.py").write_text("raise fail('P_CODE')\n")
    modules = discover(tmp_path, ("pkg",))
    edges = build_graph(tmp_path, ("pkg",)).edges
    assert "pkg.messages" in loaded_before("pkg.good", edges)
    assert "pkg.messages" not in loaded_before("pkg.bad", edges)
    assert codes_used(ast.parse(modules["pkg.bad"][0].read_text())) == {"P_CODE"}
