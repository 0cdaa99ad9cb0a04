"""App profiles: how the application's and the load's requests reach clusters.

- `serving`: multi-cluster routing over every cluster, DynamoDB's nearest-region routing
  with automatic failover; row affinity when the spec asks for regional read-your-writes.
- `txn-<region>`: CheckAndMutate / ReadModifyWrite (conditional writes, increments of
  plain numbers) need single-cluster routing with transactional writes allowed; one per
  cluster so each region writes to its own. A stage that deploys `serve` gets them on
  every instance: serve's conditional writes and read-check-writes are CheckAndMutateRow
  whatever the spec says. `counter` attributes need none: their family
  is an aggregate family, and AddToCell goes through `serving` (gc_rules.py says so).
- `migration-load`: the bulk load on one cluster at LOW priority, so it does not starve
  serving traffic (seeds: workload isolation).
"""

from __future__ import annotations

from ..spec.model import Spec
from .model import AppProfilePlan, ClusterPlan, InstancePlan

LOAD_PROFILE = "migration-load"  # the bulk load's (and replication's) LOW-priority profile


def load_profile_id(instance: InstancePlan) -> str | None:
    """The profile loads and replication write through, when the plan has one."""
    return next((p.id for p in instance.app_profiles if p.id == LOAD_PROFILE), None)


def needs_transactions(spec: Spec) -> list[str]:
    return [t.id for t in spec.tables if t.source.conditional_writes or t.source.write_mode == "transactional"]


def load_cluster(spec: Spec, clusters: list[ClusterPlan]) -> ClusterPlan:
    """The cluster serving the first table's home region: the export is read from there."""
    home = spec.tables[0].source.region
    return next((c for c in clusters if home in c.aws_regions), clusters[0])


def plan_app_profiles(spec: Spec, clusters: list[ClusterPlan], serve: bool) -> list[AppProfilePlan]:
    """`serve`: the stage deploys the endpoint, whose conditional writes are CheckAndMutateRow."""
    ids = tuple(c.id for c in clusters)
    affinity = spec.instance.row_affinity
    profiles = [AppProfilePlan(
        id="serving", routing="multi", cluster_ids=ids, row_affinity=affinity,
        allow_transactional_writes=False, priority="HIGH",
        why=(f"multi-cluster routing over {len(ids)} cluster(s): nearest cluster, automatic failover"
             + ("; row affinity: a row's requests stay on one cluster (read-your-writes)" if affinity else "")),
    )]
    txn_tables = needs_transactions(spec)
    if txn_tables or serve:
        users = (f"{', '.join(txn_tables)} use conditional writes or transactions" if txn_tables else
                 "the stage deploys serve, whose conditional writes are CheckAndMutateRow")
        for c in clusters:
            profiles.append(AppProfilePlan(
                id=f"txn-{c.gcp_region}", routing="single", cluster_ids=(c.id,), row_affinity=False,
                allow_transactional_writes=True, priority="HIGH",
                why=(f"{users}: CheckAndMutate and "
                     f"ReadModifyWrite need single-cluster routing with transactional writes ({c.id})"),
            ))
    target = load_cluster(spec, clusters)
    profiles.append(AppProfilePlan(
        id=LOAD_PROFILE, routing="single", cluster_ids=(target.id,), row_affinity=False,
        allow_transactional_writes=False, priority="LOW",
        why=f"bulk load isolated on {target.id} at LOW priority so serving traffic keeps its latency",
    ))
    return profiles
