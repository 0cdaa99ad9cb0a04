"""Checks on the spec alone: what the key types, the families and the list of tables show,
and the plan's own name-based `hot-key` warning under the plan's code."""

from __future__ import annotations

import re

from ..plan.advice import advise as plan_advice
from ..spec.families import family_names
from ..spec.model import KeySchema, Mapping, Spec, TableSpec
from .findings import FAMILIES, KEYS_TO_AVOID, MULTI_TENANCY, Finding
from .privacy import personal_family_ids

MAX_FAMILIES = 100  # seeds, "Column families": more than 100 per table can degrade performance
# A table id's last segment: a year, a month, a number (`orders_2024`, `orders-2024-05`,
# `events.7`) or a name (`orders-acme`).
_SUFFIX = re.compile(r"(.+?)[-_.]([A-Za-z0-9]+(?:[-_][0-9]{2})?)")


def static_findings(table: TableSpec) -> list[Finding]:
    """What the spec alone shows: binary key attributes (raw bytes in the row key), more
    column families than the seeds' 100, and family ids that are personal data."""
    found = []
    key = table.source.key
    binary = [k.name for k in (key.partition, key.sort) if k is not None and k.type == "B"]
    if binary:
        found.append(Finding(
            "binary-key", "warning", table.id,
            f"key attribute{'s' if len(binary) > 1 else ''} {', '.join(binary)} "
            f"{'are' if len(binary) > 1 else 'is'} binary (B): its raw bytes become the row key",
            KEYS_TO_AVOID,
            "raw bytes are fine in cells but make row keys unreadable (Key Visualizer, debugging): key by a "
            "readable string form of the value (hex, or the id it encodes) written by the application"))
    families = family_names(table)
    if len(families) > MAX_FAMILIES:
        found.append(Finding(
            "too-many-families", "warning", table.id,
            f"the mapping writes {len(families)} column families (at most {MAX_FAMILIES} advised)",
            FAMILIES,
            "put related columns in one family (GC is per family: group columns by the retention they need); "
            "a family per attribute is rarely needed"))
    return found + personal_family_ids(table)


def table_per_dataset(tables: list[TableSpec]) -> list[Finding]:
    """Tables with the same key whose ids differ only in a last segment that names a year,
    a month or a number (`orders_2023`, `orders_2024`), or in a name when their mappings
    are the same and say something (`orders-acme`, `orders-globex` with the same declared
    attributes): one dataset split by time or by customer, which the seeds keep in one
    table with a row-key prefix each. Same-keyed tables of different data (`user_orders`,
    `user_profiles`, default mappings) are not reported."""
    groups: dict[tuple[str, KeySchema, bool], list[TableSpec]] = {}
    for t in tables:
        m = _SUFFIX.fullmatch(t.id)
        if m:
            numbered = m.group(2)[0].isdigit()
            groups.setdefault((m.group(1), t.source.key, numbered), []).append(t)
    found = []
    for (stem, key, numbered), group in groups.items():
        same = all(t.mapping == group[0].mapping for t in group) and group[0].mapping != Mapping()
        if len(group) < 2 or not (numbered or same):
            continue
        ids = ", ".join(t.id for t in group)
        found.append(Finding(
            "table-per-dataset", "warning", group[0].id,
            f"{len(group)} tables keyed alike ({key.partition.name}{', ' + key.sort.name if key.sort else ''}) "
            f"differ only in the end of their id: {ids}",
            MULTI_TENANCY,
            f"keep one table `{stem}` and put the differing part first in the row key (`2024#...`, "
            "`acme#...`): each dataset reads as one range and drops as one range, and an instance holds "
            "at most 1,000 tables"))
    return found


def named_hot_keys(spec: Spec, table: TableSpec, sampled: bool) -> list[Finding]:
    """`plan`'s `hot-key` warnings for the table (a partition key named like a time or a
    counter, a GSI keyed by a name like `status`), under the same code: without data that
    is all a spec shows. When the table is `sampled`, the data's own checks
    (`time-leading-key`, `sequential-id-key`, `hot-partition`) replace the guess from the
    partition key's name; the GSI warnings stay (the sample does not read views)."""
    by_name = f"partition key {table.source.key.partition.name} "  # how plan.advice words its guess
    export = ("give the table's export (--export): the sample shows whether its keys really start with a time or "
              "a sequential id, or crowd into few values")
    view = ("the export sample does not read views: count the index key's distinct values in DynamoDB; if a few "
            "hold most items, query by a more selective key, or add one to the index key")
    return [Finding("hot-key", "warning", table.id, w.message, KEYS_TO_AVOID,
                    export if w.message.startswith(by_name) else view)
            for w in plan_advice(spec, spec.instance.id, 1)
            if w.code == "hot-key" and w.table == table.id and not (sampled and w.message.startswith(by_name))]
