"""Parquet through pyarrow, with the shape and decompression caps checked on the metadata first."""
from __future__ import annotations

import io

import pandas as pd

from audit_core.errors import AuditInputError, fail

from .bounded import check_expansion, check_rows
from .checks import check_header
from .options import ReadOptions

__all__ = ["read_parquet"]


def read_parquet(data: bytes, name: str, opts: ReadOptions) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        if meta.num_columns > opts.max_columns:
            raise fail("TOO_MANY_COLUMNS", name=name, n_columns=meta.num_columns, cap=opts.max_columns)
        check_rows(meta.num_rows, name, opts, complete=True)
        # The declared page sizes understate the memory of dictionary/RLE
        # encoded columns (50,000 zeros declare ~256 bytes), so also count at
        # least 8 bytes per cell once loaded: a lower bound for every dtype.
        expanded = max(
            sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)),
            meta.num_rows * meta.num_columns * 8,
        )
        check_expansion(expanded, len(data), name, opts)
        table = pf.read()
        check_header([str(c) for c in table.column_names], name, opts.max_columns)
        # Conversion can fail too (e.g. out-of-range timestamps, odd extension types).
        return table.to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, AuditInputError):
            raise
        raise fail("UNPARSEABLE", name=name, fmt="Parquet", detail=str(exc).strip()[:200]) from None
