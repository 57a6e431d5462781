"""Reading user tables: CSV, Parquet and Excel into pandas, with size caps and declared refusals."""
from .read import LoadedTable, ReadOptions, check_table, read_path, read_table

__all__ = ["ReadOptions", "LoadedTable", "read_table", "read_path", "check_table"]
