"""What a DynamoDB table asks of its clusters, at each capacity level the plan sizes for.

Levels:
- `sized`: what a fixed-size cluster must carry: provisioned RCU/WCU, or on-demand peak.
- `min` / `max`: the ends of the autoscaling range: DynamoDB autoscaling min/max, or
  on-demand average/peak.
- `expected`: what runs most of the time (provisioned units, on-demand average); used
  for the expected node count and the cost.

A provisioned replica with its own `reads` runs at those reads, and autoscales within its
own read autoscaling, else the table's min/max (AWS applies a global table's autoscaling
policy to every replica). Reads and writes scale separately: a dimension without
autoscaling keeps its units at every level. A provisioned GSI autoscales within its own
`autoscaling` (else keeps its capacity at every level); a replica may give a GSI its own
reads and read autoscaling. On-demand replicas and GSIs give peak rates; at the average
level they scale by the table's average/peak ratio, a property of the traffic rather than
of the table. On-demand maximum throughput (`max_throughput`) caps every on-demand rate:
DynamoDB throttles above it, so no peak beyond it reaches the table. Warm throughput is a
floor at the `min` level only (the table serves it at once, so the clusters should too).
Each level is monotonic in every capacity figure of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..spec.model import Gsi, Source, SourceAutoscaling, Throughput
from . import sizing

Level = Literal["sized", "min", "max", "expected"]


@dataclass(frozen=True)
class Units:
    """Read units per AWS region and write units (every replica applies every write)."""

    reads: dict[str, float]
    writes: float


def _cap(value: float, limit: float | None) -> float:
    return value if limit is None else min(value, limit)


def _scaled(units: float, bounds: tuple[int, int] | None, level: Level) -> float:
    """Provisioned units at `level`: the autoscaling bound when the dimension scales."""
    if bounds is None or level in ("sized", "expected"):
        return units
    return float(bounds[0] if level == "min" else bounds[1])


def _base(source: Source, level: Level) -> tuple[float, float]:
    if source.billing == "on_demand":
        assert source.peak is not None  # the loader requires peak for on-demand
        limit = source.max_throughput or Throughput()
        peak_reads = _cap(source.peak.reads_per_second, limit.reads_per_second)
        peak_writes = _cap(source.peak.writes_per_second, limit.writes_per_second)
        if level in ("sized", "max"):
            return peak_reads, peak_writes
        average = source.average or source.peak
        return min(average.reads_per_second, peak_reads), min(average.writes_per_second, peak_writes)
    auto = source.autoscaling or SourceAutoscaling()
    return (_scaled(float(source.reads), auto.reads, level), _scaled(float(source.writes), auto.writes, level))


def _ratios(source: Source, level: Level) -> tuple[float, float]:
    """On-demand replicas and GSIs give peak rates: at other levels they scale by the
    table's own level/peak ratio. Provisioned ones keep their capacity (1.0)."""
    if source.billing != "on_demand":
        return 1.0, 1.0
    reads, writes = _base(source, level)
    sized_reads, sized_writes = _base(source, "sized")
    return (reads / sized_reads if sized_reads else 1.0), (writes / sized_writes if sized_writes else 1.0)


def _warm(units: float, warm: float | None, level: Level) -> float:
    return max(units, warm) if level == "min" and warm is not None else units


def units(source: Source, level: Level) -> Units:
    """The base table's units (its GSIs are `gsi_units`)."""
    reads, writes = _base(source, level)
    read_ratio, _ = _ratios(source, level)
    table_reads = (source.autoscaling or SourceAutoscaling()).reads
    per_region = {source.region: reads}
    for replica in source.replicas:
        if replica.autoscaling is not None:  # provisioned: its own read autoscaling
            bounds = (replica.autoscaling.min_reads, replica.autoscaling.max_reads)
            own = _scaled(float(replica.reads if replica.reads is not None else source.reads), bounds, level)
        elif replica.reads is None:
            own = reads
        elif source.billing == "on_demand":
            limit = (source.max_throughput or Throughput()).reads_per_second
            own = _cap(replica.reads * read_ratio, limit)
        elif table_reads is not None and level in ("min", "max"):
            own = reads  # the table's autoscaling bound, shared by every replica
        else:
            own = float(replica.reads)
        per_region[replica.region] = own
    warm = source.warm_throughput or Throughput()
    return Units(reads={r: _warm(u, warm.reads_per_second, level) for r, u in per_region.items()},
                 writes=_warm(writes, warm.writes_per_second, level))


def _gsi_reads(source: Source, gsi: Gsi, region: str, level: Level, read_ratio: float) -> float:
    """One GSI's read units in one region: the replica's own figure for it, else the index's."""
    replica = next((r for r in source.replicas if r.region == region), None)
    own = replica.gsi(gsi.name) if replica is not None else None
    auto = gsi.autoscaling or SourceAutoscaling()
    base = float(gsi.reads or 0)
    bounds = auto.reads
    if own is not None:
        base = float(own.reads) if own.reads is not None else base
        if own.autoscaling is not None:
            bounds = (own.autoscaling.min_reads, own.autoscaling.max_reads)
    if source.billing == "on_demand":
        return _cap(base * read_ratio, (gsi.max_throughput or Throughput()).reads_per_second)
    return _scaled(base, bounds, level)


def gsi_units(source: Source, gsi: Gsi, level: Level) -> Units:
    """One GSI's units, in every region of the table (a global table's GSIs exist in each
    replica). An on-demand GSI without `writes` is taken to take every table write (an
    upper bound: a write skips the index only when it lacks the index keys); one without
    `reads` adds none (`advice` warns that they are not counted)."""
    read_ratio, write_ratio = _ratios(source, level)
    if source.billing == "on_demand":
        raw = _base(source, level)[1] if gsi.writes is None else gsi.writes * write_ratio
        writes = _cap(raw, (gsi.max_throughput or Throughput()).writes_per_second)
    else:
        writes = _scaled(float(gsi.writes or 0), (gsi.autoscaling or SourceAutoscaling()).writes, level)
    warm = gsi.warm_throughput or Throughput()
    return Units(reads={region: _warm(_gsi_reads(source, gsi, region, level, read_ratio), warm.reads_per_second,
                                      level) for region in source.regions},
                 writes=_warm(writes, warm.writes_per_second, level))


def total_units(source: Source, level: Level) -> Units:
    """The table and its GSIs together: what DynamoDB bills."""
    parts = [units(source, level), *(gsi_units(source, g, level) for g in source.gsis)]
    return Units(reads={r: sum(p.reads[r] for p in parts) for r in parts[0].reads},
                 writes=sum(p.writes for p in parts))


def scales(source: Source) -> bool:
    """Whether the table's capacity moves (DynamoDB autoscaling of the table, a GSI or a
    replica, or on-demand)."""
    return (source.billing == "on_demand" or source.autoscaling is not None
            or any(g.autoscaling is not None for g in source.gsis)
            or any(r.autoscaling is not None or any(g.autoscaling for g in r.gsis) for r in source.replicas))


def autoscaling_targets(source: Source) -> list[float]:
    """Every DynamoDB target utilisation of the table: its own dimensions', its GSIs' and
    its replicas' (each one a promise about headroom; the lowest lowers the CPU target)."""
    out = list(source.autoscaling.targets) if source.autoscaling else []
    out += [t for g in source.gsis if g.autoscaling for t in g.autoscaling.targets]
    out += [r.autoscaling.target_utilization for r in source.replicas if r.autoscaling]
    out += [g.autoscaling.target_utilization for r in source.replicas for g in r.gsis if g.autoscaling]
    return out


def limit_note(source: Source, gsi: Gsi | None = None) -> str:
    """What on-demand maximum throughput cut from a peak, for the why ("" when nothing)."""
    if source.billing != "on_demand" or source.peak is None:
        return ""
    limit = (source.max_throughput if gsi is None else gsi.max_throughput) or Throughput()
    if gsi is None:
        peaks: tuple[float | None, float | None] = (source.peak.reads_per_second, source.peak.writes_per_second)
    else:
        peaks = (gsi.reads, gsi.writes if gsi.writes is not None else _base(source, "sized")[1])
    cut = [f"{word} {peak:,.0f} capped at {cap:,.0f} {unit}"
           for word, unit, peak, cap in (("peak", "RRU/s", peaks[0], limit.reads_per_second),
                                         ("peak", "WRU/s", peaks[1], limit.writes_per_second))
           if peak is not None and cap is not None and peak > cap]
    return f"on-demand max throughput: {', '.join(cut)} (DynamoDB throttles above it)" if cut else ""


def warm_note(source: Source, gsi: Gsi | None = None) -> str:
    """What warm throughput raised at the min level, for the why ("" when nothing)."""
    warm = (source.warm_throughput if gsi is None else gsi.warm_throughput) or Throughput()
    if warm.reads_per_second is None and warm.writes_per_second is None:
        return ""
    plain = replace(source, warm_throughput=None, gsis=tuple(replace(g, warm_throughput=None) for g in source.gsis))
    before = units(plain, "min") if gsi is None else gsi_units(plain, replace(gsi, warm_throughput=None), "min")
    raised = []
    if warm.reads_per_second is not None and any(v < warm.reads_per_second for v in before.reads.values()):
        raised.append(f"reads to {warm.reads_per_second:,.0f} units/s")
    if warm.writes_per_second is not None and before.writes < warm.writes_per_second:
        raised.append(f"writes to {warm.writes_per_second:,.0f} units/s")
    return f"warm throughput raises the min {' and '.join(raised)}" if raised else ""


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
