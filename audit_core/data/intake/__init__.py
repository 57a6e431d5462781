"""Reading user tables: CSV, Parquet and Excel into pandas.

Every refusal is a declared :class:`~audit_core.errors.AuditInputError` that
names the file, column or line at fault. Nothing here unpickles anything:
CSV is parsed as text, Parquet through pyarrow, Excel through openpyxl.

Choices
-------
* CSV encoding: a byte-order mark wins; otherwise strict UTF-8; otherwise the
  best guess of ``charset_normalizer``. CSV delimiter: sniffed among
  ``, ; TAB |`` on the first 64 KiB. Both can be fixed by the caller.
* Size caps are checked before parsing: bytes for every format, and for the
  zipped (xlsx) and Parquet formats the declared uncompressed size too, so a
  small decompression bomb is refused before it expands.
"""
from .checks import check_table
from .options import LoadedTable, ReadOptions
from .read import read_path, read_table

__all__ = ["ReadOptions", "LoadedTable", "read_table", "read_path", "check_table"]
