"""Bigtable's size limits on what one row mutation may carry, checked before it is sent.

Google Cloud, "Quotas and limits" (cloud.google.com/bigtable/quotas, "Limits on data size
within tables", read 2025): row key 4 KiB, column qualifier 16 KiB, cell value 100 MiB.
The Bigtable v2 API's Row.key says "non-empty byte string up to 4KiB" (reference page
updated 2025-08-12); the seeds give the same three figures.
"""

from __future__ import annotations

from .mutations import CodecError, SetCell

ROW_KEY_MAX = 4 * 1024
QUALIFIER_MAX = 16 * 1024
CELL_VALUE_MAX = 100 * 1024 * 1024


def check_row_key(key: bytes, where: str) -> None:
    if not key:
        raise CodecError(f"{where} gives this item an empty row key")
    if len(key) > ROW_KEY_MAX:
        raise CodecError(f"row key is {len(key):,} bytes; Bigtable allows at most {ROW_KEY_MAX:,} (4 KiB)")


def check_cell(cell: SetCell) -> None:
    if len(cell.qualifier) > QUALIFIER_MAX:
        raise CodecError(f"column qualifier {cell.qualifier[:40]!r}... is {len(cell.qualifier):,} bytes; "
                         f"Bigtable allows at most {QUALIFIER_MAX:,} (16 KiB)")
    if len(cell.value) > CELL_VALUE_MAX:
        raise CodecError(f"cell {cell.family}:{cell.qualifier[:40].decode(errors='replace')} holds "
                         f"{len(cell.value):,} bytes; Bigtable allows at most {CELL_VALUE_MAX:,} (100 MiB)")
