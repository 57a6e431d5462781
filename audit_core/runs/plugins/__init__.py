"""The built-in audit plug-ins, one module per audit kind.

Each module registers one :class:`~audit_core.runs.plugin.AuditRunner` when it
is imported; :func:`~audit_core.runs.plugin.load_builtin_audits` imports them
by name. A plug-in adapts its audit's library call (``audit_core.fragility``,
``audit_core.transport``, ...) to the run machinery: it validates the config
entry and maps batch work through the execution backend. The audits themselves
never import :mod:`audit_core.runs`.
"""
__all__: list[str] = []
