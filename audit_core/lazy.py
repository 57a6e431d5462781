"""Re-exports that load on first use (PEP 562), shared by the package ``__init__`` modules.

A package lists each public name and the submodule that defines it; importing the package then
imports none of those submodules (nor what they need: scikit-learn, SciPy) until a name is read.
The app's first run imports only a few (see ``components/shell.py`` and docs/reliability.md,
"First paint"). The package keeps a literal ``__all__``, which ``__dir__`` adds to its globals.

>>> import types
>>> ns = {"__name__": "audit_core", "__all__": ["MESSAGES"]}
>>> getattr_, dir_ = lazy_exports(ns, {"MESSAGES": ".errors"})
>>> isinstance(getattr_("MESSAGES"), dict), "MESSAGES" in ns, "MESSAGES" in dir_()
(True, True, True)
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(namespace: MutableMapping[str, Any],
                 exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a package whose re-exports load on first use.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``; a name, once loaded, is stored there, so later reads do not
        come back to ``__getattr__``.
    exports : mapping of str to str
        Each public name and the submodule (relative to the package, ``.data.dataset``) that defines it.

    Returns
    -------
    (__getattr__, __dir__)
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name], package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
