"""``python -m audit_core.data.samples [DIRECTORY]``: regenerate the shipped sample files."""
from .loan import main

raise SystemExit(main())
