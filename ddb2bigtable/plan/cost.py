"""Monthly cost of a stage's instance on Bigtable, next to the same workload on DynamoDB.

Both sides price the same thing: the stage's kept regions, its capacity scale, the
expected capacity (provisioned units, on-demand average), and every table's full storage.
Prices come from `pricing` with their source and date: the price lock when a command read
one, else the shipped table; a region without a figure of its own is priced from a
reference region and the line says so (`estimate`). Every line carries its `origin`.
"""

from __future__ import annotations

from dataclasses import replace

from ..spec.model import Spec, TableSpec
from ..spec.stage import DiscountSettings, Stage
from . import capacity, pricing, sizing
from .discounts import Step, bigtable_steps, discounted, dynamodb_steps
from .model import ClusterPlan, CostEstimate, CostLine
from .price_lock import PriceLock
from .tables import pitr_by_region
from .topology import kept_regions

HOURS_PER_MONTH = 730  # the month both clouds' price pages use
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
KIB_PER_GIB = 1024 * 1024


def amount(quantity: float) -> str:
    """A quantity as a reviewer reads it: whole above 100, two decimals above 1, else its
    significant digits (a dev stage's 0.1 RCU is not "0 RCU")."""
    if quantity >= 100 or quantity == round(quantity):
        return f"{quantity:,.0f}"
    return f"{quantity:,.2f}".rstrip("0").rstrip(".") if quantity >= 1 else f"{quantity:.2g}"


def _line(item: str, quantity: float, unit: str, price: pricing.Price, months_factor: float = 1.0) -> CostLine:
    monthly = quantity * price.value * months_factor
    return CostLine(item=item, quantity=round(quantity, 4), unit=unit, unit_price=price.value,
                    monthly_usd=round(monthly, 2), source=price.source, as_of=price.as_of,
                    estimate=price.estimate, note=price.note, origin=price.origin, sku=price.sku,
                    price_key=price.key)


class _Priced:
    """Builds cost lines from one lock (or none) and the stage's discounts, remembering what
    the lock lacked."""

    def __init__(self, lock: PriceLock | None, discounts: DiscountSettings):
        self.lock = lock
        self.discounts = discounts
        self.gaps: dict[str, None] = {}

    def line(self, item: str, quantity: float, unit: str, price: pricing.Price,
             steps: list[Step] | None = None) -> CostLine:
        if price.gap:
            self.gaps[price.gap] = None
        return discounted(_line(item, quantity, unit, price), steps or [])

    def bigtable(self, item: str, quantity: float, unit: str, price: pricing.Price) -> CostLine:
        return self.line(item, quantity, unit, price, bigtable_steps(self.discounts, unit))

    def dynamodb(self, item: str, quantity: float, unit: str, region: str, key: str, standard_class: bool
                 ) -> CostLine:
        """A DynamoDB line priced by the table's `key` item in `region`, then discounted."""
        price = pricing.dynamodb(region, key, self.lock)
        return self.line(item, quantity, unit, price, dynamodb_steps(self.discounts, unit, region, standard_class))


def expected_load(c: ClusterPlan) -> float:
    """The cluster's load in nodes at 100 % CPU at the capacity it is bought for: the expected
    level when it autoscales, else the sized one."""
    levels = dict(c.levels)
    return levels.get("expected", levels.get("sized", sum(s.nodes for s in c.load)))


def at_minimum(c: ClusterPlan, scaling_factor: int) -> str:
    """Why a cluster's nodes are Bigtable's minimum rather than what its load asks for, or "":
    a small table's cost is then that one node, whatever its traffic (`advise` suggests
    an instance other tables already pay for)."""
    smallest = sizing.round_to_factor(1, scaling_factor)
    need = sizing.node_need(expected_load(c), c.cpu_target, c.storage_gib, c.storage_type)
    if c.nodes != smallest or need >= smallest:
        return ""
    return (f"{c.id} is at Bigtable's minimum of {smallest} node{'s' if smallest != 1 else ''} a cluster "
            f"({sizing.MIN_NODES_SOURCE}): its load and storage ask for {need:.2g} of a node, so the node's hours "
            f"are its cost whatever the traffic; `advise` names instances other tables already pay for")


def bigtable_lines(spec: Spec, stage: Stage, clusters: list[ClusterPlan], priced: _Priced) -> list[CostLine]:
    lock = priced.lock
    lines = []
    for c in clusters:
        nodes = f"{c.nodes} node{'s' if c.nodes != 1 else ''}"
        minimum = at_minimum(c, spec.instance.node_scaling_factor)
        line = priced.bigtable(f"{c.id}: {nodes} x {HOURS_PER_MONTH} h" + (", the minimum" if minimum else ""),
                               c.nodes * HOURS_PER_MONTH, "node-hour", pricing.bigtable_node_hour(c.gcp_region, lock))
        lines.append(replace(line, why=minimum))
        lines.append(priced.bigtable(f"{c.id}: {c.storage_type.upper()} storage", c.storage_gib, "GiB-month",
                                 pricing.bigtable_storage(c.gcp_region, c.storage_type, lock)))
    home = clusters[0].gcp_region
    for t in spec.tables:
        if any(p.enabled for p in pitr_by_region(t.source).values()) and t.source.storage_gb:
            price = pricing.bigtable_backup_storage(home, lock)
            lines.append(priced.bigtable(f"{t.id}: backup storage (one full copy)", t.source.storage_gb, "GiB-month",
                                     price))
    if len(clusters) > 1:
        lines += [line for t in spec.tables for line in _replication_lines(t, stage, clusters, priced)]
    return lines


def _replication_lines(table: TableSpec, stage: Stage, clusters: list[ClusterPlan], priced: _Priced
                       ) -> list[CostLine]:
    """A table's writes, copied from the cluster they reach to every other cluster.

    Writes reach the cluster that serves the DynamoDB region they are made in: a
    single-region table's writes all start at its home region's cluster; a global table's
    are taken as evenly spread over its kept replica regions (DynamoDB does not say where
    writes originate). A copy inside one GCP region is free and not listed. GSIs add
    nothing here: each cluster maintains its materialized views from the replicated
    table rows."""
    gib = (capacity.write_ops(table.source, capacity.units(table.source, "expected").writes, stage.capacity_scale)
           * table.source.item_size_kb / KIB_PER_GIB * SECONDS_PER_MONTH)
    regions = kept_regions(table.source, stage)
    origins = [c for c in clusters if any(r in c.aws_regions for r in regions)] or clusters
    lines = []
    for src in origins:
        for dst in clusters:
            if dst is not src and dst.gcp_region != src.gcp_region:
                share = "" if len(origins) == 1 else f", 1/{len(origins)} of its writes"
                lines.append(priced.bigtable(f"{table.id}: replication {src.gcp_region} → {dst.gcp_region}{share}",
                                         gib / len(origins), "GiB",
                                         pricing.bigtable_replication_egress(src.gcp_region, dst.gcp_region,
                                                                             priced.lock)))
    return lines


def _table_lines(table: TableSpec, stage: Stage, priced: _Priced) -> list[CostLine]:
    source = table.source
    units = capacity.total_units(source, "expected")
    scale = stage.capacity_scale
    lines = []
    for region in kept_regions(source, stage):
        reads = units.reads[region] * scale
        writes = units.writes * scale
        replica = region != source.region
        tag = f"{table.id} {region}"
        klass = next((r.table_class for r in source.replicas if r.region == region and r.table_class),
                     source.table_class)
        standard = klass != "standard_infrequent_access"
        if source.billing == "on_demand":
            per_month = SECONDS_PER_MONTH / 1e6
            lines.append(priced.dynamodb(f"{tag}: {amount(reads)} RRU/s average", reads * per_month, "million RRU",
                                         region, "rru_million", standard))
            lines.append(priced.dynamodb(f"{tag}: {amount(writes)} WRU/s average", writes * per_month,
                                         "million rWRU" if replica else "million WRU", region,
                                         "replicated_wru_million" if replica else "wru_million", standard))
        else:
            lines.append(priced.dynamodb(f"{tag}: {amount(reads)} RCU", reads * HOURS_PER_MONTH, "RCU-hour",
                                         region, "rcu_hour", standard))
            lines.append(priced.dynamodb(f"{tag}: {amount(writes)} {'rWCU' if replica else 'WCU'}",
                                         writes * HOURS_PER_MONTH, "rWCU-hour" if replica else "WCU-hour", region,
                                         "replicated_wcu_hour" if replica else "wcu_hour", standard))
        if source.storage_gb:
            lines.append(priced.dynamodb(f"{tag}: storage", source.storage_gb, "GB-month", region,
                                         "storage_gb_month" if standard else "storage_ia_gb_month", standard))
            if pitr_by_region(source)[region].enabled:
                lines.append(priced.dynamodb(f"{tag}: PITR", source.storage_gb, "GB-month", region, "pitr_gb_month",
                                             standard))
    return lines


def estimate(spec: Spec, stage: Stage, clusters: list[ClusterPlan], lock: PriceLock | None = None) -> CostEstimate:
    priced = _Priced(lock, stage.discounts)
    bigtable = bigtable_lines(spec, stage, clusters, priced)
    dynamo = [line for t in spec.tables for line in _table_lines(t, stage, priced)]
    return CostEstimate(bigtable=tuple(bigtable), dynamodb=tuple(dynamo), hours_per_month=HOURS_PER_MONTH,
                        lock_gaps=tuple(priced.gaps))
