"""No user string reaches Streamlit's Markdown unescaped: a static scan of the app (Markdown injection).

``st.error``, ``st.info``, ``st.caption``, ``st.markdown``, ``st.success``,
``st.warning``, ``st.toast``, ``st.write``, titles, expander and metric labels
render their text as Markdown. The scan (AST, over ``app.py``, ``components/``
and ``pages/``) looks at the text argument of every such call and accepts it
only when it cannot carry user text unescaped:

* a string literal;
* a call of :func:`components.feedback.md_escape` or :func:`components.feedback.code`;
* an f-string whose every ``{...}`` is such a call, a number with a numeric format
  spec (``{x:.3f}``, ``{n:,}``, ``{k:d}``: they refuse a string) or ``len(...)``;
* ``+`` of accepted parts, a conditional of accepted parts, and ``", ".join``
  over ``map(code, ...)`` / ``map(md_escape, ...)`` or a generator of accepted parts.

Anything else (a bare variable, an f-string with ``{name}``) is flagged. A
value that is the app's own text (a message table entry, a constant) is listed
in :data:`TRUSTED` with the reason.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["app.py", "components", "pages"]
MARKDOWN_CALLS = {"error", "warning", "info", "success", "caption", "markdown", "toast", "write", "title",
                  "header", "subheader", "expander", "metric", "exception"}
SAFE_FUNCS = {"md_escape", "code"}
NUMERIC_FUNCS = {"len", "int", "round"}
_NUMERIC_SPEC = re.compile(r"^[^a-zA-Z]*[,_]?(\.\d+)?[dfegn%]?$")  # ends in a numeric type, or has "," / "_"
#: (relative path, stripped source line) -> why the text is the app's own.
TRUSTED: dict[tuple[str, str], str] = {
    ("components/widgets/transport_mc.py", "st.caption(NOT_RUN)"):
        "a constant of the same module: what a multi-class run does not run",
    ("components/widgets/data.py", "st.caption(SAMPLES[name].description)"):
        "the bundled sample's description, written in audit_core/data/samples/catalogue.py",
    ("components/feedback.py", 'f"This {what} was computed on {reasons}. It is shown for reference only: saving, '
                               'exporting and "'):
        "what and reasons are the app's own words (ResultSlot.what, Provenance.LABELS)",
    ("components/widgets/data.py", "st.success(st.session_state[Keys.MESSAGE], icon=\":material/check_circle:\")"):
        "the 'Model ready' line built by _store from the model kind (the zoo's name), numbers and the run id",
    ("components/widgets/data.py", "st.warning(st.session_state[Keys.MESSAGE], icon=\":material/warning:\")"):
        "the same line, headed as a warning when the model's predictions are constant",
    ("components/widgets/receipts.py", "st.success(st.session_state[RcKeys.SAVED])"):
        "'Saved as run <id>' with the id the registry just returned",
    ("components/widgets/runs.py", "st.caption(link)"):
        "the release-gate hook's Markdown, which escapes every value it interpolates (default_receipt_gate)",
    ("components/widgets/fragility.py", "st.info(AUDIT_SLOT.note, icon=\":material/update:\")"):
        "the job's note: the app's sentence with two clock times",
    ("pages/transport.py", "st.info(tw.model_note(result), icon=\":material/model_training:\")"):
        "model_note puts every value from the manifest in code spans (components/widgets/transport.py)",
    ("components/widgets/findings.py", 'st.markdown(f"**{TITLE}**")'): "TITLE is the panel's own constant",
    ("components/glossary.py", "with st.expander(title):"): "callers pass the app's own titles (default: a constant)",
    ("components/widgets/runs.py", "st.markdown(link)"):
        "the release-gate hook's Markdown, which escapes every value it interpolates (default_receipt_gate)",
    ("components/widgets/runs.py", 'col.metric(f"Verdicts {what}" if what != "changed" else "Verdicts changed (no order)", n)'):
        "what is one of the page's four direction words",
    ("components/widgets/demo.py", 'st.caption(f"Chosen by rule: {STRIKING_RULE.format(confident=0.8)}. Target '
                                   '{md_escape(target)}: predicted "'):
        "STRIKING_RULE is the app's sentence; the target and class names are escaped",
    ("components/widgets/demo.py", 'st.markdown("**The demo\'s story** · runs saved: " + ", ".join('):
        "the audit kinds are the demo's own keys; the run ids are escaped",
    ("components/widgets/fragility.py", "st.caption(_pool_note(audit, mode, chosen, shown=len(pool)))"):
        "_pool_note holds only counts and the app's words",
    ("components/widgets/fragility.py",
     'st.caption("The stability measures disagree (" + "; ".join(f"{m}: {k}" for m, k in leaders.items())'):
        "the measure names are the comparison table's columns and the models are zoo kinds the user picked from ZOO",
    ("components/widgets/transport.py", 'st.caption(f"Headline slice by the rule: {HEADLINE_RULE}. Declare another '
                                        'model or mapping here, before any "'):
        "HEADLINE_RULE is the app's sentence (audit_core/transport/headline.py)",
    ("components/widgets/transport.py", "st.caption(f\"Headline slice{' (declared)' if headline.declared else ' (by "
                                        "the rule)'}: \""):
        "the slice's description is escaped; n_bins is an int and shown is one of two constants",
    ("components/widgets/demo.py", 'st.markdown(f"#### {STEP_TITLES[step.number - 1]}")'):
        "STEP_TITLES are the demo's own questions (audit_core/findings/demo.py)",
    ("pages/transport.py", 'st.caption(tw.slice_caption(model, mapping, headline, "means and SD over refits; changes '
                           'paired over refits"))'):
        "slice_caption escapes the model and mapping words (components/widgets/transport.py)",
    ("components/widgets/fragility.py", 'st.caption(f"Predicted \'{md_escape(class_name(names, cert.y_hat))}\' for '
                                        '{md_escape(ws.dataset.primary.name)} "'):
        "every name is escaped; flips is built from escaped class names and counts",
    ("pages/transport.py", "st.info(tw.RESULT_SLOT.note, icon=\":material/update:\")"):
        "the job's note: the app's sentence with two clock times",
}


def _files() -> list[Path]:
    from test_hardening_static import _files as source_files  # the whole source tree

    return [p for p in source_files() if p.relative_to(ROOT).parts[0] in SCANNED]


def _func_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _numeric_spec(spec: ast.AST | None) -> bool:
    if not isinstance(spec, ast.JoinedStr) or not all(isinstance(v, ast.Constant) for v in spec.values):
        return False
    text = "".join(str(v.value) for v in spec.values)
    return bool(text) and bool(_NUMERIC_SPEC.match(text)) and (text[-1] in "dfegn%" or "," in text or "_" in text)


def _safe(node: ast.AST | None) -> bool:
    """True when ``node`` (a text argument) cannot carry an unescaped user string."""
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Call):
        name = _func_name(node.func)
        if name in SAFE_FUNCS:
            return True
        if name == "join" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Call) and _func_name(arg.func) == "map" and arg.args:
                return _func_name(arg.args[0]) in SAFE_FUNCS
            if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
                return _safe(arg.elt)
        return False
    if isinstance(node, ast.JoinedStr):
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                value = part.value
                numeric = isinstance(value, ast.Call) and _func_name(value.func) in NUMERIC_FUNCS
                if not (_numeric_spec(part.format_spec) or numeric or _safe(value)):
                    return False
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _safe(node.left) and _safe(node.right)
    if isinstance(node, ast.IfExp):
        return _safe(node.body) and _safe(node.orelse)
    return False


def _text_args(call: ast.Call) -> list[ast.AST]:
    name = _func_name(call.func)
    out = list(call.args[:1])
    out += [k.value for k in call.keywords if k.arg in {"body", "label", "text"}]
    if name == "metric":  # label only: a metric's value and delta are shown as plain text
        out = out[:1]
    return out


def findings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in MARKDOWN_CALLS):
            continue
        if node.func.attr == "exception" or (isinstance(node.func.value, ast.Name) and node.func.value.id == "log"):
            continue  # log.exception / log.info go to the server log, not to Markdown
        for arg in _text_args(node):
            if not _safe(arg):
                found.append((arg.lineno, lines[arg.lineno - 1].strip()))
    return found


def test_scanner_flags_what_it_should(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "st.error(f'Column {col} is bad')\n"          # flagged
        "st.caption(name)\n"                          # flagged
        "st.info('Dropped: ' + ', '.join(cols))\n"    # flagged
        "st.expander(f'Table `{name}`')\n"            # flagged
        "st.error(md_escape(msg))\n"
        "st.caption(f'**{md_escape(n)}** · {rows:,} rows · {len(x)} cols · {p:.3f} · {k:d}')\n"
        "st.caption(f'{name:>10}')\n"                 # flagged: a width spec also formats a string
        "st.info('Dropped: ' + ', '.join(map(code, cols)))\n"
        "st.success('done')\n"
        "st.metric('Data', table.name)\n"             # a metric's value is plain text
        "log.info('x %s', name)\n"
    )
    assert [line for line, _ in findings(bad)] == [1, 2, 3, 4, 7]


def test_no_unescaped_user_text_reaches_markdown():
    files = _files()
    assert len(files) > 15
    offences = []
    for path in files:
        rel = str(path.relative_to(ROOT))
        for lineno, line in findings(path):
            if (rel, line) not in TRUSTED:
                offences.append(f"{rel}:{lineno}: {line}")
    assert not offences, "wrap user- or file-derived text in md_escape() or code():\n" + "\n".join(offences)


def test_a_stored_run_error_from_a_shared_registry_renders_as_text(registry_path):
    """Runs & reports shows another user's stored error text: escaped, so no link or image is built."""
    from streamlit.testing.v1 import AppTest

    from app_text import rendered
    from audit_core.runs.registry import RunRegistry

    path = registry_path
    hostile = "![x](http://127.0.0.1:1/x.png) [sign in](http://evil.example) :red[alert]"
    reg = RunRegistry(path)
    run_id = reg.create_run(audit_kind="model", dataset_name=f"data {hostile}", dataset_fingerprint="0" * 64,
                            grouping_hash=None, model_spec={"kind": "x"}, config={})
    reg.fail_run(run_id, error=hostile)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error if "This run failed" in e.value]
    assert len(errors) == 1
    assert rendered(errors[0]) == f"This run failed: {hostile}"  # what the browser shows, literally
    unescaped = re.compile(r"(?<!\\)[\[\]()!:]")
    assert not unescaped.search(errors[0].split("failed: ", 1)[1]), errors[0]
