"""No code from the user runs: the source tree never calls the dangerous loaders.

An AST scan (not a text grep, so comments and docstrings do not count and
aliases such as ``from pickle import loads`` do) over the app, the library, the
components, the pages and the benchmarks. Exact, justified occurrences go in
:data:`ALLOWED` as ``(path, line text) -> reason``; it is empty today.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["app.py", "audit_core", "components", "audit_cli", "pages", "benchmarks"]

#: Calls refused outright: (module, attribute) or builtin name.
BANNED_ATTR = {
    ("pickle", "load"), ("pickle", "loads"), ("pickle", "Unpickler"), ("cPickle", "load"), ("cPickle", "loads"),
    ("dill", "load"), ("dill", "loads"), ("cloudpickle", "load"), ("cloudpickle", "loads"),
    ("joblib", "load"), ("marshal", "load"), ("marshal", "loads"), ("shelve", "open"),
    ("yaml", "load"), ("yaml", "unsafe_load"), ("yaml", "full_load"), ("yaml", "load_all"), ("yaml", "unsafe_load_all"),
    ("pd", "read_pickle"), ("pandas", "read_pickle"), ("torch", "load"), ("sio", "load"),
}
BANNED_NAMES = {"eval", "exec", "compile", "__import__"}
#: (relative path, stripped source line) -> why it is safe.
ALLOWED: dict[tuple[str, str], str] = {}


def _files() -> list[Path]:
    out = []
    for entry in SCANNED:
        p = ROOT / entry
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    return out


def _findings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases: dict[str, tuple[str, str]] = {}  # from pickle import loads as l -> l: (pickle, loads)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                key = (node.module.split(".")[-1], a.name)
                if key in BANNED_ATTR:
                    aliases[a.asname or a.name] = key
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and (f.id in BANNED_NAMES or f.id in aliases):
            found.append((node.lineno, f.id))
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (f.value.id, f.attr) in BANNED_ATTR:
            found.append((node.lineno, f"{f.value.id}.{f.attr}"))
        elif isinstance(f, ast.Attribute) and f.attr == "load" and isinstance(f.value, ast.Name) and f.value.id == "np":
            if any(k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                   for k in node.keywords):
                found.append((node.lineno, "np.load(allow_pickle=...)"))
        for k in node.keywords:
            if k.arg == "unsafe_allow_html" and not (isinstance(k.value, ast.Constant) and k.value.value is False):
                literal = bool(node.args) and isinstance(node.args[0], ast.Constant)
                if not literal:
                    found.append((node.lineno, "unsafe_allow_html with non-literal content"))
    return found


def test_scanner_catches_what_it_should(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pickle, yaml, joblib\nfrom pickle import loads as l\nimport streamlit as st\n"
        "pickle.load(f)\nl(b)\nyaml.load(t)\njoblib.load(p)\neval('1')\nexec('x')\n"
        "st.markdown(user, unsafe_allow_html=True)\nst.markdown('<br>', unsafe_allow_html=True)\n"
        "yaml.safe_load(t)\nmodel.eval()\n# eval( in a comment\n"
    )
    kinds = [k for _, k in _findings(bad)]
    assert kinds.count("unsafe_allow_html with non-literal content") == 1
    assert {"pickle.load", "l", "yaml.load", "joblib.load", "eval", "exec"} <= set(kinds)
    assert len(kinds) == 7


def test_no_dangerous_loader_in_the_source_tree():
    files = _files()
    assert len(files) > 50  # the scan really covers the tree
    offences = []
    for path in files:
        rel = str(path.relative_to(ROOT))
        lines = path.read_text(encoding="utf-8").splitlines()
        for lineno, kind in _findings(path):
            if (rel, lines[lineno - 1].strip()) not in ALLOWED:
                offences.append(f"{rel}:{lineno}: {kind}: {lines[lineno - 1].strip()}")
    assert not offences, "\n".join(offences)


def test_yaml_is_only_safe_loaded():
    uses = [(p, line) for p in _files() for line in p.read_text(encoding="utf-8").splitlines()
            if "yaml." in line and "load" in line and not line.lstrip().startswith("#")]
    assert uses and all("safe_load" in line for _, line in uses), uses
