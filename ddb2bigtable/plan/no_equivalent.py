"""Warnings for DynamoDB features Bigtable has no equivalent for, or only a partial one.

A spec may say a table uses multi-region strong consistency, Contributor Insights or a
Kinesis streaming destination; the plan cannot create any of them, and silence would let
a reviewer believe it did. Each warning says what Bigtable offers instead, so the team
can decide before the cutover, not after. Pure functions of the spec, like `advice`.
"""

from __future__ import annotations

from ..spec.model import Source, Spec, TableSpec
from ..spec.regions import gcp_for
from .app_profiles import needs_transactions
from .model import PlanWarning

# Google, "Use Key Visualizer" (cloud.google.com/bigtable/docs/keyvis-getting-started, read
# 2026-11-24): "Key Visualizer is available for tables that contain at least 1 GB of data
# per cluster"; scans keep the past 14 days (keyvis-overview, same date).
KEY_VISUALIZER_MIN_GB = 1


def _mrsc(table: TableSpec, instance_id: str, transactional: bool) -> list[PlanWarning]:
    source = table.source
    if source.multi_region_consistency != "strong":
        return []
    witness = (f"; the witness region {source.witness_region} holds no data in DynamoDB and gets no cluster"
               if source.witness_region else "")
    return [PlanWarning(
        "no-strong-multi-region", instance_id, table.id,
        f"{source.table} uses DynamoDB multi-region strong consistency (MRSC) across {', '.join(source.regions)}: "
        f"BIGTABLE HAS NO EQUIVALENT. Replication between clusters is always eventual (usually seconds, longer "
        f"under load), so a read in one region may miss a write just made in another. Closest: send every read "
        f"and write that needs strong consistency through one single-cluster app profile routed to the cluster "
        f"of {source.region} (strongly consistent there: one cluster serves the row); other regions then pay "
        f"the cross-region latency, and losing that cluster means switching the profile to another by hand, "
        f"with writes not yet replicated at risk (MRSC loses none). `instance.row_affinity: true` on the "
        f"multi-cluster `serving` profile gives read-your-writes per row, not strong consistency; "
        f"{_closest_profile(table.source, transactional)}{witness}")]


def _closest_profile(source: Source, transactional: bool) -> str:
    """Which profile of the plan is that single-cluster one, or that the plan has none."""
    home = f"txn-{gcp_for(source.region).gcp_region}"
    if transactional:
        return f"the plan's `{home}` profile is that single-cluster profile (it also allows transactional writes)"
    return (f"the plan creates no such profile for this instance: `conditional_writes: true` adds the "
            f"single-cluster `txn-<region>` profiles (`{home}` for {source.region}), or create one")


def _insights(source: Source) -> str:
    return (f"{source.table} has CloudWatch Contributor Insights on: Bigtable has no per-key counters to switch "
            f"on; use Key Visualizer (its heatmaps of row-key ranges show hot keys, for tables with at least "
            f"{KEY_VISUALIZER_MIN_GB} GB per cluster, the past 14 days; cloud.google.com/bigtable/docs/"
            f"keyvis-getting-started, read 2026-11-24) and the per-table metrics in Cloud Monitoring")


def _kinesis(source: Source) -> str:
    text = (f"{source.table} streams changes to Kinesis ({', '.join(source.kinesis_streams)}): Bigtable has no "
            f"Kinesis destination; read the table's change stream instead (Bigtable change streams, through the "
            f"Dataflow change-stream connector) and publish to Pub/Sub, or on to Kinesis, from the consumer")
    if source.stream == "none":
        text += "; the plan creates a change stream only with `stream` set: add `stream: new_and_old_images`"
    return text


def _peak_above_max(source: Source) -> list[str]:
    if source.billing != "on_demand" or source.peak is None or source.max_throughput is None:
        return []
    limit, peak = source.max_throughput, source.peak
    return [f"{source.table}'s peak {p:,.0f} {unit} is above its on-demand max throughput {m:,.0f}: DynamoDB "
            f"throttles requests beyond the max, so the plan sizes for the max; if the application really needs "
            f"the peak, raise the max in DynamoDB (or correct the peak)"
            for unit, p, m in (("RRU/s", peak.reads_per_second, limit.reads_per_second),
                               ("WRU/s", peak.writes_per_second, limit.writes_per_second))
            if m is not None and p > m]


def _replica_classes(source: Source) -> list[str]:
    ia = [r.region for r in source.replicas
          if r.table_class == "standard_infrequent_access" and source.table_class != "standard_infrequent_access"]
    return [f"{source.table}'s replica{'s' if len(ia) > 1 else ''} in {', '.join(ia)} "
            f"{'are' if len(ia) > 1 else 'is'} Standard-IA: Bigtable's storage type is one per instance, so "
            f"{'they stay' if len(ia) > 1 else 'it stays'} on the instance's storage (the DynamoDB cost uses "
            f"the IA price there)"] if ia else []


def no_equivalent(spec: Spec, instance_id: str) -> list[PlanWarning]:
    """Every warning about features the plan cannot carry over, table by table."""
    out: list[PlanWarning] = []
    for table in spec.tables:
        source = table.source
        out += _mrsc(table, instance_id, bool(needs_transactions(spec)))
        if source.contributor_insights:
            out.append(PlanWarning("contributor-insights", instance_id, table.id, _insights(source)))
        if source.kinesis_streams:
            out.append(PlanWarning("kinesis-stream", instance_id, table.id, _kinesis(source)))
        out += [PlanWarning("peak-above-max", instance_id, table.id, m) for m in _peak_above_max(source)]
        out += [PlanWarning("infrequent-access", instance_id, table.id, m) for m in _replica_classes(source)]
    return out
