"""``python -m audit_cli``: the same program as the ``reliability-audit`` command."""
import sys

from . import main

sys.exit(main())
