"""Capacity cross-checks: fields that fit the billing mode, ranges the right way round,
and a replica's own settings that name what the table has.

Split from `checks.py` so each module stays readable. A provisioned table is sized from
units and auto scaling; an on-demand one from request rates, with an optional ceiling
(`max_throughput`). A field of the other mode is an error here, not ignored by the plan,
because a user who wrote it expects it to count.
"""

from __future__ import annotations

from typing import Any

from .errors import Problem
from .model import ReadAutoscaling, Source, SourceAutoscaling
from .yaml_source import JsonPath, YamlDocument


def check_billing(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    """Capacity fields that fit the billing mode, and ranges that are the right way round."""
    present = doc.value_at(sp)
    modal = _provisioned_fields if source.billing == "provisioned" else _on_demand_fields
    return modal(doc, sp, source, present) + _ordered_ranges(doc, sp, source)


def _provisioned_fields(doc: YamlDocument, sp: JsonPath, source: Source, present: Any) -> list[Problem]:
    out: list[Problem] = []
    for field in ("reads", "writes"):
        if getattr(source, field) <= 0:
            unit = "RCU" if field == "reads" else "WCU"
            out.append(doc.problem((*sp, field), f"a provisioned table needs {field} > 0 (its {unit}); "
                                                 f"for an on-demand table write billing: on_demand and a peak",
                                   key=field not in present))
    for field in ("peak", "average"):
        if field in present:
            out.append(doc.problem((*sp, field), f"{field} is for on_demand tables; a provisioned table is "
                                                 f"sized from reads, writes and autoscaling", key=True))
    if source.max_throughput is not None:
        out.append(doc.problem((*sp, "max_throughput"), "max_throughput is DynamoDB's on-demand maximum; a "
                                                        "provisioned table's ceiling is its autoscaling max",
                               key=True))
    for j, gsi in enumerate(source.gsis):
        if not gsi.reads or not gsi.writes:
            out.append(doc.problem((*sp, "gsis", j), f"GSI {gsi.name} of a provisioned table needs its own "
                                                     f"reads and writes (RCU and WCU) > 0"))
        if gsi.max_throughput is not None:
            out.append(doc.problem((*sp, "gsis", j, "max_throughput"), f"max_throughput of GSI {gsi.name} is for "
                                                                       f"on_demand tables; use its autoscaling max",
                                   key=True))
    return out


def _on_demand_fields(doc: YamlDocument, sp: JsonPath, source: Source, present: Any) -> list[Problem]:
    out: list[Problem] = []
    if source.peak is None:
        out.append(doc.problem((*sp, "peak"), "an on_demand table needs peak: {reads_per_second: ..., "
                                              "writes_per_second: ...}, its peak RRU/WRU per second", key=True))
    for field in ("reads", "writes"):
        if field in present:
            out.append(doc.problem((*sp, field), f"an on_demand table has no provisioned {field}; put the "
                                                 f"rate in peak.{field}_per_second", key=True))
    scaled: list[JsonPath] = [(*sp, "autoscaling")] if source.autoscaling is not None else []
    scaled += [(*sp, "gsis", j, "autoscaling") for j, g in enumerate(source.gsis) if g.autoscaling is not None]
    for j, replica in enumerate(source.replicas):
        scaled += [(*sp, "replicas", j, "autoscaling")] if replica.autoscaling is not None else []
        scaled += [(*sp, "replicas", j, "gsis", k, "autoscaling")
                   for k, g in enumerate(replica.gsis) if g.autoscaling is not None]
    out += [doc.problem(path, "autoscaling is for provisioned tables; on_demand tables scale by themselves "
                              "(their ceiling is max_throughput)", key=True) for path in scaled]
    return out


def _range_problems(doc: YamlDocument, path: JsonPath, auto: SourceAutoscaling | ReadAutoscaling) -> list[Problem]:
    pairs = [("reads", auto.min_reads, auto.max_reads)]
    if isinstance(auto, SourceAutoscaling):
        pairs.append(("writes", auto.min_writes, auto.max_writes))
    return [doc.problem((*path, f"min_{unit}"), f"min_{unit} {low} is above max_{unit} {high}; swap them")
            for unit, low, high in pairs if low is not None and high is not None and low > high]


def _ordered_ranges(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    out: list[Problem] = []
    ranges: list[tuple[JsonPath, SourceAutoscaling | ReadAutoscaling | None]] = [
        ((*sp, "autoscaling"), source.autoscaling),
        *(((*sp, "gsis", j, "autoscaling"), g.autoscaling) for j, g in enumerate(source.gsis)),
        *(((*sp, "replicas", j, "autoscaling"), r.autoscaling) for j, r in enumerate(source.replicas)),
        *(((*sp, "replicas", j, "gsis", k, "autoscaling"), g.autoscaling)
          for j, r in enumerate(source.replicas) for k, g in enumerate(r.gsis)),
    ]
    for path, auto in ranges:
        out += _range_problems(doc, path, auto) if auto is not None else []
    if source.peak is not None and source.average is not None:
        for unit in ("reads_per_second", "writes_per_second"):
            average, peak = getattr(source.average, unit), getattr(source.peak, unit)
            if average > peak:
                out.append(doc.problem((*sp, "average", unit), f"average {unit} {average:g} is above the peak "
                                                               f"{peak:g}; the peak is the highest rate"))
    return out


def check_replica_settings(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    """A replica's `gsis` name the table's GSIs, each once."""
    out: list[Problem] = []
    names = [g.name for g in source.gsis]
    for j, replica in enumerate(source.replicas):
        seen: set[str] = set()
        for k, gsi in enumerate(replica.gsis):
            path = (*sp, "replicas", j, "gsis", k, "name")
            if gsi.name not in names:
                known = ", ".join(names) if names else "none"
                out.append(doc.problem(path, f"{gsi.name!r} is not a GSI of this table (its gsis: {known}); a "
                                             f"replica's gsis give its own capacity of the table's indexes"))
            elif gsi.name in seen:
                out.append(doc.problem(path, f"GSI {gsi.name} is listed twice in this replica; keep one"))
            seen.add(gsi.name)
    return out
