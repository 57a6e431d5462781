"""Turn errors into messages, and show every user- or file-derived string as text.

Streamlit renders the body of ``st.error``, ``st.info``, ``st.caption``,
``st.markdown`` (and ``st.success``, ``st.warning``, ``st.toast``, widget
labels, expander titles…) as Markdown. A column name such as
``![x](http://host/x.png) [sign in](http://evil.example)`` would fetch an
outside image and show a link. So every string that comes from a user, a file
or a shared registry goes through :func:`md_escape` (or :func:`code`) before it
is put into Markdown; ``tests/test_hardening_static.py`` flags f-strings passed
to those calls without it.
"""
from __future__ import annotations

import contextlib
import logging
import re
from typing import Any, Iterator

import streamlit as st

from audit_core.errors import AuditInputError
from audit_core.safe_text import reveal

__all__ = ["md_escape", "code", "guarded", "progress_bar", "stale_notice"]

log = logging.getLogger("reliability_audit")

# Characters that start a Markdown or HTML construct, or Streamlit's :colour[...], :material/icon:,
# emoji shortcodes and $LaTeX$, or a GFM autolink (http://…, a@b.c): always escaped.
_ALWAYS = re.compile(r"([\\`*\[\]()<>!:$~|#&{}@])")
# "_" makes emphasis only at a word edge; inside a word (no_such_column) it stays as it is, readable.
_UNDERSCORE_EDGE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_WWW = re.compile(r"(?i)\b(www)\.")  # GFM autolinks "www.example.com"
_LEADING = re.compile(r"^(\s*)([-+=]|\d+(?=\.))")  # list items, setext lines, "1." at the start
# Streamlit's Markdown finds GFM autolink literals (http://…, www.…, a@b.c) in the text *after* escapes are
# resolved, so a backslash does not stop them; an invisible WORD JOINER (U+2060) inside the trigger does.
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(\\:)(?=//)|(\\@)|(?i:(www)(?=\\\.))")


def md_escape(text: Any) -> str:
    """``text`` (any value, via ``str``) as Markdown that renders literally, on one line.

    Invisible and text-moving characters (bidirectional controls, zero-width
    characters, controls) are shown as ``<U+XXXX>`` / ``\\x1b`` first
    (:func:`audit_core.safe_text.reveal`). Backslash-escapes every character that could start a link, an image, HTML,
    emphasis, code, a Streamlit directive, LaTeX or an autolink; line breaks
    become spaces. An invisible word joiner (U+2060) follows ``:`` before
    ``//``, ``@`` and ``www``, because Streamlit links URLs and e-mail
    addresses even when their characters are escaped. Letters, digits and intraword ``_`` are left as they are.

    Examples
    --------
    >>> print(md_escape("[sign in](x) *b* no_such_column"))
    \\[sign in\\]\\(x\\) \\*b\\* no_such_column
    >>> md_escape("http://x") == "http\\\\:" + WORD_JOINER + "//x"
    True
    """
    s = " ".join(reveal(text).splitlines())
    s = _ALWAYS.sub(r"\\\1", s)
    s = _UNDERSCORE_EDGE.sub(r"\\_", s)
    s = _WWW.sub(r"\1\\.", s)
    s = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, s)
    return _LEADING.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2)),
                        s, count=1)


def code(text: Any) -> str:
    """``text`` as a Markdown code span (rendered literally, in monospace), on one line."""
    s = " ".join(str(text).splitlines())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


@contextlib.contextmanager
def guarded(action: str) -> Iterator[None]:
    """Run a block; show a declared error as ``st.error`` and keep all inputs.

    Unexpected exceptions are logged with their traceback on the server and
    shown to the user as one sentence; session state is left untouched. The
    message and ``action`` may name user columns or files: both are escaped.
    """
    try:
        yield
    except AuditInputError as err:
        st.error(md_escape(err.message), icon=":material/error:")
    except Exception as err:  # noqa: BLE001 - the UI boundary: never a traceback
        log.exception("unexpected error while %s", action)
        st.error(
            md_escape(f"Unexpected problem while {action}: {type(err).__name__}: {str(err)[:300]}. ")
            + "Your inputs are kept; please report this.",
            icon=":material/report:",
        )


@contextlib.contextmanager
def progress_bar(text: str) -> Iterator[Any]:
    """A progress bar that always ends: it is removed on success, refusal and error alike.

    Yields a callback ``(fraction, message)`` for the library's ``progress=``.
    """
    bar = st.progress(0.0, text=md_escape(text))
    try:
        yield lambda f, m: bar.progress(min(max(float(f), 0.0), 1.0), text=md_escape(m))
    finally:
        bar.empty()


def stale_notice(what: str, reasons: str) -> None:
    """Say that a result shown below was computed from other inputs and that its actions are off."""
    st.warning(
        f"This {what} was computed on {reasons}. It is shown for reference only: saving, exporting and "
        "auditing it are disabled until you run it again on the current inputs.",
        icon=":material/history:",
    )
