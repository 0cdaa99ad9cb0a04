"""Warnings a reviewer should see: choices the plan made that change behaviour or risk.

Each rule is small and named for what it catches; all are pure functions of the spec
(and the cluster count), so `plan` stays reproducible.
"""

from __future__ import annotations

import re

from ..spec.model import Spec, TableSpec
from .model import PlanWarning
from .no_equivalent import no_equivalent

# Seeds (schema design best practices, "Row keys to avoid"): timestamps or sequential
# numeric ids at the start of a row key send every write to the same node.
SEQUENTIAL_NAME = re.compile(
    r"(time|date|timestamp|ts|created|updated|seq|sequence|counter|increment)(_?at)?$", re.I)
LOW_CARDINALITY_NAME = re.compile(
    r"^(status|state|type|kind|category|flag|is_?\w+|enabled|active|gender|country)$", re.I)


def _hot_keys(table: TableSpec, instance_id: str) -> list[PlanWarning]:
    out = []
    pk = table.source.key.partition
    if SEQUENTIAL_NAME.search(pk.name) and table.mapping.salt is None:
        out.append(PlanWarning(
            "hot-key", instance_id, table.id,
            f"partition key {pk.name} looks sequential (time or counter): rows that start with it land on one "
            f"tablet and one node takes every write; add `mapping.salt: {{buckets: N}}` or lead with another field"))
    for gsi in table.source.gsis:
        name = gsi.key.partition.name
        if LOW_CARDINALITY_NAME.match(name):
            out.append(PlanWarning(
                "hot-key", instance_id, table.id,
                f"GSI {gsi.name} is keyed by {name}, which has few distinct values: its view rows crowd into few "
                f"tablets; keep the sort key in the view key (the plan does) and watch the view's hot tablets"))
    return out


def advise(spec: Spec, instance_id: str, clusters: int) -> list[PlanWarning]:
    warnings: list[PlanWarning] = []
    for table in spec.tables:
        source = table.source
        warnings += _hot_keys(table, instance_id)
        if clusters > 1 and len(source.regions) == 1:
            warnings.append(PlanWarning(
                "made-multi-region", instance_id, table.id,
                f"{source.table} lives only in {source.region}, but replication is instance-wide: it is copied to "
                f"all {clusters} clusters (more storage, cross-region writes); move it to its own spec to avoid that"))
        if clusters > 1 and source.read_consistency != "eventual":
            warnings.append(PlanWarning(
                "strong-reads", instance_id, table.id,
                f"{source.table} reads with {source.read_consistency} consistency; replication between clusters is "
                f"eventual, so read through a single-cluster profile or set `instance.row_affinity: true`"))
        if source.table_class == "standard_infrequent_access":
            warnings.append(PlanWarning(
                "infrequent-access", instance_id, table.id,
                f"{source.table} is Standard-IA: it stays on SSD; HDD storage costs less but serves only 500 "
                f"reads/s per node (SSD 17,000), so choose `storage: hdd` only for rarely read data"))
        if source.billing == "on_demand" and source.average is None:
            warnings.append(PlanWarning(
                "no-average", instance_id, table.id,
                f"{source.table} is on-demand without `average`: cost and autoscaling min use the peak rate"))
        for gsi in source.gsis:
            if source.billing == "on_demand" and gsi.reads is None:
                warnings.append(PlanWarning(
                    "gsi-reads-uncounted", instance_id, table.id,
                    f"GSI {gsi.name} of on-demand {source.table} has no `reads`: its queries are not in the sizing or "
                    f"the cost; give its peak RRU/s as `reads`" + ("" if gsi.writes is not None else
                                                                   " (its writes are taken as every table write)")))
        auto = source.autoscaling  # a dimension without autoscaling has no range to be outside
        ranges = ((source.reads, auto.reads), (source.writes, auto.writes)) if auto else ()
        if any(bounds is not None and not bounds[0] <= units <= bounds[1] for units, bounds in ranges):
            warnings.append(PlanWarning(
                "outside-autoscaling", instance_id, table.id,
                f"{source.table}'s provisioned reads/writes ({source.reads}/{source.writes}) lie outside its "
                f"autoscaling range; DynamoDB would move them inside it"))
    return warnings + no_equivalent(spec, instance_id)
