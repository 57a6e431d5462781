"""``python -m audit_cli``: the same program as the ``reliability-audit`` command."""
from . import console_main

console_main()
