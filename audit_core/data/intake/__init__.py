"""Reading user tables: delimited text, Parquet and Excel into pandas, with a read report.

Every refusal is a declared :class:`~audit_core.errors.AuditInputError` that
names the file, column or line at fault. Nothing here unpickles anything:
text is parsed as text, Parquet through pyarrow, Excel through openpyxl.

Choices
-------
* Format by content, whatever the extension: Parquet and xlsx by their
  magic bytes, gzip expanded under the decompression cap, other known binary
  files refused saying what they are, the rest read as delimited text.
* Text encoding: a byte-order mark wins; then UTF-16 without a mark (zero
  bytes at every other position); then strict UTF-8; otherwise the best
  guess of ``charset_normalizer``. Delimiter: sniffed among ``, TAB ; |``
  and runs of whitespace. Header: decided from the content (see
  :mod:`.header`). Each can be fixed by the caller.
* Cells are read as text, trimmed at both ends, and typed afterwards (see
  :mod:`.values`): blank cells are missing, candidate missing codes are only
  proposed, keys with leading zeros stay text, decimal commas and thousands
  separators are read as numbers when unambiguous.
* Size caps are checked before parsing: bytes for every format, and for the
  zipped (xlsx), gzip and Parquet formats the uncompressed size too, so a
  small decompression bomb is refused before it expands.
"""
from .checks import check_table
from .excel import SheetInfo, list_sheets
from .options import LoadedTable, ReadOptions, user_read_options
from .read import read_path, read_table, read_tables
from .report import CANDIDATE_MISSING_CODES, MissingCodeProposal, ReadReport

__all__ = [
    "CANDIDATE_MISSING_CODES",
    "LoadedTable",
    "MissingCodeProposal",
    "ReadOptions",
    "ReadReport",
    "SheetInfo",
    "check_table",
    "list_sheets",
    "read_path",
    "read_table",
    "read_tables",
    "user_read_options",
]
