"""The architecture, checked from the source: an import DAG in layers, no UI in the library, short modules.

The graph is built with :mod:`ast` from every ``.py`` file of ``audit_core/``,
``components/``, ``audit_cli/``, ``pages/`` and ``app.py`` (nothing is imported).
Its nodes are modules (a package is its ``__init__``); an edge ``a -> b``
means ``a`` imports ``b``:

* ``import x.y`` -> ``x.y``; ``from x import n`` -> ``x.n`` when that is a
  module, else ``x`` (a name of the package's ``__init__``); relative imports
  are resolved against the importing module.
* Every import statement counts, wherever it is: at module level, inside a
  function (a lazy import does not hide a cycle) and under
  ``if TYPE_CHECKING:`` (a type named in a signature is a dependency too, so a
  module may only name types of its own layer or below).
* The implicit import of a module's parent packages is not an edge: Python
  initialises parents first, and a package ``__init__`` re-exporting its
  submodules is the curated surface, not a cycle. A module that imports a
  *name* from its own package's ``__init__`` does get the edge, and the cycle.
* Names handed to ``importlib.import_module`` are not edges. The only such
  names are the built-in audit plug-ins, which the plug-in registry loads by
  name (:func:`test_builtin_plugins_are_named_by_existing_modules` checks
  them), and the re-exports of the lazy package ``__init__``s (``_EXPORTS``:
  their own submodules, loaded on first use; ``tests/test_first_paint_static.py`` checks them).

Layers, lowest first (:data:`LAYERS`); a module may import its own layer
and the layers below, and the groups of one layer (e.g. the three audits)
never import each other::

    foundation   audit_core.errors, .limits, .safe_text, .expr, .metrics, .logistic, .calibration, .native_threads, .lazy
    data         audit_core.data
    models       audit_core.models
    audits       audit_core.fragility | audit_core.transport | audit_core.receipts
    forecasts    audit_core.forecast (label-free forecasts built on Transport's rules, scores and domain folds)
    runs         audit_core.runs
    findings     audit_core.findings (sentences read from audit results and the gate)
    library      audit_core (the package's curated __init__)
    app side     components
    entry points audit_cli | pages, app

So ``audit_core`` never imports ``components``, ``audit_cli``, ``pages`` or
``app``; it never imports ``streamlit``, ``plotly`` or ``jinja2`` either, and the figure and
report builders of ``components`` never import ``streamlit``.
"""
from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What the graph covers (folders are walked recursively).
SOURCES = ("audit_core", "components", "audit_cli", "pages", "app.py")
MAX_LINES = 600

#: Layers, lowest first; each is a tuple of groups, each group a tuple of module prefixes.
LAYERS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("foundation", (("audit_core.errors", "audit_core.limits", "audit_core.safe_text", "audit_core.expr",
                     "audit_core.metrics", "audit_core.logistic", "audit_core.calibration_error", "audit_core.native_threads",
                     "audit_core.lazy"),)),
    ("data", (("audit_core.data",),)),
    ("models", (("audit_core.models",),)),
    ("audits", (("audit_core.fragility",), ("audit_core.transport",), ("audit_core.receipts",))),
    ("forecasts", (("audit_core.forecast",),)),
    ("runs", (("audit_core.runs",),)),
    ("findings", (("audit_core.findings",),)),
    ("library", (("audit_core",),)),
    ("app side", (("components",),)),
    ("entry points", (("audit_cli",), ("pages", "app"))),
)
#: Upward edges that are allowed, with the reason: (importer, imported) -> why.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("components.routing", "app"): "Streamlit's v1 multipage fallback runs app.main() in place (module docstring)",
}
#: Third-party packages a module prefix must never import.
BANNED_EXTERNAL: dict[str, tuple[str, ...]] = {
    "audit_core": ("streamlit", "plotly", "jinja2", "markupsafe"),
    "components.figures": ("streamlit",),
    "components.report": ("streamlit",),
}


@dataclass(frozen=True)
class Graph:
    """Internal edges (module -> imported modules) and external imports (module -> top-level names)."""

    edges: Mapping[str, frozenset[str]]
    external: Mapping[str, frozenset[str]]


def _module_name(rel: Path) -> tuple[str, bool]:
    parts = list(rel.with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def discover(root: Path, sources: Iterable[str] = SOURCES) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is_package) for every ``.py`` file under ``sources``."""
    found: dict[str, tuple[Path, bool]] = {}
    for entry in sources:
        path = root / entry
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
        for f in files:
            name, is_package = _module_name(f.relative_to(root))
            found[name] = (f, is_package)
    return found


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[tuple[str, list[str]]]:
    """``[(base, names)]``: ``import a.b`` -> ``("a.b", [])``; ``from x import n, m`` -> ``("x", ["n", "m"])``."""
    if isinstance(node, ast.Import):
        return [(a.name, []) for a in node.names]
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [(base, [a.name for a in node.names])]


def build_graph(root: Path, sources: Iterable[str] = SOURCES) -> Graph:
    """The import graph of ``sources`` under ``root``, from the source text only."""
    modules = discover(root, sources)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    external: dict[str, set[str]] = {m: set() for m in modules}
    for module, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for base, names in _targets(node, module, is_package):
                hits = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
                if len(hits) < len(names) or not names:  # some names are attributes of `base` itself
                    known = base
                    while known and known not in modules:
                        known = known.rpartition(".")[0]
                    if known:
                        hits.append(known)
                    elif base:
                        external[module].add(base.split(".")[0])
                edges[module].update(h for h in hits if h != module)
    return Graph(edges={m: frozenset(e) for m, e in edges.items()},
                 external={m: frozenset(e) for m, e in external.items()})


def find_cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle ``[a, b, ..., a]`` per strongly connected component that has one (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def strongconnect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                components.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    return [_cycle_in(comp, edges) for comp in components]


def _cycle_in(component: list[str], edges: Mapping[str, Iterable[str]]) -> list[str]:
    """A concrete cycle through the first module of a strongly connected component."""
    members = set(component)
    start = component[0]
    path, seen = [start], {start}

    def walk(v: str) -> list[str] | None:
        for w in sorted(edges.get(v, ())):
            if w == start:
                return path + [start]
            if w in members and w not in seen:
                seen.add(w)
                path.append(w)
                found = walk(w)
                if found:
                    return found
                path.pop()
        return None

    return walk(start) or [start, start]


def layer_of(module: str, layers=LAYERS) -> tuple[int, int] | None:
    """``(layer index, group index)`` of the longest matching prefix, or None."""
    best: tuple[int, int, int] | None = None
    for li, (_, groups) in enumerate(layers):
        for gi, prefixes in enumerate(groups):
            for p in prefixes:
                if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[2]):
                    best = (li, gi, len(p))
    return None if best is None else best[:2]


def layer_violations(edges: Mapping[str, Iterable[str]], layers=LAYERS,
                     allowed: Mapping[tuple[str, str], str] = ALLOWED_UPWARD) -> list[str]:
    """Edges that go up a layer or across groups of one layer, except ``allowed`` ones."""
    out = []
    for a in sorted(edges):
        la = layer_of(a, layers)
        for b in sorted(edges[a]):
            lb = layer_of(b, layers)
            if la is None or lb is None or (a, b) in allowed:
                continue
            if lb[0] > la[0]:
                out.append(f"{a} ({layers[la[0]][0]}) imports {b} ({layers[lb[0]][0]}): upward")
            elif lb[0] == la[0] and lb[1] != la[1]:
                out.append(f"{a} imports {b}: two groups of the {layers[la[0]][0]} layer")
    return out


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph(ROOT)


# ---------------------------------------------------------------------------
# The project
# ---------------------------------------------------------------------------
def test_the_graph_covers_the_project(graph: Graph) -> None:
    for name in ("audit_core", "audit_core.data.intake", "audit_core.runs.registry", "components.widgets.data",
                 "audit_cli", "pages.fragility", "app"):
        assert name in graph.edges, name
    assert "audit_core.errors" in graph.edges["audit_core.data.dataset"]
    assert len(graph.edges) > 100


def test_no_import_cycles(graph: Graph) -> None:
    cycles = find_cycles(graph.edges)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_layers_are_respected(graph: Graph) -> None:
    unplaced = sorted(m for m in graph.edges if layer_of(m) is None)
    assert not unplaced, f"modules in no layer (add them to LAYERS): {unplaced}"
    bad = layer_violations(graph.edges)
    assert not bad, "layer violations:\n" + "\n".join(bad)


def test_allowed_upward_edges_still_exist(graph: Graph) -> None:
    stale = [pair for pair in ALLOWED_UPWARD if pair[1] not in graph.edges.get(pair[0], ())]
    assert not stale, f"remove stale exceptions from ALLOWED_UPWARD: {stale}"


def test_library_never_imports_the_ui(graph: Graph) -> None:
    bad = []
    for module, names in graph.external.items():
        for prefix, banned in BANNED_EXTERNAL.items():
            if module == prefix or module.startswith(prefix + "."):
                bad += [f"{module} imports {n}" for n in sorted(names & set(banned))]
    ui = ("components", "audit_cli", "pages", "app")
    bad += [f"{m} imports {d}" for m, deps in graph.edges.items() if m.split(".")[0] == "audit_core"
            for d in sorted(deps) if d.split(".")[0] in ui]
    assert not bad, "\n".join(bad)


def test_no_module_is_over_600_lines() -> None:
    files = [p for p in ROOT.rglob("*.py")
             if not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(ROOT).parts)]
    assert len(files) > 100
    long = {str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_builtin_plugins_are_named_by_existing_modules(graph: Graph) -> None:
    plugin = importlib.import_module("audit_core.runs.plugin")
    names = plugin._BUILTIN_MODULES
    assert names and all(n.startswith("audit_core.runs.plugins.") and n in graph.edges for n in names), names


def test_top_level_of_the_library() -> None:
    top = sorted(p.name for p in (ROOT / "audit_core").iterdir() if p.name != "__pycache__")
    assert top == ["__init__.py", "api", "calibration_error.py", "data", "errors.py", "expr", "findings", "forecast",
                   "fragility", "lazy.py", "limits.py", "logistic.py", "metrics.py",
                   "models", "native_threads.py", "receipts", "runs", "safe_text.py", "transport"]


# ---------------------------------------------------------------------------
# The checks themselves can fail
# ---------------------------------------------------------------------------
def test_find_cycles_reports_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert find_cycles(edges) == [["a", "b", "c", "a"], ["e", "e"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_layer_violations_report_upward_and_sideways_edges() -> None:
    layers = (("low", (("p.low",),)), ("mid", (("p.x",), ("p.y",))), ("top", (("p",),)))
    edges = {"p.low.m": {"p.x.m"}, "p.x.m": {"p.y.m", "p.low.m"}, "p.y.m": set(), "p": {"p.x.m"}}
    assert layer_violations(edges, layers, allowed={}) == [
        "p.low.m (low) imports p.x.m (mid): upward",
        "p.x.m imports p.y.m: two groups of the mid layer",
    ]
    assert layer_violations(edges, layers, allowed={("p.low.m", "p.x.m"): "why", ("p.x.m", "p.y.m"): "why"}) == []


def test_build_graph_sees_relative_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from .a import A\n",
        "a.py": "import streamlit\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nA = 1\n",
        "b.py": "def f():\n    from .sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "from ..a import A\nfrom .. import a\nfrom pkg import A as again\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    g = build_graph(tmp_path, ["pkg"])
    assert g.edges["pkg"] == {"pkg.a"}
    assert g.edges["pkg.a"] == {"pkg.b"}  # TYPE_CHECKING import
    assert g.edges["pkg.b"] == {"pkg.sub.c"}  # lazy `from . import submodule`
    assert g.edges["pkg.sub.c"] == {"pkg.a", "pkg"}  # a name of the package's __init__
    assert g.external["pkg.a"] == {"streamlit", "typing"}
    cycles = find_cycles(g.edges)
    assert cycles == [["pkg", "pkg.a", "pkg.b", "pkg.sub.c", "pkg"]]


# ---------------------------------------------------------------------------
# Settings: every AUDIT_* variable is read through audit_core/limits.py
# ---------------------------------------------------------------------------
def environment_reads(tree: ast.AST) -> list[int]:
    """Line numbers where ``tree`` reads the environment.

    A read is any use of ``os.environ``/``os.environb`` or ``environ`` (get, subscript, ``in``,
    a copy) and any call of ``getenv``/``getenvb``; the one exception is
    ``os.environ.setdefault(name, value)`` with a ``name`` that is not an
    ``AUDIT_*`` constant (setting a library's own variable, e.g. a thread count).
    """
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and \
                (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("getenv", "getenvb"):
            lines.append(node.lineno)
            continue
        if not ((isinstance(node, ast.Attribute) and node.attr in ("environ", "environb"))
                or (isinstance(node, ast.Name) and node.id in ("environ", "environb"))):
            continue
        up = parents.get(node)
        call = parents.get(up) if up is not None else None
        if (isinstance(up, ast.Attribute) and up.attr == "setdefault" and isinstance(call, ast.Call) and call.args
                and not (isinstance(call.args[0], ast.Constant) and str(call.args[0].value).startswith("AUDIT_"))):
            continue
        lines.append(node.lineno)
    return sorted(lines)


def test_only_limits_reads_the_environment() -> None:
    reads = {}
    for name, (path, _pkg) in discover(ROOT).items():
        if name == "audit_core.limits":
            continue
        if found := environment_reads(ast.parse(path.read_text(encoding="utf-8"))):
            reads[name] = found
    assert not reads, f"environment read outside audit_core/limits.py (use limits.setting or Limits.from_env): {reads}"


def test_environment_scan_sees_each_kind_of_read() -> None:
    code = ("import os\nfrom os import environ, getenv\n"
            "a = os.environ.get('AUDIT_X')\nb = os.environ['AUDIT_Y']\nc = getenv('AUDIT_Z')\n"
            "d = 'AUDIT_W' in environ\nos.environ.setdefault('AUDIT_V', '1')\nos.environ.setdefault(var, '1')\n"
            "e = os.environb[b'AUDIT_U']\nf = os.getenvb(b'AUDIT_T')\n")
    assert environment_reads(ast.parse(code)) == [3, 4, 5, 6, 7, 9, 10]


def test_every_setting_is_in_the_readme_table() -> None:
    limits = importlib.import_module("audit_core.limits")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`") for line in readme.splitlines() if line.startswith("| `AUDIT_")}
    names = set(limits.SETTINGS) | {var for var, *_ in limits.ENV_VARS.values()}
    missing = sorted(n for n in names if not any(n in row for row in rows))
    assert not missing, f"settings missing from README's configuration table: {missing}"


# ---------------------------------------------------------------------------
# Private names stay in their package
# ---------------------------------------------------------------------------
def package_of(module: str) -> str:
    """The package a module belongs to for privacy: ``audit_core.<x>`` / ``components.<x>``, else its top name.

    A module directly under ``audit_core`` (``audit_core.metrics``) is a package of its own.
    """
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and parts[0] in ("audit_core", "components") else parts[0]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reads(module: str, is_package: bool, tree: ast.AST, modules: Mapping) -> list[str]:
    """Private names of another package that ``module`` imports, or reads as an attribute of an imported module.

    A private name is ``_x`` (not a dunder); a private module path (``pkg._impl``) counts too.
    """
    mine, out, aliases = package_of(module), [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in modules:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if package_of(a.name) != mine and any(_private(p) for p in a.name.split(".")):
                    out.append(f"import {a.name}")
        elif isinstance(node, ast.ImportFrom):
            for base, names in _targets(node, module, is_package):
                for n in names:
                    target = f"{base}.{n}" if f"{base}.{n}" in modules else base
                    if target in modules and f"{base}.{n}" in modules:
                        aliases[n] = target
                    if target.split(".")[0] not in {m.split(".")[0] for m in modules} or package_of(target) == mine:
                        continue
                    if _private(n) or any(_private(p) for p in base.split(".")):
                        out.append(f"from {base} import {n}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and package_of(aliases[node.value.id]) != mine:
            out.append(f"{node.value.id}.{node.attr}")
    return sorted(set(out))


def test_no_module_reads_a_private_name_of_another_package() -> None:
    modules = discover(ROOT)
    found = {}
    for name, (path, is_package) in modules.items():
        if reads := private_reads(name, is_package, ast.parse(path.read_text(encoding="utf-8")), modules):
            found[name] = reads
    assert not found, f"private names read across packages (make them public, with a docstring and in __all__): {found}"


def test_private_scan_sees_imports_and_module_attributes() -> None:
    modules = {"audit_core.metrics": 0, "audit_core.transport.x": 0, "audit_core.transport.y": 0,
               "audit_core.runs.registry._records": 0, "audit_core.runs.registry": 0}
    code = ("from audit_core.metrics import _bin, ok\nfrom ..metrics import _other\nfrom .y import _same_package\n"
            "from audit_core.runs.registry._records import RunRecord\nimport audit_core.metrics as m\nm._hidden\n"
            "from audit_core import metrics\nmetrics._also\nmetrics.public\n")
    assert private_reads("audit_core.transport.x", False, ast.parse(code), modules) == [
        "from audit_core.metrics import _bin", "from audit_core.metrics import _other",
        "from audit_core.runs.registry._records import RunRecord", "m._hidden", "metrics._also"]


#: ``x._name`` reads of another object's private attribute that are third-party or standard-library API, per module:
#: openpyxl's streaming reader (no public equivalent) and ``os._exit`` (exit without cleanup, documented).
PRIVATE_ATTRIBUTE_ALLOWED: dict[str, frozenset[str]] = {
    "audit_core.data.intake.excel": frozenset({"ws._get_source", "ws._shared_strings", "book._date_formats",
                                               "book._timedelta_formats"}),
    "audit_cli.commands": frozenset({"os._exit"}),
}


def private_attribute_reads(module: str, is_package: bool, tree: ast.AST, modules: Mapping) -> list[str]:
    """Every ``x._name`` (one leading underscore, not a dunder) where ``x`` is not the object's own.

    Its own: ``self`` and ``cls``, and a module of the same package imported under a name (a package may share
    private helpers among its modules; reads across packages are :func:`private_reads`'s). Anything else (a
    parameter, ``super()``, an attribute chain, a call's result, a standard-library module) reads another object's
    private state. Returns ``"line: x._name"`` entries.
    """
    mine, own = package_of(module), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            own |= {a.asname or a.name.split(".")[0] for a in node.names
                    if a.name in modules and package_of(a.name) == mine}
        elif isinstance(node, ast.ImportFrom):
            (base, _names), = _targets(node, module, is_package)
            own |= {a.asname or a.name for a in node.names
                    if f"{base}.{a.name}" in modules and package_of(f"{base}.{a.name}") == mine}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            v = node.value
            if isinstance(v, ast.Name) and (v.id in ("self", "cls") or v.id in own):
                continue
            out.append((node.lineno, f"{ast.unparse(v)}.{node.attr}"))
    return [f"{line}: {text}" for line, text in sorted(set(out))]


def test_no_module_reads_another_objects_private_attributes() -> None:
    """No ``x._name`` on anything but ``self``/``cls`` or a module of the same package (issue 23: Transport by concept)."""
    modules = discover(ROOT, ("audit_core", "components", "audit_cli"))
    found, allowed_seen = {}, set()
    for name, (path, is_package) in modules.items():
        allowed = PRIVATE_ATTRIBUTE_ALLOWED.get(name, frozenset())
        reads = private_attribute_reads(name, is_package, ast.parse(path.read_text(encoding="utf-8")), modules)
        allowed_seen |= {(name, r.split(": ", 1)[1]) for r in reads if r.split(": ", 1)[1] in allowed}
        if bad := [r for r in reads if r.split(": ", 1)[1] not in allowed]:
            found[name] = bad
    assert not found, f"private attributes of another object read (pass the value, or make it public): {found}"
    stale = {(m, t) for m, texts in PRIVATE_ATTRIBUTE_ALLOWED.items() for t in texts} - allowed_seen
    assert not stale, f"allow-list entries no longer read (remove them): {sorted(stale)}"


def test_private_attribute_scan_catches_a_planted_read() -> None:
    modules = {"audit_core.transport.x": 0, "audit_core.transport.y": 0, "audit_core.metrics": 0}
    code = ("import os\nfrom . import y as why\nfrom audit_core import metrics\n"
            "def stage(audit):\n    return audit._rows, audit.config._x, make()._z, super()._w\n"
            "class A:\n    def f(self):\n        return self._ok, self.__class__, why._same_package\n"
            "    @classmethod\n    def g(cls):\n        return cls._ok, os._exit, metrics._other_package\n")
    assert private_attribute_reads("audit_core.transport.x", False, ast.parse(code), modules) == [
        "5: audit._rows", "5: audit.config._x", "5: make()._z", "5: super()._w", "11: metrics._other_package",
        "11: os._exit"]


# ---------------------------------------------------------------------------
# One implementation per concept
# ---------------------------------------------------------------------------
#: concept -> (pattern a definition's name matches, the one module that may define it)
ONE_DEFINITION: dict[str, tuple[str, str]] = {
    "AUROC": (r"_?(rank_)?auroc", "audit_core.metrics"),
    "logit": (r"_?logit", "audit_core.logistic"),
    "good direction of a metric (table)": (r"[A-Z_]*_DIRECTION", "audit_core.transport.verdicts"),
    "weighted logistic fit": (r"_?fit_logistic", "audit_core.logistic"),
}


def definitions(tree: ast.Module, pattern: str) -> list[str]:
    """Functions (at any depth) and module-level assignments whose name fully matches ``pattern``."""
    import re

    rx = re.compile(pattern)
    names = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [n for n in names if rx.fullmatch(n)]


@pytest.mark.parametrize("concept", sorted(ONE_DEFINITION))
def test_each_concept_has_one_definition(concept: str) -> None:
    pattern, home = ONE_DEFINITION[concept]
    found = {}
    for name, (path, _pkg) in discover(ROOT, ("audit_core", "components", "audit_cli")).items():
        if hits := definitions(ast.parse(path.read_text(encoding="utf-8")), pattern):
            found[name] = hits
    assert list(found) == [home] and len(found[home]) == 1, f"{concept}: definitions {found}, expected one in {home}"


def test_definition_scan_sees_functions_methods_and_tables() -> None:
    tree = ast.parse("def auroc(): pass\nclass A:\n    def _auroc(self): pass\nX_DIRECTION = {}\n"
                     "def f():\n    LOCAL_DIRECTION = {}\ndef auroc_table(): pass\n")
    assert definitions(tree, ONE_DEFINITION["AUROC"][0]) == ["auroc", "_auroc"]
    assert definitions(tree, ONE_DEFINITION["good direction of a metric (table)"][0]) == ["X_DIRECTION"]


def test_one_bootstrap_replicate_loop() -> None:
    """Only ``transport.bootstrap.replicate_changes`` walks the replicate draws; the exact and multi-class bootstraps pass it their statistic."""
    callers = {name for name, (path, _pkg) in discover(ROOT, ("audit_core", "components", "audit_cli")).items()
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "replicate_draws"}
    assert callers == {"audit_core.transport.bootstrap"}, callers
