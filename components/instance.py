"""`ddb2bigtable:bigtable:Instance`: instance, clusters, tables, app profiles, load access."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from ddb2bigtable.plan.model import AppProfilePlan, ClusterPlan, InstancePlan

from .table import BigtableTable

LOAD_ROLE = "roles/bigtable.user"  # read/write data; no admin: the load needs nothing more
PRIORITY = {"HIGH": "PRIORITY_HIGH", "MEDIUM": "PRIORITY_MEDIUM", "LOW": "PRIORITY_LOW"}


def cluster_args(cluster: ClusterPlan, scaling_factor: int) -> gcp.bigtable.InstanceClusterArgsDict:
    """One cluster block: `num_nodes` or `autoscaling_config`, never both (provider pitfall)."""
    args: gcp.bigtable.InstanceClusterArgsDict = {
        "cluster_id": cluster.id,
        "zone": cluster.zone,
        "storage_type": cluster.storage_type.upper(),
        "node_scaling_factor": f"NodeScalingFactor{scaling_factor}X",
    }
    if cluster.kms_key_name:
        args["kms_key_name"] = cluster.kms_key_name
    auto = cluster.autoscaling
    if auto is None:
        args["num_nodes"] = cluster.nodes
    else:
        args["autoscaling_config"] = {"min_nodes": auto.min_nodes, "max_nodes": auto.max_nodes,
                                      "cpu_target": auto.cpu_target, "storage_target": auto.storage_target_gib}
    return args


def app_profile_args(profile: AppProfilePlan, all_clusters: tuple[str, ...]) -> dict[str, Any]:
    args: dict[str, Any] = {
        "app_profile_id": profile.id,
        "description": profile.why[:200],
        "standard_isolation": {"priority": PRIORITY[profile.priority]},
        "ignore_warnings": True,
    }
    if profile.routing == "single":
        args["single_cluster_routing"] = {"cluster_id": profile.cluster_ids[0],
                                          "allow_transactional_writes": profile.allow_transactional_writes}
    else:
        if profile.cluster_ids == all_clusters:
            args["multi_cluster_routing_use_any"] = True
        else:
            args["multi_cluster_routing_cluster_ids"] = list(profile.cluster_ids)
        args["row_affinity"] = profile.row_affinity or None
    return args


class BigtableInstance(pulumi.ComponentResource):
    def __init__(self, name: str, plan: InstancePlan, project: str | None,
                 load_service_account: str | None = None, opts: pulumi.ResourceOptions | None = None):
        super().__init__("ddb2bigtable:bigtable:Instance", name, None, opts)
        protect = plan.deletion_protection
        self.instance = gcp.bigtable.Instance(
            name,
            name=plan.id,
            display_name=plan.display_name[:30],
            project=project,
            labels=dict(plan.labels),
            clusters=[cluster_args(c, plan.node_scaling_factor) for c in plan.clusters],
            deletion_protection=protect,
            force_destroy=not protect,  # unprotected stages must be destroyable with their backups
            opts=pulumi.ResourceOptions(parent=self, protect=protect),
        )
        replicated = len(plan.clusters) > 1
        self.tables = {
            t.id: BigtableTable(f"{plan.id}-{t.id}", t, self.instance, project, replicated,
                                opts=pulumi.ResourceOptions(parent=self))
            for t in (*plan.tables, *plan.metadata_tables)  # metadata: the record of each table's types
        }
        cluster_ids = tuple(c.id for c in plan.clusters)
        self.app_profiles = [
            gcp.bigtable.AppProfile(f"{plan.id}-{p.id}", instance=self.instance.name, project=project,
                                    **app_profile_args(p, cluster_ids),
                                    opts=pulumi.ResourceOptions(parent=self))
            for p in plan.app_profiles
        ]
        self.load_access = None
        if load_service_account:
            self.load_access = gcp.bigtable.InstanceIamMember(
                f"{plan.id}-load-access", instance=self.instance.name, project=project, role=LOAD_ROLE,
                member=f"serviceAccount:{load_service_account}", opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"instance": self.instance.name})
