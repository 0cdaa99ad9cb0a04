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

from ..spec.model import Source
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


def units(source: Source, level: Level) -> Units:
    reads, writes = _base(source, level)
    read_ratio = write_ratio = 1.0
    if source.billing == "on_demand":
        sized_reads, sized_writes = _base(source, "sized")
        read_ratio = reads / sized_reads if sized_reads else 1.0
        write_ratio = writes / sized_writes if sized_writes else 1.0
    gsi_reads = sum(g.reads or 0 for g in source.gsis) * read_ratio
    gsi_writes = sum(g.writes or 0 for g in source.gsis) * write_ratio
    per_region = {source.region: reads + gsi_reads}
    for replica in source.replicas:
        if replica.reads is None:
            own = reads
        elif source.billing == "on_demand":
            own = replica.reads * read_ratio
        elif source.autoscaling is not None and level in ("min", "max"):
            own = reads  # the table's autoscaling bound, shared by every replica
        else:
            own = float(replica.reads)
        per_region[replica.region] = own + gsi_reads
    return Units(reads=per_region, writes=writes + gsi_writes)


def scales(source: Source) -> bool:
    """Whether the table's capacity moves (DynamoDB autoscaling or on-demand)."""
    return source.billing == "on_demand" or source.autoscaling is not None


def read_ops(source: Source, read_units: float, capacity_scale: float) -> float:
    return sizing.read_ops(read_units, source.read_consistency, source.item_size_kb) * capacity_scale


def write_ops(source: Source, write_units: float, capacity_scale: float) -> float:
    return sizing.write_ops(write_units, source.write_mode, source.item_size_kb) * capacity_scale
