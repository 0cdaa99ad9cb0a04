"""What a DynamoDB table asks of its clusters, at each capacity level the plan sizes for.

Levels:
- `sized`: what a fixed-size cluster must carry: provisioned RCU/WCU, or on-demand peak.
- `min` / `max`: the ends of the autoscaling range: DynamoDB autoscaling min/max, or
  on-demand average/peak.
- `expected`: what runs most of the time (provisioned units, on-demand average); used
  for the expected node count and the cost.

A provisioned replica with its own `reads` runs at those reads, and autoscales within the
table's own min/max (AWS applies a global table's autoscaling policy to every replica). A
provisioned GSI keeps its own capacity at every level (the spec gives GSIs no autoscaling).
On-demand replicas and GSIs give peak rates; at the average level they scale by the
table's average/peak ratio, a property of the traffic rather than of the table. Each
level is monotonic in every capacity figure of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..spec.model import Gsi, Source
from . import sizing

Level = Literal["sized", "min", "max", "expected"]


@dataclass(frozen=True)
class Units:
    """Read units per AWS region and write units (every replica applies every write)."""

    reads: dict[str, float]
    writes: float


def _base(source: Source, level: Level) -> tuple[float, float]:
    if source.billing == "on_demand":
        assert source.peak is not None  # the loader requires peak for on-demand
        average = source.average or source.peak
        if level in ("sized", "max"):
            return source.peak.reads_per_second, source.peak.writes_per_second
        return average.reads_per_second, average.writes_per_second
    auto = source.autoscaling
    if auto is None or level in ("sized", "expected"):
        return float(source.reads), float(source.writes)
    if level == "min":
        return float(auto.min_reads), float(auto.min_writes)
    return float(auto.max_reads), float(auto.max_writes)


def _ratios(source: Source, level: Level) -> tuple[float, float]:
    """On-demand replicas and GSIs give peak rates: at other levels they scale by the
    table's own level/peak ratio. Provisioned ones keep their capacity (1.0)."""
    if source.billing != "on_demand":
        return 1.0, 1.0
    reads, writes = _base(source, level)
    sized_reads, sized_writes = _base(source, "sized")
    return (reads / sized_reads if sized_reads else 1.0), (writes / sized_writes if sized_writes else 1.0)


def units(source: Source, level: Level) -> Units:
    """The base table's units (its GSIs are `gsi_units`)."""
    reads, writes = _base(source, level)
    read_ratio, _ = _ratios(source, level)
    per_region = {source.region: reads}
    for replica in source.replicas:
        if replica.reads is None:
            own = reads
        elif source.billing == "on_demand":
            own = replica.reads * read_ratio
        elif source.autoscaling is not None and level in ("min", "max"):
            own = reads  # the table's autoscaling bound, shared by every replica
        else:
            own = float(replica.reads)
        per_region[replica.region] = own
    return Units(reads=per_region, writes=writes)


def gsi_units(source: Source, gsi: Gsi, level: Level) -> Units:
    """One GSI's units, in every region of the table (a global table's GSIs exist in each
    replica). An on-demand GSI without `writes` is taken to take every table write (an
    upper bound: a write skips the index only when it lacks the index keys); one without
    `reads` adds none (`advice` warns that they are not counted)."""
    read_ratio, write_ratio = _ratios(source, level)
    reads = (gsi.reads or 0) * read_ratio
    if gsi.writes is None and source.billing == "on_demand":
        writes = _base(source, level)[1]
    else:
        writes = (gsi.writes or 0) * write_ratio
    return Units(reads={region: reads for region in source.regions}, writes=writes)


def total_units(source: Source, level: Level) -> Units:
    """The table and its GSIs together: what DynamoDB bills."""
    parts = [units(source, level), *(gsi_units(source, g, level) for g in source.gsis)]
    return Units(reads={r: sum(p.reads[r] for p in parts) for r in parts[0].reads},
                 writes=sum(p.writes for p in parts))


def scales(source: Source) -> bool:
    """Whether the table's capacity moves (DynamoDB autoscaling or on-demand)."""
    return source.billing == "on_demand" or source.autoscaling is not None


def read_ops(source: Source, read_units: float, capacity_scale: float, item_kb: float | None = None) -> float:
    """Reads/s of `read_units` for items of `item_kb` (default: the table's item size)."""
    size = source.item_size_kb if item_kb is None else item_kb
    return sizing.read_ops(read_units, source.read_consistency, size) * capacity_scale


def write_ops(source: Source, write_units: float, capacity_scale: float, item_kb: float | None = None) -> float:
    size = source.item_size_kb if item_kb is None else item_kb
    return sizing.write_ops(write_units, source.write_mode, size) * capacity_scale


# AWS, "Managing global secondary indexes" / "Item sizes": an index item is its projected
# attributes plus the table and index keys, plus 100 bytes of overhead (read 2026-11-21).
# Attribute sizes are not in the spec, so each projected or key attribute is estimated
# at 100 bytes; a projection of every attribute is the table's item size.
INDEX_OVERHEAD_KB = 0.1
ATTRIBUTE_ESTIMATE_KB = 0.1


def gsi_item_kb(source: Source, gsi: Gsi) -> tuple[float, str]:
    """The size of one index item, and how it was found (for the why)."""
    if gsi.projection == "all":
        return source.item_size_kb, "projects all attributes: the table's item size"
    keys = {k.name for k in (source.key.partition, source.key.sort, gsi.key.partition, gsi.key.sort) if k}
    listed = () if gsi.projection == "keys_only" else tuple(a for a in gsi.projection if a not in keys)
    estimate = (len(keys) + len(listed)) * ATTRIBUTE_ESTIMATE_KB + INDEX_OVERHEAD_KB
    size = min(source.item_size_kb, estimate)
    what = "keys only" if not listed else f"keys + {len(listed)} attribute{'s' if len(listed) != 1 else ''}"
    return size, (f"{what}: ~{size:g} KB estimated ({len(keys) + len(listed)} x 0.1 KB + 0.1 KB index overhead, "
                  f"capped at the item size)")
