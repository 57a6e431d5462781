"""A call that must be refused with one declared message code."""
from __future__ import annotations

import pytest

from audit_core.errors import AuditInputError

__all__ = ["declared"]


def declared(code: str, fn, *args, **kwargs) -> str:
    """Call ``fn(*args, **kwargs)``, require an :class:`AuditInputError` with ``code``, return its message."""
    with pytest.raises(AuditInputError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, info.value.message
    return info.value.message
