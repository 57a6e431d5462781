"""Text in figures is text: every string a figure carries is shown literally, never read as Plotly markup.

Plotly reads a subset of HTML in every label it draws (titles, axis titles,
tick text, legend names, hover text, annotations): ``<a href>`` becomes a
link, ``<span style="fill:url(…)">`` makes the browser (or the Chromium that
prints a PDF) fetch a URL, ``<br>``/``<b>`` change the layout. Names from data
(columns, categories, classes, groups, files, targets, runs) reach labels in
many ways: as trace data, as tick values, interpolated into titles and hover
templates by a builder or by the page that passes a ``title``.

So the escaping happens once, on the finished figure: :func:`figure_builder`
wraps every public builder, and the outermost call passes its result through
:func:`escape_figure`, which applies :func:`audit_core.safe_text.plotly_text`
to every string in it. Builders write their own markup with the placeholders
:data:`BR`, :data:`EXTRA`, :data:`END_EXTRA`, :data:`NO_EXTRA`, :data:`SUP` and :data:`END_SUP`; those are made of control
characters (a name from data would have to hold exactly ``\\x01br\\x02`` to
make one, and then it gets a line break, never an attribute); every other
control character is shown visibly.
"""
from __future__ import annotations

import contextvars
import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import plotly.graph_objects as go
from plotly.basedatatypes import BasePlotlyType

from audit_core.safe_text import plotly_text

__all__ = ["BR", "END_EXTRA", "END_SUP", "EXTRA", "NO_EXTRA", "SUP", "escape_figure", "figure_builder"]

#: A line break in a builder's own label (``<br>`` once the figure is escaped).
BR = "\x01br\x02"
#: The start of a hover box's secondary part (``<extra>``); an empty one (``EXTRA + END_EXTRA``) hides it.
EXTRA = "\x01extra\x02"
#: The end of a hover box's secondary part (``</extra>``).
END_EXTRA = "\x01/extra\x02"
#: An empty secondary part: the hover box shows no trace name.
NO_EXTRA = EXTRA + END_EXTRA
#: The start and end of a subtitle in smaller type (``<sup>``, ``</sup>``).
SUP = "\x01sup\x02"
END_SUP = "\x01/sup\x02"
_MARKUP = {BR: "<br>", EXTRA: "<extra>", END_EXTRA: "</extra>", SUP: "<sup>", END_SUP: "</sup>"}
#: Layout keys that hold no label text and are large (Plotly's theme), skipped by the walk.
_SKIP = {"template"}


_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in _MARKUP))


def _text(s: str) -> str:
    if "\x01" not in s:
        return plotly_text(s)
    parts = _PLACEHOLDER.split(s)
    tags = [_MARKUP[m] for m in _PLACEHOLDER.findall(s)]
    return "".join(plotly_text(part) + (tags[i] if i < len(tags) else "") for i, part in enumerate(parts))


def _escaped(value: Any) -> Any:
    """``value`` with :func:`_text` applied to every string in it (``value`` itself when nothing changes)."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, BasePlotlyType):
        _escape_object(value)
        return value
    if isinstance(value, (list, tuple)):
        out = [_escaped(v) for v in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else type(value)(out)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        return np.array([_escaped(v) for v in value.ravel()], dtype=object).reshape(value.shape)
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    return value


def _escape_object(obj: BasePlotlyType) -> None:
    for key in obj.to_plotly_json():
        if key in _SKIP:
            continue
        value = obj[key]
        new = _escaped(value)
        if new is not value and not (isinstance(new, str) and new == value):
            obj[key] = new


def escape_figure(fig: go.Figure) -> go.Figure:
    """``fig`` with every string (data, names, titles, ticks, hover text, annotations) shown as text, in place.

    Each string goes through :func:`~audit_core.safe_text.plotly_text` (invisible characters shown as
    ``<U+XXXX>``, ``&``/``<``/``>`` as entities); the builder placeholders :data:`BR`, :data:`EXTRA`,
    :data:`END_EXTRA` then become their tags. Numbers, colours and settings are unchanged. Returns ``fig``.
    """
    for trace in fig.data:
        _escape_object(trace)
    _escape_object(fig.layout)
    return fig


_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("figure_builder_depth", default=0)
F = TypeVar("F", bound=Callable[..., Any])


def _escape_result(result: Any) -> Any:
    if isinstance(result, go.Figure):
        return escape_figure(result)
    if isinstance(result, list):
        return [_escape_result(r) for r in result]
    if isinstance(result, tuple):
        return tuple(_escape_result(r) for r in result)
    return result


def figure_builder(fn: F) -> F:
    """Mark ``fn`` as a figure builder: the figures it returns (alone, in lists or ``(title, figure)`` pairs) are
    passed through :func:`escape_figure`.

    Only the outermost builder call escapes, so a builder that draws on another is escaped once.
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _DEPTH.set(_DEPTH.get() + 1)
        try:
            result = fn(*args, **kwargs)
        finally:
            _DEPTH.reset(token)
        return _escape_result(result) if _DEPTH.get() == 0 else result

    wrapper.figure_builder = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
