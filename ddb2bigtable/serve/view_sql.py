"""The SQL that reads a GSI's continuous materialized view, and its rows read back: pure
functions, so what goes to Bigtable is tested without Bigtable.

The plan makes one view per GSI (plan/tables.py `view_query`): its columns are the index's
key attributes (each the raw cell of the table's default family, BYTES) and `source_key`
(the table's row key), and its row key is those columns in that order, so a read of the
view comes back in index-key order (Google, "Create an asynchronous secondary index",
https://cloud.google.com/bigtable/docs/asynchronous-secondary-index, read 2026-11-25: the
view's key is its ORDER BY columns, ascending, ending with the source row key). A view is
queried like a table, `FROM` its id in backticks (Google, "Asynchronous secondary index
queries", https://cloud.google.com/bigtable/docs/asynchronous-secondary-index-queries, read
2026-11-25: ``SELECT cell_plan, original_key FROM `mv_inverted_index` WHERE stat_description
= ...``), with `@name` query parameters bound by ExecuteQuery (google-cloud-bigtable
`execute_query(query, instance_id, parameters=..., parameter_types=...)`,
https://cloud.google.com/python/docs/reference/bigtable/latest/sync_data_client, read
2026-11-25). Every value a request brings is such a parameter, never text in the SQL; the
SQL holds only the view id and column names (checked below) and Limit as an integer.

A key condition is pushed into the SQL where the view's byte order is DynamoDB's order:
S (UTF-8 bytes) and B. A cell of N is its decimal text, whose byte order is not numeric
order ("10" < "9"), so on an N sort key only the partition is pushed and views.py orders
and bounds the partition's rows by number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import unsupported
from .tables import after_prefix

SOURCE_KEY = "source_key"  # plan/tables.py view_query: the table's row key, last in the view's key


@dataclass(frozen=True)
class Statement:
    """One SQL query and its parameters, every one BYTES."""

    sql: str
    params: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class ViewRow:
    """One row of a view: the index key cells (None where the item lacks one) and the row
    key of the table row it indexes."""

    keys: tuple[bytes | None, ...]
    source_key: bytes


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


def sort_condition(name: str, op: str, bounds: list[bytes]) -> tuple[list[str], dict[str, bytes]]:
    """A sort-key condition on a byte-ordered key (S, B) as SQL and its parameters;
    begins_with as the range [prefix, the first value past every extension of it)."""
    col = column(name)
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


def select(view_id: str, keys: tuple[str, ...], where: list[str], params: dict[str, bytes],
           limit: int | None) -> Statement:
    """The view's key columns and `source_key` of the rows meeting every `where`."""
    if any(c in view_id for c in "`\\"):
        raise ValueError(f"view id {view_id!r} cannot be quoted")
    columns = ", ".join([*(column(k) for k in keys), SOURCE_KEY])
    sql = f"SELECT {columns} FROM `{view_id}`"
    if where:
        sql += " WHERE " + " AND ".join(where)
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return Statement(sql, params)


def query_statement(view_id: str, keys: tuple[str, ...], partition: bytes,
                    sort: tuple[str, list[bytes]] | None, after: tuple[bytes, ...] | None,
                    backward: bool, limit: int | None) -> Statement:
    """A Query of one index partition. `sort`: the sort-key condition (op, bound cells),
    pushed only by a caller whose sort key is byte-ordered. `after`: the position to go on
    from (the sort key's cell if pushed, then the source row key), past it in the view's
    order or before it when `backward`."""
    where = [f"{column(keys[0])} = @partition", *(f"{column(k)} IS NOT NULL" for k in keys[1:])]
    params = {"partition": partition}
    if sort is not None:
        found, more = sort_condition(keys[1], *sort)
        where += found
        params |= more
    if after is not None:
        names = [f"after_{n}" for n in range(len(after))]
        cols = [column(k) for k in keys[1:]][:len(after) - 1] + [SOURCE_KEY]
        where.append(_after(cols, names, "<" if backward else ">"))
        params |= dict(zip(names, after, strict=True))
    return select(view_id, keys, where, params, limit)


def scan_statement(view_id: str, keys: tuple[str, ...], after: tuple[bytes, ...] | None,
                   limit: int | None) -> Statement:
    """A Scan of the index: the rows that hold every index key (a GSI is sparse), in the
    view's key order, past `after` (the index key cells, then the source row key)."""
    where = [f"{column(k)} IS NOT NULL" for k in keys]
    params: dict[str, bytes] = {}
    if after is not None:
        names = [f"after_{n}" for n in range(len(after))]
        where.append(_after([*(column(k) for k in keys), SOURCE_KEY], names, ">"))
        params = dict(zip(names, after, strict=True))
    return select(view_id, keys, where, params, limit)


def view_row(row: Mapping[str, Any] | Any, keys: tuple[str, ...]) -> ViewRow:
    """One result row (the client's QueryResultRow, read by column name) as a ViewRow."""
    source = row[SOURCE_KEY]
    if not isinstance(source, bytes | bytearray):
        raise ValueError(f"the view's {SOURCE_KEY} is {type(source).__name__}, not BYTES")
    found: list[bytes | None] = []
    for name in keys:
        value = row[name]
        if value is not None and not isinstance(value, bytes | bytearray):
            raise ValueError(f"the view's column {name} is {type(value).__name__}, not BYTES")
        found.append(None if value is None else bytes(value))
    return ViewRow(tuple(found), bytes(source))
