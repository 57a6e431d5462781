"""``python -m audit_core.data.samples [DIRECTORY]``: regenerate the shipped sample files."""
from .files import main

raise SystemExit(main())
