"""Source drift: where the live DynamoDB table no longer matches its spec.

A spec is written once and the table keeps changing (capacity raised in an incident, a
replica added, an index dropped). Planning from a stale spec sizes Bigtable for a table
that no longer exists, so stages with `source.live` compare on every deploy and warn.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec.model import Source


@dataclass(frozen=True)
class LiveTable:
    """The facts of a live table that the plan depends on, in the spec's vocabulary."""

    billing: str  # provisioned | on_demand
    reads: int
    writes: int
    replica_regions: tuple[str, ...]
    ttl_attribute: str | None
    gsi_names: tuple[str, ...]
    stream: str


def drift(table_id: str, source: Source, live: LiveTable) -> list[str]:
    """One sentence per difference, naming the spec field to update."""
    where = f"{table_id} ({source.table} in {source.region})"
    out = []
    if live.billing != source.billing:
        out.append(f"{where}: billing is {live.billing} in AWS, {source.billing} in the spec (source.billing)")
    elif source.billing == "provisioned" and (live.reads, live.writes) != (source.reads, source.writes):
        out.append(f"{where}: capacity is {live.reads} RCU / {live.writes} WCU in AWS, "
                   f"{source.reads} / {source.writes} in the spec (source.reads, source.writes)")
    spec_replicas = sorted(r.region for r in source.replicas)
    if sorted(live.replica_regions) != spec_replicas:
        out.append(f"{where}: replicas are {sorted(live.replica_regions) or 'none'} in AWS, "
                   f"{spec_replicas or 'none'} in the spec (source.replicas)")
    spec_ttl = source.ttl.attribute if source.ttl else None
    if live.ttl_attribute != spec_ttl:
        out.append(f"{where}: TTL attribute is {live.ttl_attribute or 'off'} in AWS, "
                   f"{spec_ttl or 'off'} in the spec (source.ttl)")
    spec_gsis = sorted(g.name for g in source.gsis)
    if sorted(live.gsi_names) != spec_gsis:
        out.append(f"{where}: GSIs are {sorted(live.gsi_names) or 'none'} in AWS, "
                   f"{spec_gsis or 'none'} in the spec (source.gsis)")
    if live.stream != source.stream:
        out.append(f"{where}: stream is {live.stream} in AWS, {source.stream} in the spec (source.stream)")
    return out
