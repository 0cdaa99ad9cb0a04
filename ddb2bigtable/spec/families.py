"""The column families a table's mapping writes, and the garbage collection each one needs.

DynamoDB keeps one version of an item and deletes it at its TTL; Bigtable keeps every
version until GC says otherwise. So by default each family keeps one version, and a TTL
table uses Google's "one-second expiration" pattern: the cell timestamp is the item's
expiry and the family drops cells older than one second (readers filter timestamps >= now,
because GC is lazy, exactly as DynamoDB's TTL deletion is). Explicit rules from the
mapping win.

This follows from the spec alone, and both sides need it: the codec stamps cells by it
(expiry or write time, one version or many) and the planner creates the families with it
(`plan/gc_rules.py` adds the reasons and warnings a reviewer reads).

A family that holds `counter` attributes is an aggregate family (int64 Sum): its cells
take AddToCell, which Bigtable merges across clusters, so increments go through any app
profile and none is lost (DynamoDB global tables keep the last writer's value). Such a
family holds counters only (`mapping_checks` says so where a spec mixes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .model import GcRule, TableSpec

# serve's transaction locks (docs/transactions.md): a family of every table that no mapping
# writes and every reader of items skips; one version of each cell, never aged out (a lock
# collected by a TTL family's max_age would break a transaction in flight)
TXN_FAMILY = "_ddb2bigtable_txn"
TXN_LOCK_COLUMN = b"lock"  # the column a locked row holds; `verify` counts rows by it
# every item write through serve sets it to a value of its own (serve/store.py's write stamp),
# so a conditional write's guard tells two writes apart when their cells share column and time
TXN_WRITE_COLUMN = b"write"
# serve's stream records (docs/streams.md): a change's record is a cell of the item's own row
STREAM_FAMILY = "_ddb2bigtable_stream"
RESERVED_FAMILIES = frozenset({TXN_FAMILY, STREAM_FAMILY})  # no mapping writes them; no item is read from them
TTL_RULE = GcRule(max_versions=1, max_age_seconds=1, mode="union")
ONE_VERSION = GcRule(max_versions=1)
KEEP_ALL = GcRule()

# Why a family got its rule: "explicit" (the mapping's own), "timestamps" (a list stored as
# timestamped cells), "ttl" (the one-second expiration pattern), "one-version" (the rest:
# on a TTL table, a family whose cells carry an attribute's time, so GC cannot expire them).
Origin = Literal["explicit", "timestamps", "ttl", "one-version"]


@dataclass(frozen=True)
class FamilyGc:
    name: str
    rule: GcRule
    origin: Origin


def family_names(table: TableSpec) -> list[str]:
    """The default family, declared families, then families only named by attributes or rules."""
    m = table.mapping
    names = [m.default_family]
    for name in [f.name for f in m.families] + [a.family for a in m.attributes] + [r.family for r in m.rules]:
        if name and name not in names:
            names.append(name)
    return names


def counter_families(table: TableSpec) -> dict[str, str]:
    """Families that hold counters -> what puts the first one there (`attributes[0]`,
    `rules[1]`): a counter attribute's own `family:`, or the family of a rule whose `value`
    is a counter attribute. A counter placed nowhere (no `family:`, no rule) would share the
    default family with everything else; `mapping_checks` refuses that."""
    m = table.mapping
    counters = {a.name for a in m.attributes if a.type == "counter"}
    out: dict[str, str] = {}
    for j, a in enumerate(m.attributes):
        if a.name in counters and a.family is not None:
            out.setdefault(a.family, f"attributes[{j}]")
    for j, r in enumerate(m.rules):
        if r.value in counters:
            out.setdefault(r.family or m.default_family, f"rules[{j}]")
    return out


def family_gc(table: TableSpec) -> list[FamilyGc]:
    m = table.mapping
    ttl = table.source.ttl
    explicit = {f.name: f.gc for f in m.families if f.gc is not None}
    timestamp_lists = {a.family or m.default_family for a in m.attributes if a.layout == "timestamps"}
    non_ttl_stamped = {r.family or m.default_family for r in m.rules if r.timestamp not in (None, "ttl")}
    out = []
    for name in family_names(table):
        if name in explicit:
            out.append(FamilyGc(name, explicit[name], "explicit"))
        elif name in timestamp_lists:
            out.append(FamilyGc(name, KEEP_ALL, "timestamps"))
        elif ttl and name not in non_ttl_stamped:
            out.append(FamilyGc(name, TTL_RULE, "ttl"))
        else:
            out.append(FamilyGc(name, ONE_VERSION, "one-version"))
    return out
