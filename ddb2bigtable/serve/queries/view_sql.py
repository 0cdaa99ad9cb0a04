"""The SQL that reads a GSI's continuous materialized view, and its rows read back: pure
functions, so what goes to Bigtable is tested without Bigtable.

The plan makes one view per GSI (plan/tables.py `view_query`): its columns are the index's
key attributes (each the raw cell of the table's default family, BYTES), an N key also as
FLOAT64 (`<name>_number`), and `source_key` (the table's row key); its row key is the keys
(an N key by its number) then `source_key`, so a read of the view comes back in that order
(Google, "Create an asynchronous secondary index",
https://cloud.google.com/bigtable/docs/asynchronous-secondary-index, read 2026-11-25: the
view's key is its ORDER BY columns, ascending, ending with the source row key). A view is
queried like a table, `FROM` its id in backticks (Google, "Asynchronous secondary index
queries", https://cloud.google.com/bigtable/docs/asynchronous-secondary-index-queries, read
2026-11-25: ``SELECT cell_plan, original_key FROM `mv_inverted_index` WHERE stat_description
= ...``), with `@name` query parameters bound by ExecuteQuery (google-cloud-bigtable
`execute_query(query, instance_id, parameters=..., parameter_types=...)`,
https://cloud.google.com/python/docs/reference/bigtable/latest/sync_data_client, read
2026-11-25). Every value a request brings is such a parameter (BYTES, or FLOAT64 for a
number), never text in the SQL; the SQL holds only the view id and column names (checked
below) and Limit as an integer. GoogleSQL for Bigtable orders only ascending
(`ORDER BY expression [ ASC ]`, https://cloud.google.com/bigtable/docs/reference/sql/query-syntax,
read 2026-11-25), so every statement reads forward, in the view's order.

S and B keys are compared exactly on their bytes, whose order is DynamoDB's. An N key is
compared on its FLOAT64, which rounds DynamoDB's 38 digits to 15-17: rounding never
reverses two numbers' order, it can only make them equal. So each bound on a number is
taken as the widest float range that can hold it (one ulp past the bound's own float, so
a server rounding one ulp otherwise loses nothing), and views.py compares the rows'
numbers exactly.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ...plan.tables import number_column
from ...spec.model import KeyAttribute
from ..catalog import after_prefix
from ..errors import unsupported

SOURCE_KEY = "source_key"  # plan/tables.py view_query: the table's row key, last in the view's key


@dataclass(frozen=True)
class Statement:
    """One SQL query and its parameters: BYTES, or FLOAT64 for numbers."""

    sql: str
    params: dict[str, bytes | float] = field(default_factory=dict)


@dataclass(frozen=True)
class ViewRow:
    """One row of a view: the index key cells (None where the item lacks one), the row key
    of the table row it indexes, and each key as the view orders it (an N key's FLOAT64,
    else its cell)."""

    keys: tuple[bytes | None, ...]
    source_key: bytes
    order: tuple[Any, ...] = ()


def column(name: str) -> str:
    """An attribute name as a quoted identifier. The view's own SQL names the column after
    the attribute, so a name a backtick quote cannot hold has no view column to read."""
    if not name or any(c in name for c in "`\\\n\r"):
        raise unsupported(f"an index key named {name!r} on a cloud stage", "its view has no column of that name")
    return f"`{name}`"


def _after(columns: list[str], names: list[str], op: str) -> str:
    """Rows past a position in the view's key order (`>` forward, `<` backward): the
    tuple comparison spelled out, as SQL has no row comparison here."""
    first, name = columns[0], names[0]
    if len(columns) == 1:
        return f"{first} {op} @{name}"
    return f"({first} {op} @{name} OR ({first} = @{name} AND {_after(columns[1:], names[1:], op)}))"


def number(cell: bytes) -> Decimal:
    """An N cell's number, exactly."""
    return Decimal(cell.decode())


def float_range(cell: bytes) -> tuple[float, float]:
    """The FLOAT64 values an N cell can be cast to: its own float widened by one ulp each way."""
    near = float(number(cell))
    return math.nextafter(near, -math.inf), math.nextafter(near, math.inf)


def float_rank(value: float) -> int:
    """A float's place among all floats as an integer (-0.0 just below 0.0), so a range of
    floats can be halved: a backward page looks for where its last rows start."""
    bits = struct.unpack(">q", struct.pack(">d", value))[0]
    return bits if bits >= 0 else -(bits & 0x7FFF_FFFF_FFFF_FFFF) - 1


def ranked_float(rank: int) -> float:
    """The float at a place float_rank gives."""
    bits = rank if rank >= 0 else (-rank - 1) | -0x8000_0000_0000_0000
    return float(struct.unpack(">d", struct.pack(">q", bits))[0])


def bytes_between(low: bytes, high: bytes | None) -> bytes | None:
    """A byte string strictly between two, about halfway (`high` None: past every string),
    so a range of S or B values can be halved; None when there is none."""
    size = max(len(low), len(high or b"")) + 1
    start = int.from_bytes(low.ljust(size, b"\0"), "big")
    end = int.from_bytes(high.ljust(size, b"\0"), "big") if high is not None else 256 ** size
    if end - start == 1:  # one byte more of precision
        start, end, size = start * 256, end * 256, size + 1
    if end - start >= 2:
        return ((start + end) // 2).to_bytes(size, "big")
    shortest = low + b"\0"  # equal once padded: `high` is `low` and NULs
    return shortest if high is not None and shortest < high else None


def order_column(key: KeyAttribute) -> str:
    """The column the view orders a key by: an N key's FLOAT64, else its cell."""
    return column(number_column(key.name) if key.type == "N" else key.name)


def sort_condition(key: KeyAttribute, op: str, bounds: list[bytes]) -> tuple[list[str], dict[str, bytes | float]]:
    """A sort-key condition as SQL and its parameters: exact on a byte-ordered key (S, B;
    begins_with as the range [prefix, the first value past every extension of it)), on an
    N key every row whose number may meet it (the exact test is the caller's)."""
    col = order_column(key)
    if key.type == "N":
        spans = [float_range(b) for b in bounds]
        low = {"EQ": spans[0][0], "GT": spans[0][0], "GE": spans[0][0], "BETWEEN": spans[0][0]}.get(op)
        high = {"EQ": spans[0][1], "LT": spans[0][1], "LE": spans[0][1], "BETWEEN": spans[-1][1]}.get(op)
        found = {n: v for n, v in (("sort_0", low), ("sort_1", high)) if v is not None}
        if not found:
            raise ValueError(f"no SQL for the key condition operator {op} on a number")
        return [f"{col} {'>=' if n == 'sort_0' else '<='} @{n}" for n in found], dict(found)
    simple = {"EQ": "=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}
    if op in simple:
        return [f"{col} {simple[op]} @sort_0"], {"sort_0": bounds[0]}
    if op == "BETWEEN":
        return [f"{col} >= @sort_0", f"{col} <= @sort_1"], {"sort_0": bounds[0], "sort_1": bounds[1]}
    if op == "BEGINS_WITH":
        end = after_prefix(bounds[0])
        if end is None:  # every byte 0xff: no value past it, the prefix bounds only from below
            return [f"{col} >= @sort_0"], {"sort_0": bounds[0]}
        return [f"{col} >= @sort_0", f"{col} < @sort_1"], {"sort_0": bounds[0], "sort_1": end}
    raise ValueError(f"no SQL for the key condition operator {op}")


def select(view_id: str, keys: tuple[KeyAttribute, ...], where: list[str], params: dict[str, bytes | float],
           limit: int | None) -> Statement:
    """The view's key columns (an N key's FLOAT64 too) and `source_key` of the rows meeting
    every `where`."""
    if any(c in view_id for c in "`\\"):
        raise ValueError(f"view id {view_id!r} cannot be quoted")
    numbers = [order_column(k) for k in keys if k.type == "N"]
    columns = ", ".join([*(column(k.name) for k in keys), *numbers, SOURCE_KEY])
    sql = f"SELECT {columns} FROM `{view_id}`"
    if where:
        sql += " WHERE " + " AND ".join(where)
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return Statement(sql, params)


def query_statement(view_id: str, keys: tuple[KeyAttribute, ...], partition: bytes,  # noqa: PLR0913  WHERE clauses
                    sort: tuple[str, list[bytes]] | None, *, start: tuple[bytes, ...] | None = None,
                    backward: bool = False, after: tuple[Any, ...] | None = None,
                    floor: float | bytes | None = None, limit: int | None = None) -> Statement:
    """A Query of one index partition, read in the view's order.

    `sort`: the sort-key condition (op, bound cells). `start`: ExclusiveStartKey's place
    (the sort key's cell if any, then the source row key): the rows past it in DynamoDB's
    order, or before it when `backward`; exact on bytes, on an N sort key every row whose
    number may be past it. `after`: where the previous statement of this read stopped in
    the view's order (the sort key's order value if any, then the source row key).
    `floor`: the sort key's least value read (an N key's FLOAT64)."""
    first = keys[0]
    where = [f"{column(first.name)} = @partition"]
    params: dict[str, bytes | float] = {"partition": partition}
    if first.type == "N":  # the view's key starts with the number: its range, then the exact cell
        low, high = float_range(partition)
        where = [f"{order_column(first)} >= @partition_low", f"{order_column(first)} <= @partition_high", *where]
        params |= {"partition_low": low, "partition_high": high}
    where += [f"{column(k.name)} IS NOT NULL" for k in keys[1:]]
    if sort is not None:
        found, more = sort_condition(keys[1], *sort)
        where += found
        params |= more
    if start is not None and len(keys) == 2 and keys[1].type == "N":
        low, high = float_range(start[0])
        where.append(f"{order_column(keys[1])} {'<=' if backward else '>='} @start_0")
        params["start_0"] = high if backward else low
    elif start is not None:
        names = [f"start_{n}" for n in range(len(start))]
        where.append(_after([*(column(k.name) for k in keys[1:]), SOURCE_KEY], names, "<" if backward else ">"))
        params |= dict(zip(names, start, strict=True))
    if floor is not None:
        where.append(f"{order_column(keys[1])} >= @floor")
        params["floor"] = floor
    if after is not None:
        names = [f"after_{n}" for n in range(len(after))]
        where.append(_after([*(order_column(k) for k in keys[1:]), SOURCE_KEY], names, ">"))
        params |= dict(zip(names, after, strict=True))
    return select(view_id, keys, where, params, limit)


def scan_statement(view_id: str, keys: tuple[KeyAttribute, ...], after: tuple[Any, ...] | None,
                   limit: int | None) -> Statement:
    """A Scan of the index: the rows that hold every index key (a GSI is sparse), in the
    view's order, past `after` (each key's order value, then the source row key)."""
    where = [f"{column(k.name)} IS NOT NULL" for k in keys]
    params: dict[str, bytes | float] = {}
    if after is not None:
        names = [f"after_{n}" for n in range(len(after))]
        where.append(_after([*(order_column(k) for k in keys), SOURCE_KEY], names, ">"))
        params = dict(zip(names, after, strict=True))
    return select(view_id, keys, where, params, limit)


def view_row(row: Mapping[str, Any] | Any, keys: tuple[KeyAttribute, ...]) -> ViewRow:
    """One result row (the client's QueryResultRow, read by column name) as a ViewRow."""
    source = row[SOURCE_KEY]
    if not isinstance(source, bytes | bytearray):
        raise ValueError(f"the view's {SOURCE_KEY} is {type(source).__name__}, not BYTES")
    found: list[bytes | None] = []
    order: list[Any] = []
    for key in keys:
        value = row[key.name]
        if value is not None and not isinstance(value, bytes | bytearray):
            raise ValueError(f"the view's column {key.name} is {type(value).__name__}, not BYTES")
        found.append(None if value is None else bytes(value))
        if key.type != "N":
            order.append(found[-1])
            continue
        value = row[number_column(key.name)]
        if value is not None and not isinstance(value, float):
            raise ValueError(f"the view's column {number_column(key.name)} is {type(value).__name__}, not FLOAT64")
        order.append(value)
    return ViewRow(tuple(found), bytes(source), tuple(order))
